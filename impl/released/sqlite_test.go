package released

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/released/samples"
)

// writeDB writes a released database holding session s1: turn 1 with a
// prompt, an assistant message with a tool call, the call, its result
// (sources [3]) and a prune of it, then a run of text chunks (one packed
// row in schema 17, plain rows before it) and the turn's end. It returns
// the path and an open connection (the caller closes it, or leaves it
// open to keep the write-ahead log).
func writeDB(t *testing.T, version int) (string, *sql.DB) {
	t.Helper()
	return writeDBWith(t, version, func(b []byte) []byte {
		enc, _ := zstd.NewWriter(nil)
		defer enc.Close()
		return enc.EncodeAll(b, nil)
	})
}

// writeDBWith is writeDB with schema 17's compressed data written by
// compress.
func writeDBWith(t *testing.T, version int, compress func([]byte) []byte) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sessions.db")
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(samples.Schema(version)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO sessions VALUES ('s1', 0, 1767225600000, '/w', NULL, NULL, NULL, 0, NULL, 'inc', 3)`); err != nil {
		t.Fatal(err)
	}
	sourcesOf := func(seqs ...int64) any {
		if version == 17 {
			return samples.Varints(seqs...)
		}
		b, _ := json.Marshal(append([]int64{}, seqs...))
		return string(b)
	}
	big := `{"turn":1,"step":1,"message":{"id":"r1","role":"user","content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"` + strings.Repeat("long ", 1000) + `"}],"isError":false}],"source":{"kind":"tool","callId":"c1"}}}`
	var bigData any = big
	if version == 17 { // at least 4096 bytes: stored compressed
		bigData = compress([]byte(big))
	}
	rows := []struct {
		seq     int64
		typ     string
		data    any
		sources any
		op      any
		ign     any
	}{
		{0, "turn/start", `{"turn":1}`, nil, nil, nil},
		{1, "user/message", `{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"},"role":"user","id":"u1"}`, nil, `"append"`, nil},
		{2, "assistant/message", `{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"tool-call","id":"c1","name":"read","arguments":{}}],"source":{"kind":"model","provider":"p","model":"m"}}}`, sourcesOf(), `"append"`, nil},
		{3, "tool/call", `{"turn":1,"step":1,"callId":"c1","name":"read","arguments":"{}"}`, nil, nil, nil},
		{4, "tool/result", bigData, sourcesOf(3), `"append"`, nil},
		{5, "tool/result", `{"turn":1,"step":1,"message":{"id":"r1","role":"user","content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"short"}],"isError":false}],"source":{"kind":"tool","callId":"c1"}}}`, sourcesOf(4), `{"op":"replace","start":4,"end":4}`, nil},
		{6, "session/title", `{"title":"t"}`, nil, nil, nil},
	}
	if version >= 15 {
		rows = append(rows, struct {
			seq                    int64
			typ                    string
			data, sources, op, ign any
		}{7, "plugin/note", `{"n":1}`, nil, nil, int64(1)})
	} else {
		rows = append(rows, struct {
			seq                    int64
			typ                    string
			data, sources, op, ign any
		}{7, "todo/write", `{"todos":[]}`, nil, nil, nil})
	}
	if version == 17 {
		rows = append(rows, struct {
			seq                    int64
			typ                    string
			data, sources, op, ign any
		}{8, "text-chunks", `{"turn":1,"step":2,"index":0,"dt":[1,2],"texts":["a","b","c"]}`, nil, nil, int64(0)})
	} else {
		for k, text := range []string{"a", "b", "c"} {
			rows = append(rows, struct {
				seq                    int64
				typ                    string
				data, sources, op, ign any
			}{int64(8 + k), "assistant/chunk", `{"turn":1,"step":2,"chunk":{"type":"text-delta","index":0,"text":"` + text + `"}}`, nil, nil, nil})
		}
	}
	rows = append(rows, struct {
		seq                    int64
		typ                    string
		data, sources, op, ign any
	}{11, "turn/end", `{"turn":1,"reason":{"kind":"completed"}}`, nil, nil, nil})
	insert := `INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op) VALUES ('s1', ?, ?, ?, ?, ?, ?)`
	if version >= 15 {
		insert = `INSERT INTO events VALUES ('s1', ?, ?, ?, ?, ?, ?, ?)`
	}
	for _, r := range rows {
		args := []any{r.seq, r.typ, 100 + r.seq, r.data, r.sources, r.op}
		if version >= 15 {
			args = append(args, r.ign)
		}
		if _, err := db.Exec(insert, args...); err != nil {
			t.Fatalf("row %d: %v", r.seq, err)
		}
	}
	return path, db
}

func digest(t *testing.T, dir string) [32]byte {
	t.Helper()
	h := sha256.New()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), "-shm") {
			continue // SQLite's shared-memory index, which every reader updates
		}
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		h.Write([]byte(e.Name()))
		h.Write(b)
	}
	return [32]byte(h.Sum(nil))
}

// TestReadsEverySchema (REL-1): schemas 14, 15 and 17 load and pass the
// released rules with the same surface and messages; schema 17's
// compressed data, varint sources and packed chunk row are decoded; the
// committed events still only in the write-ahead log are read; the
// database's bytes are left as they were.
func TestReadsEverySchema(t *testing.T) {
	var first []json.RawMessage
	for _, version := range SchemaVersions {
		path, db := writeDB(t, version) // left open: its events are in the WAL
		before := digest(t, filepath.Dir(path))
		l, err := ReadSQLite(context.Background(), path, "")
		if err != nil {
			t.Fatalf("schema %d: %v", version, err)
		}
		if len(l.Events) != 12 || l.Header.ID != "s1" || *l.Header.Cwd != "/w" {
			t.Fatalf("schema %d: %d events, header %+v", version, len(l.Events), l.Header)
		}
		s, err := Check(l)
		if err != nil {
			t.Fatalf("schema %d: %v", version, err)
		}
		if len(s.Surface) != 3 || s.Surface[2] != 5 || len(s.Messages) != 3 {
			t.Fatalf("schema %d: surface %v, %d messages", version, s.Surface, len(s.Messages))
		}
		if version >= 15 && !s.Events[7].Ignorable {
			t.Fatalf("schema %d: the ignorable column was not read", version)
		}
		if !strings.Contains(string(s.Events[10].Data), `"text":"c"`) || s.Events[10].Time != 111 && version == 17 {
			t.Fatalf("schema %d: chunk %s at %d", version, s.Events[10].Data, s.Events[10].Time)
		}
		if first == nil {
			first = s.Messages
		} else if !equalMessages(first, s.Messages) {
			t.Fatalf("schema %d derives other messages", version)
		}
		if after := digest(t, filepath.Dir(path)); after != before {
			t.Fatalf("schema %d: reading changed the database's files", version)
		}
		db.Close()
	}
}

func equalMessages(a, b []json.RawMessage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// TestRefusesOtherDatabases: a schema this reader does not read, another
// application's database, and a session that is not there.
func TestRefusesOtherDatabases(t *testing.T) {
	path, db := writeDB(t, 14)
	noSeq := func(err error) bool { // a refusal of the database names no event
		var ee *event.Error
		return errors.As(err, &ee) && ee.Seq == -1
	}
	if _, err := ReadSQLite(context.Background(), path, "s2"); !errors.Is(err, event.CodePersistWrongSession) || !noSeq(err) {
		t.Fatalf("missing session: %v", err)
	}
	if _, err := db.Exec(`PRAGMA user_version = 16`); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSQLite(context.Background(), path, "s1"); !errors.Is(err, event.CodePersistSchemaVersion) || !noSeq(err) {
		t.Fatalf("schema 16: %v", err)
	}
	if _, err := db.Exec(`PRAGMA application_id = 7`); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSQLite(context.Background(), path, "s1"); !errors.Is(err, event.CodePersistNotASession) || !noSeq(err) {
		t.Fatalf("another application: %v", err)
	}
	db.Close()
}

// TestVarints: the schema 17 encoding of sourceEventSeqs, with a
// negative delta and a multi-byte varint.
func TestVarints(t *testing.T) {
	for _, seqs := range [][]int64{{}, {3}, {300, 2, 5000}, {7, 6, 5}} {
		got, err := rowSources(samples.Varints(seqs...))
		want, _ := json.Marshal(append([]int64{}, seqs...))
		if err != nil || string(got) != string(want) {
			t.Errorf("%v: %s %v", seqs, got, err)
		}
	}
	if _, err := rowSources([]byte{0x80}); err == nil {
		t.Error("a varint cut short was read")
	}
}

// TestEncodeReadsBack (REL-7): what Encode writes, plain and zstd (one
// frame per batch), Read reads back with the same header and events, and
// Path names the file where the released store looks.
func TestEncodeReadsBack(t *testing.T) {
	cwd := "/home/me/my project"
	h := Header{ID: "s/1", CreatedAt: 5, Cwd: &cwd, DelegationDepth: 0}
	l, err := Check(logOf(rTurn, rUser, rAsst, rCall, rResult, rPrune))
	if err != nil {
		t.Fatal(err)
	}
	batches := [][]event.Event{l.Events[:2], l.Events[2:]}
	for _, compressed := range []bool{false, true} {
		b, err := Encode(h, batches, compressed)
		if err != nil {
			t.Fatal(err)
		}
		if IsZstd(b) != compressed {
			t.Fatalf("compressed %v: magic %v", compressed, IsZstd(b))
		}
		back, err := Read(b)
		if err != nil {
			t.Fatal(err)
		}
		if compressed && back.Frames != 3 {
			t.Fatalf("%d frames, want a header frame and one per batch", back.Frames)
		}
		if back.Header.ID != "s/1" || *back.Header.Cwd != cwd || len(back.Events) != 6 {
			t.Fatalf("%+v", back)
		}
		s, err := Check(back)
		if err != nil || !equalMessages(s.Messages, l.Messages) {
			t.Fatalf("%v", err)
		}
	}
	plain, _ := Encode(h, batches, false)
	if !strings.HasPrefix(string(plain), `{"type":"session","version":0,"id":"s/1","createdAt":5,"cwd":"/home/me/my project","delegationDepth":0}`+"\n") {
		t.Fatalf("header line %q", plain[:120])
	}
	p, err := Path("/root", h, true)
	if err != nil || p != "/root/--home-me-my~0020project--/s~002F1/session.jsonl.zstd" {
		t.Fatalf("path %q %v", p, err)
	}
	if EncodeSegment("..") != "~002E~002E" || EncodeSegment("a~b") != "a~007Eb" || EncodeSegment("é") != "~00E9" || projectKey("C:\\\\x") != "--C-x--" || projectKey("//") != "--root--" {
		t.Fatal("segment encoding")
	}
	if _, err := Encode(Header{}, nil, false); !errors.Is(err, event.CodePersistHeaderInvalid) {
		t.Fatalf("empty id: %v", err)
	}
}
