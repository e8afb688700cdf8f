package compaction_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/observe"
	"github.com/surfacelog/surface/impl/session"
)

// cacheSession is a session of turns of tool steps with large results,
// after a context message, observed by rec.
func cacheSession(t *testing.T, turns int, rec *observe.Recorder) *session.Session {
	t.Helper()
	ctx := context.Background()
	s := session.New(session.WithStrict(), session.WithObserver(rec))
	s.Append(ctx, event.ContextMessageData{Content: event.Text("notes " + strings.Repeat("n", 400)), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())
	for turn := int64(1); turn <= int64(turns); turn++ {
		s.Append(ctx, event.TurnStartData{Turn: turn, Trigger: json.RawMessage(`{"kind":"message"}`)})
		s.Append(ctx, event.UserMessageData{Content: event.Text("task " + strings.Repeat("t", 100)), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())
		id := "c" + string(rune('a'+turn))
		a, _ := s.Append(ctx, event.AssistantMessageData{Turn: turn, Step: 1, Content: []json.RawMessage{json.RawMessage(`{"type":"tool-call","id":"` + id + `","name":"run","arguments":"{}"}`)}}, event.AppendIntent())
		s.Append(ctx, event.ToolResultData{Turn: turn, Step: 1, CallID: id, Content: event.Text(strings.Repeat("r", 8000))}, event.AppendIntent(a.Seq))
		s.Append(ctx, event.AssistantMessageData{Turn: turn, Step: 2, Content: event.Text("done " + strings.Repeat("d", 200))}, event.AppendIntent())
		if turn < int64(turns) {
			s.Append(ctx, event.TurnEndData{Turn: turn, Reason: json.RawMessage(`{"kind":"completed"}`)})
		}
	}
	return s
}

func summarizer(_ context.Context, op *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
	return event.Text("summary"), compaction.Meta{Provider: "p", Model: "m"}, nil
}

// TestPinnedHead: a selection with WithPinnedHead starts after the pinned
// head (context only, or context and first prompt); without it, at the
// surface's head; StableHead names the pinned head's last node.
func TestPinnedHead(t *testing.T) {
	s := cacheSession(t, 6, &observe.Recorder{})
	sf := s.Surface()
	for _, c := range []struct {
		name  string
		opts  []compaction.SelectOption
		start int64
	}{
		{"none", nil, sf.At(0)},
		{"context", []compaction.SelectOption{compaction.WithPinnedHead(compaction.PinContext)}, sf.At(1)},
		{"context and first prompt", []compaction.SelectOption{compaction.WithPinnedHead(compaction.PinContext | compaction.PinFirstPrompt)}, sf.At(2)},
	} {
		sel, err := compaction.Select(s, compaction.TargetTokens(3000, nil), c.opts...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if sel.Start != c.start {
			t.Errorf("%s: the range starts at %d, want %d", c.name, sel.Start, c.start)
		}
	}
	if seq, ok := compaction.StableHead(s, compaction.PinContext|compaction.PinFirstPrompt); !ok || seq != sf.At(1) {
		t.Errorf("StableHead: %d %v, want %d", seq, ok, sf.At(1))
	}
	if _, ok := compaction.StableHead(s, compaction.PinFirstPrompt); ok {
		t.Error("StableHead(PinFirstPrompt) with a context message first: the first node is not a prompt")
	}
}

// TestWatermarksAndPruneKept: a due Watermarks compaction folds down to
// Low with the head pinned; PruneKept then prunes only the answered
// results after the summary (the open turn's included); the observer sees
// one append per replace, each saying where the prompt changed: the
// compaction's at the summary, the prunes' after it; a plain append says
// nothing changed.
func TestWatermarksAndPruneKept(t *testing.T) {
	rec := &observe.Recorder{}
	s := cacheSession(t, 6, rec)
	w := compaction.Watermarks{High: 6000, Low: 3000}
	if !w.Due(s) {
		t.Fatalf("not due at %d tokens", s.Tokens())
	}
	pin := compaction.WithPinnedHead(compaction.PinContext | compaction.PinFirstPrompt)
	before := len(rec.Appends)
	res, err := w.Compact(context.Background(), s, summarizer, []compaction.SelectOption{pin}, compaction.WithVocabulary(compaction.CompactionEvents))
	if err != nil {
		t.Fatal(err)
	}
	summaryAt, _ := s.Position(res.ReplaceSeq)
	if summaryAt != 2 {
		t.Errorf("the summary is at %d, want 2 (after the pinned context and first prompt)", summaryAt)
	}
	if res.Selection.TokensKept > w.Low {
		t.Errorf("kept %d tokens, over Low %d", res.Selection.TokensKept, w.Low)
	}
	pruned, err := compaction.PruneKept(s, res, 1000, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(pruned) != 1 {
		t.Errorf("pruned %d results, want 1 (the open turn's answered one)", len(pruned))
	}
	for _, p := range pruned {
		if pos, _ := s.Position(p.ReplaceSeq); pos <= summaryAt {
			t.Errorf("pruned at %d, before the summary at %d", pos, summaryAt)
		}
	}
	var changes []observe.Append
	for _, a := range rec.Appends[before:] {
		if a.Replaced {
			changes = append(changes, a)
		}
	}
	if len(changes) != 1+len(pruned) || changes[0].ReplacedAt != summaryAt {
		t.Errorf("prompt changes %+v, want the compaction's at %d and one per prune", changes, summaryAt)
	}
	for _, c := range changes[1:] {
		if c.ReplacedAt <= summaryAt {
			t.Errorf("a prune changed the prompt at %d, before the compaction's %d", c.ReplacedAt, summaryAt)
		}
	}
	n := len(rec.Appends)
	s.Append(context.Background(), event.AssistantMessageData{Turn: 6, Step: 3, Content: event.Text("more")}, event.AppendIntent())
	if a := rec.Appends[n:]; len(a) != 1 || a[0].Replaced {
		t.Errorf("a tail append reports %+v", a)
	}
}

// TestPruneWorth: a prune of a large result near the tail pays for itself
// over enough requests; the same prune far from the tail, or over one
// request, does not; Anthropic's write premium makes it dearer than
// OpenAI's free writes.
func TestPruneWorth(t *testing.T) {
	s := cacheSession(t, 8, &observe.Recorder{})
	var results []int64
	for _, seq := range s.Surface().Slice() {
		if s.Events()[seq].Type == event.TypeToolResult {
			results = append(results, seq)
		}
	}
	first, last := results[0], results[len(results)-2]
	anthropic := compaction.CacheCost{Read: 0.1, Write: 1.25}
	openai := compaction.CacheCost{Read: 0.1, Write: 1}
	if !compaction.PruneWorth(s, last, 10, 50, anthropic) {
		t.Error("a late large result over 50 requests is not worth pruning")
	}
	if compaction.PruneWorth(s, last, 10, 1, anthropic) {
		t.Error("one request pays for a prune")
	}
	if compaction.PruneWorth(s, first, 10, 4, anthropic) {
		t.Error("an early result over 4 requests is worth pruning")
	}
	n := 1
	for !compaction.PruneWorth(s, first, 10, n, openai) {
		n++
	}
	m := 1
	for !compaction.PruneWorth(s, first, 10, m, anthropic) {
		m++
	}
	if m <= n {
		t.Errorf("Anthropic needs %d requests, OpenAI %d: the write premium must cost more", m, n)
	}
}
