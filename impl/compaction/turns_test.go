package compaction_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/session"
)

// turnNodes are the surface nodes of one turn.
type turnNodes []int64

// fullTurn appends a whole turn: prompt, a call of "r<turn>" and its
// result (of resultBytes bytes), an answer (with usage when outputTokens >
// 0), and turn/end unless open. It returns the turn's surface nodes.
func fullTurn(t testing.TB, s *session.Session, turn, resultBytes, outputTokens int, open bool) turnNodes {
	t.Helper()
	must := func(e event.Event, err error) event.Event {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	tn := fmt.Sprint(turn)
	id := "r" + tn
	var nodes turnNodes
	must(s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: raw(`{"turn":` + tn + `,"trigger":{"kind":"message"}}`)}))
	nodes = append(nodes, must(s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: raw(`{"content":[{"type":"text","text":"question ` + tn + `"}],"source":{"kind":"user"}}`)}, event.Intent{Op: event.Append()})).Seq)
	nodes = append(nodes, must(s.Append(context.Background(), event.Raw{Type: event.TypeAssistantMessage, Data: raw(`{"turn":` + tn + `,"step":1,"content":[{"type":"tool-call","id":"` + id + `","name":"read","arguments":{}}]}`)}, event.Intent{Op: event.Append()})).Seq)
	call := must(s.Append(context.Background(), event.Raw{Type: event.TypeToolCall, Data: raw(`{"turn":` + tn + `,"step":1,"callId":"` + id + `","name":"read","arguments":"{}"}`)}))
	nodes = append(nodes, must(s.Append(context.Background(), event.Raw{Type: event.TypeToolResult, Data: raw(`{"turn":` + tn + `,"step":1,"callId":"` + id + `","content":[{"type":"text","text":"` + strings.Repeat("x", resultBytes) + `"}],"isError":false}`)}, event.Intent{Op: event.Append(), Sources: []int64{call.Seq}})).Seq)
	usage := ""
	if outputTokens > 0 {
		usage = fmt.Sprintf(`,"usage":{"inputTokens":10,"outputTokens":%d}`, outputTokens)
	}
	if !open {
		nodes = append(nodes, must(s.Append(context.Background(), event.Raw{Type: event.TypeAssistantMessage, Data: raw(`{"turn":` + tn + `,"step":2,"content":[{"type":"text","text":"answer ` + tn + `"}]` + usage + `}`)}, event.Intent{Op: event.Append()})).Seq)
		must(s.Append(context.Background(), event.Raw{Type: event.TypeTurnEnd, Data: raw(`{"turn":` + tn + `,"reason":{"kind":"completed"}}`)}))
	}
	return nodes
}

func last(n turnNodes) int64 { return n[len(n)-1] }

// TestSelectTurnAware: COMP-10. Built-in policies cut where a turn begins
// and never fold the open turn (its prompt included) unless asked; the
// token policy is a target of the tokens kept; recorded usage counts.
func TestSelectTurnAware(t *testing.T) {
	s := session.New()
	t1 := fullTurn(t, s, 1, 40, 0, false)
	t2 := fullTurn(t, s, 2, 40, 0, false)
	t3 := fullTurn(t, s, 3, 40, 0, false)
	open := fullTurn(t, s, 4, 4000, 0, true) // a large result at the tail
	cases := []struct {
		name   string
		policy compaction.Policy
		opts   []compaction.SelectOption
		end    int64
		over   bool
		err    error
	}{
		{"KeepTurns(1)", compaction.KeepTurns(1), nil, last(t2), false, nil},
		{"KeepTurns(0)", compaction.KeepTurns(0), nil, last(t3), false, nil},
		{"KeepTurns(3)", compaction.KeepTurns(3), nil, 0, false, event.CodeCompactionNothingToCompact},
		// KeepLast(2) would cut inside turn 4; the cut moves back to where
		// turn 4 begins... which is the open turn: nothing before it is
		// kept, so turns 1 to 3 are folded.
		{"KeepLast(2)", compaction.KeepLast(2), nil, last(t3), false, nil},
		// KeepLast(6): 6 nodes back is inside turn 3: the cut moves back to
		// its start.
		{"KeepLast(6)", compaction.KeepLast(6), nil, last(t2), false, nil},
		// The open turn alone is over 900 tokens: everything before it is
		// folded, and the selection says the budget is not met.
		{"TargetTokens(900)", compaction.TargetTokens(900, nil), nil, last(t3), true, nil},
		// Enough room for turn 3 too: only turns 1 and 2 go.
		{"TargetTokens(1100)", compaction.TargetTokens(1100, nil), nil, last(t2), false, nil},
		{"TargetTokens(huge)", compaction.TargetTokens(1<<30, nil), nil, 0, false, event.CodeCompactionNothingToCompact},
		// Asked explicitly, a selection may fold into the open turn, at a
		// balanced cut: up to the call of r4, whose result is pending... no:
		// r4 is answered, so its prompt, call and result can all go.
		{"TargetTokens(900) into the open turn", compaction.TargetTokens(900, nil), []compaction.SelectOption{compaction.WithOpenTurn(), compaction.WithNodeCuts()}, last(open), false, nil},
	}
	for _, c := range cases {
		sel, err := compaction.Select(s, c.policy, c.opts...)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("%s: %+v %v, want %v", c.name, sel, err, c.err)
			}
			continue
		}
		if err != nil || sel.Start != t1[0] || sel.End != c.end || sel.OverBudget != c.over {
			t.Errorf("%s: %+v %v; want [%d, %d] over budget %v", c.name, sel, err, t1[0], c.end, c.over)
		}
		if sel.TokensKept > sel.TokensBefore || sel.Folded == 0 {
			t.Errorf("%s: %+v", c.name, sel)
		}
	}
	// The open turn's prompt is never in a default selection.
	for _, p := range []compaction.Policy{compaction.KeepLast(0), compaction.KeepTurns(0), compaction.TargetTokens(0, nil), compaction.KeepTokens(0, nil)} {
		if sel, err := compaction.Select(s, p); err != nil || sel.End == open[0] || sel.End > last(t3) {
			t.Errorf("%T folds into the open turn: %+v %v", p, sel, err)
		}
	}
}

// TestSelectUsesRecordedUsage: an assistant message that recorded its
// provider's output tokens counts those, not the estimate of its text.
func TestSelectUsesRecordedUsage(t *testing.T) {
	s := session.New()
	t1 := fullTurn(t, s, 1, 4, 0, false)
	t2 := fullTurn(t, s, 2, 4, 5000, false) // a tiny answer that cost 5000 tokens
	fullTurn(t, s, 3, 4, 0, true)
	sel, err := compaction.Select(s, compaction.TargetTokens(1000, nil))
	if err != nil || sel.End != last(t2) {
		t.Fatalf("%+v %v: turn 2's recorded 5000 tokens must be folded", sel, err)
	}
	if n, ok := compaction.UsageTokens(s.Events()[last(t2)].Data); !ok || n != 5000 {
		t.Fatalf("UsageTokens: %d %v", n, ok)
	}
	_ = t1
}

// TestProposePrunes: the tool results above a size that the model has
// answered and that lie before the open turn.
func TestProposePrunes(t *testing.T) {
	s := session.New()
	t1 := fullTurn(t, s, 1, 4000, 0, false) // big, answered
	fullTurn(t, s, 2, 4, 0, false)          // small
	open := fullTurn(t, s, 3, 4000, 0, true)
	got := compaction.ProposePrunes(s, 500, nil)
	if len(got) != 1 || got[0] != t1[2] {
		t.Fatalf("proposed %v, want [%d] (not the open turn's %d)", got, t1[2], open[2])
	}
	if _, err := compaction.PruneToolResult(s, got[0], []json.RawMessage{raw(`{"type":"text","text":"[pruned]"}`)}); err != nil {
		t.Fatal(err)
	}
	if got := compaction.ProposePrunes(s, 500, nil); len(got) != 0 {
		t.Fatalf("after the prune: %v", got)
	}
}

// TestCompactSelectedUnderConcurrentAppends: choosing and beginning are
// one step, so appends from other goroutines never make a compaction
// fail (the failures the separate Select-then-Compact saw:
// replace.start_not_on_surface, compaction.locked, nothing_to_compact).
func TestCompactSelectedUnderConcurrentAppends(t *testing.T) {
	s := session.New()
	fullTurn(t, s, 1, 40, 0, false)
	fullTurn(t, s, 2, 40, 0, false)
	summarize := func(ctx context.Context, op *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
		return summary, compaction.Meta{Provider: "p", Model: "m"}, nil
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: raw(`{"todos":[]}`)})
		}
	}()
	for i := 0; i < 50; i++ {
		// A new complete turn each time, so there is always one to fold.
		fullTurn(t, s, 3+i, 40, 0, false)
		res, err := compaction.CompactSelected(context.Background(), s, compaction.KeepTurns(1), summarize, nil, append(plain, compaction.WithVocabulary(compaction.CompactionEvents))...)
		if err != nil {
			t.Fatalf("compaction %d: %v", i, err)
		}
		if res.Selection.Folded == 0 {
			t.Fatalf("compaction %d folded nothing", i)
		}
	}
	close(stop)
	wg.Wait()
	if _, open := compaction.InProgress(s); open {
		t.Fatal("a compaction is still open")
	}
	_ = message.Message{}
}

// TestSelectTokenBudgetsAtTheirEdge: KeepTokens and TargetTokens at every
// budget from 0 to one past the whole surface, over messages of uneven
// weights (ties included), against the policies' definitions written out
// here: KeepTokens keeps the shortest tail (at least one node) whose
// tokens reach the budget; TargetTokens folds the shortest head after
// which at most budget tokens are left, and folds nothing when the whole
// surface fits. A budget equal to a tail's tokens is where "reaches" and
// "at most" are decided.
func TestSelectTokenBudgetsAtTheirEdge(t *testing.T) {
	weights := []int{3, 1, 4, 1, 5, 2}
	s := session.New()
	var seqs []int64
	for i, w := range weights {
		typ, extra := event.TypeUserMessage, `,"source":{"kind":"user"}`
		if i%2 == 1 {
			typ, extra = event.TypeAssistantMessage, `,"turn":1,"step":1`
		}
		e, err := s.Append(context.Background(), event.Raw{Type: typ, Data: raw(`{"content":[{"type":"text","text":"` + strings.Repeat("q", w) + `"}]` + extra + `}`)}, event.Intent{Op: event.Append()})
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, e.Seq)
	}
	est := func(m message.Message) int { return strings.Count(string(m.Content[0]), "q") }
	n, total := len(weights), 0
	suffix := make([]int, n+1)
	for i := n - 1; i >= 0; i-- {
		suffix[i] = suffix[i+1] + weights[i]
	}
	total = suffix[0]
	opts := []compaction.SelectOption{compaction.WithNodeCuts(), compaction.WithSelectEstimator(est)}
	for budget := 0; budget <= total+1; budget++ {
		// KeepTokens: keep from the last position whose tail reaches budget.
		keep := 0
		for i := n - 1; i >= 0; i-- {
			if suffix[i] >= budget {
				keep = i
				break
			}
		}
		sel, err := compaction.Select(s, compaction.KeepTokens(budget, nil), opts...)
		switch {
		case keep == 0:
			if !errors.Is(err, event.CodeCompactionNothingToCompact) {
				t.Errorf("KeepTokens(%d): %+v %v, want nothing to compact", budget, sel, err)
			}
		case err != nil || sel.Start != seqs[0] || sel.End != seqs[keep-1] || sel.TokensKept != suffix[keep]:
			t.Errorf("KeepTokens(%d): %+v %v, want [%d, %d] keeping %d tokens", budget, sel, err, seqs[0], seqs[keep-1], suffix[keep])
		}
		// TargetTokens: fold up to the first cut leaving at most budget.
		sel, err = compaction.Select(s, compaction.TargetTokens(budget, nil), opts...)
		if total <= budget {
			if !errors.Is(err, event.CodeCompactionNothingToCompact) {
				t.Errorf("TargetTokens(%d) of a surface of %d: %+v %v, want nothing to compact", budget, total, sel, err)
			}
			continue
		}
		cut := 1
		for suffix[cut] > budget {
			cut++
		}
		if err != nil || sel.End != seqs[cut-1] || sel.TokensKept != suffix[cut] || sel.OverBudget || sel.TokensBefore != total {
			t.Errorf("TargetTokens(%d): %+v %v, want [%d, %d] keeping %d of %d", budget, sel, err, seqs[0], seqs[cut-1], suffix[cut], total)
		}
	}
}

// TestSummaryKeepsTheTurnItFolds: COMP-10. A summary stands in the turn of
// the first node it folds, not in the turn open when it is written: a
// compaction in the middle of a long turn leaves a summary that a second
// compaction in the same turn may fold again (with the complete turns
// after it), and the turns the policies count are the same after it.
func TestSummaryKeepsTheTurnItFolds(t *testing.T) {
	ctx := context.Background()
	summary := []json.RawMessage{raw(`{"type":"text","text":"summary"}`)}
	for _, keep := range []int{0, 1} {
		s := session.New()
		fullTurn(t, s, 1, 40, 0, false)
		t2 := fullTurn(t, s, 2, 40, 0, false)
		t3 := fullTurn(t, s, 3, 40, 0, false)
		fullTurn(t, s, 4, 40, 0, true) // open: the compactions happen in it
		op, err := compaction.BeginSelected(ctx, s, compaction.KeepTurns(keep), nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := op.Commit(ctx, summary, compaction.Meta{Provider: "p", Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		want := last(t2) // KeepTurns(1): turn 3 kept
		if keep == 0 {
			want = last(t3)
		}
		if res.End != want {
			t.Fatalf("keep %d: first compaction folded up to %d, want %d", keep, res.End, want)
		}
		// Still in turn 4: everything before it may be folded again, the
		// summary included (alone, when turn 3 was folded too).
		sel, err := compaction.Select(s, compaction.KeepTurns(0))
		if err != nil {
			t.Fatalf("keep %d: second selection in the same turn: %v", keep, err)
		}
		head := s.Surface().At(0)
		wantEnd := head
		if keep == 1 {
			wantEnd = last(t3)
		}
		if sel.Start != head || sel.End != wantEnd {
			t.Fatalf("keep %d: second selection %d..%d, want %d..%d", keep, sel.Start, sel.End, head, wantEnd)
		}
		// The summary is a turn of its own for KeepTurns: keeping one turn
		// keeps turn 3 (when it was not folded) and folds the summary.
		sel, err = compaction.Select(s, compaction.KeepTurns(1))
		switch {
		case keep == 1 && (err != nil || sel.End != head):
			t.Fatalf("keep 1: KeepTurns(1) after the summary: %v, %+v; want the summary alone", err, sel)
		case keep == 0 && !errors.Is(err, event.CodeCompactionNothingToCompact):
			t.Fatalf("keep 0: KeepTurns(1) after a summary of everything: %v, %+v; want nothing to compact", err, sel)
		}
	}
}
