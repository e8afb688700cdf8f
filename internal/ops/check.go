package ops

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/view"
)

// Pair drives the implementation and the model in lockstep.
type Pair struct {
	Impl, Model Driver
	// Steps is the number of steps run.
	Steps int
	// Codes counts the outcome codes seen ("" for success).
	Codes map[string]int
	// snapshots of earlier query results, to prove they never change.
	held []heldState
	// model is the model's state after the last step.
	model *State
}

// ModelState returns the model's state after the last step.
func (p *Pair) ModelState() State {
	if p.model == nil {
		st := p.Model.State()
		p.model = &st
	}
	return *p.model
}

// heldState is a state handed out earlier and a deep copy of it; for the
// implementation, also the views it handed out, which are materialised
// again at every comparison.
type heldState struct {
	got   State
	copy  State
	views func() State
}

// NewPair returns a pair of empty sessions sharing a deterministic clock.
func NewPair() *Pair {
	clock := func() func() int64 {
		var now int64 = 1_700_000_000_000
		return func() int64 { now++; return now }
	}
	return &Pair{Impl: NewImpl(clock()), Model: NewModel(clock()), Codes: map[string]int{}}
}

// NewStrictPair is NewPair in strict mode (STRICT-*).
func NewStrictPair() *Pair {
	clock := func() func() int64 {
		var now int64 = 1_700_000_000_000
		return func() int64 { now++; return now }
	}
	return &Pair{Impl: NewImplStrict(nil, clock(), true), Model: NewModelStrict(nil, clock(), true), Codes: map[string]int{}}
}

// Step runs s on both sides and returns a description of the first
// divergence, or "".
func (p *Pair) Step(s Step) string {
	if d := p.StepQuiet(s); d != "" {
		return d
	}
	return p.Compare()
}

// StepQuiet runs s on both sides and compares only what the step itself
// reports (error code, appended event, provenance): it does not query the
// implementation's surface or messages, so several quiet steps followed by
// Compare check a derive that folds many events at once (several replaces
// with no query in between).
func (p *Pair) StepQuiet(s Step) string {
	p.Steps++
	p.model = nil
	var mo, io Outcome
	p.Model, mo = Apply(p.Model, s)
	p.Impl, io = Apply(p.Impl, s)
	p.Codes[string(mo.Code)]++
	if !equalOutcome(mo, io) {
		return fmt.Sprintf("step %d (%s): outcome differs (-model +impl):\n%s", p.Steps, s, Diff(mo, io))
	}
	return ""
}

// Compare compares the full observable state of both sides, and checks
// that slices the implementation handed out earlier are unchanged.
func (p *Pair) Compare() string {
	ms, is := p.ModelState(), p.Impl.State()
	if !EqualState(ms, is) {
		return fmt.Sprintf("after step %d: state differs (-model +impl):\n%s", p.Steps, Diff(ms, is))
	}
	if b, ok := p.Impl.(interface{ Bookkeeping(State) string }); ok {
		if d := b.Bookkeeping(ms); d != "" {
			return fmt.Sprintf("after step %d: %s", p.Steps, d)
		}
	}
	for _, h := range p.held {
		if !EqualState(h.copy, h.got) {
			return fmt.Sprintf("after step %d: a slice handed out earlier changed:\n%s", p.Steps, Diff(h.copy, h.got))
		}
		if h.views != nil {
			if again := h.views(); !EqualState(h.copy, again) {
				return fmt.Sprintf("after step %d: a view handed out earlier changed:\n%s", p.Steps, Diff(h.copy, again))
			}
		}
	}
	if len(p.held) < 8 {
		h := heldState{got: is, copy: deepCopy(is)}
		if v, ok := p.Impl.(interface {
			Views() (view.Seqs, view.Messages)
		}); ok {
			seqs, msgs := v.Views()
			events := is.Events
			h.views = func() State { return normal(State{Events: events, Surface: seqs.Slice(), Messages: msgs.Slice()}) }
		}
		p.held = append(p.held, h)
	}
	return ""
}

func deepCopy(s State) State {
	out := State{Surface: slices.Clone(s.Surface)}
	for _, e := range s.Events {
		out.Events = append(out.Events, e.Clone())
	}
	for _, m := range s.Messages {
		m.Content = slices.Clone(m.Content)
		out.Messages = append(out.Messages, m)
	}
	return out
}

// EqualEvent reports whether two events are equal, telling an absent
// sourceEventSeqs from an empty one.
func EqualEvent(a, b *event.Event) bool {
	return a.Type == b.Type && a.Seq == b.Seq && a.Time == b.Time && bytes.Equal(a.Data, b.Data) &&
		(a.Sources == nil) == (b.Sources == nil) && slices.Equal(a.Sources, b.Sources) && a.Op == b.Op && a.Ignorable == b.Ignorable
}

func equalMessage(a, b *message.Message) bool {
	return a.Seq == b.Seq && a.Role == b.Role && slices.EqualFunc(a.Content, b.Content, func(x, y json.RawMessage) bool { return bytes.Equal(x, y) })
}

// EqualState reports whether two states are equal.
func EqualState(a, b State) bool {
	if len(a.Events) != len(b.Events) || !slices.Equal(a.Surface, b.Surface) || len(a.Messages) != len(b.Messages) {
		return false
	}
	for i := range a.Events {
		if !EqualEvent(&a.Events[i], &b.Events[i]) {
			return false
		}
	}
	for i := range a.Messages {
		if !equalMessage(&a.Messages[i], &b.Messages[i]) {
			return false
		}
	}
	return true
}

func equalOutcome(a, b Outcome) bool {
	if a.Code != b.Code || (a.Event == nil) != (b.Event == nil) || (a.Provenance == nil) != (b.Provenance == nil) {
		return false
	}
	if a.Event != nil && !EqualEvent(a.Event, b.Event) {
		return false
	}
	if len(a.Events) != len(b.Events) || (a.Range == nil) != (b.Range == nil) || (a.Range != nil && *a.Range != *b.Range) ||
		a.Balanced != b.Balanced || a.OnSurface != b.OnSurface || a.ErrIndex != b.ErrIndex {
		return false
	}
	for i := range a.Events {
		if !EqualEvent(&a.Events[i], &b.Events[i]) {
			return false
		}
	}
	return slices.Equal(a.Provenance, b.Provenance)
}
