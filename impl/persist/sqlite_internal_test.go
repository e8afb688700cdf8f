//go:build cgo

package persist

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/surfacelog/surface/impl/event"
)

// TestSQLiteGroupWindowCloses: under group commit, a single write that
// does not fill the window arms its timer, and the timer's sync closes
// the window (nothing left unsynced) without another write.
func TestSQLiteGroupWindowCloses(t *testing.T) {
	sq, s := resumedSQLite(t, WithSQLiteSyncWindow(20*time.Millisecond, 1<<20))
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: raw(`{"todos":[]}`)}); err != nil {
		t.Fatal(err)
	}
	sq.mu.Lock()
	armed, unsynced := sq.group.timer != nil, sq.group.unsynced
	sq.mu.Unlock()
	if !armed || unsynced == 0 {
		t.Fatalf("after a write in the window: timer armed %v, %d bytes unsynced", armed, unsynced)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		sq.mu.Lock()
		unsynced = sq.group.unsynced
		sq.mu.Unlock()
		if unsynced == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the window never closed: %d bytes unsynced", unsynced)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSQLiteLostRace: a row written behind the store's back (a second
// writer that bypassed the lease) makes the store's own append of that
// seq a conflict naming it, with no seed index, and leaves the session as
// it was.
func TestSQLiteLostRace(t *testing.T) {
	sq, s := resumedSQLite(t)
	prompt(t, s)
	if _, err := sq.db.Exec(`INSERT INTO events (session_id, seq, type, time, data) VALUES ('x', 2, 'todo/write', 1, '{"todos":[]}')`); err != nil {
		t.Fatal(err)
	}
	_, err := s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: raw(`{"todos":[]}`)})
	if !isErr(err, event.CodePersistConflict, 2) || s.Len() != 2 {
		t.Fatalf("an append that lost the race: %#v, %d events", err, s.Len())
	}
}

// resumedSQLite opens a SQLite store of session "x" in a new database
// (closed at the test's end) and resumes its session.
func resumedSQLite(t *testing.T, opts ...SQLiteOption) (*SQLite, *Session) {
	t.Helper()
	requireSQLite(t)
	sq, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "s.db"), hdr("x"), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close(context.Background()) })
	s, _, err := Resume(context.Background(), sq, clock())
	if err != nil {
		t.Fatal(err)
	}
	return sq, s
}
