package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/released"
	"github.com/surfacelog/surface/impl/released/samples"
)

var releasedEvents = []event.Event{
	{Type: "turn/start", Seq: 0, Time: 1, Data: []byte(`{"turn":1}`)},
	{Type: "user/message", Seq: 1, Time: 2, Data: []byte(`{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"},"role":"user","id":"u1"}`), Op: event.Append()},
	{Type: "turn/end", Seq: 2, Time: 3, Data: []byte(`{"turn":1,"reason":{"kind":"completed"}}`)},
}

// TestValidateReleased (REL-1): validate tells a released file from one
// of this library by its content (the zstd magic, a header with
// delegationDepth, a database's application id) and checks it by the
// released rules, with the same exit codes: a torn last frame is reported
// and accepted, a bad checksum or a broken rule is INVALID (1).
func TestValidateReleased(t *testing.T) {
	dir := t.TempDir()
	h := released.Header{ID: "r1", CreatedAt: 1}
	files := map[string][]byte{}
	for _, z := range []bool{false, true} {
		b, err := released.Encode(h, [][]event.Event{releasedEvents[:2], releasedEvents[2:]}, z)
		if err != nil {
			t.Fatal(err)
		}
		files[map[bool]string{false: "plain.jsonl", true: "session.jsonl.zstd"}[z]] = b
	}
	z := files["session.jsonl.zstd"]
	files["torn.jsonl.zstd"] = z[:len(z)-3]
	bad := append([]byte(nil), z...)
	bad[len(bad)-1] ^= 0xff
	files["badsum.jsonl.zstd"] = bad
	files["rule.jsonl"] = []byte(strings.Replace(string(files["plain.jsonl"]), `"role":"user","id":"u1"`, `"role":"user"`, 1))
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		code int
		says string
	}{
		{"plain.jsonl", 0, "OK released format, 3 events, 1 surface nodes, 1 messages"},
		{"session.jsonl.zstd", 0, "OK released format, 3 events"},
		{"torn.jsonl.zstd", 0, "torn last zstd frame"},
		{"badsum.jsonl.zstd", 1, "persist.corrupt"},
		{"rule.jsonl", 1, "released.message_invalid"},
	} {
		code, out := call("validate", "--progress", "never", filepath.Join(dir, c.name))
		if code != c.code || !strings.Contains(out, c.says) {
			t.Errorf("%s: exit %d\n%s", c.name, code, out)
		}
	}
	// A released database of schema 14 with one session.
	db := filepath.Join(dir, "released.db")
	conn, err := sql.Open("sqlite3", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(`CREATE TABLE persistence_state(singleton INTEGER PRIMARY KEY CHECK (singleton = 1), store_id TEXT NOT NULL) STRICT;
CREATE TABLE sessions(id TEXT PRIMARY KEY, version INTEGER NOT NULL, created_at INTEGER NOT NULL, cwd TEXT, parent_session TEXT, seed_length INTEGER, origin TEXT, delegation_depth INTEGER, agent_preset TEXT, incarnation TEXT NOT NULL, revision INTEGER NOT NULL) STRICT;
CREATE TABLE events(session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, seq INTEGER NOT NULL, type TEXT NOT NULL, time INTEGER NOT NULL, data TEXT NOT NULL, source_event_seqs TEXT, surface_op TEXT, PRIMARY KEY (session_id, seq)) STRICT;
INSERT INTO sessions VALUES ('r1', 0, 1, NULL, NULL, NULL, NULL, 0, NULL, 'i', 1);
INSERT INTO events VALUES ('r1', 0, 'turn/start', 1, '{"turn":1}', NULL, NULL);
INSERT INTO events VALUES ('r1', 1, 'user/message', 2, '{"content":[],"source":{"kind":"user"},"role":"user","id":"u1"}', NULL, '"append"');
PRAGMA application_id = 1146308688; PRAGMA user_version = 14;`); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if code, out := call("validate", "--progress", "never", db); code != 0 || !strings.Contains(out, `session "r1": OK released format, 2 events, 1 surface nodes`) {
		t.Errorf("released database: exit %d\n%s", code, out)
	}
	if code, out := call("validate", "--progress", "never", "--session", "r2", db); code != 2 || !strings.Contains(out, "no session") {
		t.Errorf("released database, unknown session: exit %d\n%s", code, out)
	}
}

// TestValidateSamples (REL-1): every sample file written per the facts
// (plain JSONL, .jsonl.zstd, SQLite 14, 15, 17) validates, and its bytes
// (the database and its write-ahead log) are left as they were; a sample
// with a bad checksum in its second frame, or an unknown packed kind,
// does not, and is left as it was too.
func TestValidateSamples(t *testing.T) {
	dir := t.TempDir()
	paths := []string{filepath.Join(dir, "session.jsonl"), filepath.Join(dir, "session.jsonl.zstd")}
	os.WriteFile(paths[0], samples.JSONL(false), 0o644)
	os.WriteFile(paths[1], samples.JSONL(true), 0o644)
	for _, v := range released.SchemaVersions {
		p := filepath.Join(dir, fmt.Sprintf("s%d.db", v))
		db, err := samples.SQLite(p, v)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close() // open: its events stay in the write-ahead log
		paths = append(paths, p)
	}
	before := walSnapshot(t, dir)
	for _, p := range paths {
		code, out := call("validate", "--progress", "never", p)
		if code != 0 || !strings.Contains(out, fmt.Sprintf("OK released format, %d events", samples.Events)) {
			t.Errorf("%s: exit %d\n%s", filepath.Base(p), code, out)
		}
	}
	if after := walSnapshot(t, dir); after != before {
		t.Fatal("validate changed a sample")
	}
	z := samples.JSONL(true)
	bad := filepath.Join(dir, "bad.jsonl.zstd")
	frame2 := bytes.Index(z[4:], []byte{0x28, 0xb5, 0x2f, 0xfd}) + 4 // the second frame's start
	frame3 := bytes.Index(z[frame2+4:], []byte{0x28, 0xb5, 0x2f, 0xfd}) + frame2 + 4
	corrupt := append([]byte(nil), z...)
	corrupt[frame3-1] ^= 0xff // the checksum of frame 2
	os.WriteFile(bad, corrupt, 0o644)
	unknown := filepath.Join(dir, "unknown.jsonl")
	os.WriteFile(unknown, []byte(strings.Replace(string(samples.JSONL(false)), `"type":"reasoning-chunks"`, `"type":"image-chunks"`, 1)), 0o644)
	for _, c := range []struct{ path, says string }{{bad, "persist.corrupt"}, {unknown, "event.invalid_envelope"}} {
		b, _ := os.ReadFile(c.path)
		code, out := call("validate", "--progress", "never", c.path)
		if code != 1 || !strings.Contains(out, c.says) {
			t.Errorf("%s: exit %d\n%s", filepath.Base(c.path), code, out)
		}
		if after, _ := os.ReadFile(c.path); !bytes.Equal(b, after) {
			t.Errorf("%s changed", c.path)
		}
	}
}

// walSnapshot is snapshot less SQLite's shared-memory index (which every
// reader of a WAL database updates).
func walSnapshot(t *testing.T, dir string) string {
	var b strings.Builder
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), "-shm") {
			continue
		}
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		fmt.Fprintf(&b, "%s %x\n", e.Name(), sha256.Sum256(data))
	}
	return b.String()
}

// TestValidateStrict (STRICT-8): --strict applies the strict rules to a
// log of this library (JSONL, SQLite) and to a released one, with the same
// exit codes; look-alike logs side by side, written by hand (not by the
// library), pass and fail: a turn ended with its call answered, and one
// ended with it pending; a released log with one turn/end, and one with a
// second. Without --strict every one of them is valid.
func TestValidateStrict(t *testing.T) {
	dir := t.TempDir()
	head := `{"type":"session","version":0,"id":"s","createdAt":1}`
	lines := []string{
		`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"trigger":{"kind":"message"}}}`,
		`{"type":"user/message","seq":1,"time":1,"data":{"content":[{"type":"text","text":"q"}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
		`{"type":"assistant/message","seq":2,"time":1,"data":{"turn":1,"step":1,"content":[{"type":"tool-call","id":"c1","name":"read","arguments":{}}]},"surfaceOp":"append"}`,
	}
	answered := append(append([]string{head}, lines...),
		`{"type":"tool/result","seq":3,"time":1,"data":{"turn":1,"step":1,"callId":"c1","content":[],"isError":false},"surfaceOp":"append"}`,
		`{"type":"turn/end","seq":4,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}`)
	pending := append(append([]string{head}, lines...),
		`{"type":"turn/end","seq":3,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}`)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	h := released.Header{ID: "r1", CreatedAt: 1}
	once, err := released.Encode(h, [][]event.Event{releasedEvents}, false)
	if err != nil {
		t.Fatal(err)
	}
	again := append(slices.Clone(releasedEvents), event.Event{Type: "turn/end", Seq: 3, Time: 4, Data: []byte(`{"turn":1,"reason":{"kind":"completed"}}`)})
	twice, err := released.Encode(h, [][]event.Event{again}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		data   []byte
		strict int
		says   string
	}{
		{"answered.jsonl", []byte(strings.Join(answered, "\n") + "\n"), 0, "OK 5 events"},
		{"pending.jsonl", []byte(strings.Join(pending, "\n") + "\n"), 1, "strict.calls_pending"},
		{"released-once.jsonl", once, 0, "OK released format"},
		{"released-twice.jsonl", twice, 1, "INVALID strict: strict.no_turn"},
	} {
		p := write(c.name, c.data)
		before, _ := os.ReadFile(p)
		if code, out := call("validate", "--progress", "never", p); code != 0 {
			t.Errorf("%s without --strict: exit %d\n%s", c.name, code, out)
		}
		code, out := call("validate", "--progress", "never", "--strict", p)
		if code != c.strict || !strings.Contains(out, c.says) {
			t.Errorf("%s --strict: exit %d, want %d with %q\n%s", c.name, code, c.strict, c.says, out)
		}
		if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
			t.Errorf("%s: validate changed the file", c.name)
		}
	}
	// The look-alike pair in a SQLite store, written by a loose session.
	db := filepath.Join(dir, "s.db")
	for i, l := range [][]string{answered, pending} {
		id := fmt.Sprintf("s%d", i)
		st, err := persist.OpenSQLite(context.Background(), db, persist.Header{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		var events []event.Event
		for _, line := range l[1:] {
			var e event.Event
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatal(err)
			}
			events = append(events, e)
		}
		if err := st.Append(context.Background(), events...); err != nil {
			t.Fatal(err)
		}
		st.Close(context.Background())
	}
	code, out := call("validate", "--progress", "never", "--strict", db)
	if code != 1 || !strings.Contains(out, `session "s0": OK`) || !strings.Contains(out, `session "s1": INVALID`) || !strings.Contains(out, "strict.calls_pending") {
		t.Errorf("SQLite --strict: exit %d\n%s", code, out)
	}
}
