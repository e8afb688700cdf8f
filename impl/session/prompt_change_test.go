package session_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/observe"
	"github.com/surfacelog/surface/impl/session"
)

// TestPromptChangeReported: the observer's Append record says where an
// append changed the prompt: nothing for appends at the tail (one, or a
// batch), the replaced position for a replace, and for a batch of several
// replaces the earliest of them, whichever comes first in the batch; a
// failed replace reports nothing.
func TestPromptChangeReported(t *testing.T) {
	ctx := context.Background()
	rec := &observe.Recorder{}
	s := session.New(session.WithObserver(rec))
	var nodes []int64
	for i := 0; i < 6; i++ {
		e, _ := s.Append(ctx, event.UserMessageData{Content: event.Text("m"), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())
		nodes = append(nodes, e.Seq)
	}
	last := func() observe.Append { return rec.Appends[len(rec.Appends)-1] }
	if last().Replaced {
		t.Errorf("an append at the tail: %+v", last())
	}
	user := func(text string) event.UserMessageData {
		return event.UserMessageData{Content: event.Text(text), Source: json.RawMessage(`{"kind":"user"}`)}
	}
	s.Append(ctx, user("r"), event.ReplaceIntent(nodes[3], nodes[4], nodes[3], nodes[4]))
	if r := last(); !r.Replaced || r.ReplacedAt != 3 || r.ReplacedSeq != nodes[3] {
		t.Errorf("one replace: %+v, want at 3 (seq %d)", r, nodes[3])
	}
	// A batch: the later replace first, the earlier second; and the
	// reverse.
	for _, order := range [][2]int{{2, 0}, {0, 2}} {
		sf := s.Surface().Slice()
		_, err := s.AppendBatch(ctx, func(tx session.Tx) ([]session.Draft, error) {
			var ds []session.Draft
			for _, pos := range order {
				in := event.ReplaceIntent(sf[pos], sf[pos], sf[pos])
				ds = append(ds, session.Draft{Type: event.TypeUserMessage, Data: user("b"), Intent: &in})
			}
			return ds, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if r := last(); !r.Replaced || r.ReplacedAt != 0 || r.ReplacedSeq != sf[0] {
			t.Errorf("batch %v: %+v, want at 0 (seq %d)", order, r, sf[0])
		}
	}
	sf := s.Surface().Slice()
	_, err := s.AppendBatch(ctx, func(tx session.Tx) ([]session.Draft, error) {
		return []session.Draft{{Type: event.TypeUserMessage, Data: user("tail")}, {Type: event.TypeUserMessage, Data: user("tail")}}, nil
	})
	if err == nil {
		t.Fatal("drafts without intent were accepted")
	}
	in := event.AppendIntent()
	s.AppendBatch(ctx, func(tx session.Tx) ([]session.Draft, error) {
		return []session.Draft{{Type: event.TypeUserMessage, Data: user("tail"), Intent: &in}, {Type: event.TypeUserMessage, Data: user("tail"), Intent: &in}}, nil
	})
	if r := last(); r.Replaced || r.Events != 2 {
		t.Errorf("a batch at the tail: %+v", r)
	}
	if _, err := s.Append(ctx, user("x"), event.ReplaceIntent(sf[0]+1000, sf[0]+1000, sf[0]+1000)); err == nil {
		t.Fatal("a replace of no node was accepted")
	}
	if r := last(); r.Replaced {
		t.Errorf("a failed replace: %+v", r)
	}
}
