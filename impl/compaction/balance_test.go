package compaction_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/model"
)

// TestBalanceOfRareResults: the balance of the cuts around every surface
// node, after every event, equals the model's, over the results the tool
// traffic generators rarely write: a call answered twice, a result of a
// call never made, a result with no callId, the same id called twice in
// one message and in two, and replaces over them (a prune-like replace of
// the duplicate, a neutral one of a balanced run, one that splits a call
// from its result). Each query comes right after its event, so the
// tracker's incremental folds are what answers, not a rebuild.
func TestBalanceOfRareResults(t *testing.T) {
	ctx := context.Background()
	s := session.New()
	var call = func(ids ...string) string {
		out := `{"turn":1,"step":1,"content":[`
		for i, id := range ids {
			if i > 0 {
				out += ","
			}
			out += `{"type":"tool-call","id":"` + id + `","name":"read","arguments":{}}`
		}
		return out + `]}`
	}
	result := func(id string) string {
		if id == "" {
			return `{"turn":1,"step":1,"content":[{"type":"text","text":"r"}],"isError":false}`
		}
		return `{"turn":1,"step":1,"callId":"` + id + `","content":[{"type":"text","text":"r"}],"isError":false}`
	}
	type step struct {
		typ   event.Type
		data  string
		op    func(nodes []int64) event.Intent
		wrong bool // the library may refuse it; skipped when it does
	}
	appendOp := func([]int64) event.Intent { return event.Intent{Op: event.Append()} }
	replace := func(i, j int) func([]int64) event.Intent {
		return func(nodes []int64) event.Intent {
			return event.Intent{Op: event.Replace(nodes[i], nodes[j]), Sources: append([]int64(nil), nodes[i:j+1]...)}
		}
	}
	steps := []step{
		{typ: event.TypeUserMessage, data: `{"content":[{"type":"text","text":"go"}],"source":{"kind":"user"}}`, op: appendOp},
		{typ: event.TypeAssistantMessage, data: call("a"), op: appendOp},                                                                             // 1
		{typ: event.TypeToolResult, data: result("a"), op: appendOp},                                                                                 // 2 answers a
		{typ: event.TypeToolResult, data: result("a"), op: appendOp},                                                                                 // 3 a again: answers nothing
		{typ: event.TypeToolResult, data: result("ghost"), op: appendOp, wrong: true},                                                                // 4 no such call
		{typ: event.TypeToolResult, data: result(""), op: appendOp, wrong: true},                                                                     // 5 no callId
		{typ: event.TypeUserMessage, data: `{"content":[{"type":"text","text":"x"}],"source":{"kind":"user"},"callId":"a"}`, op: appendOp},           // a look-alike of a result
		{typ: event.TypeAssistantMessage, data: call("b", "b"), op: appendOp},                                                                        // b twice in one message
		{typ: event.TypeContextMessage, data: `{"content":[{"type":"text","text":"x"}],"source":{"kind":"system"},"callId":"b"}`, op: appendOp},      // b pending; a look-alike
		{typ: event.TypeToolResult, data: result("b"), op: appendOp},                                                                                 // one b answered
		{typ: event.TypeAssistantMessage, data: call("a"), op: appendOp},                                                                             // a called again
		{typ: event.TypeToolResult, data: result("b"), op: appendOp},                                                                                 // the other b
		{typ: event.TypeToolResult, data: result("a"), op: appendOp},                                                                                 // the second a
		{typ: event.TypeToolResult, data: result("a"), op: replace(3, 3), wrong: true},                                                               // prune-like: the duplicate a
		{typ: event.TypeContextMessage, data: `{"content":[{"type":"text","text":"s"}],"source":{"kind":"system"}}`, op: replace(1, 2)},              // a call and its result
		{typ: event.TypeContextMessage, data: `{"content":[{"type":"text","text":"t"}],"source":{"kind":"system"}}`, op: replace(3, 4), wrong: true}, // splits b's call from its result
	}
	var nodes []int64
	for k, st := range steps {
		e, err := s.Append(ctx, event.Raw{Type: st.typ, Data: raw(st.data)}, st.op(s.Surface().Slice()))
		if err != nil {
			if st.wrong {
				t.Logf("step %d refused: %v", k, err)
				continue
			}
			t.Fatalf("step %d: %v", k, err)
		}
		balancesAsModel(t, s, fmt.Sprintf("after step %d (seq %d)", k, e.Seq))
		nodes = s.Surface().Slice()
	}
	if len(nodes) < 8 {
		t.Fatalf("%d nodes at the end: the steps did not run", len(nodes))
	}
	replacesOverRareResults(t, s.Events()[:12], result, call) // before the replaces
}

// replacesOverRareResults: on the log base (its tracker folded first, so
// that what follows is an incremental fold), every range of the surface
// replaced by each kind of node (a context message, a tool/result of the
// callId of the range's first node or of another, an assistant message
// with a call) leaves every cut's balance as the model has it.
func replacesOverRareResults(t *testing.T, base []event.Event, result func(string) string, call func(...string) string) {
	ctx := context.Background()
	replacements := []event.Raw{
		{Type: event.TypeContextMessage, Data: raw(`{"content":[{"type":"text","text":"s"}],"source":{"kind":"system"}}`)},
		{Type: event.TypeToolResult, Data: raw(result("a"))},
		{Type: event.TypeToolResult, Data: raw(result("b"))},
		{Type: event.TypeAssistantMessage, Data: raw(call("z"))},
		{Type: event.TypeAssistantMessage, Data: raw(`{"turn":1,"step":2,"content":[{"type":"text","text":"ok"}]}`)},
		// Look-alikes of a result: nodes of other types carrying a callId.
		{Type: event.TypeContextMessage, Data: raw(`{"content":[{"type":"text","text":"s"}],"source":{"kind":"system"},"callId":"a"}`)},
		{Type: event.TypeUserMessage, Data: raw(`{"content":[{"type":"text","text":"s"}],"source":{"kind":"user"},"callId":"b"}`)},
	}
	probe, err := session.Seed(base)
	if err != nil {
		t.Fatal(err)
	}
	surface := probe.Surface().Slice()
	tried := 0
	for i := range surface {
		for j := i; j < len(surface); j++ {
			for _, r := range replacements {
				s, err := session.Seed(base)
				if err != nil {
					t.Fatal(err)
				}
				compaction.BalancedAfter(s, surface[0]) // the tracker folds the log now
				if _, err := s.Append(ctx, r, event.Intent{Op: event.Replace(surface[i], surface[j]), Sources: append([]int64(nil), surface[i:j+1]...)}); err != nil {
					continue // refused (a result no call answers, say)
				}
				tried++
				balancesAsModel(t, s, fmt.Sprintf("[%d, %d] replaced by %s %s", surface[i], surface[j], r.Type, r.Data))
			}
		}
	}
	if tried < 50 {
		t.Fatalf("%d replaces accepted: the cases did not run", tried)
	}
}

// balancesAsModel checks the balance of the cuts before and after every
// surface node of s (and whether it is on the surface) against the
// model's derive of s's log.
func balancesAsModel(t *testing.T, s *session.Session, what string) {
	t.Helper()
	m, err := model.SeedSession(s.Events(), func() int64 { return 0 })
	if err != nil {
		t.Fatalf("%s: the model refuses the log: %v", what, err)
	}
	for _, seq := range s.Surface().Slice() {
		for _, after := range []bool{false, true} {
			want, wok := m.Balanced(seq, after)
			got, ok := compaction.BalancedBefore(s, seq)
			if after {
				got, ok = compaction.BalancedAfter(s, seq)
			}
			if got != want || ok != wok {
				t.Errorf("%s: node %d (after %v): balanced %v %v, the model %v %v", what, seq, after, got, ok, want, wok)
			}
		}
	}
}
