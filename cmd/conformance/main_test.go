package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
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
	if code, out := call("random", "-n", "20", "-seed", "7"); code != 0 || !strings.Contains(out, "PASS") {
		t.Fatalf("random: %d\n%s", code, out)
	}
	if code, out := call("coverage"); code != 0 || !strings.Contains(out, "| SURF-13 (not reversed) | MUST |") {
		t.Fatalf("coverage: %d\n%s", code, out)
	}
}

// TestValidate: a log written by the library validates; one that breaks
// a rule (SURF-7) does not, for both backends.
func TestValidate(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	st, _ := persist.OpenJSONL(good, persist.Header{ID: "g"})
	s, _, _ := persist.Resume(st)
	s.Append(event.TypeUserMessage, json.RawMessage(`{"content":[],"source":{"kind":"user"}}`), &event.Intent{Op: event.Append()})
	st.Close()
	db := filepath.Join(dir, "good.db")
	sq, _ := persist.OpenSQLite(db, persist.Header{ID: "g"})
	s2, _, _ := persist.Resume(sq)
	s2.Append(event.TypeTurnStart, json.RawMessage(`{"turn":1,"trigger":{"kind":"message"}}`), nil)
	sq.Close()
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
