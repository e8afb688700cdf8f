// Package ops runs the same operations against the implementation
// (impl/session) and the oracle (model) and compares what they report. The
// rapid state machine, the fuzz targets and the command-line self-check all
// drive both sides through it.
package ops

import (
	"encoding/json"
	"fmt"

	"github.com/google/go-cmp/cmp"

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
	// Provenance
	Seq int64
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
	default:
		return fmt.Sprintf("provenance of %d", s.Seq)
	}
}

// Outcome is what one side reported for a step.
type Outcome struct {
	Code       event.Code   // "" on success
	Event      *event.Event // the appended event
	Provenance []int64
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
}

// Apply runs s on d. It returns the driver to continue with: a seed that
// succeeds replaces the session; a fork leaves the parent in place.
func Apply(d Driver, s Step) (Driver, Outcome) {
	var out Outcome
	switch s.Kind {
	case KindAppend:
		e, err := d.Append(s.Type, s.Data, s.Intent)
		if out.Code = event.CodeOf(err); err == nil {
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
		if out.Code = event.CodeOf(err); err == nil {
			d = next
		}
	case KindFork:
		child, err := d.Fork(s.Boundary)
		if out.Code = event.CodeOf(err); err == nil && s.Continue {
			d = child
		}
	case KindProvenance:
		p, err := d.Provenance(s.Seq)
		out.Code, out.Provenance = event.CodeOf(err), p
	}
	return d, out
}

// Diff returns a go-cmp diff of two values, "" when equal.
func Diff(want, got any) string { return cmp.Diff(want, got) }

// Impl adapts *session.Session.
type Impl struct {
	S     *session.Session
	Clock func() int64
}

// NewImpl returns an empty implementation session.
func NewImpl(clock func() int64) *Impl {
	return &Impl{S: session.New(session.WithClock(clock)), Clock: clock}
}

func (d *Impl) Append(t event.Type, data any, intent *event.Intent) (event.Event, error) {
	return d.S.Append(t, data, intent)
}

func (d *Impl) AppendEvent(e event.Event) (event.Event, error) { return d.S.AppendEvent(e) }

func (d *Impl) Repair() ([]event.Event, error) { return d.S.Repair() }

func (d *Impl) Seed(events []event.Event) (Driver, error) {
	s, err := session.Seed(events, session.WithClock(d.Clock))
	if err != nil {
		return nil, err
	}
	return &Impl{S: s, Clock: d.Clock}, nil
}

func (d *Impl) SeedJSON(lines []json.RawMessage) (Driver, error) {
	s, err := session.SeedJSON(lines, session.WithClock(d.Clock))
	if err != nil {
		return nil, err
	}
	return &Impl{S: s, Clock: d.Clock}, nil
}

func (d *Impl) Fork(boundary int64) (Driver, error) {
	s, err := d.S.Fork(boundary)
	if err != nil {
		return nil, err
	}
	return &Impl{S: s, Clock: d.Clock}, nil
}

func (d *Impl) Provenance(seq int64) ([]int64, error) { return d.S.Provenance(seq) }

func (d *Impl) State() State { return StateOf(d.S) }

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
	S     *model.Session
	Clock func() int64
}

// NewModel returns an empty model session.
func NewModel(clock func() int64) *Model {
	return &Model{S: model.NewSession(clock), Clock: clock}
}

func (d *Model) Append(t event.Type, data any, intent *event.Intent) (event.Event, error) {
	return d.S.Append(t, data, intent)
}

func (d *Model) AppendEvent(e event.Event) (event.Event, error) { return d.S.AppendEvent(e) }

func (d *Model) Repair() ([]event.Event, error) { return d.S.Repair() }

func (d *Model) Seed(events []event.Event) (Driver, error) {
	s, err := model.SeedSession(events, d.Clock)
	if err != nil {
		return nil, err
	}
	return &Model{S: s, Clock: d.Clock}, nil
}

func (d *Model) SeedJSON(lines []json.RawMessage) (Driver, error) {
	events := make([]event.Event, len(lines))
	for i, l := range lines {
		e, err := event.Decode(l)
		if err != nil {
			return nil, err
		}
		events[i] = e
	}
	return d.Seed(events)
}

func (d *Model) Fork(boundary int64) (Driver, error) {
	s, err := d.S.Fork(boundary)
	if err != nil {
		return nil, err
	}
	return &Model{S: s, Clock: d.Clock}, nil
}

func (d *Model) Provenance(seq int64) ([]int64, error) { return d.S.Provenance(seq) }

func (d *Model) State() State {
	st := d.S.Derived()
	return normal(State{Events: st.Log, Surface: st.Surface, Messages: st.Messages})
}
