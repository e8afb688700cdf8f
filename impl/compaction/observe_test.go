package compaction_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/observe"
	"github.com/surfacelog/surface/impl/session"
)

// TestObservedCompaction: a committed compaction is reported with the
// nodes it folded and the session's tokens before and after; an aborted
// one with its cause; a refused Begin as failed; a prune with its tokens.
func TestObservedCompaction(t *testing.T) {
	var rec observe.Recorder
	s := session.New(session.WithObserver(&rec))
	first := conversation(t, s, 1, []string{"a"}, []string{"a"})
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTurnEnd, Data: raw(`{"turn":1,"reason":{"kind":"completed"}}`)}); err != nil {
		t.Fatal(err)
	}
	conversation(t, s, 2, []string{"b"}, []string{"b"})
	summary := func(context.Context, *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
		return []json.RawMessage{raw(`{"type":"text","text":"s"}`)}, compaction.Meta{Provider: "p", Model: "m"}, nil
	}
	pruned := first[2]
	if _, err := compaction.PruneToolResult(s, pruned, []json.RawMessage{raw(`{"type":"text","text":"gone"}`)}); err != nil {
		t.Fatal(err)
	}
	before := s.Tokens()
	if _, err := compaction.Compact(context.Background(), s, first[0], first[len(first)-1], summary, plain...); err != nil {
		t.Fatal(err)
	}
	failing := func(context.Context, *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
		return nil, compaction.Meta{}, errors.New("model overloaded")
	}
	if _, err := compaction.Compact(context.Background(), s, s.Surface().At(1), s.Surface().At(1), failing); err == nil {
		t.Fatal("a failing summariser committed")
	}
	if _, err := compaction.Begin(context.Background(), s, 9999, 9999); err == nil {
		t.Fatal("Begin on no node")
	}
	if len(rec.Prunes) != 1 || rec.Prunes[0].Seq != pruned || rec.Prunes[0].TokensAfter >= rec.Prunes[0].TokensBefore || rec.Prunes[0].Err != nil {
		t.Fatalf("prune records: %+v", rec.Prunes)
	}
	if len(rec.Compactions) != 3 {
		t.Fatalf("%d compaction records: %+v", len(rec.Compactions), rec.Compactions)
	}
	c := rec.Compactions[0]
	if c.Outcome != "committed" || c.Nodes != len(first) || c.TokensBefore != before || c.TokensAfter >= before || c.StartSeq < 0 || c.Err != nil || c.LockWait <= 0 || c.Start.IsZero() {
		t.Errorf("committed: %+v (tokens before %d)", c, before)
	}
	if c := rec.Compactions[1]; c.Outcome != "aborted" || c.Nodes != 1 || c.Err == nil || c.Err.Error() != "model overloaded" {
		t.Errorf("aborted: %+v", c)
	}
	if c := rec.Compactions[2]; c.Outcome != "failed" || c.StartSeq != -1 || !errors.Is(c.Err, event.CodeReplaceStartNotOnSurface) {
		t.Errorf("failed: %+v", c)
	}
}
