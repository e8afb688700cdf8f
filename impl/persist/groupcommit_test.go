package persist

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/internal/pgtest"
)

// streamedStep is a batch: a step with n chunks, its assistant message
// and its end, appended as one run after a turn/start and a prompt.
func streamedStep(n int) func(tx session.Tx) ([]session.Draft, error) {
	return func(tx session.Tx) ([]session.Draft, error) {
		first := int64(tx.Len())
		drafts := []session.Draft{{Type: event.TypeStepStart, Data: raw(`{"turn":1,"step":1}`)}}
		sources := make([]int64, 0, n)
		for i := 0; i < n; i++ {
			drafts = append(drafts, session.Draft{Type: event.TypeAssistantChunk, Data: raw(`{"turn":1,"step":1,"chunk":{"type":"text-delta","text":"a"}}`)})
			sources = append(sources, first+1+int64(i))
		}
		drafts = append(drafts,
			session.Draft{Type: event.TypeAssistantMessage, Data: raw(`{"turn":1,"step":1,"content":[{"type":"text","text":"aaa"}]}`), Intent: &event.Intent{Op: event.Append(), Sources: sources}},
			session.Draft{Type: event.TypeStepEnd, Data: raw(`{"turn":1,"step":1}`)})
		return drafts, nil
	}
}

func prompt(t *testing.T, s *Session) {
	t.Helper()
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: raw(turnOpen)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: raw(userData)}, event.Intent{Op: event.Append()}); err != nil {
		t.Fatal(err)
	}
}

// TestBatchOneSync: STORE-17. A streamed step appended as a batch costs
// one write and one sync of a JSONL store under SyncEveryAppend, and
// every event of it is in the file when AppendBatch returns.
func TestBatchOneSync(t *testing.T) {
	var cf *countingFile
	path := filepath.Join(t.TempDir(), "s.jsonl")
	st, err := OpenJSONL(context.Background(), path, hdr("x"), WithFile(func(f File) File { cf = &countingFile{File: f}; return cf }))
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := Resume(context.Background(), st, clock())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	prompt(t, s)
	before := cf.syncs
	out, err := s.AppendBatch(context.Background(), streamedStep(50))
	if err != nil || len(out) != 53 {
		t.Fatalf("batch: %d events, %v", len(out), err)
	}
	if got := cf.syncs - before; got != 1 {
		t.Fatalf("a batch of 53 events took %d syncs, want 1", got)
	}
	_, events, _, err := ReadJSONL(path)
	if err != nil || len(events) != s.Len() {
		t.Fatalf("the file holds %d events, the session %d: %v", len(events), s.Len(), err)
	}
}

// tearingFile writes half of a write of several lines, then fails: a
// batch torn in the middle.
type tearingFile struct {
	File
	arm bool
}

func (f *tearingFile) WriteAt(p []byte, off int64) (int, error) {
	if f.arm {
		n, _ := f.File.WriteAt(p[:len(p)/2], off)
		return n, io.ErrShortWrite
	}
	return f.File.WriteAt(p, off)
}

// TestBatchAllOrNothing: STORE-17. A batch whose write fails in the
// middle leaves none of its events: in the session, and in the store
// (JSONL: cut back; SQLite and Postgres: the transaction rolled back, the
// second event refused by a row planted at its seq).
func TestBatchAllOrNothing(t *testing.T) {
	t.Run("jsonl", func(t *testing.T) {
		var tf *tearingFile
		path := filepath.Join(t.TempDir(), "s.jsonl")
		st, err := OpenJSONL(context.Background(), path, hdr("x"), WithFile(func(f File) File { tf = &tearingFile{File: f}; return tf }))
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := Resume(context.Background(), st, clock())
		if err != nil {
			t.Fatal(err)
		}
		prompt(t, s)
		info, _ := os.Stat(path)
		tf.arm = true
		if out, err := s.AppendBatch(context.Background(), streamedStep(10)); !errors.Is(err, event.CodePersistIO) || len(out) != 0 || s.Len() != 2 {
			t.Fatalf("torn batch: %d events, len %d, %v", len(out), s.Len(), err)
		}
		if after, _ := os.Stat(path); after.Size() != info.Size() {
			t.Fatalf("the file grew from %d to %d bytes", info.Size(), after.Size())
		}
		tf.arm = false
		if _, err := s.AppendBatch(context.Background(), streamedStep(10)); err != nil {
			t.Fatal(err)
		}
		s.Close(context.Background())
		_, events, torn, err := ReadJSONL(path)
		if err != nil || torn != 0 || len(events) != 15 {
			t.Fatalf("reread: %d events, %d torn bytes, %v", len(events), torn, err)
		}
	})
	t.Run("sqlite", func(t *testing.T) {
		if !SQLiteAvailable {
			t.Skip("no cgo")
		}
		path := filepath.Join(t.TempDir(), "s.db")
		st, err := OpenSQLite(context.Background(), path, hdr("x"))
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := Resume(context.Background(), st, clock())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(context.Background())
		prompt(t, s)
		db, err := sql.Open("sqlite3", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		plant := func() {
			if _, err := db.Exec(`INSERT INTO events (session_id, seq, type, time, data) VALUES ('x', 3, 'todo/write', 0, '{}')`); err != nil {
				t.Fatal(err)
			}
		}
		checkBatchRolledBack(t, s, plant, func(seq int64) int {
			var n int
			db.QueryRow(`SELECT COUNT(*) FROM events WHERE session_id = 'x' AND seq = ?`, seq).Scan(&n)
			return n
		}, func() {
			db.Exec(`DELETE FROM events WHERE session_id = 'x' AND seq = 3`)
		})
	})
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.URL(t)
		schema := pgtest.Schema("batch")
		st, err := OpenPostgres(context.Background(), url, hdr("x"), WithPostgresSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := Resume(context.Background(), st, clock())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(context.Background())
		prompt(t, s)
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		table := pgx.Identifier{schema, "events"}.Sanitize()
		checkBatchRolledBack(t, s, func() {
			if _, err := conn.Exec(context.Background(), `INSERT INTO `+table+` (session_id, seq, type, time, data) VALUES ('x', 3, 'todo/write', 0, '{}')`); err != nil {
				t.Fatal(err)
			}
		}, func(seq int64) int {
			var n int
			conn.QueryRow(context.Background(), `SELECT COUNT(*) FROM `+table+` WHERE session_id = 'x' AND seq = $1`, seq).Scan(&n)
			return n
		}, func() {
			conn.Exec(context.Background(), `DELETE FROM `+table+` WHERE session_id = 'x' AND seq = 3`)
		})
	})
}

// checkBatchRolledBack plants a row at seq 3, appends a batch from seq 2
// (refused at its second event), and checks that seq 2 was not stored;
// then removes the row and appends the batch for real.
func checkBatchRolledBack(t *testing.T, s *Session, plant func(), rows func(seq int64) int, unplant func()) {
	t.Helper()
	plant()
	out, err := s.AppendBatch(context.Background(), streamedStep(3))
	if !errors.Is(err, event.CodePersistConflict) || len(out) != 0 || s.Len() != 2 {
		t.Fatalf("batch over a planted row: %d events, len %d, %v", len(out), s.Len(), err)
	}
	if n := rows(2); n != 0 {
		t.Fatalf("the batch's first event was stored (%d rows): the batch was not one transaction", n)
	}
	unplant()
	if out, err := s.AppendBatch(context.Background(), streamedStep(3)); err != nil || len(out) != 6 || rows(7) != 1 {
		t.Fatalf("batch: %d events, %v", len(out), err)
	}
}

// TestPostgresAppendDeadline: STORE-16. An append whose insert waits on a
// lock another connection holds returns when its context's deadline
// passes, with persist.cancelled, long before the lock is released;
// nothing of it is stored (the statement was cancelled on the server),
// and the store goes on. The same for a batch.
func TestPostgresAppendDeadline(t *testing.T) {
	url := pgtest.URL(t)
	schema := pgtest.Schema("deadline")
	st, err := OpenPostgres(context.Background(), url, hdr("x"), WithPostgresSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := Resume(context.Background(), st, clock())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	prompt(t, s)
	locker, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close(context.Background())
	table := pgx.Identifier{schema, "events"}.Sanitize()
	lockTx, err := locker.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockTx.Exec(context.Background(), `LOCK TABLE `+table+` IN EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	// The lock is held until the test releases it: an append that
	// returns at all before then returned because of its deadline.
	for _, batch := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		start := time.Now()
		if batch {
			_, err = s.AppendBatch(ctx, streamedStep(3))
		} else {
			_, err = s.Append(ctx, event.Raw{Type: event.TypeUserMessage, Data: raw(userData)}, event.Intent{Op: event.Append()})
		}
		cancel()
		took := time.Since(start)
		if !errors.Is(err, event.CodePersistCancelled) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("batch=%v: %v", batch, err)
		}
		t.Logf("batch=%v: returned %v after a 300ms deadline, with %v", batch, took.Round(time.Millisecond), err)
		if s.Len() != 2 {
			t.Fatalf("the cancelled append is in the session: len %d", s.Len())
		}
	}
	if err := lockTx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := locker.QueryRow(context.Background(), `SELECT COUNT(*) FROM `+table+` WHERE session_id = 'x'`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("the store holds %d events after the cancelled appends, want 2 (%v)", n, err)
	}
	if _, err := s.AppendBatch(context.Background(), streamedStep(3)); err != nil {
		t.Fatalf("the store does not go on after a cancelled append: %v", err)
	}
	s.Close(context.Background())
	re, err := OpenPostgres(context.Background(), url, hdr("x"), WithPostgresSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close(context.Background())
	if got := re.Report().Events; got != 8 {
		t.Fatalf("reopened: %d events, want 8", got)
	}
}

// TestCancelledOpenForkResume: STORE-16. A store opened, resumed or forked
// with a context that has ended is refused with persist.cancelled and
// leaves nothing: no file, no fork child.
func TestCancelledOpenForkResume(t *testing.T) {
	dir := t.TempDir()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	path := filepath.Join(dir, "new.jsonl")
	var ee *event.Error
	if _, err := OpenJSONL(done, path, hdr("x")); !errors.Is(err, event.CodePersistCancelled) || !errors.As(err, &ee) || ee.Seq != -1 {
		t.Fatalf("OpenJSONL: %v (an open names no event)", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a cancelled open made %s", path)
	}
	if SQLiteAvailable {
		db := filepath.Join(dir, "new.db")
		if _, err := OpenSQLite(done, db, hdr("x")); !isErr(err, event.CodePersistCancelled, -1) {
			t.Fatalf("OpenSQLite: %#v (an open names no event)", err)
		}
	}
	if url := os.Getenv("SURFACE_PG_URL"); url != "" {
		if _, err := OpenPostgres(done, url, hdr("x"), WithPostgresSchema(pgtest.Schema("cancelledopen"))); !isErr(err, event.CodePersistCancelled, -1) {
			t.Fatalf("OpenPostgres: %#v (an open names no event)", err)
		}
	}
	st, err := OpenJSONL(context.Background(), path, hdr("x"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Resume(done, st, clock()); !isErr(err, event.CodePersistCancelled, -1) {
		t.Fatalf("Resume: %v", err)
	}
	s, _, err := Resume(context.Background(), st, clock())
	if err != nil {
		t.Fatalf("a Resume refused for its context must leave the store free: %v", err)
	}
	defer s.Close(context.Background())
	prompt(t, s)
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTurnEnd, Data: raw(`{"turn":1,"reason":{"kind":"completed"}}`)}); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"child.jsonl", "child.db"} {
		child := filepath.Join(dir, name)
		seed := int64(3)
		h := Header{ID: "child" + strconv.Itoa(i), ParentSession: "x", SeedLength: &seed}
		var dst Store
		if i == 0 {
			dst, err = OpenJSONL(context.Background(), child, h)
		} else {
			if !SQLiteAvailable {
				continue
			}
			dst, err = OpenSQLite(context.Background(), child, h)
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Fork(done, s, 2, dst); !errors.Is(err, event.CodePersistCancelled) {
			t.Fatalf("Fork into %s: %v", name, err)
		}
		if i == 0 {
			if _, err := os.Stat(child); !os.IsNotExist(err) {
				t.Fatalf("a cancelled fork made %s", child)
			}
		}
		dst.Close(context.Background())
	}
}
