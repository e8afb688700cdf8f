package convert_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/convert"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/released"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/model"
)

func raw(s string) json.RawMessage { return json.RawMessage(s) }

var appendOp = &event.Intent{Op: event.Append()}

// randomSession draws a session in this library's vocabulary the way a
// harness writes one: turns of prompts, context and steering messages,
// assistant messages with and without provenance, tool calls with
// results, pruned results, compactions in both record vocabularies, log
// records of types the released system does not know, and every turn/end
// reason with a released counterpart.
func randomSession(t *rapid.T) *session.Session {
	s := session.New()
	must := func(e event.Event, err error) event.Event {
		if err != nil {
			t.Fatalf("setup: %v", err)
		}
		return e
	}
	turns := rapid.IntRange(1, 4).Draw(t, "turns")
	for turn := 1; turn <= turns; turn++ {
		tn := fmt.Sprint(turn)
		trigger := rapid.SampledFrom([]string{`{"kind":"message","source":{"kind":"user"}}`, `{"kind":"continuation"}`, `{"kind":"injection"}`}).Draw(t, "trigger")
		must(s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: raw(`{"turn":` + tn + `,"trigger":` + trigger + `}`)}))
		for step := 1; step <= rapid.IntRange(1, 3).Draw(t, "steps"); step++ {
			st := fmt.Sprint(step)
			switch rapid.IntRange(0, 3).Draw(t, "prompt") {
			case 0:
				must(s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: raw(`{"content":[{"type":"text","text":"question ` + tn + `.` + st + ` \"quoted\" <x>"}],"source":{"kind":"user"}}`)}, appendOp.Value()))
			case 1:
				env := rapid.SampledFrom([]string{``, `,"envelope":"context"`, `,"envelope":"raw"`}).Draw(t, "envelope")
				must(s.Append(context.Background(), event.Raw{Type: event.TypeContextMessage, Data: raw(`{"content":[{"type":"text","text":"ctx ` + tn + `"}],"source":{"kind":"memory"}` + env + `}`)}, appendOp.Value()))
			case 2:
				must(s.Append(context.Background(), event.Raw{Type: event.TypeSteeringMessage, Data: raw(`{"turn":` + tn + `,"content":[{"type":"text","text":"steer"}],"source":{"kind":"user"}}`)}, appendOp.Value()))
			case 3:
				must(s.Append(context.Background(), event.Raw{Type: event.TypePromptBlocked, Data: raw(`{"content":[{"type":"text","text":"no"}],"source":{"kind":"user"},"reason":"policy"}`)}))
			}
			must(s.Append(context.Background(), event.Raw{Type: event.TypeStepStart, Data: raw(`{"turn":` + tn + `,"step":` + st + `}`)}))
			calls := rapid.IntRange(0, 2).Draw(t, "calls")
			var blocks []string
			for c := range calls {
				blocks = append(blocks, fmt.Sprintf(`{"type":"tool-call","id":"call%s_%s_%d","name":"read","arguments":{"p":%d}}`, tn, st, c, c))
			}
			if calls == 0 || rapid.Bool().Draw(t, "text") {
				blocks = append([]string{`{"type":"text","text":"thinking é \u2028"}`}, blocks...)
			}
			if rapid.IntRange(0, 5).Draw(t, "empty") == 0 && calls == 0 {
				blocks = nil // an assistant message with no content derives no message
			}
			prov := rapid.SampledFrom([]string{``, `,"provenance":{"provider":"p","model":"m"}`, `,"provenance":{"provider":"p","model":"m","replayState":{"k":1}}`}).Draw(t, "provenance")
			usage := rapid.SampledFrom([]string{``, `,"usage":{"inputTokens":3,"outputTokens":4}`}).Draw(t, "usage")
			must(s.Append(context.Background(), event.Raw{Type: event.TypeAssistantMessage, Data: raw(`{"turn":` + tn + `,"step":` + st + `,"content":[` + strings.Join(blocks, ",") + `]` + prov + usage + `}`)}, appendOp.Value()))
			for c := range calls {
				id := fmt.Sprintf("call%s_%s_%d", tn, st, c)
				call := must(s.Append(context.Background(), event.Raw{Type: event.TypeToolCall, Data: raw(`{"turn":` + tn + `,"step":` + st + `,"callId":"` + id + `","name":"read","arguments":"{}"}`)}))
				meta := rapid.SampledFrom([]string{``, `,"meta":{"ms":3}`, `,"error":{"name":"E","message":"bad"}`}).Draw(t, "meta")
				res := must(s.Append(context.Background(), event.Raw{Type: event.TypeToolResult, Data: raw(`{"turn":` + tn + `,"step":` + st + `,"callId":"` + id + `","content":[{"type":"text","text":"` + strings.Repeat("r", 60) + `"}],"isError":false` + meta + `}`)}, event.Intent{Op: event.Append(), Sources: []int64{call.Seq}}))
				if rapid.IntRange(0, 3).Draw(t, "prune") == 0 {
					if _, err := compaction.PruneToolResult(s, res.Seq, []json.RawMessage{raw(`{"type":"text","text":"[pruned]"}`)}); err != nil {
						t.Fatalf("prune: %v", err)
					}
				}
			}
			must(s.Append(context.Background(), event.Raw{Type: event.TypeStepEnd, Data: raw(`{"turn":` + tn + `,"step":` + st + `}`)}))
		}
		if rapid.IntRange(0, 3).Draw(t, "todo") == 0 {
			must(s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: raw(`{"todos":[]}`)}))
		}
		if rapid.IntRange(0, 3).Draw(t, "unknown") == 0 {
			must(s.AppendEvent(context.Background(), event.Event{Type: "plugin/note", Seq: int64(s.Len()), Time: 1, Data: raw(`{"n":1}`), Ignorable: true}))
		}
		if rapid.IntRange(0, 2).Draw(t, "compact") == 0 {
			compact(t, s, rapid.Bool().Draw(t, "compaction/*"))
		}
		reason := rapid.SampledFrom([]string{`{"kind":"completed"}`, `{"kind":"aborted"}`, `{"kind":"aborted","reason":"user"}`, `{"kind":"disposed"}`,
			`{"kind":"error","step":1,"message":"boom"}`, `{"kind":"error","step":1,"message":"boom","code":"E1"}`, `{"kind":"max-tokens"}`, `{"kind":"interrupted"}`}).Draw(t, "reason")
		must(s.Append(context.Background(), event.Raw{Type: event.TypeTurnEnd, Data: raw(`{"turn":` + tn + `,"reason":` + reason + `}`)}))
	}
	return s
}

// compact folds a balanced range of the surface into a summary.
func compact(t *rapid.T, s *session.Session, v2 bool) {
	surface := s.Surface().Slice()
	if len(surface) < 2 {
		return
	}
	var cuts []int
	for i, q := range surface {
		if ok, _ := compaction.BalancedAfter(s, q); ok {
			cuts = append(cuts, i)
		}
	}
	if len(cuts) == 0 {
		return
	}
	end := cuts[rapid.IntRange(0, len(cuts)-1).Draw(t, "cut")]
	opts := []compaction.Option{compaction.WithoutSizeCheck()}
	if v2 {
		opts = append(opts, compaction.WithVocabulary(compaction.CompactionEvents))
	}
	op, err := compaction.Begin(context.Background(), s, surface[0], surface[end], opts...)
	if err != nil {
		return // unbalanced at the start, nothing to compact: fine
	}
	if rapid.IntRange(0, 3).Draw(t, "abort") == 0 {
		if err := op.Abort(errors.New("stopped")); err != nil {
			t.Fatal(err)
		}
		return
	}
	if _, err := op.Commit(context.Background(), []json.RawMessage{raw(`{"type":"text","text":"summary"}`)}, compaction.Meta{Provider: "p", Model: "m"}, opts...); err != nil {
		t.Fatalf("commit: %v", err)
	}
}

// derived is a message as both vocabularies agree on it: its role and
// its content blocks, byte for byte.
type derived struct {
	Role    string
	Content []string
}

func ours(s *session.Session) []derived {
	var out []derived
	for _, m := range s.Messages().All() {
		d := derived{Role: string(m.Role)}
		for _, b := range m.Content {
			d.Content = append(d.Content, string(b))
		}
		out = append(out, d)
	}
	return out
}

type fataler interface{ Fatalf(string, ...any) }

func theirs(t fataler, msgs []json.RawMessage) []derived {
	var out []derived
	for _, m := range msgs {
		var v struct {
			Role    string
			Content []json.RawMessage
		}
		if err := json.Unmarshal(m, &v); err != nil {
			t.Fatalf("derived message %s: %v", m, err)
		}
		d := derived{Role: v.Role}
		for _, b := range v.Content {
			d.Content = append(d.Content, string(b))
		}
		out = append(out, d)
	}
	return out
}

func lines(t fataler, events []event.Event) []json.RawMessage {
	out := make([]json.RawMessage, len(events))
	for i := range events {
		b, err := events[i].AppendJSON(nil)
		if err != nil {
			t.Fatalf("%v", err)
		}
		out[i] = b
	}
	return out
}

// TestConvertedLogsDeriveTheSameMessages (REL-6): a random session
// converted to the released vocabulary passes the released rules and
// derives the same messages; converted back, it passes this library's
// rules and derives them again; and the released form is a fixed point
// (converting it back and forth changes no byte).
func TestConvertedLogsDeriveTheSameMessages(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := randomSession(t)
		want := ours(s)
		opts := convert.Options{Provider: "p0", Model: "m0"}
		rel, err := convert.ToReleased("s1", s.Events(), opts)
		if err != nil {
			t.Fatalf("ToReleased: %v", err)
		}
		checked, err := released.Check(&released.Log{Events: lines(t, rel)})
		if err != nil {
			t.Fatalf("released.Check: %v", err)
		}
		if d := cmp.Diff(want, theirs(t, checked.Messages)); d != "" {
			t.Fatalf("released messages differ (-ours +released):\n%s", d)
		}
		if d := cmp.Diff(s.Surface().Slice(), checked.Surface); d != "" {
			t.Fatalf("surfaces differ:\n%s", d)
		}
		brackets(t, rel)
		// The model of the released rules reads the file the same way.
		file, err := released.Encode(released.Header{ID: "s1"}, [][]event.Event{rel}, rapid.Bool().Draw(t, "zstd"))
		if err != nil {
			t.Fatalf("Encode: %v", err)
		}
		m, err := model.OpenReleased(file)
		if err != nil {
			t.Fatalf("model.OpenReleased: %v", err)
		}
		if d := cmp.Diff(asStrings(checked.Messages), asStrings(m.Messages)); d != "" || !slices.Equal(m.Surface, checked.Surface) || m.Events != len(rel) {
			t.Fatalf("the model reads the released file otherwise (-impl +model):\n%s\nsurface %v, model %v", d, checked.Surface, m.Surface)
		}
		back, err := convert.FromReleased("s1", checked.Events)
		if err != nil {
			t.Fatalf("FromReleased: %v", err)
		}
		again, err := session.Seed(back)
		if err != nil {
			t.Fatalf("seed of the converted log: %v", err)
		}
		if d := cmp.Diff(want, ours(again)); d != "" {
			t.Fatalf("messages after the round trip differ (-before +after):\n%s", d)
		}
		rel2, err := convert.ToReleased("s1", back, opts)
		if err != nil {
			t.Fatalf("ToReleased of the converted log: %v", err)
		}
		if d := cmp.Diff(lines(t, rel), lines(t, rel2)); d != "" {
			t.Fatalf("the released form is not a fixed point:\n%s", d)
		}
	})
}

// brackets checks the compaction records of a released log: each
// compaction/start names a compactionId no earlier one used, and the
// summary and end that follow it name the same one.
func brackets(t fataler, events []event.Event) {
	used := map[string]bool{}
	open := ""
	for _, e := range events {
		id := event.StringMember(e.Data, "compactionId")
		switch e.Type {
		case event.TypeCompactionStart:
			if used[id] || id == "" {
				t.Fatalf("compaction/start %d reuses compactionId %q", e.Seq, id)
			}
			used[id], open = true, id
		case event.TypeCompactionSummary, event.TypeCompactionEnd:
			if id != open {
				t.Fatalf("%s %d names compactionId %q inside the bracket of %q", e.Type, e.Seq, id, open)
			}
			if e.Type == event.TypeCompactionEnd {
				open = ""
			}
		}
	}
}

func asStrings(msgs []json.RawMessage) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, string(m))
	}
	return out
}
