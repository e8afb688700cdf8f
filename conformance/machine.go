package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/internal/ops"
)

// Machine runs steps on a Go session (the implementation or the model):
// the built-in testees, and the oracle that fills in vector expectations.
type Machine struct {
	name    string
	newSess func(voc *event.Vocabulary, strict bool) ops.Driver
	d       ops.Driver
	voc     *event.Vocabulary
	strict  bool
	persist bool
	// now is the time of the events a compaction step appends (the step's
	// time); appends carry their own.
	now int64
	// st is the store of the store steps (FeatureStore).
	st storeState
}

func (m *Machine) clock() int64 { return m.now }

// NewImplMachine returns a machine over impl/session and impl/compaction
// (features core, repair, persist and compaction).
func NewImplMachine() *Machine {
	m := &Machine{name: "surface-go", persist: true}
	m.newSess = func(voc *event.Vocabulary, strict bool) ops.Driver { return ops.NewImplStrict(voc, m.clock, strict) }
	return m
}

// NewModelMachine returns a machine over the model (features core, repair,
// persist, where crash_reopen is a repair, and compaction).
func NewModelMachine() *Machine {
	m := &Machine{name: "surface-model"}
	m.newSess = func(voc *event.Vocabulary, strict bool) ops.Driver { return ops.NewModelStrict(voc, m.clock, strict) }
	return m
}

// Hello implements Testee.
func (m *Machine) Hello() (Hello, error) {
	return Hello{Type: "hello", Protocol: ProtocolVersion, Name: m.name, Version: "0.1.0",
		Features: []string{FeatureCore, FeatureRepair, FeaturePersist, FeatureCompaction, FeatureStrict, FeatureStore, FeatureReleased}}, nil
}

// Reset implements Testee.
func (m *Machine) Reset() error {
	m.dropStore()
	m.voc, m.now, m.strict = nil, 0, false
	m.d = m.newSess(nil, false)
	return nil
}

// Close implements Testee.
func (m *Machine) Close() error {
	m.dropStore()
	return nil
}

// Do implements Testee.
func (m *Machine) Do(s Step) (Response, error) {
	if m.d == nil {
		m.Reset()
	}
	r, err := m.do(s)
	if err == nil {
		m.syncStore()
	}
	if err != nil {
		if event.CodeOf(err) == "" { // not a rejection: a step the testee cannot run
			return Response{}, err
		}
		res := Result{Error: string(event.CodeOf(err))}
		var ee *event.Error
		if (s.Op == "seed" || s.Op == "store_open" || s.Op == "released_open") && errors.As(err, &ee) && ee.Index >= 0 {
			i := ee.Index
			res.Index = &i
		}
		return Response{Type: "result", Result: res}, nil
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
		m.detach()
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
			m.detach()
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
	case "register":
		if len(m.d.State().Events) != 0 {
			return Result{}, protocolError("register must be the first step of a vector")
		}
		voc, err := Vocabulary(s.Types)
		if err != nil {
			return Result{}, err
		}
		m.voc, m.d = voc, m.newSess(voc, m.strict)
		return m.state(Result{}), nil
	case "strict":
		if len(m.d.State().Events) != 0 {
			return Result{}, protocolError("strict must come before the vector's first event")
		}
		m.strict, m.d = true, m.newSess(m.voc, true)
		return m.state(Result{}), nil
	case "compact_begin", "compact_commit", "compact_abort", "prune", "compact_select", "balance":
		return m.compaction(s)
	case "store_open":
		return m.storeOpen(s)
	case "store_file":
		return m.storeFile(s)
	case "released_open":
		return releasedOpen(s, m.persist)
	case "repair", "crash_reopen":
		if s.Op == "crash_reopen" {
			m.detach()
		}
		var closers []event.Event
		var err error
		if s.Op == "crash_reopen" && m.persist {
			closers, err = m.crashReopen()
		} else { // the model has no store: its crash_reopen is a repair
			closers, err = m.d.Repair()
		}
		if s.Op == "crash_reopen" {
			m.d.Forget() // a crash loses an open compaction's operation
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
	st, err := persist.OpenJSONL(context.Background(), path, persist.Header{ID: "conformance", CreatedAt: 0}, persist.WithSync(persist.SyncNever))
	if err != nil {
		return nil, err
	}
	for _, e := range m.d.State().Events {
		if err := st.Append(context.Background(), e); err != nil {
			st.Close(context.Background())
			return nil, err
		}
	}
	if err := st.Close(context.Background()); err != nil {
		return nil, err
	}
	re, err := persist.OpenJSONL(context.Background(), path, persist.Header{ID: "conformance"})
	if err != nil {
		return nil, err
	}
	defer re.Close(context.Background())
	s, rep, err := persist.Resume(context.Background(), re, session.WithVocabulary(m.voc), session.WithClock(m.clock))
	if err != nil {
		return nil, err
	}
	// The vector goes on in memory: the store is closed when this returns.
	next, err := (&ops.Impl{Clock: m.clock, Voc: m.voc, Strict: m.strict}).Seed(s.Events())
	if err != nil {
		return nil, err
	}
	m.d = next
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
	e.Ignorable = s.Ignorable
	return e, nil
}

// protocolError is a step the protocol does not allow (not a rejection by
// the spec): the runner reports the vector as an error.
type protocolError string

func (e protocolError) Error() string { return string(e) }

// Vocabulary builds the vocabulary of a register step.
func Vocabulary(types []TypeDef) (*event.Vocabulary, error) {
	kinds := map[string]event.FieldKind{"any": event.KindAny, "integer": event.KindInteger, "string": event.KindString, "boolean": event.KindBoolean,
		"array": event.KindArray, "object": event.KindObject, "blocks": event.KindBlocks, "tagged": event.KindTagged}
	specs := make([]event.TypeSpec, len(types))
	for i, t := range types {
		specs[i].Type = event.Type(t.Type)
		for _, f := range t.Fields {
			k, ok := kinds[f.Kind]
			if !ok {
				return nil, event.Errorf(event.CodeVocabularyInvalid, -1, "field %s has unknown kind %q", f.Name, f.Kind)
			}
			specs[i].Fields = append(specs[i].Fields, event.FieldSpec{Name: f.Name, Kind: k, Required: f.Required, Nullable: f.Nullable, Enum: f.Enum})
		}
	}
	return event.NewVocabulary(specs...)
}

// compaction runs a compaction step (COMP-*).
func (m *Machine) compaction(s Step) (Result, error) {
	if s.Time != nil {
		m.now = *s.Time
	}
	os := ops.Step{}
	switch s.Op {
	case "compact_begin":
		if s.Start == nil || s.End == nil {
			return Result{}, protocolError("compact_begin without start and end")
		}
		os = ops.Step{Kind: ops.KindBegin, Start: *s.Start, End: *s.End, Snap: s.Snap, V2: s.Vocabulary == "compaction", Concurrent: s.Concurrent, Opaque: s.Opaque}
	case "compact_commit":
		os = ops.Step{Kind: ops.KindCommit, Blocks: s.Summary, MaxTokens: s.MaxTokens, Plain: s.Plain}
		if s.Provider != nil {
			os.Provider = *s.Provider
		}
		if s.Model != nil {
			os.Model = *s.Model
		}
	case "compact_abort":
		os = ops.Step{Kind: ops.KindAbort}
		if s.Reason != nil {
			os.Reason = *s.Reason
		}
	case "prune":
		if s.Seq == nil {
			return Result{}, protocolError("prune without seq")
		}
		os = ops.Step{Kind: ops.KindPrune, Seq: *s.Seq, Blocks: s.Content}
	case "compact_select":
		os = ops.Step{Kind: ops.KindSelect, KeepLast: -1, Opaque: s.Opaque}
		switch {
		case s.KeepLast != nil:
			os.KeepLast = *s.KeepLast
		case s.KeepTokens != nil:
			os.KeepTokens = *s.KeepTokens
		default:
			return Result{}, protocolError("compact_select without keepLast or keepTokens")
		}
	case "balance":
		if s.Seq == nil {
			return Result{}, protocolError("balance without seq")
		}
		os = ops.Step{Kind: ops.KindBalance, Seq: *s.Seq, After: s.After}
	}
	var out ops.Outcome
	m.d, out = ops.Apply(m.d, os)
	if out.Code != "" && len(out.Events) > 0 {
		// A refused commit that ended the compaction (range_changed,
		// not_smaller): the error and the end event it appended.
		evs := []json.RawMessage{}
		for _, e := range out.Events {
			b, _ := e.MarshalJSON()
			evs = append(evs, b)
		}
		return Result{Error: string(out.Code), Events: &evs}, nil
	}
	if out.Code != "" {
		return Result{}, event.Errorf(out.Code, -1, "%s", out.Code)
	}
	switch s.Op {
	case "compact_select":
		return Result{Range: &Range{Start: out.Range[0], End: out.Range[1]}}, nil
	case "balance":
		return Result{Balanced: &out.Balanced, OnSurface: &out.OnSurface}, nil
	}
	evs := []json.RawMessage{}
	for _, e := range out.Events {
		b, _ := e.MarshalJSON()
		evs = append(evs, b)
	}
	return m.state(Result{Events: &evs}), nil
}
