// Package storetest checks that an implementation of persist.Store keeps
// the store rules of spec/README.md (STORE-1 to STORE-13): any Store can
// run it, the JSONL, SQLite and Postgres stores of package persist do.
//
//	func TestMyStore(t *testing.T) {
//		storetest.Run(t, myFactory{}, storetest.Caps{SingleWriter: true, Fork: true})
//	}
//
// A Factory opens stores by name (one session each); Caps says what the
// backend can do, and the checks that need a capability it lacks are
// skipped, by name, so the report shows what was not checked.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/model"
)

// Factory makes the stores under test.
type Factory interface {
	// Open opens, for writing, the store that holds the session of
	// header.ID, creating it when it does not exist. Two calls with the
	// same id open the same stored session.
	Open(t testing.TB, header persist.Header) (persist.Store, error)
}

// Caps are what a backend can do.
type Caps struct {
	// SingleWriter: a second Open of an id that is open fails with
	// persist.locked (STORE-4).
	SingleWriter bool
	// Fork: a session forks into a new store of the same backend.
	Fork bool
	// Read reads the events of an id without opening it for writing,
	// while a writer has it open (concurrent readers); nil: not checked.
	Read func(t testing.TB, id string) ([]event.Event, error)
	// Tear, when set, leaves the stored session as a crash in the middle
	// of writing its last event would: a backend that can have torn writes
	// (a file) cuts the stored bytes keep bytes into that event. The check
	// then requires that reopening loses no acknowledged event and repairs
	// the log (STORE-2, STORE-8).
	Tear func(t testing.TB, id string, keep int)
}

// Run runs every check on stores of f.
func Run(t *testing.T, f Factory, caps Caps) {
	t.Run("RoundTrip", func(t *testing.T) { roundTrip(t, f) })
	t.Run("ResumeRepairs", func(t *testing.T) { resumeRepairs(t, f) })
	t.Run("RuleBreakingEventRejected", func(t *testing.T) { ruleBreaking(t, f) })
	t.Run("OneLiveSession", func(t *testing.T) { oneLiveSession(t, f) })
	t.Run("SingleWriter", func(t *testing.T) {
		if !caps.SingleWriter {
			t.Skip("the backend does not claim SingleWriter")
		}
		singleWriter(t, f)
	})
	t.Run("Fork", func(t *testing.T) {
		if !caps.Fork {
			t.Skip("the backend does not claim Fork")
		}
		fork(t, f)
	})
	t.Run("ConcurrentReaders", func(t *testing.T) {
		if caps.Read == nil {
			t.Skip("no Read given")
		}
		concurrentReaders(t, f, caps.Read)
	})
	t.Run("TornWrite", func(t *testing.T) {
		if caps.Tear == nil {
			t.Skip("the backend has no torn writes (no Tear given)")
		}
		tornWrite(t, f, caps.Tear)
	})
}

var seqID struct {
	sync.Mutex
	n int
}

// header returns a header with an id no other check uses.
func header(t testing.TB, name string) persist.Header {
	seqID.Lock()
	defer seqID.Unlock()
	seqID.n++
	id := strings.NewReplacer("/", "-", " ", "-").Replace(fmt.Sprintf("%s-%d", t.Name(), seqID.n))
	return persist.Header{ID: id, CreatedAt: 1767225600000, Cwd: "/work/" + name}
}

func open(t testing.TB, f Factory, h persist.Header) persist.Store {
	t.Helper()
	st, err := f.Open(t, h)
	if err != nil {
		t.Fatalf("open %s: %v", h.ID, err)
	}
	return st
}

func clock() session.Option {
	var now int64 = 1767225600000
	return session.WithClock(func() int64 { now++; return now })
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// traffic appends a turn with a tool call and its result, a chunk, an
// ignorable event of a type nobody knows, a replace with provenance, and a
// second turn left open with a pending call; it returns the acknowledged
// events.
func traffic(t testing.TB, s *persist.Session) []event.Event {
	t.Helper()
	add := func(ty event.Type, data string, intent *event.Intent) event.Event {
		t.Helper()
		e, err := s.Append(context.Background(), event.Raw{Type: ty, Data: raw(data)}, intent.Value())
		if err != nil {
			t.Fatalf("append %s: %v", ty, err)
		}
		return e
	}
	ap := func(src ...int64) *event.Intent { return &event.Intent{Op: event.Append(), Sources: src} }
	add(event.TypeTurnStart, `{"turn":1,"trigger":{"kind":"message"}}`, nil)
	u := add(event.TypeUserMessage, `{"content":[{"type":"text","text":"read \"f\" <now> é"}],"source":{"kind":"user"}}`, ap())
	add(event.TypeStepStart, `{"turn":1,"step":1}`, nil)
	c := add(event.TypeAssistantChunk, `{"turn":1,"step":1,"chunk":{"n":1.50,"big":9007199254740991}}`, nil)
	a := add(event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[{"type":"tool-call","id":"c1","name":"read","arguments":{}}]}`, ap(c.Seq))
	call := add(event.TypeToolCall, `{"turn":1,"step":1,"callId":"c1","name":"read","arguments":"{}"}`, nil)
	add(event.TypeToolResult, `{"turn":1,"step":1,"callId":"c1","content":[{"type":"text","text":"x"}],"isError":false}`, ap(call.Seq))
	add(event.TypeStepEnd, `{"turn":1,"step":1}`, nil)
	if _, err := s.AppendEvent(context.Background(), event.Event{Type: "x/from-a-newer-build", Seq: int64(s.Len()), Time: 5, Data: raw(`{"a":[1,2]}`), Ignorable: true}); err != nil {
		t.Fatalf("append an ignorable event: %v", err)
	}
	add(event.TypeContextMessage, `{"content":[{"type":"text","text":"summary"}],"source":{"kind":"compaction"}}`, &event.Intent{Op: event.Replace(u.Seq, a.Seq), Sources: []int64{u.Seq, a.Seq}})
	add(event.TypeTurnEnd, `{"turn":1,"reason":{"kind":"completed"}}`, nil)
	add(event.TypeTurnStart, `{"turn":2,"trigger":{"kind":"message"}}`, nil)
	add(event.TypeAssistantMessage, `{"turn":2,"step":1,"content":[{"type":"tool-call","id":"c2","name":"ls","arguments":{}}]}`, ap())
	return s.Events()
}

func wire(t testing.TB, es []event.Event) []string {
	var out []string
	for _, e := range es {
		b, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

func resume(t testing.TB, st persist.Store) (*persist.Session, persist.LoadReport) {
	t.Helper()
	s, rep, err := persist.Resume(context.Background(), st, clock())
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	return s, rep
}

// roundTrip: what was appended reloads byte for byte (STORE-1, STORE-3,
// STORE-5), markers, ignorable events and number literals included.
func roundTrip(t *testing.T, f Factory) {
	h := header(t, "round trip")
	st := open(t, f, h)
	s, _ := resume(t, st)
	written := traffic(t, s)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	st = open(t, f, h)
	defer st.Close(context.Background())
	if got := st.Header(); got.ID != h.ID || got.CreatedAt != h.CreatedAt || got.Cwd != h.Cwd || got.ParentSession != h.ParentSession || got.SeedLength != nil {
		t.Errorf("header %+v, want %+v", got, h)
	}
	if got, want := wire(t, st.Events()), wire(t, written); !slices.Equal(got, want) {
		t.Fatalf("reloaded events differ:\n got %q\nwant %q", got, want)
	}
}

// resumeRepairs: resuming an open turn appends the closers through the
// store, as the model computes them (STORE-7, REP-3, REP-5).
func resumeRepairs(t *testing.T, f Factory) {
	h := header(t, "repair")
	st := open(t, f, h)
	s, _ := resume(t, st)
	written := traffic(t, s)
	s.Close(context.Background())
	st = open(t, f, h)
	s, rep := resume(t, st)
	want := model.Closers(written)
	if got := wire(t, rep.Closers); !slices.Equal(got, wire(t, want)) || len(want) == 0 {
		t.Fatalf("closers %q, want %q", got, wire(t, want))
	}
	s.Close(context.Background())
	st = open(t, f, h)
	defer st.Close(context.Background())
	if st.Report().Events != len(written)+len(want) {
		t.Fatalf("the closers were not stored: %d events", st.Report().Events)
	}
	if _, rep, err := persist.Resume(context.Background(), st, clock()); err != nil || len(rep.Closers) != 0 {
		t.Fatalf("a second resume repaired again: %v %v", rep.Closers, err)
	}
}

// ruleBreaking: a stored event that breaks a rule makes the resume fail
// with the rule's code; nothing is dropped to make it load (STORE-3).
func ruleBreaking(t *testing.T, f Factory) {
	h := header(t, "rule")
	st := open(t, f, h)
	good := event.Event{Type: event.TypeTodoWrite, Seq: 0, Time: 1, Data: raw(`{"todos":[]}`)}
	bad := event.Event{Type: event.TypeUserMessage, Seq: 1, Time: 2, Data: raw(`{"content":[],"source":{"kind":"u"}}`)} // no marker
	for _, e := range []event.Event{good, bad} {
		if err := st.Append(context.Background(), e); err != nil {
			t.Fatalf("append %d: %v", e.Seq, err)
		}
	}
	st.Close(context.Background())
	st = open(t, f, h)
	defer st.Close(context.Background())
	if _, _, err := persist.Resume(context.Background(), st, clock()); !errors.Is(err, event.CodeOpMissing) {
		t.Fatalf("resume of a log with a marker-less message: %v", err)
	}
	if st.Report().Events != 2 {
		t.Fatalf("%d events loaded, want both", st.Report().Events)
	}
}

// oneLiveSession: a second Resume of one store is persist.locked; a store
// refuses an event that is not its next (persist.conflict) (STORE-10).
func oneLiveSession(t *testing.T, f Factory) {
	h := header(t, "live")
	st := open(t, f, h)
	s, _ := resume(t, st)
	defer s.Close(context.Background())
	if _, _, err := persist.Resume(context.Background(), st, clock()); !errors.Is(err, event.CodePersistLocked) {
		t.Fatalf("second resume: %v", err)
	}
	e, err := s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: raw(`{"todos":[]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Append(context.Background(), e); !errors.Is(err, event.CodePersistConflict) {
		t.Fatalf("the same seq twice: %v", err)
	}
	e.Seq = 7
	if err := st.Append(context.Background(), e); !errors.Is(err, event.CodePersistConflict) {
		t.Fatalf("a seq ahead: %v", err)
	}
}

// singleWriter: a second writer fails at once with persist.locked and
// changes nothing; after Close the session opens again (STORE-4).
func singleWriter(t *testing.T, f Factory) {
	h := header(t, "writer")
	st := open(t, f, h)
	s, _ := resume(t, st)
	s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: raw(`{"todos":[]}`)})
	if second, err := f.Open(t, h); !errors.Is(err, event.CodePersistLocked) {
		if second != nil {
			second.Close(context.Background())
		}
		t.Fatalf("second writer: %v", err)
	}
	s.Close(context.Background())
	st = open(t, f, h)
	defer st.Close(context.Background())
	if st.Report().Events != 1 {
		t.Fatalf("%d events after the refused writer", st.Report().Events)
	}
}

// fork: a fork at a turn/end writes the prefix to a new store, which
// resumes to the same state (SURF-24, STORE-3).
func fork(t *testing.T, f Factory) {
	h := header(t, "parent")
	st := open(t, f, h)
	s, _ := resume(t, st)
	written := traffic(t, s)
	defer s.Close(context.Background())
	boundary := int64(-1)
	for _, e := range written {
		if e.Type == event.TypeTurnEnd {
			boundary = e.Seq
		}
	}
	seedLength := boundary + 1
	ch := header(t, "child")
	ch.ParentSession, ch.SeedLength = h.ID, &seedLength
	dst := open(t, f, ch)
	child, err := persist.Fork(context.Background(), s, boundary, dst)
	if err != nil {
		t.Fatal(err)
	}
	child.Close(context.Background())
	dst = open(t, f, ch)
	defer dst.Close(context.Background())
	if got, want := wire(t, dst.Events()), wire(t, written[:seedLength]); !slices.Equal(got, want) {
		t.Fatalf("the child holds %d events, want the parent's first %d", len(got), len(want))
	}
	if got := dst.Header(); got.ParentSession != h.ID || got.SeedLength == nil || *got.SeedLength != seedLength {
		t.Fatalf("child header %+v", got)
	}
}

// concurrentReaders: while a writer appends, readers see a valid prefix
// of what was acknowledged, never a torn or reordered log.
func concurrentReaders(t *testing.T, f Factory, read func(testing.TB, string) ([]event.Event, error)) {
	h := header(t, "readers")
	st := open(t, f, h)
	s, _ := resume(t, st)
	defer s.Close(context.Background())
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				events, err := read(t, h.ID)
				if err != nil {
					errs <- err
					return
				}
				if _, err := model.Derive(events); err != nil {
					errs <- fmt.Errorf("a reader saw a log that breaks a rule: %w", err)
					return
				}
			}
		}()
	}
	for i := 0; i < 60; i++ {
		if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: raw(`{"content":[],"source":{"kind":"u"}}`)}, event.Intent{Op: event.Append()}); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	events, err := read(t, h.ID)
	if err != nil || len(events) != 60 {
		t.Fatalf("after the writer: %d events, %v", len(events), err)
	}
}

// tornWrite: a crash in the middle of the last event's write, at every
// byte of it: reopening loses no acknowledged event and repairs the log
// (STORE-2, STORE-6, STORE-7).
func tornWrite(t *testing.T, f Factory, tear func(testing.TB, string, int)) {
	h0 := header(t, "torn")
	st := open(t, f, h0)
	s, _ := resume(t, st)
	written := traffic(t, s)
	s.Close(context.Background())
	lastLen := len(wire(t, written[len(written)-1:])[0])
	acked := written[:len(written)-1]
	for keep := 0; keep < lastLen; keep += max(1, lastLen/13) {
		h := header(t, "torn")
		st := open(t, f, h)
		for _, e := range written {
			if err := st.Append(context.Background(), e); err != nil {
				t.Fatal(err)
			}
		}
		st.Close(context.Background())
		tear(t, h.ID, keep)
		st = open(t, f, h)
		if got := st.Events(); len(got) < len(acked) || !slices.Equal(wire(t, got[:len(acked)]), wire(t, acked)) {
			st.Close(context.Background())
			t.Fatalf("cut %d bytes into the last event: %d events reloaded, want the %d acknowledged", keep, len(got), len(acked))
		}
		s, _ := resume(t, st)
		s.Close(context.Background())
	}
}
