package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/internal/traffic"
)

// splitAt returns a checkpoint of the first n events of log, the events of
// its surface, a decoded tail of the rest, and a reader of the prefix.
func splitAt(t *testing.T, log []event.Event, n int) (session.Checkpoint, []event.Event, *event.Log, func() (*event.Log, error)) {
	t.Helper()
	s, err := session.Seed(log[:n])
	if err != nil {
		t.Fatal(err)
	}
	cp := s.Checkpoint()
	var nodes []event.Event
	for _, c := range cp.Surface {
		nodes = append(nodes, log[c.Seq])
	}
	decode := func(events []event.Event) *event.Log {
		var d event.Decoder
		for _, e := range events {
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Decode(b); err != nil {
				t.Fatal(err)
			}
		}
		return d.Log()
	}
	return cp, nodes, decode(log[n:]), func() (*event.Log, error) { return decode(log[:n]), nil }
}

// TestRestoreRefuses: Restore gives ErrCheckpointUnusable (code
// persist.checkpoint_unusable) for a checkpoint that does not fit its
// events and for options that need every event, each beside the same
// restore that works; a tail event that breaks a rule is that rule's
// error, at its index in the tail.
func TestRestoreRefuses(t *testing.T) {
	log, err := traffic.Log(300)
	if err != nil {
		t.Fatal(err)
	}
	n := 200
	cp, nodes, _, prefix := splitAt(t, log, n)
	fresh := func() *event.Log { _, _, tail, _ := splitAt(t, log, n); return tail }
	if s, err := session.Restore(cp, nodes, fresh(), prefix); err != nil || s.Len() != len(log) || s.Restored() != n {
		t.Fatalf("the good restore: %v", err)
	}
	clone := func() session.Checkpoint {
		c := cp
		c.Surface = append([]session.CheckpointNode(nil), cp.Surface...)
		return c
	}
	cases := []struct {
		name  string
		cp    func() session.Checkpoint
		nodes func() []event.Event
		opts  []session.Option
	}{
		{"strict mode", clone, func() []event.Event { return nodes }, []session.Option{session.WithStrict()}},
		{"a node missing", clone, func() []event.Event { return nodes[1:] }, nil},
		{"a node of another seq", clone, func() []event.Event {
			out := append([]event.Event(nil), nodes...)
			out[0] = log[out[0].Seq+1]
			return out
		}, nil},
		{"labels out of order", func() session.Checkpoint {
			c := clone()
			c.Surface[0].Label, c.Surface[1].Label = c.Surface[1].Label, c.Surface[0].Label
			return c
		}, func() []event.Event { return nodes }, nil},
		{"a label past the next one", func() session.Checkpoint {
			c := clone()
			c.NextLabel = c.Surface[len(c.Surface)-1].Label
			return c
		}, func() []event.Event { return nodes }, nil},
		{"a node after the events it covers", func() session.Checkpoint {
			c := clone()
			c.Events = c.Surface[len(c.Surface)-1].Seq
			return c
		}, func() []event.Event { return nodes }, nil},
		{"a ledger that does not read", func() session.Checkpoint {
			c := clone()
			c.Ledger = json.RawMessage(`{"calls":[{"id":"a"},{"id":"a"}]}`)
			return c
		}, func() []event.Event { return nodes }, nil},
		{"a negative generation", func() session.Checkpoint {
			c := clone()
			c.Generation = -1
			return c
		}, func() []event.Event { return nodes }, nil},
	}
	for _, c := range cases {
		_, err := session.Restore(c.cp(), c.nodes(), fresh(), prefix, c.opts...)
		if !errors.Is(err, session.ErrCheckpointUnusable) || !errors.Is(err, event.CodePersistCheckpointUnusable) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// A tail whose first event has the wrong seq: the tail's own error.
	bad := fresh()
	events := bad.Events()
	events[0].Seq++
	if _, err := session.Restore(cp, nodes, bad, prefix); event.CodeOf(err) != event.CodeSeqNotContiguous || errors.Is(err, session.ErrCheckpointUnusable) {
		t.Errorf("a tail that breaks SURF-2: %v", err)
	}
	// A prefix that cannot be read back breaks the session, it does not panic.
	s, err := session.Restore(cp, nodes, fresh(), func() (*event.Log, error) { return nil, errors.New("disk gone") })
	if err != nil {
		t.Fatal(err)
	}
	if s.Err() != nil {
		t.Fatalf("Err before the prefix is read back: %v", s.Err())
	}
	if got := s.Events(); len(got) != len(log) {
		t.Fatalf("Events of a broken session: %d events, want %d (zero ones in place of those lost)", len(got), len(log))
	}
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: json.RawMessage(`{"todos":[]}`)}); !errors.Is(err, event.CodePersistCorrupt) {
		t.Fatalf("an append to a session whose prefix is lost: %v", err)
	}
	if err := s.Err(); !errors.Is(err, event.CodePersistCorrupt) {
		t.Fatalf("Err of a session whose prefix is lost: %v", err)
	}
}
