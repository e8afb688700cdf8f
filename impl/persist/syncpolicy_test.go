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
			writeTurnOfFiveWrites(t, s)
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

// writeTurnOfFiveWrites appends a turn in five writes: a turn/start and a
// user message (singles), a chunk, a streamed step of six events as one
// batch, and the turn/end.
func writeTurnOfFiveWrites(t *testing.T, s *Session) {
	t.Helper()
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
}
