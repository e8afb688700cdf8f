package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/internal/ops"
)

// Machine runs steps on a Go session (the implementation or the model):
// the built-in testees, and the oracle that fills in vector expectations.
type Machine struct {
	name    string
	newSess func() ops.Driver
	d       ops.Driver
	persist bool
}

// NewImplMachine returns a machine over impl/session (features core,
// repair and persist).
func NewImplMachine() *Machine {
	return &Machine{name: "surface-go", persist: true, newSess: func() ops.Driver { return ops.NewImpl(zeroClock) }}
}

// NewModelMachine returns a machine over the model (features core, repair
// and persist, where crash_reopen is a repair).
func NewModelMachine() *Machine {
	return &Machine{name: "surface-model", newSess: func() ops.Driver { return ops.NewModel(zeroClock) }}
}

// Hello implements Testee.
func (m *Machine) Hello() (Hello, error) {
	return Hello{Type: "hello", Protocol: ProtocolVersion, Name: m.name, Version: "0.1.0",
		Features: []string{FeatureCore, FeatureRepair, FeaturePersist}}, nil
}

// Reset implements Testee.
func (m *Machine) Reset() error { m.d = m.newSess(); return nil }

// Close implements Testee.
func (m *Machine) Close() error { return nil }

// Do implements Testee.
func (m *Machine) Do(s Step) (Response, error) {
	if m.d == nil {
		m.Reset()
	}
	r, err := m.do(s)
	if err != nil {
		return Response{Type: "result", Result: Result{Error: string(event.CodeOf(err))}}, nil
	}
	return Response{Type: "result", Result: r}, nil
}

func (m *Machine) state(r Result) Result {
	st := m.d.State()
	surface := append([]int64{}, st.Surface...)
	r.Surface = &surface
	b, _ := json.Marshal(st.Messages)
	if string(b) == "null" {
		b = []byte("[]")
	}
	r.Messages = b
	return r
}

func (m *Machine) do(s Step) (Result, error) {
	switch s.Op {
	case "append":
		e, err := StepEvent(s, int64(len(m.d.State().Events)))
		if err != nil {
			return Result{}, err
		}
		stored, err := m.d.AppendEvent(e)
		if err != nil {
			return Result{}, err
		}
		b, _ := stored.MarshalJSON()
		return m.state(Result{Event: b}), nil
	case "seed":
		if s.Lines == nil {
			return Result{}, fmt.Errorf("seed without lines")
		}
		lines := make([]json.RawMessage, len(*s.Lines))
		for i, l := range *s.Lines {
			lines[i] = json.RawMessage(l)
		}
		next, err := m.d.SeedJSON(lines)
		if err != nil {
			return Result{}, err
		}
		m.d = next
		return m.state(Result{}), nil
	case "fork":
		if s.Boundary == nil {
			return Result{}, fmt.Errorf("fork without boundary")
		}
		child, err := m.d.Fork(*s.Boundary)
		if err != nil {
			return Result{}, err
		}
		if s.Continue {
			m.d = child
		}
		return m.state(Result{}), nil
	case "provenance":
		if s.Seq == nil {
			return Result{}, fmt.Errorf("provenance without seq")
		}
		p, err := m.d.Provenance(*s.Seq)
		if err != nil {
			return Result{}, err
		}
		p = append([]int64{}, p...)
		return Result{Seqs: &p}, nil
	case "repair", "crash_reopen":
		var closers []event.Event
		var err error
		if s.Op == "crash_reopen" && m.persist {
			closers, err = m.crashReopen()
		} else { // the model has no store: its crash_reopen is a repair
			closers, err = m.d.Repair()
		}
		if err != nil {
			return Result{}, err
		}
		return m.state(closersResult(closers)), nil
	}
	return Result{}, fmt.Errorf("unknown op %q", s.Op)
}

// crashReopen writes the log to a JSONL store, closes it, reopens it and
// resumes, which repairs an open last turn (STORE-7).
func (m *Machine) crashReopen() ([]event.Event, error) {
	dir, err := os.MkdirTemp("", "surface-conformance")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "s.jsonl")
	st, err := persist.OpenJSONL(path, persist.Header{ID: "conformance", CreatedAt: 0}, persist.WithSync(persist.SyncNever))
	if err != nil {
		return nil, err
	}
	for _, e := range m.d.State().Events {
		if err := st.Append(e); err != nil {
			st.Close()
			return nil, err
		}
	}
	if err := st.Close(); err != nil {
		return nil, err
	}
	re, err := persist.OpenJSONL(path, persist.Header{ID: "conformance"})
	if err != nil {
		return nil, err
	}
	defer re.Close()
	s, rep, err := persist.Resume(re)
	if err != nil {
		return nil, err
	}
	m.d = &ops.Impl{S: s.Session}
	return rep.Closers, nil
}

func closersResult(closers []event.Event) Result {
	out := []json.RawMessage{}
	for _, c := range closers {
		b, _ := c.MarshalJSON()
		out = append(out, b)
	}
	return Result{Closers: &out}
}

// StepEvent builds the candidate event of an append step at seq.
func StepEvent(s Step, seq int64) (event.Event, error) {
	if s.Type == nil {
		return event.Event{}, fmt.Errorf("append without type")
	}
	e := event.Event{Type: event.Type(*s.Type), Seq: seq}
	if s.Time != nil {
		e.Time = *s.Time
	}
	switch {
	case s.DataText != nil:
		e.Data = []byte(*s.DataText)
	case s.DataBase64 != nil:
		e.Data = s.DataBase64
	default:
		return e, fmt.Errorf("append without data")
	}
	e.Op, e.Sources = event.DecodeMarkers(s.SurfaceOp, s.SourceEventSeqs)
	return e, nil
}

// zeroClock is never read: machines append complete events.
func zeroClock() int64 { return 0 }
