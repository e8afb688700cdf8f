package persist

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/internal/pgtest"
)

// forkBackend is a store kind as the fork tests open it: parent opens the
// parent store, child the child store with header h.
type forkBackend struct {
	name   string
	parent func(t testing.TB, where string) (Store, error)
	child  func(t testing.TB, where string, h Header) (Store, error)
	// exists reports whether the child session is in the store at all.
	exists func(t testing.TB, where string) bool
}

func forkBackends(t *testing.T, dir string) []forkBackend {
	jsonl := forkBackend{name: "jsonl",
		parent: func(t testing.TB, where string) (Store, error) {
			return OpenJSONL(context.Background(), filepath.Join(where, "parent.jsonl"), hdr("parent"))
		},
		child: func(t testing.TB, where string, h Header) (Store, error) {
			return OpenJSONL(context.Background(), filepath.Join(where, "child.jsonl"), h)
		},
		exists: func(t testing.TB, where string) bool {
			_, err := os.Stat(filepath.Join(where, "child.jsonl"))
			return err == nil
		},
	}
	sqlite := forkBackend{name: "sqlite",
		parent: func(t testing.TB, where string) (Store, error) {
			return OpenSQLite(context.Background(), filepath.Join(where, "s.db"), hdr("parent"))
		},
		child: func(t testing.TB, where string, h Header) (Store, error) {
			return OpenSQLite(context.Background(), filepath.Join(where, "s.db"), h)
		},
		exists: func(t testing.TB, where string) bool {
			r, err := OpenSQLiteReader(filepath.Join(where, "s.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			ids, err := r.Sessions()
			if err != nil {
				t.Fatal(err)
			}
			return strings.Contains(strings.Join(ids, ","), "child")
		},
	}
	out := []forkBackend{jsonl}
	if SQLiteAvailable {
		out = append(out, sqlite)
	}
	if os.Getenv("SURFACE_PG_URL") != "" || os.Getenv("CI") == "true" {
		url := pgtest.URL(t)
		out = append(out, forkBackend{name: "postgres",
			// where is the schema
			parent: func(t testing.TB, where string) (Store, error) {
				return OpenPostgres(context.Background(), url, hdr("parent"), WithPostgresSchema(where))
			},
			child: func(t testing.TB, where string, h Header) (Store, error) {
				return OpenPostgres(context.Background(), url, h, WithPostgresSchema(where))
			},
			exists: func(t testing.TB, where string) bool {
				ids, err := PostgresSessions(url, WithPostgresSchema(where))
				if err != nil {
					t.Fatal(err)
				}
				return strings.Contains(strings.Join(ids, ","), "child")
			},
		})
	}
	return out
}

// resumeParent opens and resumes the parent store at where.
func resumeParent(t testing.TB, b forkBackend, where string) *Session {
	st, err := b.parent(t, where)
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := Resume(context.Background(), st, clock())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// lastTurnEnd is the seq of the last turn/end of events, or -1.
func lastTurnEnd(events []event.Event) int64 {
	boundary := int64(-1)
	for _, e := range events {
		if e.Type == event.TypeTurnEnd {
			boundary = e.Seq
		}
	}
	return boundary
}

// forkParent writes the scenario's traffic to a parent store at where and
// returns the seq of its last turn/end.
func forkParent(t *testing.T, b forkBackend, where string) int64 {
	s := resumeParent(t, b, where)
	defer s.Close(context.Background())
	for _, sc := range scenario() {
		if _, err := s.Append(context.Background(), event.Raw{Type: sc.ty, Data: raw(sc.data)}, sc.intent.Value()); err != nil {
			t.Fatal(err)
		}
	}
	return lastTurnEnd(s.Events())
}

// childHeaderFor is the header a fork child is opened with: "promised"
// names the inherited events (SeedLength), "guide" only the parent, as
// the guide's ExampleFork does.
func childHeaderFor(variant string, boundary int64) Header {
	if variant == "guide" {
		return Header{ID: "child", CreatedAt: 1767225600001, ParentSession: "parent"}
	}
	return childHeader(boundary)
}

func childHeader(boundary int64) Header {
	n := boundary + 1
	return Header{ID: "child", CreatedAt: 1767225600001, ParentSession: "parent", SeedLength: &n}
}

// TestForkKilled: STORE-14. A process forking a stored session is killed
// (SIGKILL) after it has written each inherited event of the copy, and
// once after the child is in place. Every time, the store holds no child
// at all, or the complete child, which resumes with the parent's prefix.
func TestForkKilled(t *testing.T) {
	if os.Getenv("SURFACE_FORK_WRITER") != "" {
		return // running as the forking process: see TestForkProcess
	}
	for _, b := range forkBackends(t, "") {
		t.Run(b.name, func(t *testing.T) {
			where := t.TempDir()
			if b.name == "postgres" {
				where = pgtest.Schema("fork")
			}
			boundary := forkParent(t, b, where)
			base := where // the parent alone
			n := int(boundary + 1)
			for _, hv := range []string{"promised", "guide"} {
				none, whole := 0, 0
				for k := 0; k <= n; k = nextKill(k, n) {
					if b.name != "postgres" {
						// A fresh copy of the parent for each kill.
						fresh := t.TempDir()
						copyDir(t, base, fresh)
						where = fresh
					} else {
						dropChild(t, where)
					}
					at := forkKilledAt(t, b.name, hv, where, k)
					if at != k {
						t.Fatalf("kill %d: the forking process stopped at %d", k, at)
					}
					if !b.exists(t, where) {
						if k == n {
							t.Fatalf("killed after the child was in place, and there is no child")
						}
						none++
						continue
					}
					if k < n {
						t.Fatalf("killed after %d of %d inherited events, and a child exists", k, n)
					}
					st, err := b.child(t, where, childHeaderFor(hv, boundary))
					if err != nil {
						t.Fatal(err)
					}
					if h := st.Header(); h.ParentSession != "parent" || h.SeedLength == nil || *h.SeedLength != int64(n) {
						t.Fatalf("the child's header %+v does not name its parent and its %d inherited events", h, n)
					}
					s, _, err := Resume(context.Background(), st, clock())
					if err != nil {
						t.Fatalf("the complete child does not resume: %v", err)
					}
					if s.Len() != n {
						t.Fatalf("the child holds %d events, want %d", s.Len(), n)
					}
					s.Close(context.Background())
					whole++
				}
				t.Logf("%s, child opened with the %s header: fork killed at %d points (after each of %d inherited events, and once in place): %d left no child, %d a complete one, 0 a partial or empty one", b.name, hv, n+1, n, none, whole)
			}
		})
	}
}

// forkKilledAt runs TestForkProcess, kills it once it has written k
// inherited events (k = all of them: once the child is in place), and
// returns where it was.
func forkKilledAt(t *testing.T, kind, header, where string, k int) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestForkProcess$")
	cmd.Env = append(os.Environ(), "SURFACE_FORK_WRITER="+kind, "SURFACE_FORK_HEADER="+header, "SURFACE_FORK_WHERE="+where, "SURFACE_FORK_KILL_AT="+strconv.Itoa(k))
	out, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewScanner(out)
	at := -1
	for r.Scan() {
		if n, err := strconv.Atoi(strings.TrimPrefix(r.Text(), "at ")); err == nil && strings.HasPrefix(r.Text(), "at ") {
			at = n
			break
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if at < 0 {
		t.Fatalf("the forking process did not reach a kill point:\n%s", stderr.String())
	}
	return at
}

// TestForkProcess forks the parent at where into a child, announcing each
// inherited event it has written, and waits to be killed at the one named
// by SURFACE_FORK_KILL_AT.
func TestForkProcess(t *testing.T) {
	kind := os.Getenv("SURFACE_FORK_WRITER")
	if kind == "" {
		t.Skip("only runs as a child of TestForkKilled")
	}
	where := os.Getenv("SURFACE_FORK_WHERE")
	killAt, _ := strconv.Atoi(os.Getenv("SURFACE_FORK_KILL_AT"))
	var b forkBackend
	for _, fb := range forkBackends(t, "") {
		if fb.name == kind {
			b = fb
		}
	}
	parent := resumeParent(t, b, where)
	boundary := lastTurnEnd(parent.Events())
	dst, err := b.child(t, where, childHeaderFor(os.Getenv("SURFACE_FORK_HEADER"), boundary))
	if err != nil {
		t.Fatal(err)
	}
	forkHook = func(written int) {
		if written == killAt {
			fmt.Printf("at %d\n", written)
			for { // wait to be killed (not select{}: the runtime ends a process whose goroutines all block)
				time.Sleep(time.Hour)
			}
		}
	}
	if _, err := Fork(context.Background(), parent, boundary, dst); err != nil {
		t.Fatal(err)
	}
	t.Fatal("the fork finished without reaching its kill point")
}

// copyDir copies the files of src into dst.
func copyDir(t *testing.T, src, dst string) {
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "child") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// dropChild removes a complete child from a Postgres schema, so the next
// kill starts without one.
func dropChild(t *testing.T, schema string) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DELETE FROM `+pgx.Identifier{schema}.Sanitize()+`.sessions WHERE id = 'child'`); err != nil {
		t.Fatal(err)
	}
}

// TestForkAllOrNothing: STORE-14 without a kill. A fork refused for an
// open turn leaves nothing; a child whose header promises more inherited
// events than it holds is refused on resume with persist.fork_incomplete;
// a pending child takes no appends of its own.
func TestForkAllOrNothing(t *testing.T) {
	for _, b := range forkBackends(t, "") {
		t.Run(b.name, func(t *testing.T) {
			where := t.TempDir()
			if b.name == "postgres" {
				where = pgtest.Schema("forkrefused")
			}
			boundary := forkParent(t, b, where)
			parent := resumeParent(t, b, where)
			defer parent.Close(context.Background())
			dst, err := b.child(t, where, childHeader(boundary-2))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Fork(context.Background(), parent, boundary-2, dst); !errors.Is(err, event.CodeForkOpenTurn) {
				t.Fatalf("fork inside a turn: %v", err)
			}
			if err := dst.Append(context.Background(), parent.Events()[0]); !errors.Is(err, event.CodePersistForkIncomplete) {
				t.Fatalf("an append to a child not yet forked: %v", err)
			}
			if _, _, err := Resume(context.Background(), dst); !errors.Is(err, event.CodePersistForkIncomplete) {
				t.Fatalf("resume of a child not yet forked: %v", err)
			}
			dst.Close(context.Background())
			if b.exists(t, where) {
				t.Fatal("a refused fork left a child behind")
			}
			// The header must agree with the boundary.
			dst, err = b.child(t, where, childHeader(boundary-1))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Fork(context.Background(), parent, boundary, dst); !errors.Is(err, event.CodePersistConflict) {
				t.Fatalf("a header promising another length: %v", err)
			}
			dst.Close(context.Background())
			if b.exists(t, where) {
				t.Fatal("a refused fork left a child behind")
			}
		})
	}
}

// TestShortChildRefused: STORE-14. A child written by something else,
// whose header promises more inherited events than it holds, is refused
// by Resume and by validate's reader with persist.fork_incomplete.
func TestShortChildRefused(t *testing.T) {
	requireSQLite(t)
	path := filepath.Join(t.TempDir(), "short.jsonl")
	os.WriteFile(path, []byte(`{"type":"session","version":0,"id":"c","createdAt":1,"parentSession":"p","seedLength":3}`+"\n"+
		`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"trigger":{"kind":"message"}}}`+"\n"), 0o644)
	st, err := OpenJSONL(context.Background(), path, hdr("c"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	if _, _, err := Resume(context.Background(), st); !errors.Is(err, event.CodePersistForkIncomplete) || !strings.Contains(err.Error(), "promises 3") {
		t.Fatalf("resume of a short child: %v", err)
	}
	h, events, _, err := ReadJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSeedLength(h, len(events)); !errors.Is(err, event.CodePersistForkIncomplete) {
		t.Fatalf("CheckSeedLength: %v", err)
	}
	db := filepath.Join(t.TempDir(), "short.db")
	sq, err := OpenSQLite(context.Background(), db, hdr("p"))
	if err != nil {
		t.Fatal(err)
	}
	sq.Close(context.Background())
	sqlDB, _ := sql.Open("sqlite3", db)
	sqlDB.Exec(`INSERT INTO sessions (id, version, created_at, parent_session, seed_length) VALUES ('c', 0, 1, 'p', 3)`)
	sqlDB.Close()
	sq, err = OpenSQLite(context.Background(), db, hdr("c"))
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close(context.Background())
	if _, _, err := Resume(context.Background(), sq); !errors.Is(err, event.CodePersistForkIncomplete) {
		t.Fatalf("resume of a short SQLite child: %v", err)
	}
}

// TestForkKeepsOptions: a stored fork of a strict session with a
// vocabulary and an estimator is strict, knows the types and counts
// tokens the same way; an option given to Fork overrides the parent's.
func TestForkKeepsOptions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	voc, err := event.NewVocabulary(event.TypeSpec{Type: "app/note"})
	if err != nil {
		t.Fatal(err)
	}
	est := func(message.Message) int { return 1000 }
	st, err := OpenJSONL(ctx, filepath.Join(dir, "p.jsonl"), Header{ID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	parent, _, err := Resume(ctx, st, session.WithStrict(), session.WithVocabulary(voc), session.WithTokenEstimator(est))
	if err != nil {
		t.Fatal(err)
	}
	defer parent.Close(ctx)
	ap := event.AppendIntent()
	mustAppend(t, parent.Session, event.TypeTurnStart, `{"turn":1,"trigger":{"kind":"message"}}`, nil)
	mustAppend(t, parent.Session, event.TypeUserMessage, `{"content":[{"type":"text","text":"q"}],"source":{"kind":"user"}}`, &ap)
	end := mustAppend(t, parent.Session, event.TypeTurnEnd, `{"turn":1,"reason":{"kind":"completed"}}`, nil)
	for _, override := range []bool{false, true} {
		name := fmt.Sprintf("c%v", override)
		dst, err := OpenJSONL(ctx, filepath.Join(dir, name+".jsonl"), Header{ID: name, ParentSession: "p"})
		if err != nil {
			t.Fatal(err)
		}
		var opts []session.Option
		if override {
			opts = append(opts, session.WithTokenEstimator(func(message.Message) int { return 7 }))
		}
		child, err := Fork(ctx, parent, end.Seq, dst, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := child.Append(ctx, event.Raw{Type: event.TypeStepStart, Data: json.RawMessage(`{"turn":1,"step":1}`)}); !errors.Is(err, event.CodeStrictNoTurn) {
			t.Fatalf("%s: the stored child is not strict: %v", name, err)
		}
		if _, err := child.Append(ctx, event.Raw{Type: "app/note", Data: json.RawMessage(`{}`)}); err != nil {
			t.Fatalf("%s: the stored child does not know the parent's type: %v", name, err)
		}
		want := 1000
		if override {
			want = 7
		}
		if got := child.Tokens(); got != want {
			t.Fatalf("%s: tokens %d, want %d", name, got, want)
		}
		child.Close(ctx)
	}
}

func mustAppend(t *testing.T, s *session.Session, typ event.Type, data string, in *event.Intent) event.Event {
	t.Helper()
	e, err := s.Append(context.Background(), event.Raw{Type: typ, Data: json.RawMessage(data)}, in.Value())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestResumeStrict (STRICT-8): a resume in strict mode checks what it
// loads. A log that ended a turn with a call unanswered is refused at
// that event, with its line, and the file is left as it was; without
// strict mode it loads. A log a strict session wrote and a crash cut off
// loads in strict mode, is repaired, and loads again.
func TestResumeStrict(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	head := `{"type":"session","version":0,"id":"s","createdAt":1}`
	open := []string{head,
		`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"trigger":{"kind":"message"}}}`,
		`{"type":"assistant/message","seq":1,"time":1,"data":{"turn":1,"step":1,"content":[{"type":"tool-call","id":"c1","name":"read","arguments":{}}]},"surfaceOp":"append"}`}
	bad := filepath.Join(dir, "bad.jsonl")
	text := strings.Join(append(open, `{"type":"turn/end","seq":2,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}`), "\n") + "\n"
	if err := os.WriteFile(bad, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := OpenJSONL(ctx, bad, Header{ID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Resume(ctx, st, session.WithStrict())
	var ee *event.Error
	if !errors.As(err, &ee) || ee.Code != event.CodeStrictCallsPending || ee.Seq != 2 || ee.Index != 2 || !strings.Contains(ee.Detail, "line 4") {
		t.Fatalf("strict resume of a turn ended with a call pending: %#v", err)
	}
	st.Close(ctx)
	if b, _ := os.ReadFile(bad); string(b) != text {
		t.Fatalf("a refused strict resume changed the file:\n%s", b)
	}
	st, _ = OpenJSONL(ctx, bad, Header{ID: "s"})
	if s, _, err := Resume(ctx, st); err != nil {
		t.Fatalf("a loose resume: %v", err)
	} else {
		s.Close(ctx)
	}

	crashed := filepath.Join(dir, "crashed.jsonl")
	if err := os.WriteFile(crashed, []byte(strings.Join(open, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 2; round++ {
		st, err := OpenJSONL(ctx, crashed, Header{ID: "s"})
		if err != nil {
			t.Fatal(err)
		}
		s, rep, err := Resume(ctx, st, session.WithStrict())
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if want := map[int]int{0: 2, 1: 0}[round]; len(rep.Closers) != want {
			t.Fatalf("round %d: %d closers, want %d", round, len(rep.Closers), want)
		}
		s.Close(ctx)
	}
}

// TestEmptyChildRefused: a child whose header names its parent without a
// seedLength and which holds no event (what an older writer left when a
// fork stopped between creating the child and writing its events) is
// refused on resume, in a JSONL file written by hand and in a SQLite row
// inserted by plain SQL; an empty session naming no parent, its
// look-alike, resumes.
func TestEmptyChildRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, c := range []struct {
		name, header string
		refused      bool
	}{
		{"child", `{"type":"session","version":0,"id":"c","createdAt":1,"parentSession":"p"}`, true},
		{"plain", `{"type":"session","version":0,"id":"c","createdAt":1}`, false},
	} {
		path := filepath.Join(dir, c.name+".jsonl")
		os.WriteFile(path, []byte(c.header+"\n"), 0o644)
		st, err := OpenJSONL(ctx, path, hdr("c"))
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := Resume(ctx, st)
		if got := errors.Is(err, event.CodePersistForkIncomplete); got != c.refused {
			t.Fatalf("%s: resume: %v", c.name, err)
		}
		if s != nil {
			s.Close(ctx)
		} else {
			st.Close(ctx)
		}
	}
	if !SQLiteAvailable {
		return
	}
	db := filepath.Join(dir, "empty.db")
	sq, err := OpenSQLite(ctx, db, hdr("p"))
	if err != nil {
		t.Fatal(err)
	}
	sq.Close(ctx)
	sqlDB, _ := sql.Open("sqlite3", db)
	if _, err := sqlDB.Exec(`INSERT INTO sessions (id, version, created_at, parent_session) VALUES ('c', 0, 1, 'p'), ('d', 0, 1, NULL)`); err != nil {
		t.Fatal(err)
	}
	sqlDB.Close()
	for id, refused := range map[string]bool{"c": true, "d": false} {
		sq, err = OpenSQLite(ctx, db, hdr(id))
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := Resume(ctx, sq)
		if got := errors.Is(err, event.CodePersistForkIncomplete); got != refused {
			t.Fatalf("SQLite session %s: resume: %v", id, err)
		}
		if s != nil {
			s.Close(ctx)
		} else {
			sq.Close(ctx)
		}
	}
}
