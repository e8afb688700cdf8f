package persist

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/internal/pgtest"
	"github.com/surfacelog/surface/internal/traffic"
)

// checkpointedLog writes n events of traffic through a JSONL store that
// keeps checkpoints and closes it (a checkpoint of the whole log), and
// returns its path and events.
func checkpointedLog(t *testing.T, n int) (string, []event.Event) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	st, err := OpenJSONL(ctx, path, Header{ID: "s"}, WithCheckpoints(50), WithSync(SyncNever))
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := Resume(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if err := traffic.New(s).Append(n); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	events := s.Events()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return path, events
}

// resumeUses reports how many events a resume of path takes from its
// checkpoint.
func resumeUses(t *testing.T, path string) int {
	t.Helper()
	st, err := OpenJSONL(context.Background(), path, Header{ID: "s"}, WithCheckpoints(50))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	return st.Report().CheckpointEvents
}

// TestCheckJSONLCheckpoint: a validator passes a true checkpoint, reports
// one a resume would ignore (torn, of another log's tail) without failing
// the log, and fails one a resume would use that is not true of the log:
// a byte changed in a line it covers (the resume cannot see it: it reads
// only the last line), or a state that is not the replay's (the file's own
// checksum made right again). Each beside its look-alike that passes.
func TestCheckJSONLCheckpoint(t *testing.T) {
	path, events := checkpointedLog(t, 600)
	c, err := CheckJSONLCheckpoint(path, events)
	if err != nil || !c.Found || c.Ignored != "" || c.Events != len(events) {
		t.Fatalf("a true checkpoint: %+v, %v", c, err)
	}
	if got := resumeUses(t, path); got != len(events) {
		t.Fatalf("a resume takes %d events from a true checkpoint of %d", got, len(events))
	}
	log, _ := os.ReadFile(path)
	cp, _ := os.ReadFile(CheckpointName(path))
	restore := func() {
		os.WriteFile(path, log, 0o644)
		os.WriteFile(CheckpointName(path), cp, 0o644)
	}

	t.Run("a byte changed in a covered line", func(t *testing.T) {
		defer restore()
		// A letter of the first user message, same length: still an event.
		i := bytes.Index(log, []byte(`"text":"`)) + len(`"text":"`)
		changed := bytes.Clone(log)
		changed[i] ^= 0x01
		os.WriteFile(path, changed, 0o644)
		if got := resumeUses(t, path); got != len(events) {
			t.Fatalf("the resume should still use it (it reads the last line only): %d", got)
		}
		_, changedEvents, _, err := ReadJSONL(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := CheckJSONLCheckpoint(path, changedEvents); !errors.Is(err, event.CodePersistCheckpointUnusable) || !strings.Contains(err.Error(), "CRC-32C") {
			t.Fatalf("a changed covered line: %v", err)
		}
	})
	t.Run("a state that is not the replay's", func(t *testing.T) {
		for _, edit := range []func(*checkpointFile){
			func(f *checkpointFile) { f.NextLabel++ },
			func(f *checkpointFile) { f.Generation++ },
			func(f *checkpointFile) { f.Nodes[len(f.Nodes)-1].Label-- },
			func(f *checkpointFile) { f.Ledger = []byte(`{"maxTurn":1}`) },
		} {
			f, err := decodeCheckpoint(cp)
			if err != nil {
				t.Fatal(err)
			}
			edit(&f)
			b, _ := encodeCheckpoint(f)
			os.WriteFile(CheckpointName(path), b, 0o644)
			if _, err := CheckJSONLCheckpoint(path, events); !errors.Is(err, event.CodePersistCheckpointUnusable) || !strings.Contains(err.Error(), "not the replay's") {
				t.Errorf("an edited state: %v", err)
			}
		}
		restore()
		if _, err := CheckJSONLCheckpoint(path, events); err != nil {
			t.Fatalf("the checkpoint put back: %v", err)
		}
	})
	t.Run("torn", func(t *testing.T) {
		defer restore()
		os.WriteFile(CheckpointName(path), cp[:len(cp)/2], 0o644)
		c, err := CheckJSONLCheckpoint(path, events)
		if err != nil || !c.Found || c.Ignored == "" {
			t.Fatalf("a torn checkpoint is ignored, not an error: %+v, %v", c, err)
		}
		if got := resumeUses(t, path); got != 0 {
			t.Fatalf("a resume used a torn checkpoint: %d", got)
		}
	})
	t.Run("none", func(t *testing.T) {
		defer restore()
		os.Remove(CheckpointName(path))
		if c, err := CheckJSONLCheckpoint(path, events); err != nil || c.Found {
			t.Fatalf("no checkpoint: %+v, %v", c, err)
		}
	})
}

// TestCheckDatabaseCheckpoint: the validator's check of a database
// store's checkpoint row (STORE-18), SQLite and Postgres: a true one
// passes, one whose state is not the replay's (its checksum made right)
// fails, a torn one and one whose last row changed are only ignored, as a
// resume ignores them.
func TestCheckDatabaseCheckpoint(t *testing.T) {
	ctx := context.Background()
	type db struct {
		name  string
		open  func() (Store, error)
		check func(events []event.Event) (CheckpointCheck, error)
		get   func() string
		put   func(string)
		exec  func(q string)
	}
	var dbs []db
	if SQLiteAvailable {
		path := filepath.Join(t.TempDir(), "c.db")
		dbs = append(dbs, db{name: "sqlite",
			open: func() (Store, error) { return OpenSQLite(ctx, path, Header{ID: "s"}, WithSQLiteCheckpoints(50)) },
			check: func(events []event.Event) (CheckpointCheck, error) {
				r, err := OpenSQLiteReader(path)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				return r.Checkpoint("s", events)
			},
			get: func() string { return string(sqliteCheckpoints.get(path)) },
			put: func(s string) { sqliteCheckpoints.put(t, path, []byte(s)) },
			exec: func(q string) {
				withDB(path, func(d *sql.DB) {
					if _, err := d.Exec(q); err != nil {
						t.Fatal(err)
					}
				})
			},
		})
	}
	if url := os.Getenv("SURFACE_PG_URL"); url != "" || os.Getenv("CI") == "true" {
		url = pgtest.URL(t)
		schema := pgtest.Schema("cpcheck")
		cs := postgresCheckpoints(url)
		fake := filepath.Join("/", strings.TrimPrefix(schema, "cp_"), "pg") // pgSchemaOf(fake) == "cp_" + schema
		dbs = append(dbs, db{name: "postgres",
			open: func() (Store, error) {
				return OpenPostgres(ctx, url, Header{ID: "s"}, WithPostgresSchema(pgSchemaOf(fake)), WithPostgresCheckpoints(50))
			},
			check: func(events []event.Event) (CheckpointCheck, error) {
				return CheckPostgresCheckpoint(url, "s", events, WithPostgresSchema(pgSchemaOf(fake)))
			},
			get: func() string { return string(cs.get(fake)) },
			put: func(s string) {
				if !cs.put(t, fake, []byte(s)) {
					t.Fatalf("Postgres refused the checkpoint %q", s)
				}
			},
			exec: func(q string) {
				conn, err := pgx.Connect(ctx, url)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close(ctx)
				if _, err := conn.Exec(ctx, strings.ReplaceAll(q, "events", pgx.Identifier{pgSchemaOf(fake)}.Sanitize()+".events")); err != nil {
					t.Fatal(err)
				}
			},
		})
		defer cs.drop(fake)
	}
	for _, d := range dbs {
		t.Run(d.name, func(t *testing.T) {
			st, err := d.open()
			if err != nil {
				t.Fatal(err)
			}
			s, _, err := Resume(ctx, st)
			if err != nil {
				t.Fatal(err)
			}
			if err := traffic.New(s).Append(300); err != nil {
				t.Fatal(err)
			}
			s.Repair(ctx)
			events := s.Events()
			s.Close(ctx)
			if c, err := d.check(events); err != nil || !c.Found || c.Ignored != "" || c.Events != len(events) {
				t.Fatalf("a true checkpoint: %+v, %v", c, err)
			}
			good := d.get()
			f, err := decodeCheckpoint([]byte(good))
			if err != nil {
				t.Fatal(err)
			}
			f.NextLabel++
			b, _ := encodeCheckpoint(f)
			d.put(string(b))
			if _, err := d.check(events); !errors.Is(err, event.CodePersistCheckpointUnusable) {
				t.Fatalf("a state that is not the replay's: %v", err)
			}
			d.put(good[:len(good)/2])
			if c, err := d.check(events); err != nil || c.Ignored == "" {
				t.Fatalf("a torn checkpoint: %+v, %v", c, err)
			}
			d.put(good)
			d.exec(fmt.Sprintf(`UPDATE events SET time = time + 1 WHERE session_id = 's' AND seq = %d`, len(events)-1))
			if c, err := d.check(events); err != nil || c.Ignored == "" {
				t.Fatalf("a checkpoint whose last row changed: %+v, %v", c, err)
			}
			if st, err := d.open(); err != nil {
				t.Fatal(err)
			} else if r := st.Report(); r.CheckpointEvents != 0 || r.CheckpointIgnored == "" {
				t.Fatalf("a resume used a checkpoint whose last row changed: %+v", r)
			} else {
				st.Close(ctx)
			}
		})
	}
}

// TestCheckpointFallback: a resume that cannot use the checkpoint the
// store was opened from (strict mode replays every event) reads the whole
// log and says so; the session is the one a resume without checkpoints
// gives, and a torn tail found at open is still cut before the next append.
func TestCheckpointFallback(t *testing.T) {
	ctx := context.Background()
	path, _ := checkpointedLog(t, 300)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"todo/wr`) // a torn last line
	f.Close()
	st, err := OpenJSONL(ctx, path, Header{ID: "s"}, WithCheckpoints(50))
	if err != nil {
		t.Fatal(err)
	}
	if r := st.Report(); r.CheckpointEvents == 0 || r.Quarantine == "" {
		t.Fatalf("open: %+v", r)
	}
	s, report, err := Resume(ctx, st, session.WithStrict())
	if err != nil {
		t.Fatal(err)
	}
	if report.CheckpointEvents != 0 || report.CheckpointIgnored == "" || report.Quarantine == "" || s.Restored() != 0 {
		t.Fatalf("strict resume from a checkpoint: %+v, %d not read", report, s.Restored())
	}
	got := deriveOf(t, s.Session)
	if _, err := s.Append(ctx, event.Raw{Type: event.TypeTodoWrite, Data: []byte(`{"todos":[]}`)}); err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	_, events, torn, err := ReadJSONL(path)
	if err != nil || torn != 0 {
		t.Fatalf("after the append: torn %d, %v", torn, err)
	}
	replay, err := session.Seed(events[:len(events)-1])
	if err != nil {
		t.Fatal(err)
	}
	if want := deriveOf(t, replay); got != want {
		t.Fatalf("strict resume:\n got %s\nwant %s", got, want)
	}
}

// TestCheckpointLongTail: a checkpoint followed by more events than the
// decoder reads before it sizes its room (1024 lines, then from the bytes
// left), the checkpoint covering more bytes than the tail holds: the
// resume takes the checkpoint and reads the tail whole.
func TestCheckpointLongTail(t *testing.T) {
	ctx := context.Background()
	path, events := checkpointedLog(t, 4000)
	st, err := OpenJSONL(ctx, path, Header{ID: "s"}, WithSync(SyncNever)) // writes no checkpoint
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := Resume(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if err := traffic.New(s).Append(1100); err != nil {
		t.Fatal(err)
	}
	s.Repair(ctx)
	want := deriveOf(t, s.Session)
	n := s.Len()
	s.Close(ctx)
	st, err = OpenJSONL(ctx, path, Header{ID: "s"}, WithCheckpoints(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	s, report, err := Resume(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if report.CheckpointEvents != len(events) || s.Len() != n {
		t.Fatalf("resumed %d events, %d from the checkpoint (%q), want %d and %d", s.Len(), report.CheckpointEvents, report.CheckpointIgnored, n, len(events))
	}
	if got := deriveOf(t, s.Session); got != want {
		t.Fatalf("after a long tail:\n got %s\nwant %s", got, want)
	}
}
