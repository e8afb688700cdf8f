package session

import (
	"slices"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/view"
)

// Draft is an event to append in a batch: its type, data and intent, as
// Append takes them. Its seq and time are given when it is appended.
type Draft struct {
	Type   event.Type
	Data   any
	Intent *event.Intent
}

// Tx is a read-only look at a session from inside AppendBatch: the log,
// the surface and the messages as they are when the batch is built. Its
// methods must be called only from the build function, and the session's
// own methods must not be called there (the session is locked).
type Tx struct{ s *Session }

// Events returns the log (shared; read it, do not change it).
func (tx Tx) Events() []event.Event { return tx.s.log[:len(tx.s.log):len(tx.s.log)] }

// Len is the length of the log: the seq the batch's first event gets.
func (tx Tx) Len() int { return len(tx.s.log) }

// Surface returns the surface view.
func (tx Tx) Surface() view.Seqs {
	tx.s.refresh()
	return tx.s.snap.Seqs()
}

// Messages returns the messages view.
func (tx Tx) Messages() view.Messages {
	tx.s.refresh()
	return tx.s.snap.Messages()
}

// Position returns the surface position of node seq: O(log n); ok is
// false when seq is not on the surface.
func (tx Tx) Position(seq int64) (int, bool) {
	tx.s.refresh()
	n := tx.s.mgr.Node(seq)
	if n == nil {
		return 0, false
	}
	return tx.s.snap.Position(n.Label())
}

// AppendBatch appends several events as one uninterrupted run: no other
// append, from any goroutine, comes between them, and build decides what
// to append from the state it sees (tx) with nothing changing in between.
// The drafts get consecutive seqs from tx.Len(), so a later draft can name
// an earlier one (in its sources or its replace range). Each draft is
// checked as Append checks it and written ahead through the store; the
// batch stops at the first rejection, whose error it returns with the
// events appended before it. When build returns an error, nothing is
// appended. Compaction uses it to take its lock and to append its records
// next to each other (impl/compaction).
func (s *Session) AppendBatch(build func(tx Tx) ([]Draft, error)) ([]event.Event, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	drafts, err := build(Tx{s})
	if err != nil {
		return nil, err
	}
	out := make([]event.Event, 0, len(drafts))
	s.batching = true
	defer func() {
		s.batching = false
		if len(out) > 0 && len(s.held) > 0 {
			s.releaseHeld() // after the batch, never inside it
		}
	}()
	for _, d := range drafts {
		raw, jerr := event.MarshalData(d.Data)
		if jerr != nil {
			return out, jerr
		}
		e := event.Event{Type: d.Type, Seq: int64(len(s.log)), Time: s.cfg.clock(), Data: raw}
		if d.Intent != nil {
			e.Op = d.Intent.Op
			if d.Intent.Sources != nil {
				e.Sources = slices.Clone(d.Intent.Sources)
			}
		}
		stored, err := s.commit(e)
		if err != nil {
			return out, err
		}
		out = append(out, stored)
	}
	return out, nil
}
