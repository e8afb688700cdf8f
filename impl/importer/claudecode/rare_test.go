package claudecode_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/importer/claudecode"
)

func parseLines(t *testing.T, lines ...string) *claudecode.File {
	t.Helper()
	f, err := claudecode.Parse(strings.NewReader(strings.Join(lines, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func entry(typ, uuid, parent, message string, extra ...string) string {
	p := `null`
	if parent != "" {
		p = `"` + parent + `"`
	}
	return `{"type":"` + typ + `","uuid":"` + uuid + `","parentUuid":` + p + `,"sessionId":"S","isSidechain":false,"message":` + message + strings.Join(extra, "") + `}`
}

// TestRareShapes varies what the hand-written transcripts hold once or
// never: a file of one entry; a user entry without content; a tool_result
// without content; one entry holding two tool_results; a thinking block
// without a signature beside one with; the native model; a cycle through
// the file's first entry; a lone tool_result; the kinds of kept records;
// the pre-compaction chain imported as messages, then replaced.
func TestRareShapes(t *testing.T) {
	// One entry.
	l, err := claudecode.Import(parseLines(t, entry("user", "u", "", `{"role":"user","content":"only"}`)))
	if err != nil {
		t.Fatal(err)
	}
	if ms := project(t, l); len(ms) != 1 {
		t.Errorf("one entry: %d messages", len(ms))
	}
	// A user entry without content is kept as a record (nothing to send,
	// nothing dropped); a tool_result without content is an empty result.
	if l, err := claudecode.Import(parseLines(t, entry("user", "u", "", `{"role":"user"}`))); err != nil {
		t.Errorf("a user entry without content: %v", err)
	} else if l.Kept["user (no content)"] != 1 {
		t.Errorf("a user entry without content: kept %v", l.Kept)
	}
	f := parseLines(t,
		entry("user", "u", "", `{"role":"user","content":"go"}`),
		entry("assistant", "a", "u", `{"id":"m1","role":"assistant","model":"claude-opus-4-5","content":[{"type":"thinking","thinking":"plain"},{"type":"thinking","thinking":"signed","signature":"S1"},{"type":"tool_use","id":"t1","name":"x","input":{}},{"type":"tool_use","id":"t2","name":"x","input":{}}]}`),
		entry("user", "r", "a", `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"},{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"two"}],"is_error":true}]}`),
	)
	if fs := claudecode.Check(f); len(fs) != 0 {
		t.Errorf("findings %v", fs)
	}
	l, err = claudecode.Import(f)
	if err != nil {
		t.Fatal(err)
	}
	if bad := l.CheckStrict(); bad != nil {
		t.Fatal(bad)
	}
	var results int
	var nat []map[string]any
	for _, e := range l.Events {
		if e.Type == event.TypeToolResult {
			results++
		}
		if e.Type == event.TypeAssistantMessage {
			var d struct{ Content []json.RawMessage }
			json.Unmarshal(e.Data, &d)
			for _, b := range d.Content {
				if n, ok := event.ObjectMember(b, "native"); ok {
					var v map[string]any
					json.Unmarshal(n, &v)
					nat = append(nat, v)
				}
			}
		}
	}
	if results != 2 {
		t.Errorf("one entry of two results imported %d", results)
	}
	if len(nat) != 2 || nat[0]["opaque"] != nil || nat[1]["opaque"] != true || nat[0]["model"] != "claude-opus-4-5" || nat[0]["provider"] != "anthropic" {
		t.Errorf("natives %v: want the unsigned thinking not opaque, the signed one opaque, model claude-opus-4-5", nat)
	}
	// A cycle through the first entry; a lone tool_result at the start.
	f = parseLines(t, entry("user", "x", "y", `{"role":"user","content":"a"}`), entry("user", "y", "x", `{"role":"user","content":"b"}`))
	if fs := claudecode.Check(f); len(fs) != 1 || fs[0].Code != event.CodeImportParentCycle {
		t.Errorf("a cycle through the first entry: %v", fs)
	}
	f = parseLines(t, entry("user", "u", "", `{"role":"user","content":[{"type":"tool_result","tool_use_id":"nope","content":"x"}]}`))
	if fs := claudecode.Check(f); len(fs) != 1 || fs[0].Code != event.CodeImportOutputOrphan || fs[0].Line != 1 {
		t.Errorf("a lone tool_result: %v", fs)
	}
}

// TestCompactedImport: the chain that led to a compact boundary is in the
// log as messages (shadowed by the summary), not as records; the boundary
// and the other kept lines are records of their kind.
func TestCompactedImport(t *testing.T) {
	f, err := claudecode.Parse(strings.NewReader(mustRead(t, "testdata/compacted.jsonl")))
	if err != nil {
		t.Fatal(err)
	}
	l, err := claudecode.Import(f)
	if err != nil {
		t.Fatal(err)
	}
	first := -1
	for seq, n := range l.Lines {
		if n == 1 && first < 0 {
			first = seq
		}
	}
	if first < 0 || l.Events[first].Type == claudecode.Record {
		t.Fatalf("line 1 is not a message: %+v", l.Events[max(first, 0)])
	}
	if l.Kept["system/compact_boundary"] != 1 {
		t.Errorf("kept %v, want one system/compact_boundary", l.Kept)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStepsAndTornNote: each response is a step of its own, with its
// results; the torn-line note is there when the last line is torn, and
// only then.
func TestStepsAndTornNote(t *testing.T) {
	lines := []string{
		entry("user", "u", "", `{"role":"user","content":"go"}`),
		entry("assistant", "a1", "u", `{"id":"m1","role":"assistant","model":"m","content":[{"type":"tool_use","id":"t1","name":"x","input":{}}]}`),
		entry("user", "r1", "a1", `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"1"}]}`),
		entry("assistant", "a2", "r1", `{"id":"m2","role":"assistant","model":"m","content":[{"type":"tool_use","id":"t2","name":"x","input":{}}]}`),
		entry("user", "r2", "a2", `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"2"}]}`),
		entry("assistant", "a3", "r2", `{"id":"m3","role":"assistant","model":"m","content":[{"type":"text","text":"done"}]}`),
	}
	l, err := claudecode.Import(parseLines(t, lines...))
	if err != nil {
		t.Fatal(err)
	}
	var steps []int64
	for _, e := range l.Events {
		if e.Type == event.TypeAssistantMessage || e.Type == event.TypeToolResult {
			var d struct{ Step int64 }
			json.Unmarshal(e.Data, &d)
			steps = append(steps, d.Step)
		}
	}
	if want := []int64{1, 1, 2, 2, 3}; !slices.Equal(steps, want) {
		t.Errorf("steps %v, want %v", steps, want)
	}
	if len(l.Notes) != 0 {
		t.Errorf("notes without a torn line: %v", l.Notes)
	}
	f, _ := claudecode.Parse(strings.NewReader(strings.Join(lines, "\n") + "\n{\"type\":\"us"))
	if l, _ = claudecode.Import(f); len(l.Notes) != 1 || !strings.Contains(l.Notes[0].Detail, "torn last line of 11 bytes") {
		t.Errorf("notes %v", l.Notes)
	}
}
