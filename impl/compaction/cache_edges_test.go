package compaction_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/observe"
	"github.com/surfacelog/surface/impl/session"
)

var (
	rawKind    = json.RawMessage(`{"kind":"user"}`)
	rawMessage = json.RawMessage(`{"kind":"message"}`)
)

func newStrict() *session.Session { return session.New(session.WithStrict()) }

// TestWatermarksEdges: Due at High and one under it, side by side; and
// Compact folds into the open turn only when the turns before it would
// keep more than High: at exactly High it does not, one token over it
// does.
func TestWatermarksEdges(t *testing.T) {
	s := cacheSession(t, 6, &observe.Recorder{})
	tokens := s.Tokens()
	if (compaction.Watermarks{High: tokens}).Due(s) || !(compaction.Watermarks{High: tokens - 1}).Due(s) {
		t.Fatalf("Due at %d tokens: High %d says %v, High %d says %v", tokens, tokens, (compaction.Watermarks{High: tokens}).Due(s), tokens-1, (compaction.Watermarks{High: tokens - 1}).Due(s))
	}
	pin := []compaction.SelectOption{compaction.WithPinnedHead(compaction.PinContext | compaction.PinFirstPrompt)}
	low := 1000
	sel, err := compaction.Select(s, compaction.TargetTokens(low, nil), pin...)
	if err != nil {
		t.Fatal(err)
	}
	var openStart int64 = -1 // the open turn's turn/start
	for _, e := range s.Events() {
		if e.Type == event.TypeTurnStart {
			openStart = e.Seq
		}
	}
	for _, c := range []struct {
		high     int
		intoOpen bool
	}{{sel.TokensKept, false}, {sel.TokensKept - 1, true}} {
		s := cacheSession(t, 6, &observe.Recorder{})
		res, err := compaction.Watermarks{High: c.high, Low: low}.Compact(context.Background(), s, summarizer, pin)
		if err != nil {
			t.Fatalf("High %d: %v", c.high, err)
		}
		folded := res.Selection.End > openStart
		if folded != c.intoOpen {
			t.Errorf("High %d (the turns before the open one keep %d): folded into the open turn %v, want %v", c.high, sel.TokensKept, folded, c.intoOpen)
		}
	}
}

// TestPruneWorthArithmetic: PruneWorth is exactly "the tokens a prune
// saves, read from the cache each request, outweigh rewriting the cache
// from the pruned node to the tail", at every request count around the
// break-even (equal is not worth it), for a prune to a size just under the
// result's and one over it (saves nothing), and for a node off the
// surface.
func TestPruneWorthArithmetic(t *testing.T) {
	s := cacheSession(t, 3, &observe.Recorder{})
	sf := s.Surface()
	var seq int64 = -1
	var pos int
	for i, x := range sf.Slice() {
		if s.Events()[x].Type == event.TypeToolResult {
			seq, pos = x, i
		}
	}
	if seq < 0 {
		t.Fatal("no tool result")
	}
	own := 0
	tail := 0
	sf.Range(pos, sf.Len(), func(_ int64, m message.Message) bool {
		if own == 0 {
			own = compaction.EstimateTokens(m)
		}
		tail += compaction.EstimateTokens(m)
		return true
	})
	c := compaction.CacheCost{Read: 2, Write: 6} // saved = 2 x pruned x requests, destroyed = 4 x tail
	for _, newTokens := range []int{own - 2, own - 1, own, own + 5} {
		pruned := max(own-newTokens, 0)
		for requests := 0; requests <= 2*tail+3; requests++ {
			if pruned > 0 && requests != 2*tail/pruned && requests != 2*tail/pruned+1 && requests > 3 && requests%97 != 0 {
				continue // around the break-even, and a sample elsewhere
			}
			want := pruned*requests > 2*tail
			if got := compaction.PruneWorth(s, seq, newTokens, requests, c); got != want {
				t.Fatalf("prune to %d tokens (saves %d of %d, tail %d) over %d requests: %v, want %v", newTokens, pruned, own, tail, requests, got, want)
			}
		}
	}
	if compaction.PruneWorth(s, sf.At(0)-1000, 0, 1000, c) {
		t.Error("a seq off the surface is worth pruning")
	}
}

// TestStableHeadEdges: the pinned head when the surface is all context,
// when a prompt comes first with no context, and when what follows the
// context is no prompt.
func TestStableHeadEdges(t *testing.T) {
	ctx := context.Background()
	s := newStrict()
	c0, _ := s.Append(ctx, event.ContextMessageData{Content: event.Text("a"), Source: rawKind}, event.AppendIntent())
	c1, _ := s.Append(ctx, event.ContextMessageData{Content: event.Text("b"), Source: rawKind}, event.AppendIntent())
	for pin, want := range map[compaction.Pin]int64{compaction.PinContext: c1.Seq, compaction.PinContext | compaction.PinFirstPrompt: c1.Seq} {
		if seq, ok := compaction.StableHead(s, pin); !ok || seq != want {
			t.Errorf("all context, pin %d: %d %v, want %d", pin, seq, ok, want)
		}
	}
	if seq, ok := compaction.StableHead(s, compaction.PinFirstPrompt); ok || seq != -1 {
		t.Errorf("all context, PinFirstPrompt: %d %v, want -1 and no head", seq, ok)
	}
	_ = c0
	p := newStrict()
	p.Append(ctx, event.TurnStartData{Turn: 1, Trigger: rawMessage})
	u, _ := p.Append(ctx, event.UserMessageData{Content: event.Text("q"), Source: rawKind}, event.AppendIntent())
	if seq, ok := compaction.StableHead(p, compaction.PinFirstPrompt); !ok || seq != u.Seq {
		t.Errorf("a prompt first, PinFirstPrompt: %d %v", seq, ok)
	}
	if _, ok := compaction.StableHead(p, compaction.PinContext); ok {
		t.Error("no context, PinContext: a head")
	}
	q := newStrict()
	q.Append(ctx, event.ContextMessageData{Content: event.Text("a"), Source: rawKind}, event.AppendIntent())
	q.Append(ctx, event.TurnStartData{Turn: 1, Trigger: rawMessage})
	q.Append(ctx, event.UserMessageData{Content: event.Text("q"), Source: rawKind}, event.AppendIntent())
	a, _ := q.Append(ctx, event.AssistantMessageData{Turn: 1, Step: 1, Content: event.Text("a")}, event.AppendIntent())
	_ = a
	if seq, ok := compaction.StableHead(q, compaction.PinContext|compaction.PinFirstPrompt); !ok || seq != 2 {
		t.Errorf("context then prompt: %d %v, want 2", seq, ok)
	}
	if seq, ok := compaction.StableHead(session.New(), compaction.PinContext|compaction.PinFirstPrompt); ok {
		t.Errorf("an empty session: %d", seq)
	}
}

// TestPruneKeptStartsAfterTheSummary: PruneKept prunes only after the
// compaction's summary: an answered result just before it (a compaction
// of a middle range) is kept, the ones after it are pruned.
func TestPruneKeptStartsAfterTheSummary(t *testing.T) {
	s := cacheSession(t, 4, &observe.Recorder{})
	sf := s.Surface()
	var results []int64
	for _, seq := range sf.Slice() {
		if s.Events()[seq].Type == event.TypeToolResult {
			results = append(results, seq)
		}
	}
	// Fold from turn 1's last message to turn 2's, keeping turn 1's
	// result right before the summary.
	first, _ := s.Position(results[0])
	start, end := sf.At(first+1), sf.At(first+5)
	if s.Events()[start].Type != event.TypeAssistantMessage || s.Events()[end].Type != event.TypeAssistantMessage {
		t.Fatalf("the range is %s to %s", s.Events()[start].Type, s.Events()[end].Type)
	}
	res, err := compaction.Compact(context.Background(), s, start, end, summarizer)
	if err != nil {
		t.Fatal(err)
	}
	pruned, err := compaction.PruneKept(s, res, 1000, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(pruned) != 2 {
		t.Fatalf("pruned %d results, want 2 (turns 3 and 4)", len(pruned))
	}
	for _, p := range pruned {
		if s.Events()[p.ReplaceSeq].Op.Start == results[0] {
			t.Fatalf("pruned turn 1's result, before the summary")
		}
	}
	if pos, on := s.Position(results[0]); !on || pos != first {
		t.Fatalf("turn 1's result moved or left: %d %v", pos, on)
	}
}

// TestBeginRefusalsNameNoEvent: a refused Begin appends nothing and its
// error names no event (seq -1): a range starting or ending off the
// surface, a reversed range, and a second Begin while one is open.
func TestBeginRefusalsNameNoEvent(t *testing.T) {
	ctx := context.Background()
	s := cacheSession(t, 3, &observe.Recorder{})
	sf := s.Surface()
	for _, c := range []struct {
		name       string
		start, end int64
		code       event.Code
	}{
		{"start off the surface", 9999, sf.At(1), event.CodeReplaceStartNotOnSurface},
		{"end off the surface", sf.At(1), 9999, event.CodeReplaceEndNotOnSurface},
		{"reversed", sf.At(5), sf.At(1), event.CodeReplaceReversed},
	} {
		n := s.Len()
		_, err := compaction.Begin(ctx, s, c.start, c.end)
		var ee *event.Error
		if !errors.As(err, &ee) || ee.Code != c.code || ee.Seq != -1 || s.Len() != n {
			t.Errorf("%s: %v (seq %v), %d appended", c.name, err, ee, s.Len()-n)
		}
	}
	if _, err := compaction.Begin(ctx, s, sf.At(1), sf.At(4)); err != nil {
		t.Fatal(err)
	}
	n := s.Len()
	_, err := compaction.Begin(ctx, s, sf.At(1), sf.At(4))
	var ee *event.Error
	if !errors.As(err, &ee) || ee.Code != event.CodeCompactionLocked || ee.Seq != -1 || s.Len() != n {
		t.Errorf("a second Begin: %v (seq %v)", err, ee)
	}
}
