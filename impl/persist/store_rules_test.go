package persist

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

// Tests of the store rules that keep a store from destroying data:
// STORE-2 (what a torn tail is), STORE-8 (quarantine), STORE-9 (foreign
// files), STORE-10 (one live session), STORE-11 (sync), STORE-1 and
// STORE-5 (exact versions).

const headerLine1 = `{"type":"session","version":0,"id":"x","createdAt":1}` + "\n"

func todoLine(seq int) string {
	return `{"type":"todo/write","seq":` + strconv.Itoa(seq) + `,"time":1,"data":{"todos":[]}}` + "\n"
}

// writeFile writes content to a new file in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// unchanged fails the test when the file at path no longer holds before,
// or when anything but path (and its lock) appeared in its directory.
func unchanged(t *testing.T, path string, before []byte) {
	t.Helper()
	after, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(before, after) {
		t.Errorf("%s changed: %d bytes before, %d after (%v)", filepath.Base(path), len(before), len(after), err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if e.Name() != filepath.Base(path) {
			t.Errorf("a file %s appeared beside %s", e.Name(), filepath.Base(path))
		}
	}
}

// resumeJSONL opens and resumes a JSONL file, closing the store when it
// fails; it returns the error of whichever step failed.
func resumeJSONL(path string) (*Session, error) {
	st, err := OpenJSONL(context.Background(), path, hdr("x"))
	if err != nil {
		return nil, err
	}
	s, _, err := Resume(context.Background(), st, clock())
	if err != nil {
		st.Close(context.Background())
		return nil, err
	}
	return s, nil
}

// TestCompleteLastLineIsNeverCut: STORE-2. A complete last line that is
// JSON but breaks a rule is a typed error naming the line; the file is
// not cut, not quarantined, and its seq is not reused.
func TestCompleteLastLineIsNeverCut(t *testing.T) {
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	cases := []struct {
		name string
		line string
		code event.Code
	}{
		{"unknown envelope member", `{"type":"todo/write","seq":1,"time":1,"data":{"todos":[]},"writtenBy":"a newer build"}`, event.CodeInvalidEnvelope},
		{"unknown type", `{"type":"x/from-the-future","seq":1,"time":1,"data":{}}`, event.CodeUnknownType},
		{"data nested deeper than the limit", `{"type":"todo/write","seq":1,"time":1,"data":{"todos":` + deep + `}}`, event.CodeDataNotJSON},
		{"wrong seq", todoLine(7)[:len(todoLine(7))-1], event.CodeSeqNotContiguous},
		{"a JSON value that is not an object", `42`, event.CodeInvalidEnvelope},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeFile(t, t.TempDir(), "s.jsonl", headerLine1+todoLine(0)+c.line+"\n")
			before, _ := os.ReadFile(p)
			_, err := resumeJSONL(p)
			if event.CodeOf(err) == "" || event.CodeOf(err) == event.CodePersistCorrupt {
				t.Fatalf("got %v, want a rule's code", err)
			}
			if !errors.Is(err, c.code) {
				t.Errorf("got %v, want %s", err, c.code)
			}
			if !strings.Contains(err.Error(), "line 3") {
				t.Errorf("the error does not name line 3: %v", err)
			}
			unchanged(t, p, before)
		})
	}
}

// TestTornTailQuarantined: STORE-2 (a) and (b), STORE-8. A last line
// without its newline, and a last line of bytes that are not JSON, are
// torn: copied to NAME.torn-OFFSET, named in the report, and cut before
// the next append, which takes the torn line's seq.
func TestTornTailQuarantined(t *testing.T) {
	for name, torn := range map[string]string{
		"no newline":         `{"type":"todo/write","seq":1,"time":1,"data":{"todos":[]}}`,
		"NUL bytes":          "\x00\x00\x00\x00\x00\x00\x00\x00\n",
		"half a line":        `{"type":"todo/write","seq":1,"ti` + "\n",
		"an empty last line": "\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := writeFile(t, dir, "s.jsonl", headerLine1+todoLine(0)+torn)
			st, err := OpenJSONL(context.Background(), p, hdr("x"))
			if err != nil {
				t.Fatal(err)
			}
			rep := st.Report()
			offset := len(headerLine1 + todoLine(0))
			wantQ := p + ".torn-" + strconv.Itoa(offset)
			if rep.TornBytes != int64(len(torn)) || rep.Quarantine != wantQ {
				t.Fatalf("report %+v, want %d torn bytes in %s", rep, len(torn), wantQ)
			}
			if q, err := os.ReadFile(wantQ); err != nil || string(q) != torn {
				t.Fatalf("quarantine holds %q (%v), want %q", q, err, torn)
			}
			s, _, err := Resume(context.Background(), st, clock())
			if err != nil {
				t.Fatal(err)
			}
			e, err := s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: raw(`{"todos":[1]}`)})
			if err != nil || e.Seq != 1 {
				t.Fatalf("append after the torn tail: %v %v", e, err)
			}
			s.Close(context.Background())
			got, _ := os.ReadFile(p)
			lines := strings.SplitAfter(string(got), "\n")
			if len(lines) != 4 || lines[0]+lines[1] != headerLine1+todoLine(0) || !strings.HasPrefix(lines[2], `{"type":"todo/write","seq":1,`) || lines[3] != "" {
				t.Fatalf("the torn tail was not cut:\n%q", got)
			}
			// A second open of a file torn the same way reuses the name;
			// other torn bytes at that offset get a new one.
			os.WriteFile(p, []byte(headerLine1+todoLine(0)+torn), 0o644)
			st, err = OpenJSONL(context.Background(), p, hdr("x"))
			if err != nil || st.Report().Quarantine != wantQ {
				t.Fatalf("reopen: %+v %v", st.Report(), err)
			}
			st.Close(context.Background())
			os.WriteFile(p, []byte(headerLine1+todoLine(0)+"\x00\x01torn differently"), 0o644)
			st, err = OpenJSONL(context.Background(), p, hdr("x"))
			if err != nil || st.Report().Quarantine != wantQ+".2" {
				t.Fatalf("other torn bytes: %+v %v", st.Report(), err)
			}
			st.Close(context.Background())
			if q, _ := os.ReadFile(wantQ); string(q) != torn {
				t.Fatalf("the first quarantine file was overwritten")
			}
			// Torn bytes of the same length as the first, but other bytes:
			// a file of their own, never the first one's (which would cut
			// them unsaved).
			same := "\x7f" + torn[1:]
			os.WriteFile(p, []byte(headerLine1+todoLine(0)+same), 0o644)
			st, err = OpenJSONL(context.Background(), p, hdr("x"))
			if err != nil || st.Report().Quarantine != wantQ+".3" {
				t.Fatalf("same length, other bytes: %+v %v", st.Report(), err)
			}
			st.Close(context.Background())
			if q, _ := os.ReadFile(wantQ + ".3"); string(q) != same {
				t.Fatalf("the quarantine of the same-length tail holds %q", q)
			}
		})
	}
}

// TestLongTornTailFullyRemoved: STORE-2. A torn tail longer than the line
// appended after it leaves no byte behind.
func TestLongTornTailFullyRemoved(t *testing.T) {
	p := writeFile(t, t.TempDir(), "s.jsonl", headerLine1+todoLine(0)+`{"type":"todo/write","seq":1,"time":1,"data":{"todos":["`+strings.Repeat("x", 4096))
	s, err := resumeJSONL(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: raw(`{"todos":[]}`)}); err != nil {
		t.Fatal(err)
	}
	s.Close(context.Background())
	got, _ := os.ReadFile(p)
	if want := headerLine1 + todoLine(0); !strings.HasPrefix(string(got), want) || strings.Contains(string(got), "xxx") || bytes.Count(got, []byte("\n")) != 3 {
		t.Fatalf("file after the append:\n%q", got)
	}
	if _, events, torn, err := ReadJSONL(p); err != nil || torn != 0 || len(events) != 2 {
		t.Fatalf("reread: %d events, torn %d, %v", len(events), torn, err)
	}
}

// TestOpenJSONLRefusesForeignFiles: STORE-9. A file that does not begin
// with a session header is refused with persist.not_a_session and left
// byte for byte as it was.
func TestOpenJSONLRefusesForeignFiles(t *testing.T) {
	for name, content := range map[string]string{
		"empty":                        "",
		"a one-line config file":       `{"debug":true,"level":3}` + "\n",
		"a config without newline":     `{"debug":true}`,
		"plain text":                   "# notes\nremember the milk\n",
		"a binary":                     "\x7fELF\x02\x01\x01\x00\x00\x00\x00\n\x00\x00",
		"half a header":                `{"type":"session","vers`,
		"a header without version":     `{"type":"session","id":"x"}` + "\n",
		"JSON lines of something else": `{"a":1}` + "\n" + `{"a":2}` + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			p := writeFile(t, t.TempDir(), "s.jsonl", content)
			_, err := OpenJSONL(context.Background(), p, hdr("x"))
			if !isErr(err, event.CodePersistNotASession, -1) {
				t.Fatalf("got %v, want persist.not_a_session", err)
			}
			unchanged(t, p, []byte(content))
		})
	}
	// A missing file is created with a complete header, atomically: no
	// temporary file is left behind.
	dir := t.TempDir()
	p := filepath.Join(dir, "new.jsonl")
	st, err := OpenJSONL(context.Background(), p, hdr("x"))
	if err != nil {
		t.Fatal(err)
	}
	st.Close(context.Background())
	got, _ := os.ReadFile(p)
	if !strings.HasPrefix(string(got), `{"type":"session","version":0,"id":"x"`) || !strings.HasSuffix(string(got), "}\n") {
		t.Fatalf("new file: %q", got)
	}
	unchanged(t, p, got)
}

// TestOpenSQLiteRefusesForeignDatabases: STORE-9. A database with other
// tables, or a file that is not a database, is refused before anything
// is written: no user_version stamp, no table, no journal-mode change.
func TestOpenSQLiteRefusesForeignDatabases(t *testing.T) {
	requireSQLite(t)
	dir := t.TempDir()
	foreign := filepath.Join(dir, "app.db")
	db, err := sql.Open("sqlite3", "file:"+foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE settings (k TEXT PRIMARY KEY, v TEXT); INSERT INTO settings VALUES ('theme', 'dark')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	text := writeFile(t, dir, "notes.db", "not a database at all\n")
	walDB := filepath.Join(dir, "wal-app.db") // someone else's database in WAL mode
	db, _ = sql.Open("sqlite3", "file:"+walDB)
	if _, err := db.Exec(`PRAGMA journal_mode=WAL; CREATE TABLE jobs (id INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, p := range []string{foreign, text, walDB} {
		before, _ := os.ReadFile(p)
		_, err := OpenSQLite(context.Background(), p, hdr("x"))
		if !isErr(err, event.CodePersistNotASession, -1) {
			t.Errorf("%s: got %v, want persist.not_a_session", filepath.Base(p), err)
		}
		// The refusal says what it found: a table and its key's index, one
		// table with a rowid key.
		if want := map[string]string{foreign: "(user_version 0, 2 schema objects)", walDB: "(user_version 0, 1 schema objects)"}[p]; want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want it to say %s", filepath.Base(p), err, want)
		}
		if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
			t.Errorf("%s changed", filepath.Base(p))
		}
	}
	db, _ = sql.Open("sqlite3", "file:"+foreign+"?mode=ro")
	defer db.Close()
	var version int
	var mode string
	db.QueryRow(`PRAGMA user_version`).Scan(&version)
	db.QueryRow(`PRAGMA journal_mode`).Scan(&mode)
	if version != 0 || mode != "delete" {
		t.Errorf("the foreign database was re-stamped: user_version %d, journal_mode %s", version, mode)
	}
	for _, p := range []string{foreign, walDB} {
		for _, suffix := range []string{"-wal", "-shm", "-journal"} {
			if _, err := os.Stat(p + suffix); err == nil {
				t.Errorf("%s appeared beside a foreign database", filepath.Base(p+suffix))
			}
		}
	}
	// A zero-length file is an empty database: it becomes ours.
	empty := writeFile(t, dir, "empty.db", "")
	st, err := OpenSQLite(context.Background(), empty, hdr("x"))
	if err != nil {
		t.Fatalf("empty file: %v", err)
	}
	st.Close(context.Background())
}

// TestOneLiveSessionPerStore: STORE-10. A second Resume of one store is
// persist.locked; a store refuses an event that is not its next
// (persist.conflict), so two sessions cannot write seq 0 twice.
func TestOneLiveSessionPerStore(t *testing.T) {
	requireSQLite(t)
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), b.file)
			st := b.open(t, p)
			s, _, err := Resume(context.Background(), st, clock())
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := Resume(context.Background(), st, clock()); !isErr(err, event.CodePersistLocked, -1) {
				t.Fatalf("second Resume: %v, want persist.locked", err)
			}
			if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: raw(`{"todos":[]}`)}); err != nil {
				t.Fatal(err)
			}
			// A write that is not the next seq never reaches the file.
			stale := s.Events()[0]
			if err := st.Append(context.Background(), stale); !isErr(err, event.CodePersistConflict, 0) {
				t.Fatalf("a second write of seq 0: %v, want persist.conflict", err)
			}
			ahead := stale
			ahead.Seq = 5
			if err := st.Append(context.Background(), ahead); !isErr(err, event.CodePersistConflict, 5) {
				t.Fatalf("a write of seq 5 after 1 event: %v, want persist.conflict", err)
			}
			if err := s.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			st = b.open(t, p)
			defer st.Close(context.Background())
			if len(st.Events()) != 1 {
				t.Fatalf("the store holds %d events, want 1", len(st.Events()))
			}
			if _, _, err := Resume(context.Background(), st, clock()); err != nil {
				t.Fatalf("resume after Close: %v", err)
			}
		})
	}
	// A fork into a store that already has a live session.
	dir := t.TempDir()
	src, _ := OpenJSONL(context.Background(), filepath.Join(dir, "src.jsonl"), hdr("src"))
	s, _, _ := Resume(context.Background(), src, clock())
	s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: raw(turnOpen)})
	end, _ := s.Append(context.Background(), event.Raw{Type: event.TypeTurnEnd, Data: raw(`{"turn":1,"reason":{"kind":"completed"}}`)})
	dst, _ := OpenJSONL(context.Background(), filepath.Join(dir, "dst.jsonl"), hdr("dst"))
	if _, _, err := Resume(context.Background(), dst, clock()); err != nil {
		t.Fatal(err)
	}
	if _, err := Fork(context.Background(), s, end.Seq, dst); !isErr(err, event.CodePersistLocked, -1) {
		t.Fatalf("fork into a store with a live session: %v", err)
	}
	dst.Close(context.Background())
	src.Close(context.Background())
}

// TestVersionsPinned: STORE-1 and STORE-5 accept exactly one version: for
// JSONL the number 0 as JSON.parse reads it, however it is written, and
// nothing that is not a number.
func TestVersionsPinned(t *testing.T) {
	requireSQLite(t)
	dir := t.TempDir()
	for _, v := range []string{"-1", "1", "5", "0.5", "1e0", "1e-300", "-0.1"} {
		p := writeFile(t, dir, "v"+v+".jsonl", `{"type":"session","version":`+v+`,"id":"x","createdAt":1}`+"\n")
		if _, err := OpenJSONL(context.Background(), p, hdr("x")); !errors.Is(err, event.CodePersistFormatVersion) {
			t.Errorf("JSONL version %s: %v, want persist.format_version", v, err)
		}
	}
	for _, v := range []string{`"0"`, "null", "true", "[0]", `{"v":0}`} {
		p := writeFile(t, dir, "n"+strconv.Itoa(len(v))+v[:1]+".jsonl", `{"type":"session","version":`+v+`,"id":"x","createdAt":1}`+"\n")
		if _, err := OpenJSONL(context.Background(), p, hdr("x")); !isErr(err, event.CodePersistNotASession, -1) {
			t.Errorf("JSONL version %s: %v, want persist.not_a_session", v, err)
		}
	}
	for i, v := range []string{"0.0", "0e0", "-0", "0E+2", "-0.000"} {
		p := writeFile(t, dir, "z"+strconv.Itoa(i)+".jsonl", `{"id":"x","type":"session","version":`+v+`,"createdAt":1,"cwd":"/0.0"}`+"\n")
		st, err := OpenJSONL(context.Background(), p, hdr("x"))
		if err != nil {
			t.Errorf("JSONL version %s: %v, want it read as 0", v, err)
			continue
		}
		if h := st.Header(); h.Version != 0 || h.ID != "x" || h.Cwd != "/0.0" || h.CreatedAt != 1 {
			t.Errorf("JSONL version %s: header read as %+v", v, h)
		}
		st.Close(context.Background())
	}
	p := writeFile(t, dir, "v0.jsonl", headerLine1)
	st, err := OpenJSONL(context.Background(), p, hdr("x"))
	if err != nil {
		t.Fatalf("JSONL version 0: %v", err)
	}
	st.Close(context.Background())
	for _, v := range []int{3, 5, -1, 1 << 20} {
		p := filepath.Join(dir, "u"+strconv.Itoa(v)+".db")
		st, err := OpenSQLite(context.Background(), p, hdr("x"))
		if err != nil {
			t.Fatal(err)
		}
		st.db.Exec(`PRAGMA user_version=` + strconv.Itoa(v))
		st.Close(context.Background())
		before, _ := os.ReadFile(p)
		_, err = OpenSQLite(context.Background(), p, hdr("x"))
		if !isErr(err, event.CodePersistSchemaVersion, -1) || !strings.Contains(err.Error(), strconv.Itoa(v)) {
			t.Errorf("SQLite user_version %d: %v, want persist.schema_version naming it", v, err)
		}
		if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
			t.Errorf("SQLite user_version %d: the file changed", v)
		}
	}
	p = filepath.Join(dir, "u4.db")
	st2, err := OpenSQLite(context.Background(), p, hdr("x"))
	if err != nil {
		t.Fatal(err)
	}
	var v int
	st2.db.QueryRow(`PRAGMA user_version`).Scan(&v)
	st2.Close(context.Background())
	if v != SchemaVersion || SchemaVersion != 4 {
		t.Fatalf("a new database has user_version %d", v)
	}
	if st2, err = OpenSQLite(context.Background(), p, hdr("x")); err != nil {
		t.Fatalf("reopen version 4: %v", err)
	}
	st2.Close(context.Background())
}

// TestSyncPolicies: STORE-11. Under SyncOnTurnEnd a turn/end whose sync
// fails is not acknowledged (and other appends do not sync); a SQLite
// store runs with synchronous=FULL by default, on every connection.
func TestSyncPolicies(t *testing.T) {
	requireSQLite(t)
	p := filepath.Join(t.TempDir(), "s.jsonl")
	var ff *faultFile
	st, err := OpenJSONL(context.Background(), p, hdr("x"), WithSync(SyncOnTurnEnd), WithFile(func(f File) File { ff = &faultFile{File: f, mode: "sync"}; return ff }))
	if err != nil {
		t.Fatal(err)
	}
	s, _, _ := Resume(context.Background(), st, clock())
	ff.armed = true
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: raw(turnOpen)}); err != nil || ff.failures != 0 {
		t.Fatalf("a turn/start under SyncOnTurnEnd synced or failed: %v (%d syncs)", err, ff.failures)
	}
	_, err = s.Append(context.Background(), event.Raw{Type: event.TypeTurnEnd, Data: raw(`{"turn":1,"reason":{"kind":"completed"}}`)})
	if !errors.Is(err, event.CodePersistIO) || !errors.Is(err, syscall.EIO) || ff.failures != 1 {
		t.Fatalf("turn/end with a failing sync: %v, want persist.io", err)
	}
	if s.Len() != 1 {
		t.Fatalf("the unsynced turn/end entered the session")
	}
	ff.armed = false
	s.Close(context.Background())
	if _, events, _, _ := ReadJSONL(p); len(events) != 1 {
		t.Fatalf("the file holds %d events, want 1 (the turn/end was not acknowledged)", len(events))
	}

	for policy, want := range map[SyncPolicy]int{SyncEveryAppend: 2, SyncOnTurnEnd: 1, SyncMessages: 1, SyncNever: 0} {
		sq, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "s.db"), hdr("x"), WithSQLiteSync(policy))
		if err != nil {
			t.Fatal(err)
		}
		sq.db.SetMaxIdleConns(0) // every query opens a new connection
		for i := 0; i < 3; i++ {
			var got int
			if err := sq.db.QueryRow(`PRAGMA synchronous`).Scan(&got); err != nil || got != want {
				t.Errorf("%s: PRAGMA synchronous = %d (%v), want %d", policy, got, err, want)
			}
		}
		sq.Close(context.Background())
	}
	def, _ := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "d.db"), hdr("x"))
	defer def.Close(context.Background())
	var got int
	if def.db.QueryRow(`PRAGMA synchronous`).Scan(&got); got != 2 {
		t.Errorf("the default SQLite policy runs synchronous=%d, want FULL (2)", got)
	}
}

// TestIgnorableUnknownEvents: SURF-3 through a store. A JSONL log with an
// event of an unknown type marked ignorable in the middle and at the end
// loads, keeps both byte for byte, and resumes without reusing their
// seqs; the same log without the marker is event.unknown_type, nothing cut.
// The SQLite store keeps the marker (STORE-5, event_envelope).
func TestIgnorableUnknownEvents(t *testing.T) {
	requireSQLite(t)
	mid := `{"type":"x/audit","seq":1,"time":5,"data":{"who":"ann","n":1.50},"ignorable":true}`
	end := `{"type":"x/audit","seq":3,"time":6,"data":{"who":"bob"},"ignorable":true}`
	content := headerLine1 + todoLine(0) + mid + "\n" + todoLine(2) + end + "\n"
	p := writeFile(t, t.TempDir(), "s.jsonl", content)
	s, err := resumeJSONL(p)
	if err != nil {
		t.Fatal(err)
	}
	events := s.Events()
	for i, want := range []string{mid, end} {
		e := events[2*i+1]
		if b, _ := e.MarshalJSON(); string(b) != want {
			t.Errorf("event %d round-trips as %s", e.Seq, b)
		}
	}
	if s.Surface().Len() != 0 {
		t.Errorf("an ignorable event reached the surface")
	}
	next, err := s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: raw(`{"todos":[]}`)})
	if err != nil || next.Seq != 4 {
		t.Fatalf("append after the ignorable last event: %v %v", next, err)
	}
	// Copy the log into SQLite and back: the marker survives.
	db := filepath.Join(t.TempDir(), "s.db")
	sq, err := OpenSQLite(context.Background(), db, hdr("x"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range s.Events() {
		if err := sq.Append(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	s.Close(context.Background())
	sq.Close(context.Background())
	sq, err = OpenSQLite(context.Background(), db, hdr("x"))
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := Resume(context.Background(), sq, clock())
	if err != nil {
		t.Fatalf("resume from SQLite: %v", err)
	}
	if !sameJSON(back.Events(), s.Events()) {
		t.Errorf("the SQLite copy differs")
	}
	back.Close(context.Background())
	// Without the marker: unknown_type naming the line, the file unchanged.
	bad := writeFile(t, t.TempDir(), "s.jsonl", headerLine1+todoLine(0)+strings.Replace(mid, `,"ignorable":true`, "", 1)+"\n")
	before, _ := os.ReadFile(bad)
	if _, err := resumeJSONL(bad); !errors.Is(err, event.CodeUnknownType) || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("an unknown type without the marker: %v", err)
	}
	unchanged(t, bad, before)
}

// TestResumeAfterRejectedSeed: STORE-10 is about live sessions, and a
// Resume whose seed is rejected makes none. A program that resumes with
// the wrong options (here, without registering a type its log holds) gets
// the seed's error, and resuming the same store again with the right ones
// works: the store is not left marked live (not persist.locked).
func TestResumeAfterRejectedSeed(t *testing.T) {
	note := event.TypeSpec{Type: "app/note"}
	v, err := event.NewVocabulary(note)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			p := filepath.Join(t.TempDir(), b.file)
			st := b.open(t, p)
			s, _, err := Resume(ctx, st, session.WithVocabulary(v))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Append(ctx, event.Raw{Type: "app/note", Data: json.RawMessage(`{"text":"kept"}`)}); err != nil {
				t.Fatal(err)
			}
			s.Close(ctx)

			st = b.open(t, p)
			defer st.Close(ctx)
			if _, _, err := Resume(ctx, st); !errors.Is(err, event.CodeUnknownType) {
				t.Fatalf("resume without the type: %v, want event.unknown_type", err)
			}
			s, _, err = Resume(ctx, st, session.WithVocabulary(v))
			if err != nil {
				t.Fatalf("resume again after a rejected seed: %v (the store must not stay marked live)", err)
			}
			if n := s.Len(); n != 1 {
				t.Fatalf("%d events after the second resume, want 1", n)
			}
			if _, _, err := Resume(ctx, st, session.WithVocabulary(v)); !isErr(err, event.CodePersistLocked, -1) {
				t.Fatalf("a third resume while the second is live: %v, want persist.locked", err)
			}
		})
	}
}
