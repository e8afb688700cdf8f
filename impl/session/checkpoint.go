package session

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/surface"
	"github.com/surfacelog/surface/impl/view"
)

// Checkpoint is what a session derived from the first Events events of its
// log (STORE-18): its surface with the order labels, the replace count,
// and the bookkeeping ledger (open turn and step, the open turn's calls,
// the open compaction). A store keeps the newest one beside the log, and a
// session resumes from it (Restore) by folding only the events after it,
// the same session a replay of the whole log gives. A checkpoint holds no
// event: the surface's events are read from the log itself.
type Checkpoint struct {
	// Events is the number of events it covers: seqs 0 to Events-1.
	Events int64 `json:"events"`
	// Surface is the surface after those events, head to tail.
	Surface []CheckpointNode `json:"surface"`
	// NextLabel is the order label the next appended node takes, and
	// Generation the number of replaces folded.
	NextLabel  int64 `json:"nextLabel"`
	Generation int64 `json:"generation"`
	// Ledger is the bookkeeping (repair.State's JSON).
	Ledger json.RawMessage `json:"ledger"`
}

// CheckpointNode is one surface node of a checkpoint: the seq of its event
// and its order label.
type CheckpointNode struct {
	Seq   int64 `json:"seq"`
	Label int64 `json:"label"`
}

// WithCheckpoints makes the session hand write a checkpoint of itself at
// the first turn/end at least every events after the last one, and after
// 4*every events without one (every < 1 is 1). write is called after the
// append that made it due, with the session's writers held back (no event
// can come between) and its readers not; it must not call the session.
// A checkpoint is an optimisation: what write does with it (persist keeps
// it beside the log) never changes the log or the append.
func WithCheckpoints(every int, write func(Checkpoint)) Option {
	return func(c *config) {
		c.checkpoints = &checkpointing{every: max(every, 1), write: write}
	}
}

type checkpointing struct {
	every int
	write func(Checkpoint)
}

// checkpointAfter hands a checkpoint to the configured writer when the
// committed events made one due. The caller holds s.wmu and s.mu; s.mu is
// released while the writer runs.
func (s *Session) checkpointAfter(committed []event.Event) {
	c := s.cfg.checkpoints
	if c == nil || s.ahead || s.broken != nil {
		return
	}
	since := s.n() - s.cpAt
	due := since >= 4*c.every
	if !due && since >= c.every {
		for i := range committed {
			if committed[i].Type == event.TypeTurnEnd {
				due = true
				break
			}
		}
	}
	if !due {
		return
	}
	cp := s.checkpoint()
	s.cpAt = s.n()
	s.mu.Unlock()
	defer s.mu.Lock()
	c.write(cp)
}

// Checkpoint returns the session's checkpoint now, covering every event
// of its log. It waits for an append in progress to finish.
func (s *Session) Checkpoint() Checkpoint {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.checkpoint()
}

// checkpoint is Checkpoint; the caller holds s.wmu and s.mu, with no batch
// in flight.
func (s *Session) checkpoint() Checkpoint {
	s.refresh()
	s.foldLedger()
	cp := Checkpoint{Events: int64(s.n()), NextLabel: s.mgr.NextLabel(), Generation: s.mgr.Generation(), Surface: make([]CheckpointNode, 0, s.mgr.Len())}
	for n := s.mgr.Head(); n != nil; n = n.Next() {
		cp.Surface = append(cp.Surface, CheckpointNode{Seq: n.Seq(), Label: n.Label()})
	}
	cp.Ledger, _ = s.ledger.MarshalJSON() // it cannot fail: plain values and JSON the log holds
	return cp
}

// restored is what Restore was given: the checkpoint, the events of its
// surface, and how to read the events it covers.
type restored struct {
	cp     Checkpoint
	nodes  []event.Event
	prefix func() (*event.Log, error)
}

// ErrCheckpointUnusable is the error of a Restore whose checkpoint cannot
// give the session a replay would (it does not fit its events or options):
// the caller replays the whole log instead. Restore wraps it.
var ErrCheckpointUnusable = errors.New("session: the checkpoint cannot be used")

// Restore returns the session that replaying a whole log gives, from a
// checkpoint of its first cp.Events events and the events after them
// (STORE-18): nodes are the events of the checkpoint's surface, in its
// order, and tail the events from seq cp.Events on, each checked with
// every rule as Seed checks it (a bad one rejects the restore at its index
// in tail). prefix reads the events the checkpoint covers back, for the
// queries that need them (Events, Provenance, Fork, a TurnEnd before the
// checkpoint): it is called at most once, and a failure then leaves the
// session refusing appends. As SeedLog, Restore takes tail's events
// without copying them.
//
// A checkpoint that does not fit (a node that is not its event, labels out
// of order, a ledger that does not read back) or options it cannot serve
// (WithStrict and WithTrace need every event) give an error wrapping
// ErrCheckpointUnusable: replay the whole log then.
func Restore(cp Checkpoint, nodes []event.Event, tail *event.Log, prefix func() (*event.Log, error), opts ...Option) (*Session, error) {
	s := New(opts...)
	if s.cfg.strict || s.cfg.trace != nil {
		return nil, unusable("strict mode and traces replay the whole log")
	}
	if cp.Events < 0 || cp.Events > 1<<53 || len(nodes) != len(cp.Surface) || prefix == nil {
		return nil, unusable("the checkpoint does not fit its events")
	}
	for i := range nodes {
		e := &nodes[i]
		if e.Seq != cp.Surface[i].Seq || !event.IsSurface(e.Type) {
			return nil, unusable("surface node %d is not the event of seq %d", i, cp.Surface[i].Seq)
		}
		if err := s.cfg.vocabulary.Check(e, e.Seq); err != nil {
			return nil, unusable("surface node %d: %v", i, err)
		}
	}
	s.base, s.cpAt = int(cp.Events), int(cp.Events)
	s.lazy = &restored{cp: cp, nodes: nodes, prefix: prefix}
	if !s.restoreState() {
		return nil, unusable("its surface is not one a log can have")
	}
	if err := s.ledger.UnmarshalJSON(cp.Ledger); err != nil {
		return nil, unusable("its ledger: %v", err)
	}
	s.ledgerAt = s.base
	if err := s.load(tail); err != nil {
		return nil, err
	}
	return s, nil
}

// unusable is an error wrapping ErrCheckpointUnusable.
func unusable(format string, args ...any) error {
	return &event.Error{Code: event.CodePersistCheckpointUnusable, Index: -1, Seq: -1, Detail: fmt.Sprintf(format, args...), Cause: ErrCheckpointUnusable}
}

// restoreState sets the surface and the view to the checkpoint's, from
// which the events after it are folded. Caller holds s.mu (or owns s).
func (s *Session) restoreState() bool {
	r := s.lazy
	nodes := make([]surface.Restored, len(r.cp.Surface))
	for i, n := range r.cp.Surface {
		nodes[i] = surface.Restored{Seq: n.Seq, Label: n.Label}
	}
	mgr, ok := surface.Restore(nodes, r.cp.NextLabel, r.cp.Generation, s.base)
	if !ok {
		return false
	}
	s.mgr = mgr
	s.mgr.Observe(s.observe)
	s.view = view.Builder{}
	for i := range r.nodes {
		s.view.Append(s.entry(&r.nodes[i], r.cp.Surface[i].Label))
	}
	s.snap, s.snapAt = s.view.Snapshot(), s.base
	return true
}

// whole reads back the events before base (a session restored from a
// checkpoint), so that the log is whole again: every query then works as
// in any session. When they cannot be read, or are not the events the
// checkpoint covers, the session keeps zero events in their place and
// refuses appends from then on (broken). Caller holds s.mu.
func (s *Session) whole() error {
	if s.base == 0 {
		return s.broken
	}
	l, err := s.lazy.prefix()
	if err == nil {
		err = s.checkPrefix(l)
	}
	var prefix []event.Event
	if err == nil {
		prefix = l.Events()[:s.base:s.base]
	} else {
		prefix = make([]event.Event, s.base, s.base+withHeadroom(len(s.log)))
		s.broken = &event.Error{Code: event.CodePersistCorrupt, Index: -1, Seq: -1, Detail: "the events before the checkpoint the session resumed from cannot be read back: " + err.Error(), Cause: err}
	}
	s.log = append(prefix, s.log...)
	s.base = 0
	s.mgr.Rebase(0)
	s.lazy = nil
	s.turnEnds = nil // folded again from the first event
	return s.broken
}

// checkPrefix checks that l holds the events the checkpoint covers, each
// with its seq and its event rules.
func (s *Session) checkPrefix(l *event.Log) error {
	if l == nil || l.Len() != s.base {
		n := 0
		if l != nil {
			n = l.Len()
		}
		return event.Errorf(event.CodePersistCorrupt, -1, "%d events read back where the checkpoint covers %d", n, s.base)
	}
	for i := 0; i < s.base; i++ {
		if err := l.Check(s.cfg.vocabulary, i, int64(i)); err != nil {
			return err
		}
	}
	return nil
}

// n is the number of events in the log.
func (s *Session) n() int { return s.base + len(s.log) }

// Restored reports whether the session resumed from a checkpoint and has
// not read back the events it covers (Restore): the number of those
// events, or 0.
func (s *Session) Restored() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.base
}
