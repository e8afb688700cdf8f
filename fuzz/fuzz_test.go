package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surfacelog/surface/conformance"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/internal/ops"
	"github.com/surfacelog/surface/model"
)

func numbers(data []byte) []uint32 {
	out := make([]uint32, len(data))
	for i, b := range data {
		out[i] = uint32(b)
	}
	return out
}

// FuzzDifferential decodes a program of Append, Replace, Seed, Fork and
// Provenance steps from the bytes (one choice per byte, see ops.Program)
// and runs it on the implementation and the model in lockstep.
func FuzzDifferential(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19})
	f.Add(bytes.Repeat([]byte{12, 1, 0, 3, 200, 7, 1}, 30))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, steps, diff := ops.RunProgram(numbers(data), 60); diff != "" {
			for i, s := range steps {
				t.Logf("%d. %s", i+1, s)
			}
			t.Fatal(diff)
		}
	})
}

// FuzzData checks event data text with the implementation's JSON scanner
// and with the model's encoding/json checks: they must agree on
// acceptance, on the code, and on the compact form (SURF-4, SURF-5).
func FuzzData(f *testing.F) {
	for _, s := range []string{`{"todos":[]}`, `{"todos":[1,-0]}`, `{"a":1,"a":2}`, `{"todos":[9007199254740993]}`, "{\"todos\":[\"\xff\"]}", `{ "todos" : [ 1.50e3 , "\u00e9\n" ] }`, `[`, `{"todos":[{"x":{"y":[]}}]}`,
		// Long strings: the scanner reads plain bytes eight at a time, so
		// a quote, a backslash, a control or multi-byte character at each
		// place of a word, and a string ending at the end of the text.
		"{\"todos\":[\"abcdefgh\\\"ijklmnopq\\\\rstuvwx\u00e9yz0123456789\",\"0123456\x01\",\"\xe6\x97\xa5\xe6\x9c\xac long enough text\"]}",
		`{"todos":["abcdefghijklmnopqrstuvwxyz`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e := event.Event{Type: event.TypeTodoWrite, Data: data}
		ierr := event.Check(&e, 0)
		st, merr := model.Derive([]event.Event{{Type: event.TypeTodoWrite, Data: data}})
		if event.CodeOf(ierr) != event.CodeOf(merr) {
			t.Fatalf("%q: impl %v, model %v", data, ierr, merr)
		}
		if ierr == nil && !bytes.Equal(e.Data, st.Log[0].Data) {
			t.Fatalf("%q: compact forms differ: %q vs %q", data, e.Data, st.Log[0].Data)
		}
	})
}

// FuzzSeed seeds both sides with arbitrary lines (wire-form events, most
// of them broken): same code, same state.
func FuzzSeed(f *testing.F) {
	f.Add([]byte(`{"type":"user/message","seq":0,"time":1,"data":{"content":[],"source":{"kind":"u"}},"surfaceOp":"append"}`))
	f.Add([]byte("{\"type\":\"turn/start\",\"seq\":0,\"time\":1,\"data\":{\"turn\":1,\"trigger\":{\"kind\":\"m\"}}}\n{\"type\":\"user/message\",\"seq\":1,\"time\":1,\"data\":{\"content\":[],\"source\":{\"kind\":\"u\"}},\"surfaceOp\":{\"op\":\"replace\",\"start\":0,\"end\":0},\"sourceEventSeqs\":[0]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var lines []json.RawMessage
		for _, l := range bytes.Split(data, []byte{'\n'}) {
			lines = append(lines, json.RawMessage(l))
		}
		is, ierr := session.SeedJSON(lines)
		ms, merr := (&ops.Model{Clock: func() int64 { return 0 }}).SeedJSON(lines)
		if event.CodeOf(ierr) != event.CodeOf(merr) {
			t.Fatalf("impl %v, model %v", ierr, merr)
		}
		if ierr != nil {
			if event.CodeOf(ierr) == "" {
				t.Fatalf("an untyped error: %v", ierr)
			}
			return
		}
		got := ops.StateOf(is)
		if want := ms.State(); !ops.EqualState(want, got) {
			t.Fatalf("state differs:\n%s", ops.Diff(want, got))
		}
		// A valid log round-trips through its wire form.
		for _, e := range is.Events() {
			b, err := e.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			d, err := event.Decode(b)
			if err != nil || !ops.EqualEvent(&d, &e) {
				t.Fatalf("wire form does not round-trip: %s", b)
			}
		}
	})
}

// FuzzJSONL opens a JSONL session file holding arbitrary bytes after a
// valid header: it must load or fail with a code, never panic, and what
// OpenJSONL loads must equal what ReadJSONL reads. A loadable log resumes
// (or is rejected with a rule's code) and then takes an append.
func FuzzJSONL(f *testing.F) {
	f.Add([]byte(`{"type":"todo/write","seq":0,"time":1,"data":{"todos":[]}}` + "\n"))
	f.Add([]byte(`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"trigger":{"kind":"m"}}}` + "\n{\"type\":\"tur"))
	f.Add([]byte("garbage\n" + `{"type":"todo/write","seq":0,"time":1,"data":{"todos":[]}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "f.jsonl")
		header := `{"type":"session","version":0,"id":"f","createdAt":1}` + "\n"
		os.WriteFile(path, append([]byte(header), data...), 0o644)
		_, readEvents, readTorn, rerr := persist.ReadJSONL(path)
		st, err := persist.OpenJSONL(context.Background(), path, persist.Header{ID: "f"}, persist.WithSync(persist.SyncNever))
		if err != nil {
			if event.CodeOf(err) == "" || event.CodeOf(rerr) != event.CodeOf(err) {
				t.Fatalf("open: %v; read: %v", err, rerr)
			}
			return
		}
		defer st.Close(context.Background())
		if rerr != nil || len(readEvents) != len(st.Events()) || readTorn != st.Report().TornBytes {
			t.Fatalf("ReadJSONL and OpenJSONL disagree: %v", rerr)
		}
		s, _, err := persist.Resume(context.Background(), st)
		if err != nil {
			if event.CodeOf(err) == "" {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: json.RawMessage(`{"todos":[]}`)}); err != nil {
			t.Fatalf("append after resume: %v", err)
		}
	})
}

// FuzzSQLite opens a database file holding arbitrary bytes: a typed error
// or a store, never a panic.
func FuzzSQLite(f *testing.F) {
	f.Add([]byte("SQLite format 3\x00"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "f.db")
		os.WriteFile(path, data, 0o644)
		st, err := persist.OpenSQLite(context.Background(), path, persist.Header{ID: "f"}, persist.WithSQLiteSync(persist.SyncNever))
		if err != nil {
			if event.CodeOf(err) == "" {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		defer st.Close(context.Background())
		if _, _, err := persist.Resume(context.Background(), st); err != nil && event.CodeOf(err) == "" {
			t.Fatalf("untyped error: %v", err)
		}
	})
}

// FuzzProtocol feeds arbitrary request lines to the Go testee: it answers
// or stops with an error, never panics.
func FuzzProtocol(f *testing.F) {
	f.Add([]byte(`{"type":"hello","protocol":1}` + "\n" + `{"type":"reset"}` + "\n" + `{"type":"step","step":{"op":"append","type":"user/message","time":1,"dataText":"{}","surfaceOp":"append"}}` + "\n"))
	f.Add([]byte(`{"type":"step","step":{"op":"seed","lines":["{}"]}}` + "\n" + `{"type":"step","step":{"op":"fork"}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		_ = conformance.Serve(conformance.NewImplMachine(), bytes.NewReader(data), &out)
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			if l != "" && !json.Valid([]byte(l)) {
				t.Fatalf("the testee wrote a line that is not JSON: %q", l)
			}
		}
	})
}

// FuzzDecodeLine decodes one wire-form line with the implementation's
// single-scan decoder and with the model's own decoder (model.DecodeLine,
// which shares no code path with it): they must agree on whether the
// envelope is broken, and otherwise on every member; data is compared in
// compact form where it is JSON, byte for byte where it is not.
func FuzzDecodeLine(f *testing.F) {
	for _, s := range []string{
		`{"type":"user/message","seq":0,"time":1,"data":{"content":[],"source":{"kind":"user"}},"surfaceOp":{"kind":"append"}}`,
		`{"type":null,"seq":0,"time":1,"data":{}}`,
		`{"type":"a","seq":0,"time":1}`,
		`{"type":"a","seq":1.0,"time":-0,"data":{},"surfaceOp":{"op":"swap"},"sourceEventSeqs":null}`,
		`{"type":"a","seq":0,"time":1e0,"data":{},"surfaceOp":{"kind":"replace","startSeq":0,"endSeq":1e400}}`,
		`{"type":"a","seq":0,"time":1,"data":{},"sourceEventSeqs":[1,-1,2.5,"x"],"ignorable":true}`,
		`{"type":"a","type":"b","seq":0,"time":1,"data":{}}`,
		`{"type":"\u0061","seq":9007199254740991,"time":9007199254740992,"data":[1,{"a":1,"a":2}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, gerr := event.Decode(line)
		want, werr := model.DecodeLine(line)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%q: the implementation says %v, the model %v", line, gerr, werr)
		}
		if gerr != nil {
			if event.CodeOf(gerr) != event.CodeOf(werr) {
				t.Fatalf("%q: codes %s and %s", line, event.CodeOf(gerr), event.CodeOf(werr))
			}
			return
		}
		compact := func(b []byte) string {
			var buf bytes.Buffer
			if json.Compact(&buf, b) == nil {
				return buf.String()
			}
			return string(b)
		}
		if got.Type != want.Type || got.Seq != want.Seq || got.Time != want.Time || got.Ignorable != want.Ignorable ||
			got.Op != want.Op || !slicesEqual(got.Sources, want.Sources) || compact(got.Data) != compact(want.Data) {
			t.Fatalf("%q:\nimplementation %+v\nmodel          %+v", line, got, want)
		}
	})
}

func slicesEqual(a, b []int64) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
