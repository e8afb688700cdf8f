// Package gen draws random agent sessions for the adapters' property
// tests: what a harness on the library writes, in strict mode.
package gen

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/providers/convo"
	"github.com/surfacelog/surface/impl/session"
)

func text(t string) json.RawMessage { return convo.EncodeBlock(convo.Block{Type: convo.Text, Text: t}) }

// Word draws a short text, sometimes with characters JSON must escape.
func Word(t *rapid.T, label string) string {
	return rapid.SampledFrom([]string{"read the file", "ok", "done: 42", `say "hi"`, "line1\nline2", "tab\there", "ünïcødé ✓", "<b>tags</b>"}).Draw(t, label)
}

// Reply draws a model reply: text, sometimes reasoning, and up to three
// tool calls with unique ids (arguments as JSON text).
func Reply(t *rapid.T, prefix string) convo.Reply {
	r := convo.Reply{Provider: "fake", Model: "m1", Usage: &convo.Usage{InputTokens: 10, OutputTokens: int64(rapid.IntRange(1, 50).Draw(t, "out"))}}
	if rapid.Bool().Draw(t, "reasoning") {
		r.Blocks = append(r.Blocks, convo.Block{Type: convo.Reasoning, Text: Word(t, "thought")})
	}
	if rapid.Bool().Draw(t, "text") {
		r.Blocks = append(r.Blocks, convo.Block{Type: convo.Text, Text: Word(t, "say")})
	}
	n := rapid.IntRange(0, 3).Draw(t, "calls")
	for i := 0; i < n; i++ {
		args := rapid.SampledFrom([]string{`{}`, `{"path":"a.go"}`, `{"n":1,"deep":{"x":[1,2]}}`}).Draw(t, "args")
		r.Blocks = append(r.Blocks, convo.Block{Type: convo.ToolCall, ID: fmt.Sprintf("%s-%d", prefix, i), Name: rapid.SampledFrom([]string{"read", "grep"}).Draw(t, "tool"), Arguments: args})
	}
	if len(r.Blocks) == 0 || (n == 0 && r.Blocks[len(r.Blocks)-1].Type == convo.Reasoning) {
		r.Blocks = append(r.Blocks, convo.Block{Type: convo.Text, Text: "answer"})
	}
	return r
}

// Session draws a strict session that a harness could have written: turns
// of a prompt (sometimes with an image, sometimes after a context
// message), steps of replies whose tool calls are recorded and answered
// in a random order (some results failing), steering held until a
// balanced point (strict) or taken between calls and results (loose), prunes of answered results, compactions of whole turns
// in either vocabulary, and a crash mid-turn (the log reseeded from a
// prefix and repaired). Every call is answered when it returns.
func Session(t *rapid.T) *session.Session {
	ctx := context.Background()
	// A strict session holds steering until a balanced point; a loose one
	// takes it the moment the user types it, between the calls and their
	// results, as a harness without strict mode writes it.
	strict := rapid.Bool().Draw(t, "strict")
	var opts []session.Option
	if strict {
		opts = append(opts, session.WithStrict())
	}
	s := session.New(opts...)
	must := func(_ any, err error) {
		if err != nil {
			t.Fatalf("gen: %v", err)
		}
	}
	turns := rapid.IntRange(1, 5).Draw(t, "turns")
	for ti := 0; ti < turns; ti++ {
		turn := s.NextTurn()
		must(s.Append(ctx, event.TurnStartData{Turn: turn, Trigger: json.RawMessage(`{"kind":"message"}`)}))
		if rapid.IntRange(0, 3).Draw(t, "context") == 0 {
			must(s.Append(ctx, event.ContextMessageData{Content: []json.RawMessage{text("notes: " + Word(t, "ctx"))}, Source: json.RawMessage(`{"kind":"plugin","plugin":"notes"}`)}, event.AppendIntent()))
		}
		prompt := []json.RawMessage{text(Word(t, "prompt"))}
		if rapid.IntRange(0, 4).Draw(t, "image") == 0 {
			prompt = append(prompt, convo.EncodeBlock(convo.Block{Type: convo.Image, MediaType: "image/png", Data: "iVBORw0KGgo="}))
		}
		must(s.Append(ctx, event.UserMessageData{Content: prompt, Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent()))
		steps := rapid.IntRange(1, 4).Draw(t, "steps")
		for step := int64(1); step <= int64(steps); step++ {
			must(s.Append(ctx, event.StepStartData{Turn: turn, Step: step}))
			r := Reply(t, fmt.Sprintf("t%d-s%d", turn, step))
			out, err := r.Append(ctx, s, turn, step)
			must(out, err)
			steering := event.SteeringMessageData{Turn: turn, Content: []json.RawMessage{text("also " + Word(t, "steer"))}, Source: json.RawMessage(`{"kind":"user"}`)}
			steerAt := -1
			if rapid.IntRange(0, 3).Draw(t, "steer") == 0 {
				if strict {
					_, _, err := s.SteerWhenBalanced(steering)
					must(nil, err)
				} else {
					steerAt = rapid.IntRange(0, len(out)-1).Draw(t, "steerAt")
				}
			}
			calls := out[1:] // the tool/call events
			order := rapid.Permutation(calls).Draw(t, "order")
			for i, c := range order {
				if i == steerAt {
					must(s.Append(ctx, steering, event.AppendIntent()))
				}
				var d event.ToolCallData
				_ = json.Unmarshal(c.Data, &d)
				failed := rapid.IntRange(0, 4).Draw(t, "failed") == 0
				content := []json.RawMessage{text(strings.Repeat("x", rapid.IntRange(1, 400).Draw(t, "size")))}
				must(s.Append(ctx, event.ToolResultData{Turn: turn, Step: step, CallID: d.CallID, Content: content, IsError: failed}, event.AppendIntent(c.Seq)))
			}
			if steerAt >= len(order) {
				must(s.Append(ctx, steering, event.AppendIntent()))
			}
			must(s.Append(ctx, event.StepEndData{Turn: turn, Step: step}))
			if rapid.IntRange(0, 5).Draw(t, "crash") == 0 {
				// A crash: the log up to a random point survives; the
				// reopened session repairs it and the turn is over.
				cut := rapid.IntRange(1, s.Len()).Draw(t, "cut")
				seeded, err := session.Seed(s.Events()[:cut], opts...)
				must(seeded, err)
				_, err = seeded.Repair(ctx)
				must(nil, err)
				s = seeded
				break
			}
		}
		if _, open := s.OpenTurn(); open {
			must(s.Append(ctx, event.TurnEndData{Turn: turn, Reason: json.RawMessage(`{"kind":"completed"}`)}))
		}
		if rapid.IntRange(0, 2).Draw(t, "prune") == 0 {
			for _, seq := range compaction.ProposePrunes(s, 20, nil) {
				must(compaction.PruneToolResult(s, seq, []json.RawMessage{text("[pruned]")}))
			}
		}
		if rapid.IntRange(0, 2).Draw(t, "compact") == 0 {
			summarize := func(context.Context, *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
				return []json.RawMessage{text("summary: " + Word(t, "summary"))}, compaction.Meta{Provider: "fake", Model: "m1"}, nil
			}
			var opts []compaction.Option
			if rapid.Bool().Draw(t, "v2") {
				opts = append(opts, compaction.WithVocabulary(compaction.CompactionEvents))
			}
			_, err := compaction.CompactSelected(ctx, s, compaction.KeepTurns(rapid.IntRange(0, 1).Draw(t, "keep")), summarize, nil, opts...)
			if err != nil && !isNothing(err) {
				t.Fatalf("gen: compaction: %v", err)
			}
		}
	}
	return s
}

func isNothing(err error) bool {
	c := event.CodeOf(err)
	// not_smaller: a framed summary of a short history is refused, and the
	// compaction ends (COMP-11), as the seed system does.
	return c == event.CodeCompactionNothingToCompact || c == event.CodeCompactionNoTurn || c == event.CodeCompactionNotSmaller
}
