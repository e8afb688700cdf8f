package persist

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/observe"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/internal/pgtest"
)

// TestSyncFlagsByPolicy: under each sync policy, which writes of one
// sequence force the log to stable storage, as the observer is told, for
// the JSONL and SQLite stores side by side: a turn/start and a user
// message (singles), a chunk, a batch of six, a turn/end. The group
// policy's window (an hour, a megabyte) never elapses here, so its
// singles wait and its batch and turn/end sync. SQLite's connection keeps
// the synchronous level of its policy after the writes (a policy that
// raises it for one commit lowers it again only under its own policy).
func TestSyncFlagsByPolicy(t *testing.T) {
	requireSQLite(t)
	//                       turn/start user  chunk batch turn/end
	want := map[SyncPolicy][5]bool{
		SyncEveryAppend: {true, true, true, true, true},
		SyncOnTurnEnd:   {false, false, false, false, true},
		SyncMessages:    {true, true, false, true, true},
		SyncNever:       {false, false, false, false, false},
		SyncGroup:       {false, false, false, true, true},
	}
	pragma := map[SyncPolicy]int{SyncEveryAppend: 2, SyncOnTurnEnd: 1, SyncMessages: 1, SyncNever: 0, SyncGroup: 1}
	url := os.Getenv("SURFACE_PG_URL")
	for policy, flags := range want {
		stores := []string{"jsonl", "sqlite"}
		if policy == SyncEveryAppend && url != "" {
			stores = append(stores, "postgres") // every commit is durable: one row
		}
		for _, store := range stores {
			name := fmt.Sprintf("%s/%s", store, policy)
			dir := t.TempDir()
			var st Store
			var err error
			var sq *SQLite
			switch {
			case store == "postgres":
				st, err = OpenPostgres(context.Background(), url, hdr("x"), WithPostgresSchema(pgtest.Schema("syncflags")))
			case store == "jsonl" && policy == SyncGroup:
				st, err = OpenJSONL(context.Background(), filepath.Join(dir, "s.jsonl"), hdr("x"), WithSyncWindow(time.Hour, 1<<20))
			case store == "jsonl":
				st, err = OpenJSONL(context.Background(), filepath.Join(dir, "s.jsonl"), hdr("x"), WithSync(policy))
			case policy == SyncGroup:
				sq, err = OpenSQLite(context.Background(), filepath.Join(dir, "s.db"), hdr("x"), WithSQLiteSyncWindow(time.Hour, 1<<20))
				st = sq
			default:
				sq, err = OpenSQLite(context.Background(), filepath.Join(dir, "s.db"), hdr("x"), WithSQLiteSync(policy))
				st = sq
			}
			if err != nil {
				t.Fatal(err)
			}
			var rec observe.Recorder
			s, _, err := Resume(context.Background(), st, clock(), session.WithObserver(&rec))
			if err != nil {
				t.Fatal(err)
			}
			prompt(t, s)
			if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeAssistantChunk, Data: raw(`{"turn":1,"step":1,"chunk":{"type":"text-delta","text":"a"}}`)}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.AppendBatch(context.Background(), streamedStep(3)); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTurnEnd, Data: raw(`{"turn":1,"reason":{"kind":"completed"}}`)}); err != nil {
				t.Fatal(err)
			}
			if len(rec.StoreWrites) != 5 {
				t.Fatalf("%s: %d store writes: %+v", name, len(rec.StoreWrites), rec.StoreWrites)
			}
			for i, w := range flags {
				if r := rec.StoreWrites[i]; r.Synced != w || (r.Sync > 0) != w || r.Sync > r.Duration || r.Store != store || r.Err != nil {
					t.Errorf("%s: write %d (seq %d, %d events) synced %v, want %v", name, i, r.Seq, r.Events, r.Synced, w)
				}
			}
			if sq != nil {
				var got int
				if err := sq.db.QueryRow(`PRAGMA synchronous`).Scan(&got); err != nil || got != pragma[policy] {
					t.Errorf("%s: PRAGMA synchronous = %d (%v) after the writes, want %d", name, got, err, pragma[policy])
				}
			}
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestSQLiteGroupWindowCloses: under group commit, a single write that
// does not fill the window arms its timer, and the timer's sync closes
// the window (nothing left unsynced) without another write.
func TestSQLiteGroupWindowCloses(t *testing.T) {
	requireSQLite(t)
	sq, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "s.db"), hdr("x"), WithSQLiteSyncWindow(20*time.Millisecond, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close(context.Background())
	s, _, err := Resume(context.Background(), sq, clock())
	if err != nil {
		t.Fatal(err)
	}
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
	requireSQLite(t)
	sq, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "s.db"), hdr("x"))
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close(context.Background())
	s, _, err := Resume(context.Background(), sq, clock())
	if err != nil {
		t.Fatal(err)
	}
	prompt(t, s)
	if _, err := sq.db.Exec(`INSERT INTO events (session_id, seq, type, time, data) VALUES ('x', 2, 'todo/write', 1, '{"todos":[]}')`); err != nil {
		t.Fatal(err)
	}
	_, err = s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: raw(`{"todos":[]}`)})
	if !isErr(err, event.CodePersistConflict, 2) || s.Len() != 2 {
		t.Fatalf("an append that lost the race: %#v, %d events", err, s.Len())
	}
}
