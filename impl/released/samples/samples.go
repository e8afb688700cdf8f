// Package samples writes sample session files in the released seed
// system's formats, per ../shared/seed-system-formats.md Part B: released
// JSONL with every packed chunk kind (plain, or zstd with a header frame
// and several batch frames) and SQLite databases of schemas 14, 15 and 17.
// Tests of the reader, of `conformance validate` and of the converter use
// them; they are also a reference for what each format looks like.
package samples

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/klauspost/compress/zstd"
	_ "github.com/mattn/go-sqlite3" // the database/sql driver "sqlite3"
)

// Header is the header line of the sample JSONL files.
const Header = `{"type":"session","version":0,"id":"s1","createdAt":1767225600000,"cwd":"/w","delegationDepth":0}`

// Batches are the records of the sample JSONL session, one slice per
// write batch: a turn with a prompt, streamed text and reasoning (packed
// rows), a tool call streamed as a plain first delta with its name and a
// packed tool-call row, the assistant message, the call and its result, a
// prune of the result (a result over 4096 bytes, which schema 17 stores
// compressed), an ignorable event of an unknown type, session/end-seed,
// and the turn's end. 20 events.
var Batches = [][]string{
	{
		`{"type":"turn/start","seq":0,"time":10,"data":{"turn":1}}`,
		`{"type":"user/message","seq":1,"time":10,"data":{"content":[{"type":"text","text":"read a.go"}],"source":{"kind":"user"},"role":"user","id":"u1"},"surfaceOp":"append"}`,
	},
	{
		`{"type":"text-chunks","seq0":2,"time0":11,"data":{"turn":1,"step":1,"index":0,"dt":[1,-1],"texts":["I ","will ","<read>"]}}`,
		`{"type":"reasoning-chunks","seq0":5,"time0":20,"data":{"turn":1,"step":1,"index":1,"dt":[0,0,5],"texts":["r1","r2","r3","r4"]}}`,
		`{"type":"assistant/chunk","seq":9,"time":30,"data":{"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":2,"id":"c1","name":"read","argumentsDelta":"{"}}}`,
		`{"type":"tool-call-chunks","seq0":10,"time0":31,"data":{"turn":1,"step":1,"index":2,"dt":[1,1],"id":"c1","args":["\"p\"",":1","}"]}}`,
		`{"type":"assistant/message","seq":13,"time":34,"data":{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"text","text":"I will <read>"},{"type":"tool-call","id":"c1","name":"read","arguments":{"p":1}}],"source":{"kind":"model","provider":"p","model":"m"}}},"sourceEventSeqs":[],"surfaceOp":"append"}`,
		`{"type":"tool/call","seq":14,"time":35,"data":{"turn":1,"step":1,"callId":"c1","name":"read","arguments":"{\"p\":1}"}}`,
		`{"type":"tool/result","seq":15,"time":36,"data":{"turn":1,"step":1,"message":{"id":"r1","role":"user","content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"package main` + strings.Repeat(" // a long file", 300) + `"}],"isError":false}],"source":{"kind":"tool","callId":"c1"}},"meta":{"ms":1}},"sourceEventSeqs":[14],"surfaceOp":"append"}`,
	},
	{
		`{"type":"tool/result","seq":16,"time":37,"data":{"turn":1,"step":1,"message":{"id":"r1","role":"user","content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"package main\n\n[... tool result middle pruned ...]\n\nfile"}],"isError":false}],"source":{"kind":"tool","callId":"c1"}},"meta":{"ms":1}},"surfaceOp":{"op":"replace","start":15,"end":15},"sourceEventSeqs":[15]}`,
		`{"type":"plugin/note","seq":17,"time":37,"data":{"note":"kept, skipped"},"ignorable":true}`,
		`{"type":"session/end-seed","seq":18,"time":37,"data":{}}`,
		`{"type":"turn/end","seq":19,"time":40,"data":{"turn":1,"reason":{"kind":"completed"}}}`,
	},
}

// Events is the number of events the sample session holds.
const Events = 20

// JSONL returns the sample session as a released JSONL file: plain, or a
// .jsonl.zstd of a header frame and one checksummed frame per batch.
func JSONL(compressed bool) []byte {
	if !compressed {
		var b strings.Builder
		b.WriteString(Header + "\n")
		for _, batch := range Batches {
			for _, l := range batch {
				b.WriteString(l + "\n")
			}
		}
		return []byte(b.String())
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true), zstd.WithEncoderConcurrency(1))
	if err != nil {
		panic(err) // options are fixed: unreachable
	}
	defer enc.Close()
	out := enc.EncodeAll([]byte(Header+"\n"), nil)
	for _, batch := range Batches {
		out = enc.EncodeAll([]byte(strings.Join(batch, "\n")+"\n"), out)
	}
	return out
}

// Schema is the DDL of a released session database of the given schema
// version (14, 15 or 17), with its application id and user_version.
func Schema(version int) string {
	data, sources, ignorable := "TEXT NOT NULL", "TEXT", ""
	switch version {
	case 15:
		ignorable = ", ignorable INTEGER"
	case 17:
		data, sources, ignorable = "ANY NOT NULL", "ANY", ", ignorable INTEGER CHECK (ignorable IS NULL OR ignorable IN (0, 1))"
	}
	return `CREATE TABLE persistence_state(singleton INTEGER PRIMARY KEY CHECK (singleton = 1), store_id TEXT NOT NULL) STRICT;
CREATE TABLE sessions(id TEXT PRIMARY KEY, version INTEGER NOT NULL, created_at INTEGER NOT NULL, cwd TEXT,
  parent_session TEXT, seed_length INTEGER, origin TEXT, delegation_depth INTEGER, agent_preset TEXT,
  incarnation TEXT NOT NULL, revision INTEGER NOT NULL) STRICT;
CREATE TABLE events(session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, seq INTEGER NOT NULL,
  type TEXT NOT NULL, time INTEGER NOT NULL, data ` + data + `, source_event_seqs ` + sources + `,
  surface_op TEXT` + ignorable + `, PRIMARY KEY (session_id, seq)) STRICT;
INSERT INTO persistence_state VALUES (1, 'store');
PRAGMA application_id = 1146308688;
PRAGMA user_version = ` + fmt.Sprint(version) + `;`
}

// Varints encodes seqs as schema 17 stores source_event_seqs: unsigned
// LEB128, the first seq, then zig-zag deltas (d >= 0: 2d; d < 0: 2|d|-1).
func Varints(seqs ...int64) []byte {
	out := []byte{}
	put := func(u uint64) {
		for u >= 0x80 {
			out = append(out, byte(u)|0x80)
			u >>= 7
		}
		out = append(out, byte(u))
	}
	for i, q := range seqs {
		if i == 0 {
			put(uint64(q))
			continue
		}
		if d := q - seqs[i-1]; d >= 0 {
			put(uint64(2 * d))
		} else {
			put(uint64(-2*d - 1))
		}
	}
	return out
}

// SQLite writes the sample session to a new released database at path,
// in WAL mode, and returns the open connection: while it is open, the
// events are in the write-ahead log only. Schema 14 stores every event as
// a row of JSON text (it has no ignorable column: the ignorable event is a
// todo/write there); 15 adds the ignorable column; 17 stores
// packed chunk rows (ignorable = 0), sources as varint blobs, and a data
// of 4096 bytes or more as a zstd blob. Each packed row of the JSONL
// sample is one row in 17 and its members in 14 and 15.
func SQLite(path string, version int) (*sql.DB, error) {
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	fail := func(err error) (*sql.DB, error) {
		db.Close()
		return nil, err
	}
	if _, err := db.Exec(Schema(version)); err != nil {
		return fail(err)
	}
	if _, err := db.Exec(`INSERT INTO sessions VALUES ('s1', 0, 1767225600000, '/w', NULL, NULL, NULL, 0, NULL, 'inc', 3)`); err != nil {
		return fail(err)
	}
	insert := `INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op) VALUES ('s1', ?, ?, ?, ?, ?, ?)`
	if version >= 15 {
		insert = `INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op, ignorable) VALUES ('s1', ?, ?, ?, ?, ?, ?, ?)`
	}
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	defer enc.Close()
	for _, batch := range Batches {
		for _, line := range batch {
			var r map[string]json.RawMessage
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				return fail(err)
			}
			var typ string
			json.Unmarshal(r["type"], &typ)
			rows := []map[string]json.RawMessage{r}
			var ignorable any
			if r["ignorable"] != nil {
				ignorable = int64(1)
				if version == 14 {
					r["type"], r["data"] = json.RawMessage(`"todo/write"`), json.RawMessage(`{"todos":[]}`)
				}
			}
			if strings.HasSuffix(typ, "-chunks") {
				if version == 17 {
					r["seq"], r["time"], ignorable = r["seq0"], r["time0"], int64(0)
				} else {
					rows = unpackRow(r)
				}
			}
			for _, row := range rows {
				var seq, t int64
				json.Unmarshal(row["seq"], &seq)
				json.Unmarshal(row["time"], &t)
				json.Unmarshal(row["type"], &typ)
				var data any = string(row["data"])
				if version == 17 && len(row["data"]) >= 4096 {
					data = enc.EncodeAll(row["data"], nil)
				}
				var sources, op any
				if row["sourceEventSeqs"] != nil {
					sources = string(row["sourceEventSeqs"])
					if version == 17 {
						var seqs []int64
						json.Unmarshal(row["sourceEventSeqs"], &seqs)
						sources = Varints(seqs...)
					}
				}
				if row["surfaceOp"] != nil {
					op = string(row["surfaceOp"])
				}
				args := []any{seq, typ, t, data, sources, op}
				if version >= 15 {
					args = append(args, ignorable)
				}
				if _, err := db.Exec(insert, args...); err != nil {
					return fail(fmt.Errorf("row %d: %w", seq, err))
				}
			}
		}
	}
	return db, nil
}

// unpackRow expands a packed row of the sample into its member events
// (the sample's rows are well formed).
func unpackRow(r map[string]json.RawMessage) []map[string]json.RawMessage {
	var typ string
	json.Unmarshal(r["type"], &typ)
	var seq0, t int64
	json.Unmarshal(r["seq0"], &seq0)
	json.Unmarshal(r["time0"], &t)
	var d struct {
		Turn, Step, Index int64
		DT                []int64
		Texts, Args       []string
		ID                string
	}
	json.Unmarshal(r["data"], &d)
	items, kind := d.Texts, map[string]string{"text-chunks": "text-delta", "reasoning-chunks": "reasoning-delta"}[typ]
	if typ == "tool-call-chunks" {
		items = d.Args
	}
	var out []map[string]json.RawMessage
	for k, it := range items {
		if k > 0 {
			t += d.DT[k-1]
		}
		text := jsonJS(it)
		chunk := fmt.Sprintf(`{"type":%q,"index":%d,"text":%s}`, kind, d.Index, text)
		if typ == "tool-call-chunks" {
			id := jsonJS(d.ID)
			chunk = fmt.Sprintf(`{"type":"tool-call-delta","index":%d,"id":%s,"argumentsDelta":%s}`, d.Index, id, text)
		}
		out = append(out, map[string]json.RawMessage{
			"type": json.RawMessage(`"assistant/chunk"`),
			"seq":  json.RawMessage(fmt.Sprint(seq0 + int64(k))),
			"time": json.RawMessage(fmt.Sprint(t)),
			"data": json.RawMessage(fmt.Sprintf(`{"turn":%d,"step":%d,"chunk":%s}`, d.Turn, d.Step, chunk)),
		})
	}
	return out
}

// jsonJS is a string as JSON.stringify writes it (the seed system's
// writer): '<', '>' and '&' as they are, where encoding/json escapes them.
func jsonJS(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
