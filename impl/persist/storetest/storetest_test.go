package storetest_test

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/persist/storetest"
)

// memStore is an in-memory persist.Store, correct unless a bug is
// planted: the kit must pass it, and fail each broken variant.
type memStore struct {
	f      *memFactory
	data   *memData
	closed bool
}

type memData struct {
	header persist.Header
	events []event.Event
	open   bool
}

type memFactory struct {
	mu   sync.Mutex
	byID map[string]*memData
	bug  string
}

func (f *memFactory) Open(t testing.TB, h persist.Header) (persist.Store, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.byID[h.ID]
	if d == nil {
		d = &memData{header: h}
		f.byID[h.ID] = d
	}
	if d.open && f.bug != "no-lock" {
		return nil, event.Errorf(event.CodePersistLocked, -1, "open")
	}
	d.open = true
	return &memStore{f: f, data: d}, nil
}

func (s *memStore) Header() persist.Header { return s.data.header }

func (s *memStore) Events() []event.Event {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	out := make([]event.Event, len(s.data.events))
	for i, e := range s.data.events {
		out[i] = e.Clone()
	}
	if s.f.bug == "drop-ignorable" {
		for i := range out {
			out[i].Ignorable = false
		}
	}
	return out
}

func (s *memStore) Report() persist.LoadReport {
	return persist.LoadReport{Events: len(s.data.events)}
}

func (s *memStore) Append(ctx context.Context, events ...event.Event) error {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	for k, e := range events {
		if e.Seq != int64(len(s.data.events)+k) && s.f.bug != "no-seq-check" {
			return event.Errorf(event.CodePersistConflict, e.Seq, "not next")
		}
	}
	for _, e := range events {
		if s.f.bug == "lose-last" && e.Type == event.TypeTurnEnd {
			continue // acknowledged, never stored
		}
		s.data.events = append(s.data.events, e.Clone())
	}
	return nil
}

func (s *memStore) Sync(context.Context) error { return nil }

func (s *memStore) Close(context.Context) error {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	if !s.closed {
		s.closed = true
		s.data.open = false
	}
	return nil
}

func run(t *testing.T, bug string) {
	f := &memFactory{byID: map[string]*memData{}, bug: bug}
	storetest.Run(t, f, storetest.Caps{
		SingleWriter: true,
		Fork:         true,
		Read: func(t testing.TB, id string) ([]event.Event, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			events := append([]event.Event(nil), f.byID[id].events...)
			if f.bug == "read-torn" && len(events) > 1 {
				events = events[1:] // a reader handed a log without its first event
			}
			return events, nil
		},
	})
}

// TestKitPassesACorrectStore: the reference store passes every check.
func TestKitPassesACorrectStore(t *testing.T) {
	if bug := os.Getenv("STORETEST_BUG"); bug != "" {
		run(t, bug) // running as a child: see TestKitCatchesBrokenStores
		return
	}
	run(t, "")
}

// TestKitCatchesBrokenStores: each planted store bug fails the kit: no
// lock, no seq check, an acknowledged event lost, the ignorable marker
// dropped, a reader handed a log that is not a prefix of the one written.
func TestKitCatchesBrokenStores(t *testing.T) {
	if os.Getenv("STORETEST_BUG") != "" {
		return
	}
	for _, bug := range []string{"no-lock", "no-seq-check", "lose-last", "drop-ignorable", "read-torn"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKitPassesACorrectStore$")
		cmd.Env = append(os.Environ(), "STORETEST_BUG="+bug)
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("the kit passed a store with bug %q:\n%s", bug, out)
		}
	}
}
