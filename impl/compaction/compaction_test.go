package compaction_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/repair"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/internal/ops"
	"github.com/surfacelog/surface/internal/traffic"
	"github.com/surfacelog/surface/model"
)

func raw(s string) json.RawMessage { return json.RawMessage(s) }

var summary = []json.RawMessage{raw(`{"type":"text","text":"We read f.go and fixed F."}`)}

// conversation appends a turn with a user prompt, an assistant message
// with tool calls ids, their results (answered lists which), and a
// closing assistant message. It returns the seqs of the surface nodes it
// appended.
func conversation(t testing.TB, s *session.Session, turn int, ids []string, answered []string) []int64 {
	t.Helper()
	var nodes []int64
	must := func(e event.Event, err error) event.Event {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	tn := fmt.Sprint(turn)
	must(s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: raw(`{"turn":` + tn + `,"trigger":{"kind":"message"}}`)}))
	nodes = append(nodes, must(s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: raw(`{"content":[{"type":"text","text":"question ` + tn + `"}],"source":{"kind":"user"}}`)}, event.Intent{Op: event.Append()})).Seq)
	var calls []string
	for _, id := range ids {
		calls = append(calls, `{"type":"tool-call","id":"`+id+`","name":"read","arguments":{}}`)
	}
	if len(calls) > 0 {
		nodes = append(nodes, must(s.Append(context.Background(), event.Raw{Type: event.TypeAssistantMessage, Data: raw(`{"turn":` + tn + `,"step":1,"content":[` + strings.Join(calls, ",") + `]}`)}, event.Intent{Op: event.Append()})).Seq)
	}
	for _, id := range answered {
		call := must(s.Append(context.Background(), event.Raw{Type: event.TypeToolCall, Data: raw(`{"turn":` + tn + `,"step":1,"callId":"` + id + `","name":"read","arguments":"{}"}`)}))
		nodes = append(nodes, must(s.Append(context.Background(), event.Raw{Type: event.TypeToolResult, Data: raw(`{"turn":` + tn + `,"step":1,"callId":"` + id + `","content":[{"type":"text","text":"` + strings.Repeat("x", 40) + `"}],"isError":false,"meta":{"ms":3}}`)}, event.Intent{Op: event.Append(), Sources: []int64{call.Seq}})).Seq)
	}
	if len(answered) == len(ids) {
		nodes = append(nodes, must(s.Append(context.Background(), event.Raw{Type: event.TypeAssistantMessage, Data: raw(`{"turn":` + tn + `,"step":2,"content":[{"type":"text","text":"answer ` + tn + `"}]}`)}, event.Intent{Op: event.Append()})).Seq)
	}
	return nodes
}

// equalsModel checks the session against the model's derive of its log.
func equalsModel(t *testing.T, s *session.Session) {
	t.Helper()
	st, err := model.Derive(s.Events())
	if err != nil {
		t.Fatalf("the model rejects the log: %v", err)
	}
	if want, got := (ops.State{Events: st.Log, Surface: st.Surface, Messages: st.Messages}), ops.StateOf(s); !ops.EqualState(want, got) {
		t.Fatalf("state differs from the model:\n%s", ops.Diff(want, got))
	}
}

// TestCompactExactRecords: COMP-1, COMP-5. A committed compaction appends
// the start, the summary record, the replacing user/message with exactly
// [start, summary, shadowed...] as sources, and the end; the messages are
// the summary followed by the retained nodes.
func TestCompactExactRecords(t *testing.T) {
	s := session.New()
	first := conversation(t, s, 1, []string{"a"}, []string{"a"})
	conversation(t, s, 2, nil, nil)
	retained := s.Surface().Slice()[len(first):]
	op, err := compaction.Begin(context.Background(), s, first[0], first[len(first)-1])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(op.Shadowed, first) || len(op.Messages) != len(first) || op.TokenCount == 0 {
		t.Fatalf("operation %+v", op)
	}
	res, err := op.Commit(context.Background(), summary, compaction.Meta{Provider: "p", Model: "m"}, plain...)
	if err != nil {
		t.Fatal(err)
	}
	log := s.Events()
	if log[res.StartSeq].Type != event.TypeCompactStart || string(log[res.StartSeq].Data) != `{"turn":2}` {
		t.Errorf("start event %s %s", log[res.StartSeq].Type, log[res.StartSeq].Data)
	}
	wantRecord := fmt.Sprintf(`{"summary":[{"type":"text","text":"We read f.go and fixed F."}],"shadowedRange":{"start":%d,"end":%d},"shadowedSeqs":[%s],"shadowedTokenCount":%d,"provider":"p","model":"m"}`,
		first[0], first[len(first)-1], strings.Trim(strings.Join(strings.Fields(fmt.Sprint(first)), ","), "[]"), op.TokenCount)
	if got := string(log[res.SummarySeq].Data); log[res.SummarySeq].Type != event.TypeCompactSummary || got != wantRecord {
		t.Errorf("summary record\n got %s\nwant %s", got, wantRecord)
	}
	rep := log[res.ReplaceSeq]
	wantSources := append([]int64{res.StartSeq, res.SummarySeq}, first...)
	if rep.Type != event.TypeUserMessage || rep.Op != event.Replace(first[0], first[len(first)-1]) || !slices.Equal(rep.Sources, wantSources) {
		t.Errorf("replace event %+v, want sources %v", rep, wantSources)
	}
	if log[res.EndSeq].Type != event.TypeCompactEnd || string(log[res.EndSeq].Data) != `{"turn":2}` || res.EndSeq != int64(len(log)-1) {
		t.Errorf("end event %s %s", log[res.EndSeq].Type, log[res.EndSeq].Data)
	}
	if got, want := s.Surface().Slice(), append([]int64{res.ReplaceSeq}, retained...); !slices.Equal(got, want) {
		t.Errorf("surface %v, want %v", got, want)
	}
	if m := s.Messages().At(0); m.Seq != res.ReplaceSeq || string(m.Content[0]) != string(summary[0]) {
		t.Errorf("first message %+v", m)
	}
	if _, open := compaction.InProgress(s); open {
		t.Errorf("the lock is still held")
	}
	equalsModel(t, s)
}

// TestLock: COMP-2. A second Begin while one is open is compaction.locked,
// also in a session seeded from the log (a resume); repair ends the open
// compaction (REP-6) and the lock is free again.
func TestLock(t *testing.T) {
	s := session.New()
	nodes := conversation(t, s, 1, nil, nil)
	conversation(t, s, 2, nil, nil)
	op, err := compaction.Begin(context.Background(), s, nodes[0], nodes[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := compaction.Begin(context.Background(), s, nodes[1], nodes[1]); !errors.Is(err, event.CodeCompactionLocked) {
		t.Fatalf("second Begin: %v", err)
	}
	resumed, err := session.Seed(s.Events())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := compaction.Begin(context.Background(), resumed, nodes[1], nodes[1]); !errors.Is(err, event.CodeCompactionLocked) {
		t.Fatalf("Begin after a resume with a compaction open: %v", err)
	}
	closers, err := resumed.Repair(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(closers) != 2 || closers[0].Type != event.TypeCompactEnd || string(closers[0].Data) != `{"turn":2,"error":"interrupted"}` || closers[1].Type != event.TypeTurnEnd {
		t.Fatalf("closers %v", closers)
	}
	if again, _ := resumed.Repair(context.Background()); len(again) != 0 {
		t.Fatalf("repair is not idempotent: %v", again)
	}
	if !slices.EqualFunc(closers, model.Closers(s.Events()), func(a, b event.Event) bool { return ops.EqualEvent(&a, &b) }) {
		t.Fatalf("closers differ from the model's")
	}
	// The lock is free, but the compaction needs a turn (COMP-3).
	if _, err := compaction.Begin(context.Background(), resumed, nodes[1], nodes[1]); !errors.Is(err, event.CodeCompactionNoTurn) {
		t.Fatalf("Begin after repair, no turn open: %v", err)
	}
	if _, err := compaction.Begin(context.Background(), resumed, nodes[1], nodes[1], compaction.WithVocabulary(compaction.CompactionEvents)); err != nil {
		t.Fatalf("Begin between turns with compaction/*: %v", err)
	}
	// The first session's operation commits on the first session.
	if _, err := op.Commit(context.Background(), summary, compaction.Meta{Provider: "p", Model: "m"}, plain...); err != nil {
		t.Fatal(err)
	}
	if _, err := op.Commit(context.Background(), summary, compaction.Meta{}); !errors.Is(err, event.CodeCompactionFinished) {
		t.Fatalf("second Commit: %v", err)
	}
}

// TestPairing: COMP-4. A range whose edge splits a tool call from its
// result, or folds a pending call, is refused; snapping shrinks it to
// balanced cuts.
func TestPairing(t *testing.T) {
	s := session.New()
	done := conversation(t, s, 1, []string{"a", "b"}, []string{"a", "b"})
	pending := conversation(t, s, 2, []string{"c"}, nil) // a pending call
	// user(0) assistant[a,b] result(a) result(b) answer | user assistant[c]
	if _, err := compaction.Begin(context.Background(), s, done[0], done[2]); !errors.Is(err, event.CodeCompactionUnbalanced) {
		t.Fatalf("range ending between a call and its result: %v", err)
	}
	if _, err := compaction.Begin(context.Background(), s, done[2], done[4]); !errors.Is(err, event.CodeCompactionUnbalanced) {
		t.Fatalf("range starting between a call and its result: %v", err)
	}
	if _, err := compaction.Begin(context.Background(), s, done[0], pending[1]); !errors.Is(err, event.CodeCompactionUnbalanced) {
		t.Fatalf("range folding a pending call: %v", err)
	}
	for seq, want := range map[int64][2]bool{done[0]: {true, true}, done[1]: {true, false}, done[3]: {false, true}, pending[1]: {true, false}} {
		before, ok1 := compaction.BalancedBefore(s, seq)
		after, ok2 := compaction.BalancedAfter(s, seq)
		if !ok1 || !ok2 || before != want[0] || after != want[1] {
			t.Errorf("node %d: balanced before %v after %v, want %v", seq, before, after, want)
		}
	}
	if _, ok := compaction.BalancedBefore(s, 9999); ok {
		t.Errorf("a seq off the surface is reported on it")
	}
	op, err := compaction.Begin(context.Background(), s, done[0], pending[1], compaction.WithSnap())
	if err != nil {
		t.Fatal(err)
	}
	if op.Start != done[0] || op.End != pending[0] {
		t.Fatalf("snapped to %d..%d, want %d..%d", op.Start, op.End, done[0], pending[0])
	}
	if err := op.Abort(errors.New("summariser down")); err != nil {
		t.Fatal(err)
	}
	if e := s.Events()[s.Len()-1]; e.Type != event.TypeCompactEnd || string(e.Data) != `{"turn":2,"error":"summariser down"}` {
		t.Fatalf("abort wrote %s %s", e.Type, e.Data)
	}
	if _, err := compaction.Begin(context.Background(), s, done[2], done[2], compaction.WithSnap()); !errors.Is(err, event.CodeCompactionNothingToCompact) {
		t.Fatalf("snapping a range with no balanced cut: %v", err)
	}
	equalsModel(t, s)
}

// TestSecondCompactionKeepsFirst: a regression elsewhere: a second
// compaction whose range includes the first summary node keeps everything
// the first one kept, and its provenance reaches every folded node.
func TestSecondCompactionKeepsFirst(t *testing.T) {
	s := session.New()
	one := conversation(t, s, 1, []string{"a"}, []string{"a"})
	two := conversation(t, s, 2, nil, nil)
	three := conversation(t, s, 3, nil, nil)
	fake := func(ctx context.Context, op *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
		return summary, compaction.Meta{Provider: "p", Model: "m"}, nil
	}
	r1, err := compaction.Compact(context.Background(), s, one[0], one[len(one)-1], fake, plain...)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := compaction.Compact(context.Background(), s, r1.ReplaceSeq, two[len(two)-1], fake, plain...)
	if err != nil {
		t.Fatal(err)
	}
	if want := append([]int64{r2.ReplaceSeq}, three...); !slices.Equal(s.Surface().Slice(), want) {
		t.Fatalf("surface %v, want %v", s.Surface(), want)
	}
	if !slices.Equal(r2.Shadowed, append([]int64{r1.ReplaceSeq}, two...)) {
		t.Fatalf("second compaction shadowed %v", r2.Shadowed)
	}
	prov, _ := s.Provenance(r2.ReplaceSeq)
	for _, n := range append(append([]int64(nil), one...), two...) {
		if !slices.Contains(prov, n) {
			t.Errorf("node %d is not in the provenance of the second summary", n)
		}
	}
	equalsModel(t, s)
}

// TestRangeChanged: COMP-5. A prune inside the range between Begin and
// Commit of a compaction that allows other appends (WithConcurrentAppends,
// or the CompactionEvents vocabulary) changes the shadowed nodes: Commit
// ends the compaction with the error compaction.range_changed and
// replaces nothing.
func TestRangeChanged(t *testing.T) {
	for _, c := range []struct {
		opts []compaction.Option
		end  string
	}{
		{[]compaction.Option{compaction.WithConcurrentAppends()}, `{"turn":1,"error":"compaction.range_changed"}`},
		{[]compaction.Option{compaction.WithVocabulary(compaction.CompactionEvents)}, `{"compactionId":"c6","turn":1,"error":"compaction.range_changed"}`},
	} {
		s := session.New()
		nodes := conversation(t, s, 1, []string{"a"}, []string{"a"})
		op, err := compaction.Begin(context.Background(), s, nodes[0], nodes[len(nodes)-1], c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := compaction.PruneToolResult(s, nodes[2], []json.RawMessage{raw(`{"type":"text","text":"[pruned]"}`)}); err != nil {
			t.Fatal(err)
		}
		before := s.Surface().Slice()
		if _, err := op.Commit(context.Background(), summary, compaction.Meta{}); !errors.Is(err, event.CodeCompactionRangeChanged) {
			t.Fatalf("commit after the range changed: %v", err)
		}
		if last := s.Events()[s.Len()-1]; string(last.Data) != c.end {
			t.Fatalf("the end event is %s %s, want %s", last.Type, last.Data, c.end)
		}
		if !slices.Equal(s.Surface().Slice(), before) {
			t.Fatalf("the surface changed")
		}
		if _, open := compaction.InProgress(s); open {
			t.Fatalf("the lock is still held")
		}
		equalsModel(t, s)
	}
}

// TestLogChanged: COMP-5, D60. A CompactEvents commit after any other
// append since Begin (a step/start, a log-only event, a chunk: nothing
// near the range) ends the compaction with the seed system's text and
// compaction.log_changed, replaces nothing and frees the lock; the same
// appends under WithConcurrentAppends, or in the CompactionEvents
// vocabulary, commit; an append of nothing (a failed one) changes nothing.
func TestLogChanged(t *testing.T) {
	appends := map[string]func(s *session.Session) error{
		"step/start": func(s *session.Session) error {
			_, err := s.Append(context.Background(), event.Raw{Type: event.TypeStepStart, Data: json.RawMessage(`{"turn":1,"step":9}`)})
			return err
		},
		"a chunk": func(s *session.Session) error {
			_, err := s.Append(context.Background(), event.Raw{Type: event.TypeAssistantChunk, Data: json.RawMessage(`{"turn":1,"step":9,"chunk":{"type":"text-delta","text":"x"}}`)})
			return err
		},
		"a refused append": func(s *session.Session) error {
			_, err := s.Append(context.Background(), event.Raw{Type: event.TypeStepStart, Data: json.RawMessage(`{"turn":"x"}`)})
			if err == nil {
				return errors.New("accepted")
			}
			return nil
		},
	}
	for name, app := range appends {
		for _, c := range []struct {
			opts    []compaction.Option
			changed bool
		}{
			{nil, name != "a refused append"},
			{[]compaction.Option{compaction.WithConcurrentAppends()}, false},
			{[]compaction.Option{compaction.WithVocabulary(compaction.CompactionEvents)}, false},
		} {
			s := session.New()
			nodes := conversation(t, s, 1, []string{"a"}, []string{"a"})
			op, err := compaction.Begin(context.Background(), s, nodes[0], nodes[len(nodes)-1], append(c.opts, compaction.WithoutSizeCheck())...)
			if err != nil {
				t.Fatal(err)
			}
			if err := app(s); err != nil {
				t.Fatal(err)
			}
			before, n := s.Surface().Slice(), s.Len()
			_, err = op.Commit(context.Background(), summary, compaction.Meta{Provider: "p", Model: "m"})
			if !c.changed {
				if err != nil {
					t.Fatalf("%s, %d options: %v", name, len(c.opts), err)
				}
				equalsModel(t, s)
				continue
			}
			if !errors.Is(err, event.CodeCompactionLogChanged) || strings.Contains(err.Error(), "compaction: ") {
				t.Fatalf("%s: commit after another append: %v", name, err)
			}
			if s.Len() != n+1 {
				t.Fatalf("%s: %d events appended, want the end event only", name, s.Len()-n)
			}
			if last := s.Events()[s.Len()-1]; last.Type != event.TypeCompactEnd || string(last.Data) != `{"turn":1,"error":"compaction: session log changed during summarization"}` {
				t.Fatalf("%s: the end event is %s %s", name, last.Type, last.Data)
			}
			if !slices.Equal(s.Surface().Slice(), before) {
				t.Fatalf("%s: the surface changed", name)
			}
			if _, open := compaction.InProgress(s); open {
				t.Fatalf("%s: the lock is still held", name)
			}
			if _, err := op.Commit(context.Background(), summary, compaction.Meta{}); !errors.Is(err, event.CodeCompactionFinished) {
				t.Fatalf("%s: a second commit: %v", name, err)
			}
			equalsModel(t, s)
		}
	}
}

// TestPrune: COMP-7. The record, then a tool/result replacing exactly the
// node, with the same callId and other members, the new content, and
// sourceEventSeqs [seq]; the tool call keeps its result.
func TestPrune(t *testing.T) {
	s := session.New()
	nodes := conversation(t, s, 1, []string{"a"}, []string{"a"})
	old := s.Events()[nodes[2]]
	res, err := compaction.PruneToolResult(s, nodes[2], []json.RawMessage{raw(`{"type":"text","text":"[pruned]"}`)})
	if err != nil {
		t.Fatal(err)
	}
	log := s.Events()
	rec, rep := log[res.RecordSeq], log[res.ReplaceSeq]
	if rec.Type != event.TypeCompactionPrune || string(rec.Data) != fmt.Sprintf(`{"shadowedRange":{"start":%d,"end":%d},"shadowedSeqs":[%d],"shadowedTokenCount":%d}`, nodes[2], nodes[2], nodes[2], res.TokenCount) {
		t.Errorf("record %s", rec.Data)
	}
	want := strings.Replace(string(old.Data), `"content":[{"type":"text","text":"`+strings.Repeat("x", 40)+`"}]`, `"content":[{"type":"text","text":"[pruned]"}]`, 1)
	if string(rep.Data) != want || rep.Op != event.Replace(nodes[2], nodes[2]) || !slices.Equal(rep.Sources, []int64{nodes[2]}) {
		t.Errorf("replacement %s %+v, want data %s", rep.Data, rep.Op, want)
	}
	if b, _ := compaction.BalancedAfter(s, res.ReplaceSeq); !b {
		t.Errorf("the pruned result no longer answers its call")
	}
	// Refusals: a user message, a shadowed result, seqs outside the log.
	// None names an event of the log as its offender (nothing was
	// appended), and nothing is appended.
	before := s.Len()
	for name, seq := range map[string]int64{"a user message": nodes[0], "a shadowed result": nodes[2], "seq -1": -1, "a seq past the log": int64(before) + 2} {
		_, err := compaction.PruneToolResult(s, seq, nil)
		var e *event.Error
		if !errors.Is(err, event.CodeCompactionNotPrunable) || !errors.As(err, &e) || e.Seq != -1 || e.Index != -1 {
			t.Errorf("pruning %s: %#v", name, err)
		}
	}
	if s.Len() != before {
		t.Errorf("refused prunes appended %d events", s.Len()-before)
	}
	equalsModel(t, s)
}

// TestSelect: COMP-8. KeepLast and KeepTokens propose [head, c], moved back
// to a balanced cut; with nothing to fold, compaction.nothing_to_compact.
// (Node-level cuts that may reach into the open turn: COMP-8 as the
// protocol's compact_select has it. TestSelectTurnAware has the default.)
func TestSelect(t *testing.T) {
	nodeLevel := []compaction.SelectOption{compaction.WithNodeCuts(), compaction.WithOpenTurn()}
	s := session.New()
	one := conversation(t, s, 1, nil, nil)
	two := conversation(t, s, 2, []string{"a"}, []string{"a"})
	surface := s.Surface().Slice()
	r, err := compaction.Select(s, compaction.KeepLast(3), nodeLevel...)
	// keeping the last 3 would cut between the call of "a" and its result:
	// the cut moves back to before the assistant message with the call.
	if err != nil || r.Start != surface[0] || r.End != two[0] {
		t.Fatalf("KeepLast(3): %+v %v (surface %v)", r, err, surface)
	}
	if r, err := compaction.Select(s, compaction.KeepLast(len(surface)-len(one)), nodeLevel...); err != nil || r.End != one[len(one)-1] {
		t.Fatalf("KeepLast: %+v %v", r, err)
	}
	if _, err := compaction.Select(s, compaction.KeepLast(len(surface)), nodeLevel...); !errors.Is(err, event.CodeCompactionNothingToCompact) {
		t.Fatalf("KeepLast(all): %v", err)
	}
	r, err = compaction.Select(s, compaction.KeepTokens(1, nil), nodeLevel...)
	if err != nil || r.End != surface[len(surface)-2] {
		t.Fatalf("KeepTokens(1): %+v %v", r, err)
	}
	// One token per message: keeping 2 keeps the result of "a" and the
	// answer, and the cut before the result is moved back past the call.
	est := func(m message.Message) int { return 1 }
	if r, err := compaction.Select(s, compaction.KeepTokens(2, est), nodeLevel...); err != nil || r.End != two[0] {
		t.Fatalf("KeepTokens(2, one per message): %+v %v", r, err)
	}
}

// TestSeedSystemBracketLoads: a log in which the seed system (b736889ac7)
// compacted loads, and its messages are the summary followed by the
// retained nodes.
func TestSeedSystemBracketLoads(t *testing.T) {
	lines := traffic.SeedSystemBracket()
	var wire []json.RawMessage
	for _, l := range lines {
		wire = append(wire, raw(l))
	}
	s, err := session.SeedJSON(wire)
	if err != nil {
		t.Fatal(err)
	}
	msgs := s.Messages().Slice()
	if len(msgs) != 2 || msgs[0].Seq != 6 || string(msgs[0].Content[0]) != `{"type":"text","text":"f.go returns 41."}` || msgs[1].Seq != 3 {
		t.Fatalf("messages %v", msgs)
	}
	if _, open := compaction.InProgress(s); open {
		t.Fatal("the bracket is closed")
	}
	for i, e := range s.Events() {
		if b, _ := e.MarshalJSON(); string(b) != lines[i] {
			t.Errorf("line %d does not round-trip:\n%s\n%s", i, b, lines[i])
		}
	}
	// Cut after the start event (a crash in the middle): repair ends it.
	crashed, err := session.SeedJSON(wire[:5])
	if err != nil {
		t.Fatal(err)
	}
	closers, _ := crashed.Repair(context.Background())
	var types []event.Type
	for _, c := range closers {
		types = append(types, c.Type)
	}
	if !slices.Equal(types, []event.Type{event.TypeCompactEnd, event.TypeTurnEnd}) || closers[0].Data == nil || string(closers[0].Data) != `{"turn":1,"error":"`+repair.Interrupted+`"}` {
		t.Fatalf("closers %v", closers)
	}
}

// TestPairingIsIncremental: COMP-4. The balance of an appended node is
// known without a rebuild: asking after each of n appends costs O(n) in
// all, not O(n^2) (measured as time per query at two sizes).
func TestPairingIsIncremental(t *testing.T) {
	perQuery := func(n int) float64 {
		s := session.New()
		for i := 0; i < n; i++ {
			conversation(t, s, i+1, nil, nil)
		}
		// The first query folds the whole log once (O(n)); what must be
		// O(1) amortised is every query after it. Without this warm-up a
		// busy machine lets testing.Benchmark time a single iteration:
		// the one-time fold.
		compaction.BalancedAfter(s, s.Surface().At(0))
		res := testing.Benchmark(func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				e, _ := s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: raw(`{"content":[],"source":{"kind":"user"}}`)}, event.Intent{Op: event.Append()})
				compaction.BalancedAfter(s, e.Seq)
			}
		})
		return float64(res.NsPerOp())
	}
	small, large := perQuery(100), perQuery(20000)
	if large > 20*small {
		t.Errorf("append+balance query: %.0f ns at 100 turns, %.0f ns at 20000: not O(1) amortised", small, large)
	}
}

// plain commits summaries unframed and without the size check (COMP-11),
// for the tests of the other rules, whose ranges are short.
var plain = []compaction.Option{compaction.WithoutFraming(), compaction.WithoutSizeCheck()}

// TestErrorTextsSayThingsOnce: a compaction error says its code once, with
// no "compaction:" prefix after it, and a summariser's error without a
// message leaves no dangling ": ".
func TestErrorTextsSayThingsOnce(t *testing.T) {
	ctx := context.Background()
	s := session.New()
	nodes := conversation(t, s, 1, []string{"a"}, []string{"a"})
	var errs []error
	op, err := compaction.Begin(ctx, s, nodes[0], nodes[0])
	if err != nil {
		t.Fatal(err)
	}
	_, err = compaction.Begin(ctx, s, nodes[0], nodes[0])
	errs = append(errs, err) // locked
	_, err = op.Commit(ctx, []json.RawMessage{raw(`{"type":"bogus"}`)}, compaction.Meta{})
	errs = append(errs, err) // summary_invalid
	if err := op.Abort(errors.New("")); err != nil {
		t.Fatal(err)
	}
	errs = append(errs, op.Abort(nil)) // finished
	_, err = compaction.Select(s, compaction.KeepLast(100))
	errs = append(errs, err) // nothing_to_compact
	_, err = compaction.Compact(ctx, s, nodes[0], nodes[0], func(context.Context, *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
		return nil, compaction.Meta{}, errors.New("")
	})
	errs = append(errs, err) // a summariser's empty error
	for i, err := range errs {
		if err == nil {
			t.Fatalf("%d: no error", i)
		}
		msg := err.Error()
		if strings.Contains(msg, ": compaction:") || strings.HasSuffix(msg, ": ") || strings.HasSuffix(msg, ":") || strings.Contains(msg, ": :") {
			t.Errorf("%d: %q", i, msg)
		}
		if c := event.CodeOf(err); c != "" && strings.Count(msg, string(c)) != 1 {
			t.Errorf("%d: %q says %s %d times", i, msg, c, strings.Count(msg, string(c)))
		}
	}
}
