package persist

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/internal/ops"
	"github.com/surfacelog/surface/internal/pgtest"
	"github.com/surfacelog/surface/internal/traffic"
)

// derived is what a session answers without reading its log's old events:
// what a resume from a checkpoint must give exactly as a replay does.
type derived struct {
	Len        int
	Surface    []int64
	Messages   json.RawMessage
	Tokens     int
	Turn       [2]int64
	Step       [2]int64
	NextTurn   int64
	Pending    []session.PendingCall
	Checkpoint session.Checkpoint
}

func flagged(n int64, ok bool) [2]int64 {
	if !ok {
		return [2]int64{0, -1}
	}
	return [2]int64{n, 1}
}

type fataler interface {
	Helper()
	Fatal(...any)
	Fatalf(string, ...any)
}

func deriveOf(t fataler, s *session.Session) string {
	t.Helper()
	msgs, err := json.Marshal(s.Messages().Slice())
	if err != nil {
		t.Fatal(err)
	}
	d := derived{Len: s.Len(), Surface: s.Surface().Slice(), Messages: msgs, Tokens: s.Tokens(),
		Turn: flagged(s.OpenTurn()), Step: flagged(s.OpenStep()), NextTurn: s.NextTurn(), Pending: s.PendingCalls(), Checkpoint: s.Checkpoint()}
	b, err := json.MarshalIndent(d, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wireOf is the log as JSONL lines.
func wireOf(t fataler, events []event.Event) string {
	t.Helper()
	var b strings.Builder
	for _, e := range events {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestCheckpointResumeIsReplay: over random logs (tool traffic, replaces
// over any range, turn and compaction boundaries, refused steps among
// them), a session written through a JSONL store that keeps checkpoints is
// crashed and resumed at random points, and its checkpoint is now and then
// torn, corrupted, swapped for an older one, or left ahead of a log that
// lost its tail and was written on differently. After every resume, and
// after appends that follow it, the session answers exactly what a session
// holding the whole log (the shadow, fed the same steps) answers: surface,
// messages, tokens, bookkeeping, its own checkpoint; then its whole log,
// turn ends and provenance, read back from the store. A usable checkpoint
// must be used (the resume replays only its tail), a bad one never.
func TestCheckpointResumeIsReplay(t *testing.T) {
	t.Run("jsonl", func(t *testing.T) { checkpointProperty(t, jsonlCheckpoints) })
	t.Run("sqlite", func(t *testing.T) {
		requireSQLite(t)
		checkpointProperty(t, sqliteCheckpoints)
	})
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.URL(t)
		// Each run is a schema, a dozen connections and a commit per step:
		// a tenth of the runs, on the property the file stores run in full.
		if f := flag.Lookup("rapid.checks"); f != nil {
			old := f.Value.String()
			if n, err := strconv.Atoi(old); err == nil {
				flag.Set("rapid.checks", strconv.Itoa(max(n/10, 1)))
				defer flag.Set("rapid.checks", old)
			}
		}
		checkpointProperty(t, postgresCheckpoints(url))
	})
}

// postgresCheckpoints keeps each run's session in a schema of its own
// (the path names it).
func postgresCheckpoints(url string) checkpointStore {
	ctx := context.Background()
	with := func(path string, f func(*pgx.Conn, string)) {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			panic(err)
		}
		defer conn.Close(ctx)
		f(conn, pgx.Identifier{pgSchemaOf(path)}.Sanitize())
	}
	return checkpointStore{
		name: "pg",
		drop: func(path string) {
			with(path, func(c *pgx.Conn, id string) { c.Exec(ctx, `DROP SCHEMA IF EXISTS `+id+` CASCADE`) })
		},
		open: func(path string, every int) (Store, error) {
			return OpenPostgres(ctx, url, Header{ID: "s"}, WithPostgresSchema(pgSchemaOf(path)), WithPostgresCheckpoints(every))
		},
		get: func(path string) []byte {
			var state string
			with(path, func(c *pgx.Conn, id string) {
				if c.QueryRow(ctx, `SELECT state FROM `+id+`.checkpoints WHERE session_id = 's'`).Scan(&state) != nil {
					state = ""
				}
			})
			if state == "" {
				return nil
			}
			return []byte(state)
		},
		put: func(t fataler, path string, b []byte) (stored bool) {
			with(path, func(c *pgx.Conn, id string) {
				_, err := c.Exec(ctx, `INSERT INTO `+id+`.checkpoints (session_id, state) VALUES ('s', $1) ON CONFLICT (session_id) DO UPDATE SET state = EXCLUDED.state`, string(b))
				var pgErr *pgconn.PgError
				switch {
				case err == nil:
					stored = true
				case errors.As(err, &pgErr) && pgErr.Code == "22021":
					// A TEXT column holds only UTF-8: bytes changed into
					// something else cannot be there, the old row stays.
				default:
					t.Fatal(err)
				}
			})
			return stored
		},
		cut: func(t fataler, path string, keep int) {
			with(path, func(c *pgx.Conn, id string) {
				if _, err := c.Exec(ctx, `DELETE FROM `+id+`.events WHERE session_id = 's' AND seq >= $1`, keep); err != nil {
					t.Fatal(err)
				}
			})
		},
		add: func(t fataler, path string, events []event.Event) {
			with(path, func(c *pgx.Conn, id string) {
				for i := range events {
					src, op := markerColumns(&events[i])
					if _, err := c.Exec(ctx, `INSERT INTO `+id+`.events (session_id, seq, type, time, data, source_event_seqs, surface_op) VALUES ('s', $1, $2, $3, $4, $5, $6)`,
						events[i].Seq, string(events[i].Type), events[i].Time, string(events[i].Data), src, op); err != nil {
						t.Fatal(err)
					}
				}
			})
		},
	}
}

// pgSchemaOf is the schema of a run's Postgres session: one per run
// directory.
func pgSchemaOf(path string) string {
	return "cp_" + strings.NewReplacer("-", "_", "/", "_", ".", "_").Replace(filepath.Base(filepath.Dir(path)))
}

// checkpointStore is how the property reaches a store's log and
// checkpoint behind its back.
type checkpointStore struct {
	name string
	open func(path string, every int) (Store, error)
	// get and put read and write the checkpoint's bytes (nil: none); put
	// reports false when the store cannot hold b and kept what it had.
	get func(path string) []byte
	put func(t fataler, path string, b []byte) (stored bool)
	// cut keeps the first keep events; add appends events as they are.
	cut func(t fataler, path string, keep int)
	add func(t fataler, path string, events []event.Event)
	// drop forgets a run's store (nil: its directory goes with it).
	drop func(path string)
}

var jsonlCheckpoints = checkpointStore{
	name: "s.jsonl",
	open: func(path string, every int) (Store, error) {
		return OpenJSONL(context.Background(), path, Header{ID: "s"}, WithCheckpoints(every), WithSync(SyncNever))
	},
	get: func(path string) []byte {
		b, err := os.ReadFile(CheckpointName(path))
		if err != nil {
			return nil
		}
		return b
	},
	put: func(t fataler, path string, b []byte) bool {
		if err := os.WriteFile(CheckpointName(path), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return true
	},
	cut: cutLog,
	add: func(t fataler, path string, events []event.Event) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(wireOf(t, events))
		f.Close()
	},
}

var sqliteCheckpoints = checkpointStore{
	name: "s.db",
	open: func(path string, every int) (Store, error) {
		return OpenSQLite(context.Background(), path, Header{ID: "s"}, WithSQLiteCheckpoints(every), WithSQLiteSync(SyncNever))
	},
	get: func(path string) []byte {
		var state string
		withDB(path, func(db *sql.DB) {
			if db.QueryRow(`SELECT state FROM checkpoints WHERE session_id = 's'`).Scan(&state) != nil {
				state = ""
			}
		})
		if state == "" {
			return nil
		}
		return []byte(state)
	},
	put: func(t fataler, path string, b []byte) bool {
		withDB(path, func(db *sql.DB) {
			if _, err := db.Exec(`INSERT OR REPLACE INTO checkpoints (session_id, state) VALUES ('s', ?)`, string(b)); err != nil {
				t.Fatal(err)
			}
		})
		return true
	},
	cut: func(t fataler, path string, keep int) {
		withDB(path, func(db *sql.DB) {
			if _, err := db.Exec(`DELETE FROM events WHERE session_id = 's' AND seq >= ?`, keep); err != nil {
				t.Fatal(err)
			}
		})
	},
	add: func(t fataler, path string, events []event.Event) {
		withDB(path, func(db *sql.DB) {
			for i := range events {
				src, op := markerColumns(&events[i])
				if _, err := db.Exec(`INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op) VALUES ('s', ?, ?, ?, ?, ?, ?)`,
					events[i].Seq, string(events[i].Type), events[i].Time, string(events[i].Data), src, op); err != nil {
					t.Fatal(err)
				}
			}
		})
	},
}

func withDB(path string, f func(*sql.DB)) {
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=5000")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	f(db)
}

func checkpointProperty(t *testing.T, cs checkpointStore) {
	used, ignored := 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		dir, err := os.MkdirTemp("", "checkpoint-*")
		if err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, cs.name)
		if cs.drop != nil {
			defer cs.drop(path)
		}
		ctx := context.Background()
		every := rapid.IntRange(1, 12).Draw(rt, "every")
		now := int64(1_700_000_000_000)
		clock := func() int64 { return now }
		shadow := ops.NewImpl(clock)

		var st Store
		var ps *Session
		crash := func() { st.(interface{ crash() }).crash() }
		open := func(wantUsed bool) {
			var err error
			st, err = cs.open(path, every)
			if err != nil {
				rt.Fatal(err)
			}
			var report LoadReport
			ps, report, err = Resume(ctx, st, session.WithClock(clock))
			if err != nil {
				rt.Fatal(err)
			}
			if _, err := shadow.S.Repair(ctx); err != nil {
				rt.Fatal(err)
			}
			if report.CheckpointEvents > 0 {
				used++
				if ps.Restored() != report.CheckpointEvents {
					rt.Fatalf("report says %d events from the checkpoint, the session %d", report.CheckpointEvents, ps.Restored())
				}
			} else if wantUsed {
				rt.Fatalf("a checkpoint that matches the log was not used: %q", report.CheckpointIgnored)
			}
			if report.CheckpointIgnored != "" {
				ignored++
			}
			if got, want := deriveOf(rt, ps.Session), deriveOf(rt, shadow.S); got != want {
				rt.Fatalf("resumed (checkpoint of %d events) differs from the replay:\n got %s\nwant %s", report.CheckpointEvents, got, want)
			}
		}
		step := func() {
			st := shadow.State()
			var s ops.Step
			switch rapid.IntRange(0, 9).Draw(rt, "kind") {
			case 0, 1, 2, 3:
				s = ops.GenToolTraffic(ops.Rapid{T: rt}, st)
			case 4, 5:
				s = ops.GenReplace(ops.Rapid{T: rt}, st)
			default:
				s = ops.GenAppend(ops.Rapid{T: rt}, st)
			}
			now++
			_, want := ops.Apply(shadow, s)
			_, got := ops.Apply(&ops.Impl{S: ps.Session, Clock: clock}, s)
			if string(got.Code) != string(want.Code) {
				rt.Fatalf("step %s: %q, the replay %q", s, got.Code, want.Code)
			}
		}
		open(false)
		var saved []byte // an older checkpoint file, still true of the log
		var stale []byte // a checkpoint of the log before it lost its tail
		var bad []byte   // the checkpoint file known not to match the log
		// usable: a checkpoint file is there, and not one known to be bad.
		usable := func() bool {
			b := cs.get(path)
			return b != nil && !bytes.Equal(b, bad)
		}
		steps := rapid.IntRange(1, 80).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			step()
			switch rapid.IntRange(0, 32).Draw(rt, "event") {
			case 0, 1: // a crash, and a resume from the checkpoint there is
				crash()
				open(usable())
			case 2: // keep this checkpoint to put back later
				if usable() {
					saved = cs.get(path)
				}
			case 3: // a crash, with an older checkpoint put back
				crash()
				if saved != nil {
					cs.put(rt, path, saved)
				}
				open(saved != nil)
			case 7: // the log's tail rewritten with look-alike lines: each event's time one later
				crash()
				events := slices.Clone(shadow.S.Events())
				keep := rapid.IntRange(0, len(events)).Draw(rt, "keepAlike")
				for i := keep; i < len(events); i++ {
					events[i].Time++
				}
				cs.cut(rt, path, keep)
				cs.add(rt, path, events[keep:])
				if b := cs.get(path); b != nil {
					var cp struct{ Events int }
					json.Unmarshal(b, &cp)
					if cp.Events > keep {
						bad = b // its last line has another time now
					}
				}
				saved = nil
				shadow.S, err = session.Seed(events, session.WithClock(clock))
				if err != nil {
					rt.Fatal(err)
				}
				open(false)
			case 6: // a crash, with a checkpoint of the log before it lost its tail
				crash()
				if stale != nil && cs.put(rt, path, stale) {
					bad = stale
				}
				open(false)
			case 4: // a torn or changed checkpoint
				crash()
				if b := cs.get(path); len(b) > 0 {
					if rapid.Bool().Draw(rt, "tear") {
						b = b[:rapid.IntRange(0, len(b)-1).Draw(rt, "tornAt")]
					} else {
						at := rapid.IntRange(0, len(b)-1).Draw(rt, "flipAt")
						b[at] ^= byte(rapid.IntRange(1, 255).Draw(rt, "flip"))
					}
					if cs.put(rt, path, b) {
						bad = b
					} // else the store kept the checkpoint it had, and what is known of it
				}
				open(false)
			case 5: // the machine lost the log's tail: the checkpoint may be ahead of it
				crash()
				events := shadow.S.Events()
				keep := rapid.IntRange(0, len(events)).Draw(rt, "keep")
				cs.cut(rt, path, keep)
				if b := cs.get(path); b != nil {
					stale, bad = b, b
				}
				saved = nil
				shadow.S, err = session.Seed(events[:keep], session.WithClock(clock))
				if err != nil {
					rt.Fatal(err)
				}
				open(false)
			}
		}
		crash()
		open(usable())
		for i := rapid.IntRange(0, 10).Draw(rt, "more"); i > 0; i-- {
			step()
		}
		if got, want := deriveOf(rt, ps.Session), deriveOf(rt, shadow.S); got != want {
			rt.Fatalf("after appends to the resumed session:\n got %s\nwant %s", got, want)
		}
		// What needs the old events reads them back from the store.
		for turn := int64(0); turn <= 4; turn++ {
			g, gok := ps.TurnEnd(turn)
			w, wok := shadow.S.TurnEnd(turn)
			if gok != wok || g.Seq != w.Seq {
				rt.Fatalf("TurnEnd(%d) = %d %v, the replay %d %v", turn, g.Seq, gok, w.Seq, wok)
			}
		}
		if got, want := wireOf(rt, ps.Events()), wireOf(rt, shadow.S.Events()); got != want {
			rt.Fatalf("the log read back differs:\n got %s\nwant %s", got, want)
		}
		for seq := int64(0); seq < int64(ps.Len()); seq += 7 {
			g, _ := ps.Provenance(seq)
			w, _ := shadow.S.Provenance(seq)
			if !equalInts(g, w) {
				rt.Fatalf("Provenance(%d) = %v, the replay %v", seq, g, w)
			}
		}
		if ps.Restored() != 0 {
			rt.Fatalf("the log was read back, yet %d events are left to read", ps.Restored())
		}
		if err := ps.Close(ctx); err != nil {
			rt.Fatal(err)
		}
	})
	t.Logf("resumes from a checkpoint: %d; checkpoints ignored: %d", used, ignored)
	if used == 0 || ignored == 0 {
		t.Fatalf("the runs never resumed from a checkpoint (%d) or never ignored one (%d)", used, ignored)
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// cutLog keeps the header and the first keep event lines of the file.
func cutLog(t fataler, path string, keep int) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	end := 0
	for i := 0; i <= keep; i++ {
		n := bytes.IndexByte(b[end:], '\n')
		if n < 0 {
			t.Fatalf("the log has fewer than %d events", keep)
		}
		end += n + 1
	}
	if err := os.WriteFile(path, b[:end], 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointReadersDuringAppends: a session resumed from a checkpoint
// is read from several goroutines while one appends (checkpoints written
// on the way) and another asks for what reads the old events back (Events,
// Provenance, TurnEnd): every reader sees a log that only grows, and the
// session ends equal to a replay of its store. Run with -race.
func TestCheckpointReadersDuringAppends(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.jsonl")
	open := func() *Session {
		st, err := OpenJSONL(ctx, path, Header{ID: "r"}, WithCheckpoints(5), WithSync(SyncNever))
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := Resume(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	if err := traffic.New(s).Append(400); err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	s = open()
	if s.Restored() == 0 {
		t.Fatal("the session did not resume from its checkpoint")
	}
	done := make(chan struct{})
	errs := make(chan string, 16)
	var wg sync.WaitGroup
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			last := 0
			for {
				select {
				case <-done:
					return
				default:
				}
				n := s.Len()
				if n < last {
					errs <- fmt.Sprintf("reader %d: the log shrank from %d to %d", r, last, n)
					return
				}
				last = n
				_ = s.Messages().Len()
				_ = s.Tokens()
				_ = s.PendingCalls()
				if r == 0 && n%7 == 0 {
					if len(s.Events()) < n {
						errs <- fmt.Sprintf("Events holds fewer than %d events", n)
						return
					}
					s.Provenance(int64(n - 1))
					s.TurnEnd(1)
				}
			}
		}(r)
	}
	if err := traffic.New(s).Append(300); err != nil {
		t.Fatal(err)
	}
	close(done)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	want := wireOf(t, s.Events())
	got := deriveOf(t, s.Session)
	s.Close(ctx)
	_, events, _, err := ReadJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	if wireOf(t, events) != want {
		t.Fatal("the store's log is not the session's")
	}
	replay, err := session.Seed(events)
	if err != nil {
		t.Fatal(err)
	}
	if d := deriveOf(t, replay); d != got {
		t.Fatalf("the session differs from a replay of its store:\n got %s\nwant %s", got, d)
	}
}

// TestCheckpointPrefixUnreadable: a store opened from a checkpoint whose
// covered events are damaged in a way its cheap checks at open do not see
// (a line or row that is neither the last covered nor a surface node's)
// never passes the tail off as the whole log: ReadEvents says why, Events
// is nil, and the session resumed from it breaks with persist.corrupt when
// it reads them back. Beside each damage, the same store undamaged reads
// back the whole log.
func TestCheckpointPrefixUnreadable(t *testing.T) {
	type damage struct {
		name string
		do   func(t *testing.T, path string, seq int64)
		// unchecked: the store reads the events back as they are (Events
		// are not checked against the rules: Resume does that, STORE-3),
		// and only the session's read back refuses them.
		unchecked bool
	}
	// lineOf rewrites the line of seq in a JSONL log, keeping its length.
	lineOf := func(t *testing.T, path string, seq int64, f func([]byte)) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		start := 0
		for i := int64(0); i <= seq; i++ { // line 0 is the header
			start += bytes.IndexByte(b[start:], '\n') + 1
		}
		f(b[start : start+bytes.IndexByte(b[start:], '\n')])
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stores := []struct {
		cs      checkpointStore
		damages []damage
	}{
		{jsonlCheckpoints, []damage{
			{"a line that is not JSON", func(t *testing.T, path string, seq int64) {
				lineOf(t, path, seq, func(l []byte) { l[0] = 'x' })
			}, false},
			{"a look-alike line with another seq", func(t *testing.T, path string, seq int64) {
				lineOf(t, path, seq, func(l []byte) {
					from := []byte(fmt.Sprintf(`"seq":%d,`, seq))
					i := bytes.Index(l, from)
					if i < 0 {
						t.Fatalf("no %s in %s", from, l)
					}
					copy(l[i:], fmt.Sprintf(`"seq":%d,`, seq^1))
				})
			}, false},
		}},
		{sqliteCheckpoints, []damage{
			{"a row deleted", func(t *testing.T, path string, seq int64) {
				withDB(path, func(db *sql.DB) {
					if _, err := db.Exec(`DELETE FROM events WHERE session_id = 's' AND seq = ?`, seq); err != nil {
						t.Fatal(err)
					}
				})
			}, false},
			{"a row whose data is not JSON", func(t *testing.T, path string, seq int64) {
				withDB(path, func(db *sql.DB) {
					if _, err := db.Exec(`UPDATE events SET data = '{' WHERE session_id = 's' AND seq = ?`, seq); err != nil {
						t.Fatal(err)
					}
				})
			}, true},
		}},
	}
	ctx := context.Background()
	for _, st := range stores {
		if st.cs.name == "s.db" && !SQLiteAvailable {
			continue
		}
		for _, d := range append([]damage{{"none", nil, false}}, st.damages...) {
			t.Run(st.cs.name+"/"+d.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), st.cs.name)
				store, err := st.cs.open(path, 5)
				if err != nil {
					t.Fatal(err)
				}
				s, _, err := Resume(ctx, store)
				if err != nil {
					t.Fatal(err)
				}
				if err := traffic.New(s).Append(80); err != nil {
					t.Fatal(err)
				}
				want := wireOf(t, s.Events())
				s.Close(ctx)
				var cp struct {
					Events int64
					Nodes  []struct{ Seq int64 }
				}
				if err := json.Unmarshal(st.cs.get(path), &cp); err != nil {
					t.Fatal(err)
				}
				target := cp.Events - 2
				for slices.ContainsFunc(cp.Nodes, func(n struct{ Seq int64 }) bool { return n.Seq == target }) {
					target--
				}
				if target < 1 {
					t.Fatalf("no covered event off the surface in a checkpoint of %d events", cp.Events)
				}
				if d.do != nil {
					d.do(t, path, target)
				}
				store, err = st.cs.open(path, 5)
				if err != nil {
					t.Fatal(err)
				}
				if int64(store.Report().CheckpointEvents) != cp.Events {
					t.Fatalf("opened from a checkpoint of %d events, want %d", store.Report().CheckpointEvents, cp.Events)
				}
				got, err := store.(interface {
					ReadEvents() ([]event.Event, error)
				}).ReadEvents()
				switch {
				case d.do == nil:
					if err != nil || wireOf(t, got) != want || wireOf(t, store.Events()) != want {
						t.Fatalf("the undamaged store reads back %d events (%v), want the whole log", len(got), err)
					}
				case d.unchecked:
					if err != nil || len(got) != len(store.Events()) || int64(len(got)) < cp.Events {
						t.Fatalf("ReadEvents gave %d events and %v, Events %d: want all of them, unchecked", len(got), err, len(store.Events()))
					}
				case !errors.Is(err, event.CodePersistCorrupt) || got != nil || store.Events() != nil:
					t.Fatalf("ReadEvents gave %d events and %v, Events %d: want none and persist.corrupt", len(got), err, len(store.Events()))
				}
				s, _, err = Resume(ctx, store)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close(ctx)
				if s.Restored() == 0 || s.Err() != nil {
					t.Fatalf("resumed from %d events, Err %v", s.Restored(), s.Err())
				}
				if n := len(s.Events()); n != s.Len() {
					t.Fatalf("Events holds %d of %d events", n, s.Len())
				}
				_, appendErr := s.Append(ctx, event.Raw{Type: event.TypeTodoWrite, Data: json.RawMessage(`{"todos":[]}`)})
				if d.do == nil {
					if s.Err() != nil || appendErr != nil {
						t.Fatalf("an undamaged store's session: Err %v, append %v", s.Err(), appendErr)
					}
					return
				}
				if !errors.Is(s.Err(), event.CodePersistCorrupt) || !errors.Is(appendErr, event.CodePersistCorrupt) {
					t.Fatalf("after reading a damaged prefix back: Err %v, append %v", s.Err(), appendErr)
				}
			})
		}
	}
}

// TestCloseCheckpointsOnlyWhatIsNew: Close writes a checkpoint of the whole
// log unless the store's newest one covers it already: a session resumed
// from a checkpoint of every event and closed leaves it alone, while one
// that appended, or whose checkpoint was ignored, writes a new one that
// covers everything. JSONL shows a rewrite by the file's identity (a new
// file renamed in place), SQLite by a trigger counting the row's writes.
func TestCloseCheckpointsOnlyWhatIsNew(t *testing.T) {
	ctx := context.Background()
	type store struct {
		cs    checkpointStore
		stamp func(t *testing.T, path string) any // changes when the checkpoint is written
	}
	stores := []store{{jsonlCheckpoints, func(t *testing.T, path string) any {
		fi, err := os.Stat(CheckpointName(path))
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}}}
	if SQLiteAvailable {
		stores = append(stores, store{sqliteCheckpoints, func(t *testing.T, path string) any {
			n := -1
			withDB(path, func(db *sql.DB) {
				db.Exec(`CREATE TABLE IF NOT EXISTS cp_writes (n INTEGER)`)
				db.Exec(`INSERT INTO cp_writes SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM cp_writes)`)
				db.Exec(`CREATE TRIGGER IF NOT EXISTS cp_written AFTER INSERT ON checkpoints BEGIN UPDATE cp_writes SET n = n + 1; END`)
				if err := db.QueryRow(`SELECT n FROM cp_writes`).Scan(&n); err != nil {
					t.Fatal(err)
				}
			})
			return n
		}})
	}
	same := func(a, b any) bool {
		if fa, ok := a.(os.FileInfo); ok {
			return os.SameFile(fa, b.(os.FileInfo)) && fa.ModTime().Equal(b.(os.FileInfo).ModTime())
		}
		return a == b
	}
	for _, st := range stores {
		t.Run(st.cs.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), st.cs.name)
			cycle := func(appends int) (covers int64, stamp any) {
				t.Helper()
				store, err := st.cs.open(path, 1000)
				if err != nil {
					t.Fatal(err)
				}
				s, _, err := Resume(ctx, store)
				if err != nil {
					t.Fatal(err)
				}
				if appends > 0 {
					if err := traffic.New(s).Append(appends); err != nil {
						t.Fatal(err)
					}
				}
				n := s.Len()
				if err := s.Close(ctx); err != nil {
					t.Fatal(err)
				}
				var cp struct{ Events int64 }
				if err := json.Unmarshal(st.cs.get(path), &cp); err != nil || cp.Events != int64(n) {
					t.Fatalf("after a close at %d events the checkpoint covers %d (%v)", n, cp.Events, err)
				}
				return cp.Events, st.stamp(t, path)
			}
			cycle(30)
			n1, at1 := cycle(0) // its repair may close the calls the traffic left open
			if n2, at2 := cycle(0); n2 != n1 || !same(at2, at1) {
				t.Fatalf("a close with nothing new rewrote the checkpoint (%d events, was %d)", n2, n1)
			}
			n3, at3 := cycle(1)
			if n3 <= n1 || same(at3, at1) {
				t.Fatalf("a close after an append kept the old checkpoint (%d events, was %d)", n3, n1)
			}
			// A checkpoint whose bytes are damaged is ignored at open: Close
			// writes a good one though nothing was appended.
			b := st.cs.get(path)
			b[len(b)/2] ^= 0x20
			if !st.cs.put(t, path, b) {
				t.Fatal("the store refused the damaged checkpoint")
			}
			at3 = st.stamp(t, path)
			if n4, at4 := cycle(0); same(at4, at3) {
				t.Fatalf("the damaged checkpoint was not replaced (%d events)", n4)
			}
		})
	}
}
