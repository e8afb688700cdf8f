package surface

import (
	"github.com/surfacelog/surface/impl/event"
)

// Node is one node of the surface.
type Node struct {
	seq        int64
	label      int64
	prev, next *Node
}

// Seq is the seq of the node's event.
func (n *Node) Seq() int64 { return n.seq }

// Label is the node's order label: labels strictly increase from head to
// tail.
func (n *Node) Label() int64 { return n.label }

// Next is the node after n, or nil at the tail.
func (n *Node) Next() *Node { return n.next }

// Prev is the node before n, or nil at the head.
func (n *Node) Prev() *Node { return n.prev }

// plan is a validated, not yet applied surface transition of one event.
type plan struct {
	seq        int64
	kind       event.OpKind // OpNone: the event is not a surface node
	start, end *Node
	valid      bool
}

// Change is one surface transition, reported to the Manager's observer as
// the event is folded: an append of node Seq with order label Label, or a
// replace of the nodes labelled From through To by node Seq, which takes
// label Label (= From).
type Change struct {
	Seq, Label int64
	Replace    bool
	From, To   int64
}

// Manager is the incrementally maintained surface of one log.
type Manager struct {
	head, tail *Node
	bySeq      []*Node // node of each on-surface seq from indexBase on; nil otherwise
	// A restored Manager indexes the nodes of seqs before indexBase (the
	// events it was not given) in restoredNodes, so that a restore costs
	// its surface, not its log.
	indexBase     int64
	restoredNodes map[int64]*Node
	length        int
	nextLabel     int64
	processed     int // number of log events folded
	// base is the seq of the first event of the log slices the Manager is
	// given: 0, except after Restore, until Rebase.
	base     int
	replaces int64 // replace generation
	observe  func(Change)
	pending  plan
	slab     []Node
	// walked counts the nodes visited by range walks, so tests can prove
	// that a replace costs O(range) (SURF-26).
	walked int
}

// New returns the Manager of an empty log.
func New() *Manager { return &Manager{} }

// Observe makes the Manager call f with every change it folds, in log
// order, from then on. A view kept in step this way sees the fold of every
// event, however many were appended between two queries.
func (m *Manager) Observe(f func(Change)) { m.observe = f }

// Len is the number of surface nodes.
func (m *Manager) Len() int { return m.length }

// Processed is the number of log events folded so far.
func (m *Manager) Processed() int { return m.processed }

// Head is the first node, or nil when the surface is empty.
func (m *Manager) Head() *Node { return m.head }

// Tail is the last node, or nil when the surface is empty.
func (m *Manager) Tail() *Node { return m.tail }

// Generation counts the replaces folded so far.
func (m *Manager) Generation() int64 { return m.replaces }

// Node returns the surface node of seq, or nil when seq is not on the
// surface.
func (m *Manager) Node(seq int64) *Node {
	if seq < m.indexBase {
		return m.restoredNodes[seq] // nil for a negative seq
	}
	if seq-m.indexBase >= int64(len(m.bySeq)) {
		return nil
	}
	return m.bySeq[seq-m.indexBase]
}

// Validate checks candidate e as the next event of log (the events the
// Manager has been given so far, plus any appended since) against every
// rule: the event-local ones through event.Check (which also compacts
// e.Data), then SURF-12 to SURF-14 against the current surface. It folds
// pending events first. Nothing changes when it fails.
func (m *Manager) Validate(log []event.Event, e *event.Event) *event.Error {
	return m.ValidateIn(log, e, nil)
}

// ValidateIn is Validate with the event-local rules of vocabulary v
// (v.Check; nil is the catalog). Unlike ValidateWith it lets e stay on
// its caller's stack: a session's append allocates nothing for it.
func (m *Manager) ValidateIn(log []event.Event, e *event.Event, v *event.Vocabulary) *event.Error {
	if err := m.begin(log); err != nil {
		return err
	}
	if err := v.Check(e, int64(m.base+len(log))); err != nil {
		return err
	}
	return m.planNext(e)
}

// ValidateWith is Validate with check in place of event.Check for the
// event-local rules (a decoded Log checks its events with what it learnt
// while decoding them).
func (m *Manager) ValidateWith(log []event.Event, e *event.Event, check func(*event.Event, int64) *event.Error) *event.Error {
	if err := m.begin(log); err != nil {
		return err
	}
	if err := check(e, int64(m.base+len(log))); err != nil {
		return err
	}
	return m.planNext(e)
}

// begin folds the pending events of log and forgets any earlier plan.
func (m *Manager) begin(log []event.Event) *event.Error {
	if err := m.Sync(log); err != nil {
		return err
	}
	m.pending.valid = false
	return nil
}

// planNext plans e, which passed the event-local rules, and keeps the
// plan for the Sync that folds it.
func (m *Manager) planNext(e *event.Event) *event.Error {
	p, err := m.plan(e)
	if err != nil {
		return err
	}
	m.pending = p
	return nil
}

// Sync folds the events of log that the Manager has not processed yet. It
// fails only if log holds an event that Validate would reject, which a
// session never lets in.
func (m *Manager) Sync(log []event.Event) *event.Error {
	end := m.base + len(log)
	for i := m.processed; i < end; i++ {
		p := m.pending
		if !p.valid || p.seq != int64(i) {
			var err *event.Error
			if p, err = m.plan(&log[i-m.base]); err != nil {
				return err
			}
		}
		m.apply(p)
		m.pending.valid = false
		m.processed = i + 1
	}
	return nil
}

// plan checks the positional rules of a replace (SURF-12 to SURF-14) for an
// event that passed event.Check.
func (m *Manager) plan(e *event.Event) (plan, *event.Error) {
	p := plan{seq: e.Seq, valid: true}
	if !event.IsSurface(e.Type) {
		return p, nil
	}
	p.kind = e.Op.Kind
	if e.Op.Kind != event.OpReplace {
		return p, nil
	}
	start, end := m.Node(e.Op.Start), m.Node(e.Op.End)
	if start == nil {
		return p, event.Errorf(event.CodeReplaceStartNotOnSurface, e.Seq, "replace start %d is not on the surface", e.Op.Start)
	}
	if end == nil {
		return p, event.Errorf(event.CodeReplaceEndNotOnSurface, e.Seq, "replace end %d is not on the surface", e.Op.End)
	}
	if start.label > end.label {
		return p, event.Errorf(event.CodeReplaceReversed, e.Seq, "replace start %d comes after end %d on the surface", e.Op.Start, e.Op.End)
	}
	p.start, p.end = start, end
	if missing := m.uncovered(start, end, e.Sources); missing != nil {
		err := event.Errorf(event.CodeReplaceSourcesIncomplete, e.Seq, "sourceEventSeqs lacks shadowed nodes %v", missing)
		err.Missing = missing
		return p, err
	}
	return p, nil
}

// uncovered returns the seqs of nodes start..end that sources lacks.
func (m *Manager) uncovered(start, end *Node, sources []int64) []int64 {
	var missing []int64
	if len(sources) <= 16 {
		for n := start; n != nil; n = n.next {
			m.walked++
			if !contains(sources, n.seq) {
				missing = append(missing, n.seq)
			}
			if n == end {
				break
			}
		}
		return missing
	}
	set := make(map[int64]struct{}, len(sources))
	for _, s := range sources {
		set[s] = struct{}{}
	}
	for n := start; n != nil; n = n.next {
		m.walked++
		if _, ok := set[n.seq]; !ok {
			missing = append(missing, n.seq)
		}
		if n == end {
			break
		}
	}
	return missing
}

func contains(xs []int64, x int64) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func (m *Manager) newNode(seq, label int64) *Node {
	if len(m.slab) == 0 {
		m.slab = make([]Node, 256)
	}
	n := &m.slab[0]
	m.slab = m.slab[1:]
	n.seq, n.label = seq, label
	return n
}

// Restored is one node of a surface given to Restore: the seq of its
// event and its order label.
type Restored struct {
	Seq, Label int64
}

// Restore returns the Manager of a log whose first processed events were
// folded elsewhere (a checkpoint): its surface is nodes, head to tail, with
// strictly increasing labels below nextLabel, after generation replaces.
// The events before processed are not given to it again: from then on
// every log slice given to it (Validate, Sync) begins at seq processed,
// until Rebase. It reports nothing to an observer for the restored nodes.
// It fails, leaving nothing, when nodes are not in seq range, repeat a
// seq, or break the label order.
func Restore(nodes []Restored, nextLabel, generation int64, processed int) (*Manager, bool) {
	m := &Manager{nextLabel: nextLabel, replaces: generation, processed: processed, base: processed}
	m.indexBase = int64(processed)
	m.restoredNodes = make(map[int64]*Node, len(nodes))
	last := int64(-1) << 62
	for _, r := range nodes {
		if r.Seq < 0 || r.Seq >= int64(processed) || r.Label <= last || r.Label >= nextLabel || m.Node(r.Seq) != nil {
			return nil, false
		}
		last = r.Label
		m.link(m.newNode(r.Seq, r.Label))
	}
	if generation < 0 {
		return nil, false
	}
	return m, true
}

// Base is the seq of the first event of the log slices the Manager takes:
// 0 unless it was restored and not rebased.
func (m *Manager) Base() int { return m.base }

// Rebase makes the Manager take log slices that begin at seq base (0: the
// whole log), once the events a Restore skipped are at hand again.
func (m *Manager) Rebase(base int) { m.base = base }

// NextLabel is the label the next appended node takes.
func (m *Manager) NextLabel() int64 { return m.nextLabel }

// Grow makes room for n more events, so a Manager given a long log at once
// (a seed, a resume) indexes it without copying its index as it grows.
func (m *Manager) Grow(n int) {
	if n <= 0 || cap(m.bySeq)-len(m.bySeq) >= n {
		return
	}
	m.bySeq = append(make([]*Node, 0, len(m.bySeq)+n), m.bySeq...)
}

func (m *Manager) index(seq int64, n *Node) {
	if seq < m.indexBase {
		m.restoredNodes[seq] = n
		return
	}
	i := seq - m.indexBase
	for int64(len(m.bySeq)) <= i {
		m.bySeq = append(m.bySeq, nil)
	}
	m.bySeq[i] = n
}

// link puts node n after the tail and indexes it.
func (m *Manager) link(n *Node) {
	n.prev = m.tail
	if m.tail != nil {
		m.tail.next = n
	} else {
		m.head = n
	}
	m.tail = n
	m.length++
	m.index(n.seq, n)
}

func (m *Manager) apply(p plan) {
	switch p.kind {
	case event.OpAppend:
		n := m.newNode(p.seq, m.nextLabel)
		m.nextLabel++
		m.link(n)
		if m.observe != nil {
			m.observe(Change{Seq: n.seq, Label: n.label})
		}
	case event.OpReplace:
		n := m.newNode(p.seq, p.start.label)
		before, after := p.start.prev, p.end.next
		for x := p.start; ; {
			next := x.next
			m.walked++
			if x.seq < m.indexBase {
				delete(m.restoredNodes, x.seq)
			} else {
				m.bySeq[x.seq-m.indexBase] = nil
			}
			x.prev, x.next = nil, nil
			m.length--
			if x == p.end || next == nil {
				break
			}
			x = next
		}
		n.prev, n.next = before, after
		if before != nil {
			before.next = n
		} else {
			m.head = n
		}
		if after != nil {
			after.prev = n
		} else {
			m.tail = n
		}
		m.length++
		m.index(p.seq, n)
		m.replaces++
		if m.observe != nil {
			m.observe(Change{Seq: n.seq, Label: n.label, Replace: true, From: p.start.label, To: p.end.label})
		}
	}
}
