package persist

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/observe"
	"github.com/surfacelog/surface/impl/session"
)

// TestObservedStore: with session.WithObserver, Resume reports the resume
// (events, closers), the store reports each write (one per append or
// batch, synced under its policy, with the sync's latency), and Fork
// reports the fork, whose child store reports to the same observer.
func TestObservedStore(t *testing.T) {
	dir := t.TempDir()
	st, err := OpenJSONL(context.Background(), filepath.Join(dir, "s.jsonl"), hdr("x"), WithSync(SyncMessages))
	if err != nil {
		t.Fatal(err)
	}
	var rec observe.Recorder
	s, _, err := Resume(context.Background(), st, clock(), session.WithObserver(&rec))
	if err != nil {
		t.Fatal(err)
	}
	writeTurnOfFiveWrites(t, s)
	if len(rec.Resumes) != 1 || rec.Resumes[0].Store != "jsonl" || rec.Resumes[0].Events != 0 || rec.Resumes[0].Err != nil {
		t.Fatalf("resume records: %+v", rec.Resumes)
	}
	want := []struct {
		seq    int64
		events int
		synced bool
	}{{0, 1, true}, {1, 1, true}, {2, 1, false}, {3, 6, true}, {9, 1, true}}
	if len(rec.StoreWrites) != len(want) {
		t.Fatalf("%d store writes, want %d: %+v", len(rec.StoreWrites), len(want), rec.StoreWrites)
	}
	for i, w := range want {
		r := rec.StoreWrites[i]
		if r.Store != "jsonl" || r.Seq != w.seq || r.Events != w.events || r.Synced != w.synced || (r.Sync > 0) != w.synced || r.Duration < r.Sync {
			t.Errorf("store write %d: %+v, want %+v", i, r, w)
		}
	}
	if len(rec.Appends) != 5 || rec.Appends[3].Events != 6 || rec.Appends[3].Write < rec.StoreWrites[3].Duration {
		t.Fatalf("append records: %+v", rec.Appends)
	}
	// A fork: reported, and the child's store reports its appends.
	seed := int64(10)
	child, err := OpenJSONL(context.Background(), filepath.Join(dir, "child.jsonl"), Header{ID: "child", ParentSession: "x", SeedLength: &seed})
	if err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	c, err := Fork(context.Background(), s, 9, child)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if len(rec.Forks) != 1 || rec.Forks[0].Events != 10 || rec.Forks[0].Boundary != 9 || rec.Forks[0].Store != "jsonl" {
		t.Fatalf("fork records: %+v", rec.Forks)
	}
	if _, err := c.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: raw(`{"turn":2,"trigger":{"kind":"message"}}`)}); err != nil {
		t.Fatal(err)
	}
	if len(rec.StoreWrites) != 1 || rec.StoreWrites[0].Seq != 10 {
		t.Fatalf("the child's store does not report: %+v", rec.StoreWrites)
	}
	s.Close(context.Background())
}
