package model

import (
	"slices"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
)

// Session is the oracle's session: a log and nothing else. Every method
// derives what it needs from the whole log again.
type Session struct {
	log   []event.Event
	clock func() int64
	opts  []Option
}

// NewSession returns an empty session whose event times come from clock.
func NewSession(clock func() int64, opts ...Option) *Session {
	return &Session{clock: clock, opts: opts}
}

// SeedSession returns a session whose log is events (SURF-18).
func SeedSession(events []event.Event, clock func() int64, opts ...Option) (*Session, error) {
	st, err := Derive(events, opts...)
	if err != nil {
		return nil, err
	}
	if optionsOf(opts).strict {
		// STRICT-8: each loaded event as if appended in strict mode.
		for i := range st.Log {
			if err := strictRule(st.Log[:i], st.Log[i], opts...); err != nil {
				err.(*event.Error).Index = i
				return nil, err
			}
		}
	}
	return &Session{log: st.Log, clock: clock, opts: opts}, nil
}

// Append appends an event as session.Session.Append does.
func (s *Session) Append(t event.Type, data any, intent *event.Intent) (event.Event, error) {
	// Turning a Go value into JSON text is the Go binding's business, not
	// the surface's: the model uses the library's conversion (SURF-4: the
	// depth bound, UTF-8, encoding/json's errors), and a value it refuses
	// never reaches the log or the clock.
	raw, jerr := event.MarshalData(data)
	if jerr != nil {
		return event.Event{}, jerr
	}
	raw = slices.Clone(raw)
	e := event.Event{Type: t, Seq: int64(len(s.log)), Time: s.clock(), Data: raw}
	if intent != nil {
		e.Op = intent.Op
		e.Sources = intent.Sources
	}
	return s.AppendEvent(e)
}

// AppendEvent appends a complete event, as session.Session.AppendEvent.
func (s *Session) AppendEvent(e event.Event) (event.Event, error) {
	e.Sources = slices.Clone(e.Sources)
	st, err := Derive(append(slices.Clone(s.log), e), s.opts...)
	if err != nil {
		if ee, ok := err.(*event.Error); ok {
			ee.Index = -1
		}
		return event.Event{}, err
	}
	if optionsOf(s.opts).strict {
		if err := strictRule(s.log, st.Log[len(st.Log)-1], s.opts...); err != nil {
			return event.Event{}, err
		}
	}
	s.log = st.Log
	return s.log[len(s.log)-1], nil
}

// Repair appends the closers of an open last turn (REP-3) and returns them.
func (s *Session) Repair() ([]event.Event, error) {
	closers := Closers(s.log, s.opts...)
	st, err := Derive(append(slices.Clone(s.log), closers...), s.opts...)
	if err != nil {
		return nil, err
	}
	s.log = st.Log
	return st.Log[len(st.Log)-len(closers):], nil
}

// Events returns the log.
func (s *Session) Events() []event.Event { return slices.Clone(s.log) }

func (s *Session) derive() *State {
	st, err := Derive(s.log, s.opts...)
	if err != nil {
		panic("model: a log the model accepted no longer derives: " + err.Error())
	}
	return st
}

// Derived returns everything derived from the log, from one rescan.
func (s *Session) Derived() *State { return s.derive() }

// Surface returns the surface seqs, head to tail.
func (s *Session) Surface() []int64 { return s.derive().Surface }

// Messages returns the derived messages.
func (s *Session) Messages() []message.Message { return s.derive().Messages }

// Provenance returns the transitive sources of seq (SURF-23).
func (s *Session) Provenance(seq int64) ([]int64, error) { return Provenance(s.log, seq) }

// Fork returns a new session seeded with the events 0..boundary (SURF-24).
func (s *Session) Fork(boundary int64) (*Session, error) {
	prefix, err := ForkPrefix(s.log, boundary)
	if err != nil {
		return nil, err
	}
	return SeedSession(prefix, s.clock, s.opts...)
}
