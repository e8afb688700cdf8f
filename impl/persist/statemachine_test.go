package persist

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/internal/ops"
	"github.com/surfacelog/surface/model"
)

// durable is a store-backed session and the model of its acknowledged log.
type durable struct {
	b     backend
	path  string
	store Store
	s     *Session
	model *model.Session
	// the two sides have clocks of their own that tick alike
	clock, modelClock func() int64
}

func (d *durable) reopen(t *rapid.T) {
	var err error
	if d.b.name == "jsonl" {
		d.store, err = OpenJSONL(context.Background(), d.path, hdr("s1"))
	} else {
		d.store, err = OpenSQLite(context.Background(), d.path, hdr("s1"))
	}
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	var rep LoadReport
	d.s, rep, err = Resume(context.Background(), d.store, session.WithClock(d.clock))
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	// The model repairs the acknowledged log the same way (REP-3, STORE-7).
	acked := d.model.Events()
	closers := model.Closers(acked)
	if !sameJSON(rep.Closers, closers) {
		t.Fatalf("closers differ from the model's")
	}
	d.model, err = model.SeedSession(append(acked, closers...), d.modelClock)
	if err != nil {
		t.Fatal(err)
	}
}

func (d *durable) compare(t *rapid.T) {
	want := (&ops.Model{S: d.model}).State()
	got := ops.StateOf(d.s.Session)
	if !ops.EqualState(want, got) {
		t.Fatalf("state differs (-model +impl):\n%s", ops.Diff(want, got))
	}
}

// TestDurableStateMachine: random appends (valid and invalid), crashes
// (the process dies; for JSONL sometimes mid-line) and clean reopens, on
// both backends, against the model of the acknowledged log. After every
// reopen the store must hold every acknowledged event and the repaired
// state must equal the model's (STORE-2, STORE-3, STORE-6, STORE-7, REP-5).
func TestDurableStateMachine(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				newClock := func() func() int64 {
					var now int64 = 1_700_000_000_000
					return func() int64 { now++; return now }
				}
				clk, mclk := newClock(), newClock()
				dir, err := os.MkdirTemp("", "durable")
				if err != nil {
					rt.Fatal(err)
				}
				defer os.RemoveAll(dir)
				d := &durable{b: b, path: filepath.Join(dir, b.file), model: model.NewSession(mclk), clock: clk, modelClock: mclk}
				d.reopen(rt)
				defer func() { d.store.Close(context.Background()) }()
				step := func(s ops.Step) {
					me, merr := d.model.Append(s.Type, s.Data, s.Intent)
					ie, ierr := d.s.Append(context.Background(), event.Raw{Type: s.Type, Data: s.Data}, s.Intent.Value())
					if event.CodeOf(merr) != event.CodeOf(ierr) || (merr == nil && !ops.EqualEvent(&me, &ie)) {
						rt.Fatalf("%s: model %v, impl %v", s, merr, ierr)
					}
				}
				state := func() ops.State { return (&ops.Model{S: d.model}).State() }
				rt.Repeat(map[string]func(*rapid.T){
					"append":  func(t *rapid.T) { step(ops.GenAppend(ops.Rapid{T: t}, state())) },
					"append2": func(t *rapid.T) { step(ops.GenAppend(ops.Rapid{T: t}, state())) },
					"replace": func(t *rapid.T) { step(ops.GenReplace(ops.Rapid{T: t}, state())) },
					"crash": func(t *rapid.T) {
						switch st := d.store.(type) {
						case *JSONL:
							st.crash()
							if rapid.Bool().Draw(t, "torn") { // died in the middle of a write
								f, _ := os.OpenFile(d.path, os.O_APPEND|os.O_WRONLY, 0)
								f.WriteString(`{"type":"tool/result","seq":`)
								f.Close()
							}
						case *SQLite:
							st.crash()
						}
						d.reopen(t)
					},
					"reopen": func(t *rapid.T) {
						if err := d.store.Close(context.Background()); err != nil {
							t.Fatal(err)
						}
						d.reopen(t)
					},
					"": d.compare,
				})
			})
		})
	}
}

// TestRoundTripLaws (gopter): for any valid log, writing it to a store and
// reading it back gives the same events, byte for byte in wire form; and
// the wire form decodes to the same event.
func TestRoundTripLaws(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 60
	params.MaxSize = 600
	props := gopter.NewProperties(params)
	logOf := func(program []uint32) []event.Event {
		p, _, _ := ops.RunProgram(program, 60)
		return p.Impl.State().Events
	}
	props.Property("event wire form round-trips", prop.ForAll(func(program []uint32) bool {
		for _, e := range logOf(program) {
			b, err := e.MarshalJSON()
			if err != nil {
				return false
			}
			d, err := event.Decode(b)
			if err != nil {
				return false
			}
			b2, _ := d.MarshalJSON()
			if string(b) != string(b2) || !ops.EqualEvent(&e, &d) {
				return false
			}
		}
		return true
	}, gen.SliceOf(gen.UInt32())))
	for _, b := range backends {
		props.Property(b.name+": write then read gives the same events", prop.ForAll(func(program []uint32) bool {
			events := logOf(program)
			path := filepath.Join(t.TempDir(), b.file)
			st := b.open(t, path)
			for _, e := range events {
				if err := st.Append(context.Background(), e); err != nil {
					return false
				}
			}
			st.Close(context.Background())
			st = b.open(t, path)
			defer st.Close(context.Background())
			return sameJSON(st.Events(), events)
		}, gen.SliceOf(gen.UInt32())))
	}
	props.TestingRun(t)
}
