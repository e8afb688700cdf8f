package main

import (
	"context"
	"database/sql"

	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/internal/pgtest"
)

func call(args ...string) (int, string) {
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return code, out.String() + errb.String()
}

func TestRunExitCodes(t *testing.T) {
	if code, out := call("run", "--prefix", "surface.edge.replace"); code != 0 || !strings.Contains(out, "PASS") {
		t.Fatalf("run: %d\n%s", code, out)
	}
	if code, out := call("run", "--model", "--prefix", "repair.", "--format", "junit"); code != 0 || !strings.Contains(out, "<testsuite") {
		t.Fatalf("junit: %d\n%s", code, out)
	}
	if code, _ := call("run", "--format", "yaml", "--prefix", "x"); code != 2 {
		t.Fatalf("bad format: %d", code)
	}
	if code, _ := call("nonsense"); code != 2 {
		t.Fatalf("bad command: %d", code)
	}
	if code, out := call("run", "--prefix", "no.such.vector"); code != 1 || !strings.Contains(out, "no vector was selected") {
		t.Fatalf("a run selecting nothing: %d\n%s", code, out)
	}
	if code, out := call("run", "--rule", "SURF-13"); code != 0 || !strings.Contains(out, "conformance level: ") {
		t.Fatalf("run --rule: %d\n%s", code, out)
	}
	if code, _ := call("run", "--exec", "x", "--", "y"); code != 2 {
		t.Fatalf("--exec and an argv: %d", code)
	}
	if code, out := call("help"); code != 0 || !strings.Contains(out, "--rerun") || !strings.Contains(out, "validate") {
		t.Fatalf("help: %d\n%s", code, out)
	}
	if code, out := call("random", "-n", "20", "-seed", "7"); code != 0 || !strings.Contains(out, "PASS") {
		t.Fatalf("random: %d\n%s", code, out)
	}
	if code, out := call("coverage"); code != 0 || !strings.Contains(out, "| SURF-13 (not reversed) | MUST |") {
		t.Fatalf("coverage: %d\n%s", code, out)
	}
}

// TestUsageErrors: -h prints the command's own usage and exits 0; flags
// that make no sense are usage errors (2), never a silent PASS.
func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "-h"}, 0, "usage: conformance [run]"},
		{[]string{"coverage", "-h"}, 0, "usage: conformance coverage"},
		{[]string{"random", "-h"}, 0, "usage: conformance random"},
		{[]string{"testee", "-h"}, 0, "usage: conformance testee"},
		{[]string{"random", "-n", "-5"}, 2, "at least 1"},
		{[]string{"random", "-n", "0"}, 2, "at least 1"},
		{[]string{"random", "-steps", "0"}, 2, "at least 1"},
		{[]string{"run", "--model", "--exec", "true"}, 2, "--model"},
		{[]string{"run", "--model", "--", "true"}, 2, "--model"},
		{[]string{"run", "--known-failures", filepath.Join(t.TempDir(), "missing.json"), "--prefix", "surface.edge.replace"}, 2, "no such file"},
		{[]string{"run", "--max-timeouts", "0"}, 2, "positive"},
		{[]string{"coverage", "extra"}, 2, "no operands"},
	}
	for _, c := range cases {
		code, out := call(c.args...)
		if code != c.code || !strings.Contains(out, c.want) || strings.Contains(out, "Usage of") {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", c.args, code, c.code, c.want, out)
		}
	}
}

// TestMessagesSayThingsOnce: no error message repeats its prefix or ends
// in <nil>.
func TestMessagesSayThingsOnce(t *testing.T) {
	code, out := call("run", "--exec", "exit 0")
	if code != 2 || strings.Count(out, "handshake") != 1 || strings.Contains(out, "<nil>") {
		t.Errorf("a testee that exits at once: %d %q", code, out)
	}
	dir := t.TempDir()
	st, err := persist.OpenJSONL(context.Background(), filepath.Join(dir, "s.jsonl"), persist.Header{ID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	st.Close(context.Background())
	err = st.Append(context.Background(), event.Event{Type: event.TypeTodoWrite, Data: json.RawMessage(`{"todos":[]}`)})
	if !errors.Is(err, event.CodePersistClosed) || strings.Contains(err.Error(), "<nil>") {
		t.Errorf("append to a closed store: %v", err)
	}
}

// TestValidate: a log written by the library validates; one that breaks
// a rule (SURF-7) does not, for both backends.
func TestValidate(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	st, _ := persist.OpenJSONL(context.Background(), good, persist.Header{ID: "g"})
	s, _, _ := persist.Resume(context.Background(), st)
	s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: json.RawMessage(`{"content":[],"source":{"kind":"user"}}`)}, event.Intent{Op: event.Append()})
	st.Close(context.Background())
	db := filepath.Join(dir, "good.db")
	sq, _ := persist.OpenSQLite(context.Background(), db, persist.Header{ID: "g"})
	s2, _, _ := persist.Resume(context.Background(), sq)
	s2.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: json.RawMessage(`{"turn":1,"trigger":{"kind":"message"}}`)})
	sq.Close(context.Background())
	if code, out := call("validate", good, db); code != 0 || strings.Count(out, "OK") != 2 || !strings.Contains(out, "last turn open") {
		t.Fatalf("validate good: %d\n%s", code, out)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"type":"session","version":0,"id":"b","createdAt":1}`+"\n"+
		`{"type":"user/message","seq":0,"time":1,"data":{"content":[],"source":{"kind":"user"}}}`+"\n"), 0o644)
	if code, out := call("validate", bad); code != 1 || !strings.Contains(out, "surface.op_missing") {
		t.Fatalf("validate bad: %d\n%s", code, out)
	}
}

// TestValidateExitCodes: STORE-12. 0 valid, 1 invalid, 2 usage or input
// error (a missing file, an unknown --session, a database with no
// sessions, an empty file); validate never writes.
func TestValidateExitCodes(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	st, _ := persist.OpenJSONL(context.Background(), good, persist.Header{ID: "g"})
	s, _, _ := persist.Resume(context.Background(), st)
	s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: json.RawMessage(`{"todos":[]}`)})
	s.Close(context.Background())
	torn := filepath.Join(dir, "torn.jsonl")
	b, _ := os.ReadFile(good)
	os.WriteFile(torn, append(b, `{"type":"todo/wr`...), 0o644)
	emptyDB := filepath.Join(dir, "empty.db")
	sq, _ := persist.OpenSQLite(context.Background(), emptyDB, persist.Header{ID: "e"})
	sq.Close(context.Background())
	sq.Close(context.Background())
	// An empty database: a new file that OpenSQLite initialised but
	// whose session row we remove.
	db, _ := sql.Open("sqlite3", "file:"+emptyDB)
	db.Exec(`DELETE FROM sessions`)
	db.Close()
	oneSession := filepath.Join(dir, "one.db")
	sq, _ = persist.OpenSQLite(context.Background(), oneSession, persist.Header{ID: "only"})
	sq.Close(context.Background())
	emptyFile := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(emptyFile, nil, 0o644)
	short := filepath.Join(dir, "short.jsonl")
	os.WriteFile(short, []byte(`{"type":"session","version":0,"id":"c","createdAt":1,"parentSession":"p","seedLength":3}`+"\n"), 0o644)
	// Look-alikes: a fork child without seedLength and without events (a
	// fork that never wrote it), beside an empty session naming no parent
	// and a child without seedLength that holds its boundary.
	emptyChild := filepath.Join(dir, "empty-child.jsonl")
	os.WriteFile(emptyChild, []byte(`{"type":"session","version":0,"id":"c","createdAt":1,"parentSession":"p"}`+"\n"), 0o644)
	emptyPlain := filepath.Join(dir, "empty-plain.jsonl")
	os.WriteFile(emptyPlain, []byte(`{"type":"session","version":0,"id":"c","createdAt":1}`+"\n"), 0o644)
	oneChild := filepath.Join(dir, "one-child.jsonl")
	os.WriteFile(oneChild, []byte(`{"type":"session","version":0,"id":"c","createdAt":1,"parentSession":"p"}`+"\n"+
		`{"seq":0,"time":1,"type":"turn/start","data":{"turn":1,"trigger":{"kind":"message"}}}`+"\n"+
		`{"seq":1,"time":1,"type":"turn/end","data":{"turn":1,"reason":{"kind":"completed"}}}`+"\n"), 0o644)
	config := filepath.Join(dir, "config.json")
	os.WriteFile(config, []byte(`{"debug":true}`+"\n"), 0o644)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{good}, 0, "OK 1 events"},
		{[]string{torn}, 0, "torn last line of 16 bytes"},
		{[]string{"--model", good}, 0, "OK"},
		{[]string{filepath.Join(dir, "missing.jsonl")}, 2, "ERROR"},
		{[]string{"--session", "nobody", oneSession}, 2, `no session "nobody"`},
		{[]string{"--session", "only", oneSession}, 0, `session "only": OK 0 events`},
		{[]string{emptyDB}, 2, "no sessions"},
		{[]string{emptyFile}, 1, "persist.not_a_session: the file is empty"},
		{[]string{config}, 1, "persist.not_a_session"},
		{[]string{good, filepath.Join(dir, "missing.jsonl")}, 2, "OK"},
		{[]string{}, 2, "usage"},
		{[]string{"--progress", "sometimes", good}, 2, "--progress"},
		// Flags after the operands (issue 17).
		{[]string{oneSession, "--session", "only"}, 0, `session "only": OK 0 events`},
		{[]string{oneSession, "--session", "nobody"}, 2, `no session "nobody"`},
		// The worst verdict of several files, whatever their order.
		{[]string{config, good}, 1, "OK"},
		{[]string{good, config}, 1, "OK"},
		{[]string{dir}, 2, "a directory"},
		{[]string{short}, 1, "persist.fork_incomplete"},
		{[]string{emptyChild}, 1, "persist.fork_incomplete"},
		{[]string{emptyPlain}, 0, "OK 0 events"},
		{[]string{oneChild}, 0, "OK 2 events"},
		{[]string{"-h"}, 0, "postgres://"},
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		// A file that never ends a line: refused in bounded memory.
		cases = append(cases, struct {
			args []string
			code int
			want string
		}{[]string{"/dev/zero"}, 1, "longer than"})
	}
	for _, c := range cases {
		before := snapshot(t, dir)
		code, out := call(append([]string{"validate"}, c.args...)...)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("validate %v: exit %d, want %d with %q:\n%s", c.args, code, c.code, c.want, out)
		}
		if after := snapshot(t, dir); after != before {
			t.Errorf("validate %v changed the directory", c.args)
		}
	}
	// A progress bar when asked for (on a terminal it comes by itself
	// after a second).
	if code, out := call("validate", "--progress", "always", good); code != 0 || !strings.Contains(out, "checking") {
		t.Errorf("--progress always: %d\n%s", code, out)
	}
}

// snapshot is the names, sizes and contents of the files of dir.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		b.WriteString(e.Name() + "\x00" + string(data) + "\x00")
	}
	return b.String()
}

// TestValidatePostgres: STORE-12, STORE-13. validate reads a Postgres
// store's sessions by URL, one session with --session; an unknown session
// is an input error.
func TestValidatePostgres(t *testing.T) {
	url := pgtest.URL(t)
	schema := pgtest.Schema("validate")
	st, err := persist.OpenPostgres(context.Background(), url, persist.Header{ID: "v1"}, persist.WithPostgresSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	s, _, _ := persist.Resume(context.Background(), st)
	s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: json.RawMessage(`{"turn":1,"trigger":{"kind":"message"}}`)})
	s.Close(context.Background())
	if code, out := call("validate", "--pg-schema", schema, url); code != 0 || !strings.Contains(out, `session "v1": OK 1 events`) {
		t.Fatalf("validate postgres: %d\n%s", code, out)
	}
	if code, out := call("validate", "--pg-schema", schema, "--session", "nobody", url); code != 2 {
		t.Fatalf("unknown session: %d\n%s", code, out)
	}
	if code, out := call("validate", "--pg-schema", schema+"_none", url); code != 2 || !strings.Contains(out, "no sessions") {
		t.Fatalf("no sessions: %d\n%s", code, out)
	}
}

// TestValidateCheckpoint: validate checks the checkpoint beside a JSONL
// log (STORE-18): a true one is named OK; one a resume would use whose
// covered bytes changed fails the log (exit 1), though the log's events
// are each valid; a torn one is only noted (a resume ignores it).
func TestValidateCheckpoint(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cp.jsonl")
	st, _ := persist.OpenJSONL(ctx, path, persist.Header{ID: "c"}, persist.WithCheckpoints(1))
	s, _, _ := persist.Resume(ctx, st)
	s.Append(ctx, event.Raw{Type: event.TypeUserMessage, Data: json.RawMessage(`{"content":[{"type":"text","text":"hello"}],"source":{"kind":"user"}}`)}, event.Intent{Op: event.Append()})
	s.Append(ctx, event.Raw{Type: event.TypeTodoWrite, Data: json.RawMessage(`{"todos":[]}`)})
	s.Close(ctx)
	if code, out := call("validate", path); code != 0 || !strings.Contains(out, "checkpoint of 2 events OK") {
		t.Fatalf("validate with a true checkpoint: %d\n%s", code, out)
	}
	log, _ := os.ReadFile(path)
	os.WriteFile(path, bytes.Replace(log, []byte("hello"), []byte("jello"), 1), 0o644)
	if code, out := call("validate", path); code != 1 || !strings.Contains(out, "persist.checkpoint_unusable") || !strings.Contains(out, "CRC-32C") {
		t.Fatalf("validate with a covered byte changed: %d\n%s", code, out)
	}
	os.WriteFile(path, log, 0o644)
	cp, _ := os.ReadFile(persist.CheckpointName(path))
	os.WriteFile(persist.CheckpointName(path), cp[:len(cp)-3], 0o644)
	if code, out := call("validate", path); code != 0 || !strings.Contains(out, "checkpoint ignored") {
		t.Fatalf("validate with a torn checkpoint: %d\n%s", code, out)
	}
	if !persist.SQLiteAvailable {
		return
	}
	db := filepath.Join(t.TempDir(), "cp.db")
	sq, _ := persist.OpenSQLite(ctx, db, persist.Header{ID: "c"}, persist.WithSQLiteCheckpoints(1))
	s, _, _ = persist.Resume(ctx, sq)
	s.Append(ctx, event.Raw{Type: event.TypeTodoWrite, Data: json.RawMessage(`{"todos":[]}`)})
	s.Close(ctx)
	if code, out := call("validate", db); code != 0 || !strings.Contains(out, `session "c": checkpoint of 1 events OK`) {
		t.Fatalf("validate a SQLite session with a checkpoint: %d\n%s", code, out)
	}
}
