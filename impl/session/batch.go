package session

import (
	"context"
	"slices"
	"time"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/observe"
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
func (tx Tx) Events() []event.Event {
	tx.s.whole()
	return tx.s.log[:len(tx.s.log):len(tx.s.log)]
}

// Len is the length of the log: the seq the batch's first event gets.
func (tx Tx) Len() int { return tx.s.n() }

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
	if tx.s.ahead {
		// A batch is being written and the manager has folded it: find
		// seq in the snapshot readers keep (linear, only in that window).
		for i, x := range tx.s.snap.Seqs().All() {
			if x == seq {
				return i, true
			}
		}
		return 0, false
	}
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
// checked as Append checks it; the batch stops at the first rejection,
// whose error it returns with the events accepted before it. The accepted
// events are written ahead in one call (a store makes them durable with
// one sync or one transaction); when that write fails, none of them is
// appended. When build returns an error, nothing is appended. Compaction
// uses it to take its lock and to append its records next to each other
// (impl/compaction). ctx is as in Append: it bounds the store's write.
func (s *Session) AppendBatch(ctx context.Context, build func(tx Tx) ([]Draft, error)) ([]event.Event, error) {
	var start time.Time
	if s.cfg.observer != nil {
		start = time.Now()
	}
	var wait, wrote time.Duration
	var first event.Type
	var seq int64
	out, err := func() ([]event.Event, error) {
		s.wmu.Lock()
		defer s.wmu.Unlock()
		if s.cfg.observer != nil {
			wait = time.Since(start)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		seq = int64(s.n())
		drafts, err := build(Tx{s})
		if err != nil {
			return nil, err
		}
		if len(drafts) > 0 {
			first = drafts[0].Type
		}
		run := make([]event.Event, 0, len(drafts))
		var bad error
		for _, d := range drafts {
			raw, jerr := event.MarshalData(d.Data)
			if jerr != nil {
				jerr.Seq = int64(s.n() + len(run))
				bad = jerr
				break
			}
			e := event.Event{Type: d.Type, Seq: int64(s.n() + len(run)), Time: s.cfg.clock(), Data: raw}
			if d.Intent != nil {
				e.Op = d.Intent.Op
				if d.Intent.Sources != nil {
					e.Sources = slices.Clone(d.Intent.Sources)
				}
			}
			run = append(run, e)
		}
		s.wrote = 0
		s.batching = true
		out, err := s.commitRun(ctx, run)
		s.batching = false
		wrote = s.wrote
		out = slices.Clone(out)
		if len(out) > 0 && len(s.held) > 0 {
			s.releaseHeld(ctx) // after the batch, never inside it
		}
		if err != nil {
			return out, err
		}
		return out, bad
	}()
	if s.cfg.observer != nil && (first != "" || err != nil) {
		rec := observe.Append{Timing: observe.Since(start), Type: first, Seq: seq, Events: len(out), LockWait: wait, Write: wrote, Err: err}
		if len(out) > 0 {
			if r := s.replaced(out[0], nil, out[1:]...); r.ok {
				rec.Replaced, rec.ReplacedAt, rec.ReplacedSeq = true, r.pos, r.seq
			}
		}
		s.cfg.observer.Append(ctx, rec)
	}
	return out, err
}
