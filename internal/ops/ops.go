// Package ops runs the same operations against the implementation
// (impl/session) and the oracle (model) and compares what they report. The
// rapid state machine, the fuzz targets and the command-line self-check all
// drive both sides through it.
package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/go-cmp/cmp"

	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/impl/view"
	"github.com/surfacelog/surface/model"
)

// Kind is the kind of a Step.
type Kind string

const (
	KindAppend     Kind = "append"
	KindSeed       Kind = "seed"
	KindSeedJSON   Kind = "seed_json"
	KindFork       Kind = "fork"
	KindProvenance Kind = "provenance"
	KindRepair     Kind = "repair"
	// Compaction (COMP-*): begin, commit, abort, prune, select, balance,
	// and forget (the compactor crashes: its open operation is lost, the
	// lock stays in the log).
	KindBegin   Kind = "compact_begin"
	KindCommit  Kind = "compact_commit"
	KindAbort   Kind = "compact_abort"
	KindPrune   Kind = "prune"
	KindSelect  Kind = "compact_select"
	KindBalance Kind = "balance"
	KindForget  Kind = "forget"
	// KindReload stands for a crash and a resume: each side is seeded
	// again from its own log, so an open operation is lost and the lock
	// stays in the log (repair closes it, REP-6).
	KindReload Kind = "reload"
)

// Step is one operation.
type Step struct {
	Kind Kind
	// Append
	Type   event.Type
	Data   any
	Intent *event.Intent
	// Seed
	Events []event.Event
	// SeedJSON
	Lines []json.RawMessage
	// Fork
	Boundary int64
	// Continue makes a successful fork continue on the child.
	Continue bool
	// Provenance; Prune and Balance (the node)
	Seq int64
	// Begin: the range and how; Snap shrinks it to balanced cuts, V2 uses
	// the compaction/* vocabulary. Balance: After asks for the cut after.
	Start, End int64
	Snap, V2   bool
	// Concurrent: a compact/* compaction allows appends between begin
	// and commit (else its commit is compaction.log_changed).
	Concurrent bool
	// Opaque: a compaction (Begin) or selection (Select) may fold
	// providers' opaque items (PROV-4).
	Opaque bool
	After  bool
	// Commit: the summary (or Prune: the new content) and the summariser.
	Blocks          []json.RawMessage
	Provider, Model string
	MaxTokens       *int64
	// Plain commits the summary unframed and without the size check
	// (COMP-11).
	Plain bool
	// Abort: the reason.
	Reason string
	// Select: keep the last KeepLast nodes, or (KeepLast < 0) KeepTokens.
	KeepLast, KeepTokens int
}

func (s Step) String() string {
	switch s.Kind {
	case KindAppend:
		data := fmt.Sprintf("%v", s.Data)
		if raw, ok := s.Data.(json.RawMessage); ok {
			data = string(raw)
		}
		return fmt.Sprintf("append %s %s intent=%+v", s.Type, data, s.Intent)
	case KindSeed:
		return fmt.Sprintf("seed %d events", len(s.Events))
	case KindSeedJSON:
		return fmt.Sprintf("seed_json %d lines", len(s.Lines))
	case KindFork:
		return fmt.Sprintf("fork at %d", s.Boundary)
	case KindProvenance:
		return fmt.Sprintf("provenance of %d", s.Seq)
	case KindBegin:
		return fmt.Sprintf("compact_begin %d..%d snap=%v v2=%v concurrent=%v", s.Start, s.End, s.Snap, s.V2, s.Concurrent)
	case KindCommit:
		return fmt.Sprintf("compact_commit %d blocks", len(s.Blocks))
	case KindPrune:
		return fmt.Sprintf("prune %d", s.Seq)
	case KindSelect:
		return fmt.Sprintf("compact_select keepLast=%d keepTokens=%d", s.KeepLast, s.KeepTokens)
	case KindBalance:
		return fmt.Sprintf("balance %d after=%v", s.Seq, s.After)
	}
	return string(s.Kind)
}

// Outcome is what one side reported for a step.
type Outcome struct {
	Code       event.Code   // "" on success
	Event      *event.Event // the appended event
	Provenance []int64
	// Events are the events a repair or a compaction step appended.
	Events []event.Event
	// Range is what a select proposed; Balanced, OnSurface what a balance
	// found.
	Range               *[2]int64
	Balanced, OnSurface bool
	// ErrIndex is a refusal's seed index (-1: none), compared as the code
	// is. ErrSeq, the seq it names, is recorded but not compared: the two
	// sides name different seqs in some compaction refusals (a prune whose
	// new content is refused), which no vector carries.
	ErrSeq   int64
	ErrIndex int
}

// fail records err's shape and returns its code ("" for nil).
func (o *Outcome) fail(err error) event.Code {
	var e *event.Error
	if errors.As(err, &e) {
		o.ErrSeq, o.ErrIndex = e.Seq, e.Index
	}
	return event.CodeOf(err)
}

// State is everything observable about a session.
type State struct {
	Events   []event.Event
	Surface  []int64
	Messages []message.Message
}

// Driver is one side: the implementation or the model.
type Driver interface {
	Append(t event.Type, data any, intent *event.Intent) (event.Event, error)
	AppendEvent(e event.Event) (event.Event, error)
	Repair() ([]event.Event, error)
	Seed(events []event.Event) (Driver, error)
	SeedJSON(lines []json.RawMessage) (Driver, error)
	Fork(boundary int64) (Driver, error)
	Provenance(seq int64) ([]int64, error)
	State() State
	// Compaction (COMP-*). A driver holds at most one open operation.
	Begin(s Step) ([]event.Event, error)
	Commit(s Step) ([]event.Event, error)
	Abort(reason string) ([]event.Event, error)
	Prune(seq int64, content []json.RawMessage) ([]event.Event, error)
	Select(keepLast, keepTokens int, opaque bool) (int64, int64, error)
	Balanced(seq int64, after bool) (balanced, ok bool)
	Forget()
}

// Apply runs s on d. It returns the driver to continue with: a seed that
// succeeds replaces the session; a fork leaves the parent in place.
func Apply(d Driver, s Step) (Driver, Outcome) {
	var out Outcome
	switch s.Kind {
	case KindAppend:
		e, err := d.Append(s.Type, s.Data, s.Intent)
		if out.Code = out.fail(err); err == nil {
			out.Event = &e
		}
	case KindSeed, KindSeedJSON:
		var next Driver
		var err error
		if s.Kind == KindSeed {
			next, err = d.Seed(s.Events)
		} else {
			next, err = d.SeedJSON(s.Lines)
		}
		if out.Code = out.fail(err); err == nil {
			d = next
		}
	case KindFork:
		child, err := d.Fork(s.Boundary)
		if out.Code = out.fail(err); err == nil && s.Continue {
			d = child
		}
	case KindProvenance:
		p, err := d.Provenance(s.Seq)
		out.Code, out.Provenance = out.fail(err), p
	case KindRepair:
		evs, err := d.Repair()
		out.Code, out.Events = out.fail(err), evs
	case KindBegin:
		evs, err := d.Begin(s)
		out.Code, out.Events = out.fail(err), evs
	case KindCommit:
		evs, err := d.Commit(s)
		out.Code, out.Events = out.fail(err), evs
	case KindAbort:
		evs, err := d.Abort(s.Reason)
		out.Code, out.Events = out.fail(err), evs
	case KindPrune:
		evs, err := d.Prune(s.Seq, s.Blocks)
		out.Code, out.Events = out.fail(err), evs
	case KindSelect:
		a, b, err := d.Select(s.KeepLast, s.KeepTokens, s.Opaque)
		if out.Code = out.fail(err); err == nil {
			out.Range = &[2]int64{a, b}
		}
	case KindBalance:
		out.Balanced, out.OnSurface = d.Balanced(s.Seq, s.After)
	case KindForget:
		d.Forget()
	case KindReload:
		next, err := d.Seed(d.State().Events)
		if out.Code = out.fail(err); err == nil {
			d = next
		}
	}
	return d, out
}

// Diff returns a go-cmp diff of two values, "" when equal.
func Diff(want, got any) string { return cmp.Diff(want, got) }

// Impl adapts *session.Session.
type Impl struct {
	S      *session.Session
	Clock  func() int64
	Voc    *event.Vocabulary
	Strict bool // strict mode (STRICT-*)
	op     *compaction.Operation
}

// opts are the session options of d's sessions.
func (d *Impl) opts() []session.Option {
	o := []session.Option{session.WithClock(d.Clock), session.WithVocabulary(d.Voc)}
	if d.Strict {
		o = append(o, session.WithStrict())
	}
	return o
}

// NewImplStrict returns an empty implementation session that knows voc,
// in strict mode when strict is set.
func NewImplStrict(voc *event.Vocabulary, clock func() int64, strict bool) *Impl {
	d := &Impl{Clock: clock, Voc: voc, Strict: strict}
	d.S = session.New(d.opts()...)
	return d
}

// NewImpl returns an empty implementation session.
func NewImpl(clock func() int64) *Impl { return NewImplIn(nil, clock) }

// NewImplIn returns an empty implementation session that knows voc.
func NewImplIn(voc *event.Vocabulary, clock func() int64) *Impl {
	return NewImplStrict(voc, clock, false)
}

func (d *Impl) Append(t event.Type, data any, intent *event.Intent) (event.Event, error) {
	return d.S.Append(context.Background(), event.Raw{Type: t, Data: data}, intent.Value())
}

func (d *Impl) AppendEvent(e event.Event) (event.Event, error) {
	return d.S.AppendEvent(context.Background(), e)
}

func (d *Impl) Repair() ([]event.Event, error) { return d.S.Repair(context.Background()) }

func (d *Impl) Seed(events []event.Event) (Driver, error) {
	s, err := session.Seed(events, d.opts()...)
	if err != nil {
		return nil, err
	}
	return &Impl{S: s, Clock: d.Clock, Voc: d.Voc, Strict: d.Strict}, nil
}

func (d *Impl) SeedJSON(lines []json.RawMessage) (Driver, error) {
	s, err := session.SeedJSON(lines, d.opts()...)
	if err != nil {
		return nil, err
	}
	return &Impl{S: s, Clock: d.Clock, Voc: d.Voc, Strict: d.Strict}, nil
}

func (d *Impl) Fork(boundary int64) (Driver, error) {
	s, err := d.S.Fork(boundary)
	if err != nil {
		return nil, err
	}
	return &Impl{S: s, Clock: d.Clock, Voc: d.Voc, Strict: d.Strict}, nil
}

func (d *Impl) Provenance(seq int64) ([]int64, error) { return d.S.Provenance(seq) }

func (d *Impl) State() State { return StateOf(d.S) }

// appendedSince returns the events of the log from n on.
func (d *Impl) appendedSince(n int) []event.Event {
	return append([]event.Event(nil), d.S.Events()[n:]...)
}

func (d *Impl) Begin(s Step) ([]event.Event, error) {
	opts := []compaction.Option{}
	if s.Snap {
		opts = append(opts, compaction.WithSnap())
	}
	if s.V2 {
		opts = append(opts, compaction.WithVocabulary(compaction.CompactionEvents))
	}
	if s.Concurrent {
		opts = append(opts, compaction.WithConcurrentAppends())
	}
	if s.Opaque {
		opts = append(opts, compaction.WithOpaqueItems())
	}
	n := d.S.Len()
	op, err := compaction.Begin(context.Background(), d.S, s.Start, s.End, opts...)
	if err != nil {
		return nil, err
	}
	d.op = op
	return d.appendedSince(n), nil
}

func (d *Impl) Commit(s Step) ([]event.Event, error) {
	if d.op == nil {
		return nil, event.Errorf(event.CodeCompactionFinished, -1, "no open operation")
	}
	n := d.S.Len()
	var opts []compaction.Option
	if s.Plain {
		opts = append(opts, compaction.WithoutFraming(), compaction.WithoutSizeCheck())
	}
	_, err := d.op.Commit(context.Background(), s.Blocks, compaction.Meta{Provider: s.Provider, Model: s.Model, MaxTokens: s.MaxTokens}, opts...)
	// A refused commit may have ended the compaction (range_changed,
	// not_smaller): its end event is reported with the error.
	return d.appendedSince(n), err
}

func (d *Impl) Abort(reason string) ([]event.Event, error) {
	if d.op == nil {
		return nil, event.Errorf(event.CodeCompactionFinished, -1, "no open operation")
	}
	n := d.S.Len()
	if err := d.op.Abort(errors.New(reason)); err != nil {
		return nil, err
	}
	return d.appendedSince(n), nil
}

func (d *Impl) Prune(seq int64, content []json.RawMessage) ([]event.Event, error) {
	n := d.S.Len()
	if _, err := compaction.PruneToolResult(d.S, seq, content); err != nil {
		return nil, err
	}
	return d.appendedSince(n), nil
}

func (d *Impl) Select(keepLast, keepTokens int, opaque bool) (int64, int64, error) {
	p := compaction.KeepLast(keepLast)
	if keepLast < 0 {
		p = compaction.KeepTokens(keepTokens, nil)
	}
	opts := []compaction.SelectOption{compaction.WithNodeCuts(), compaction.WithOpenTurn()} // COMP-8: node-level
	if opaque {
		opts = append(opts, compaction.WithOpaqueSelection())
	}
	r, err := compaction.Select(d.S, p, opts...)
	return r.Start, r.End, err
}

func (d *Impl) Balanced(seq int64, after bool) (bool, bool) {
	if after {
		return compaction.BalancedAfter(d.S, seq)
	}
	return compaction.BalancedBefore(d.S, seq)
}

func (d *Impl) Forget() { d.op = nil }

// Views returns the session's current views, which must never change.
func (d *Impl) Views() (view.Seqs, view.Messages) { return d.S.Surface(), d.S.Messages() }

// StateOf returns the observable state of an implementation session, its
// views copied out.
func StateOf(s *session.Session) State {
	return normal(State{Events: s.Events(), Surface: s.Surface().Slice(), Messages: s.Messages().Slice()})
}

// normal makes empty slices non-nil, so that both sides compare equal.
func normal(s State) State {
	if s.Events == nil {
		s.Events = []event.Event{}
	}
	if s.Surface == nil {
		s.Surface = []int64{}
	}
	if s.Messages == nil {
		s.Messages = []message.Message{}
	}
	return s
}

// Model adapts *model.Session.
type Model struct {
	S      *model.Session
	Clock  func() int64
	Voc    *event.Vocabulary
	Strict bool // strict mode (STRICT-*)
	op     *model.Op
}

// opts are the model options of d's sessions.
func (d *Model) opts() []model.Option {
	o := []model.Option{model.WithVocabulary(d.Voc)}
	if d.Strict {
		o = append(o, model.WithStrict())
	}
	return o
}

// NewModelStrict returns an empty model session that knows voc, in strict
// mode when strict is set.
func NewModelStrict(voc *event.Vocabulary, clock func() int64, strict bool) *Model {
	d := &Model{Clock: clock, Voc: voc, Strict: strict}
	d.S = model.NewSession(clock, d.opts()...)
	return d
}

// NewModel returns an empty model session.
func NewModel(clock func() int64) *Model { return NewModelIn(nil, clock) }

// NewModelIn returns an empty model session that knows voc.
func NewModelIn(voc *event.Vocabulary, clock func() int64) *Model {
	return NewModelStrict(voc, clock, false)
}

func (d *Model) Append(t event.Type, data any, intent *event.Intent) (event.Event, error) {
	return d.S.Append(t, data, intent)
}

func (d *Model) AppendEvent(e event.Event) (event.Event, error) { return d.S.AppendEvent(e) }

func (d *Model) Repair() ([]event.Event, error) { return d.S.Repair() }

func (d *Model) Seed(events []event.Event) (Driver, error) {
	s, err := model.SeedSession(events, d.Clock, d.opts()...)
	if err != nil {
		return nil, err
	}
	return &Model{S: s, Clock: d.Clock, Voc: d.Voc, Strict: d.Strict}, nil
}

// SeedJSON decodes the lines with the model's own decoder. A line that is
// not an event is reported in log order: when an earlier event breaks a
// rule, that comes first (SURF-18).
func (d *Model) SeedJSON(lines []json.RawMessage) (Driver, error) {
	events := make([]event.Event, 0, len(lines))
	for i, l := range lines {
		e, err := model.DecodeLine(l)
		if err != nil {
			if _, serr := d.Seed(events); serr != nil {
				return nil, serr
			}
			err.(*event.Error).Index = i
			return nil, err
		}
		events = append(events, e)
	}
	return d.Seed(events)
}

func (d *Model) Fork(boundary int64) (Driver, error) {
	s, err := d.S.Fork(boundary)
	if err != nil {
		return nil, err
	}
	return &Model{S: s, Clock: d.Clock, Voc: d.Voc, Strict: d.Strict}, nil
}

func (d *Model) Provenance(seq int64) ([]int64, error) { return d.S.Provenance(seq) }

func (d *Model) Begin(s Step) ([]event.Event, error) {
	n := len(d.S.Events())
	op, err := d.S.BeginItems(s.Start, s.End, s.Snap, s.V2, "", s.Opaque)
	if err != nil {
		return nil, err
	}
	op.Concurrent = s.Concurrent
	d.op = op
	return d.S.Events()[n:], nil
}

func (d *Model) Commit(s Step) ([]event.Event, error) {
	if d.op == nil {
		return nil, event.Errorf(event.CodeCompactionFinished, -1, "no open operation")
	}
	return d.S.Commit(d.op, s.Blocks, s.Provider, s.Model, s.MaxTokens, s.Plain)
}

func (d *Model) Abort(reason string) ([]event.Event, error) {
	if d.op == nil {
		return nil, event.Errorf(event.CodeCompactionFinished, -1, "no open operation")
	}
	return d.S.Abort(d.op, reason)
}

func (d *Model) Prune(seq int64, content []json.RawMessage) ([]event.Event, error) {
	return d.S.Prune(seq, content)
}

func (d *Model) Select(keepLast, keepTokens int, opaque bool) (int64, int64, error) {
	return d.S.SelectItems(keepLast, keepTokens, opaque)
}

func (d *Model) Balanced(seq int64, after bool) (bool, bool) { return d.S.Balanced(seq, after) }

func (d *Model) Forget() { d.op = nil }

func (d *Model) State() State {
	st := d.S.Derived()
	return normal(State{Events: st.Log, Surface: st.Surface, Messages: st.Messages})
}
