// Command agent is a small, complete agent harness built on the library,
// with a deterministic fake model and no network: it is what a harness
// builder writes, and nothing more. It runs turns (a prompt, streamed
// chunks, tool calls run in goroutines, their results, an answer), takes
// a steering message typed in the middle of a step, keeps the context
// under a token budget by pruning then compacting whole turns, survives
// being killed (SIGKILL) in the middle of a turn and resumes, and at the
// end checks that the history it would send passes the strict rules that
// providers enforce.
//
//	go run ./examples/agent            # the whole scenario, in a temporary directory
//	go run ./examples/agent -dir DIR   # keep the session file in DIR
//
// Everything a harness needs to know (the next turn number, the pending
// calls, the token count, what to compact) it asks the session: the
// harness keeps no bookkeeping of its own.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/observe"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/session"
)

// budget is the token budget of the context sent to the model.
const budget = 450

func main() {
	ctx := context.Background()
	dir := flag.String("dir", "", "directory of the session file (default: a temporary one)")
	child := flag.Bool("child", false, "run turns until killed (the parent kills this process mid-turn)")
	flag.Parse()
	log.SetFlags(0)
	if *dir == "" {
		d, err := os.MkdirTemp("", "agent")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	path := filepath.Join(*dir, "session.jsonl")
	if *child {
		runUntilKilled(path)
		return
	}

	// 1. A process that is killed (SIGKILL) in the middle of a turn.
	fmt.Println("== a writer is killed in the middle of turn 3")
	killMidTurn(path)

	// 2. Resume: the store repairs the open turn (interrupted closers for
	// the calls that never got a result), and the agent goes on.
	a := open(path)
	fmt.Printf("== resumed: %d events, repair appended %d closers; next turn %d\n", a.s.Len(), len(a.report.Closers), a.s.NextTurn())
	for _, prompt := range []string{"read c.go and d.go", "summarise what you read", "read e.go"} {
		a.turn(prompt, "")
	}
	a.turn("read f.go and g.go", "also check h.go") // steering typed mid-step
	a.s.Close(ctx)

	// 3. What the model would be sent passes the strict rules: every
	// result answers a call made before it, nothing comes between calls
	// and their results. The log is replayed into a strict session.
	events := a.s.Events()
	strict := session.New(session.WithStrict())
	for _, e := range events {
		if _, err := strict.AppendEvent(ctx, e); err != nil {
			log.Fatalf("the history breaks a strict rule at %d: %v", e.Seq, err)
		}
	}
	fmt.Printf("== final history: %d events, %d messages, %d tokens; it passes the strict pairing rules\n", len(events), a.s.Messages().Len(), a.s.Tokens())
	synced := 0
	for _, w := range observed.StoreWrites {
		if w.Synced {
			synced++
		}
	}
	committed := 0
	for _, c := range observed.Compactions {
		if c.Outcome == "committed" {
			committed++
		}
	}
	fmt.Printf("== observed after the resume: %d appends, %d store writes (%d synced), %d prunes, %d compactions committed, %d resume\n",
		len(observed.Appends), len(observed.StoreWrites), synced, len(observed.Prunes), committed, len(observed.Resumes))
}

// observed records what the library did (package observe): counts are
// printed at the end. A real harness would pass observe.Logger(slog) or
// the OpenTelemetry observer of impl/surfaceotel instead.
var observed observe.Recorder

// agent is the harness: a durable session and the fake model.
type agent struct {
	s      *persist.Session
	report persist.LoadReport
}

// open opens (or creates) the session file and resumes it in strict mode.
func open(path string) *agent {
	ctx := context.Background()
	st, err := persist.OpenJSONL(ctx, path, persist.Header{ID: "agent-demo"}, persist.WithSync(persist.SyncMessages))
	if err != nil {
		log.Fatal(err)
	}
	s, report, err := persist.Resume(ctx, st, session.WithStrict(), session.WithObserver(&observed))
	if err != nil {
		log.Fatal(err)
	}
	return &agent{s: s, report: report}
}

// turn runs one turn: the prompt, then steps until the model answers
// without calling a tool; steering, when given, is typed during the first
// step. Then it keeps the context under the budget.
func (a *agent) turn(prompt, steering string) {
	ctx := context.Background()
	s := a.s
	n := s.NextTurn()
	must(s.Append(ctx, event.TurnStartData{Turn: n, Trigger: raw(`{"kind":"message","source":{"kind":"user"}}`)}))
	p := must(s.Append(ctx, event.UserMessageData{Content: text(prompt), Source: raw(`{"kind":"user"}`)}, event.AppendIntent()))
	for step := int64(1); ; step++ {
		must(s.Append(ctx, event.StepStartData{Turn: n, Step: step}))
		a.keepUnderBudget(p.Seq) // before every model call
		reply := fakeModel(s)
		var chunks []int64
		for _, c := range reply.stream() {
			chunks = append(chunks, must(s.Append(ctx, event.AssistantChunkData{Turn: n, Step: step, Chunk: c})).Seq)
		}
		must(s.Append(ctx, event.AssistantMessageData{Turn: n, Step: step, Content: reply.content(), Usage: reply.usage()}, event.AppendIntent(chunks...)))
		if steering != "" && len(reply.calls) > 0 {
			// The user types while the tools run: the session holds the
			// message until the calls are answered.
			_, now, err := s.SteerWhenBalanced(event.SteeringMessageData{Turn: n, Content: text(steering), Source: raw(`{"kind":"user"}`)})
			if err != nil {
				log.Fatal(err)
			}
			fmt.Printf("   steering typed mid-step; appended at once: %v (held until the results are in)\n", now)
			steering = ""
		}
		a.runTools(n, step, reply.calls)
		must(s.Append(ctx, event.StepEndData{Turn: n, Step: step}))
		if len(reply.calls) == 0 {
			break
		}
	}
	must(s.Append(ctx, event.TurnEndData{Turn: n, Reason: raw(`{"kind":"completed"}`)}))
	fmt.Printf("turn %d %q: %d messages, %d tokens\n", n, prompt, s.Messages().Len(), s.Tokens())
}

// runTools runs the calls in goroutines; each appends its result as it
// finishes (the session is safe for concurrent use).
func (a *agent) runTools(turn, step int64, calls []call) {
	ctx := context.Background()
	var wg sync.WaitGroup
	for _, c := range calls {
		tc := must(a.s.Append(ctx, event.ToolCallData{Turn: turn, Step: step, CallID: c.id, Name: "read", Arguments: `{"path":"` + c.path + `"}`}))
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := strings.Repeat("// "+c.path+" line\n", 40)
			must(a.s.Append(ctx, event.ToolResultData{Turn: turn, Step: step, CallID: c.id, Content: text(body)}, event.AppendIntent(tc.Seq)))
		}()
	}
	wg.Wait()
}

// keepUnderBudget prunes the large tool results the model has answered,
// then, if still over the budget, compacts whole turns (never the open
// one, whose prompt is prompt) until the rest fits.
func (a *agent) keepUnderBudget(prompt int64) {
	s := a.s.Session
	if s.Tokens() <= budget {
		return
	}
	before := s.Tokens()
	pruned := compaction.ProposePrunes(s, 40, nil)
	for _, seq := range pruned {
		if _, err := compaction.PruneToolResult(s, seq, text("[pruned: the model has read this]")); err != nil {
			log.Fatal(err)
		}
	}
	if len(pruned) > 0 {
		fmt.Printf("   pruned %d answered tool results: %d -> %d tokens\n", len(pruned), before, s.Tokens())
	} else {
		fmt.Printf("   no answered tool result worth pruning: %d tokens\n", before)
	}
	if s.Tokens() <= budget {
		return
	}
	res, err := compaction.CompactSelected(context.Background(), s, compaction.TargetTokens(budget/2, nil), summarize, nil)
	if err != nil {
		log.Fatal(err)
	}
	_, promptKept := s.Position(prompt)
	fmt.Printf("   compacted %d nodes into a summary (%d tokens kept%s): %d tokens; the open turn's prompt is still on the surface: %v\n",
		res.Selection.Folded, res.Selection.TokensKept, map[bool]string{true: ", over budget"}[res.Selection.OverBudget], s.Tokens(), promptKept)
	if !promptKept {
		log.Fatal("the compaction folded the open turn")
	}
}

// summarize is the fake summariser: a deterministic text naming what it
// folds.
func summarize(ctx context.Context, op *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
	return text(fmt.Sprintf("Summary of %d earlier messages: files were read and explained.", len(op.Messages))), compaction.Meta{Provider: "fake", Model: "fake-summariser"}, nil
}

// killMidTurn runs this program as a child that works until it is killed
// with SIGKILL in the middle of its third turn, after the model called
// tools and before their results.
func killMidTurn(path string) {
	cmd := exec.Command(os.Args[0], "-child", "-dir", filepath.Dir(path))
	out, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	buf := make([]byte, 64)
	var seen strings.Builder
	for !strings.Contains(seen.String(), "mid-turn\n") {
		n, err := out.Read(buf)
		if err != nil {
			log.Fatalf("the child ended before its turn: %v", err)
		}
		seen.Write(buf[:n])
	}
	cmd.Process.Kill() // SIGKILL: no deferred code, no flush
	cmd.Wait()
}

// runUntilKilled is the child: two turns, then a third that stops with
// tool calls pending and waits to be killed.
func runUntilKilled(path string) {
	ctx := context.Background()
	a := open(path)
	a.turn("read a.go", "")
	a.turn("read b.go", "")
	s := a.s
	n := s.NextTurn()
	must(s.Append(ctx, event.TurnStartData{Turn: n, Trigger: raw(`{"kind":"message","source":{"kind":"user"}}`)}))
	must(s.Append(ctx, event.UserMessageData{Content: text("read x.go and y.go"), Source: raw(`{"kind":"user"}`)}, event.AppendIntent()))
	must(s.Append(ctx, event.StepStartData{Turn: n, Step: 1}))
	reply := fakeModel(s)
	must(s.Append(ctx, event.AssistantMessageData{Turn: n, Step: 1, Content: reply.content()}, event.AppendIntent()))
	fmt.Printf("pending calls: %d\nmid-turn\n", len(s.PendingCalls()))
	for { // the tools are running when the process is killed (a sleep, not select{}: with no other goroutine the runtime would end a select{} as a deadlock)
		time.Sleep(time.Hour)
	}
}

// --- the fake model ---

type call struct{ id, path string }

type reply struct {
	text  string
	calls []call
}

// fakeModel answers the last message: a prompt that names files gets a
// call to read each; tool results or anything else get an answer.
func fakeModel(s *persist.Session) reply {
	msgs := s.Messages()
	last := msgs.At(msgs.Len() - 1)
	var block struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(last.Content[len(last.Content)-1], &block)
	if last.Role == "user" && block.Type == "text" && strings.HasPrefix(block.Text, "read ") {
		var r reply
		for i, f := range strings.Fields(strings.NewReplacer(" and ", " ", ",", " ").Replace(strings.TrimPrefix(block.Text, "read "))) {
			r.calls = append(r.calls, call{id: fmt.Sprintf("t%d-%d", s.Len(), i), path: f})
		}
		r.text = "Reading them."
		return r
	}
	return reply{text: fmt.Sprintf("Done: %d messages considered.", msgs.Len())}
}

// stream is the reply as text chunks.
func (r reply) stream() []json.RawMessage {
	var out []json.RawMessage
	for _, w := range strings.SplitAfter(r.text, " ") {
		b, _ := json.Marshal(map[string]string{"type": "text-delta", "text": w})
		out = append(out, b)
	}
	return out
}

// content is the reply's content blocks: its text and its tool calls.
func (r reply) content() []json.RawMessage {
	out := text(r.text)
	for _, c := range r.calls {
		b, _ := json.Marshal(map[string]any{"type": "tool-call", "id": c.id, "name": "read", "arguments": map[string]string{"path": c.path}})
		out = append(out, b)
	}
	return out
}

// usage is what the fake provider reports.
func (r reply) usage() json.RawMessage {
	return raw(fmt.Sprintf(`{"inputTokens":100,"outputTokens":%d}`, len(r.text)/4+8*len(r.calls)))
}

func text(s string) []json.RawMessage {
	b, _ := json.Marshal(map[string]string{"type": "text", "text": s})
	return []json.RawMessage{b}
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func must(e event.Event, err error) event.Event {
	if err != nil {
		log.Fatal(err)
	}
	return e
}
