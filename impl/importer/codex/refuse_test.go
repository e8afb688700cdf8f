package codex_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/importer"
	"github.com/surfacelog/surface/impl/importer/codex"
)

// TestCodes: each finding of the hand-written broken rollouts (IMP-2,
// IMP-4) matches its code with errors.Is, and nothing else.
func TestCodes(t *testing.T) {
	cases := []struct {
		file string
		line int
		code event.Code
	}{
		{"unanswered_mid", 4, event.CodeImportCallUnanswered},
		{"pairing_broken", 4, event.CodeImportOutputOrphan},
		{"pairing_broken", 7, event.CodeImportOutputDuplicate},
		{"pairing_broken", 8, event.CodeImportCallDuplicate},
		{"lines_broken", 5, event.CodeImportOutputOrphan},
		{"lines_broken", 7, event.CodeImportLineInvalid},
		{"no_meta", 0, event.CodeImportNoSession},
	}
	for _, c := range cases {
		f := parseFile(t, "testdata/"+c.file+".jsonl")
		found := false
		for _, x := range codex.Check(f) {
			if x.Line == c.line && errors.Is(x, c.code) {
				found = true
				if errors.Is(x, event.CodeImportNotImportable) && c.code != event.CodeImportNotImportable {
					t.Errorf("%s:%d matches another code too", c.file, c.line)
				}
			}
		}
		if !found {
			t.Errorf("%s: no %s at line %d", c.file, c.code, c.line)
		}
	}
}

func parseFile(t *testing.T, path string) *codex.File {
	t.Helper()
	r, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := codex.Parse(r)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestRefused (IMP-3): what has no place is refused by name at its line
// (import.not_importable), never dropped; the look-alike that has a place
// imports.
func TestRefused(t *testing.T) {
	meta := `{"timestamp":"2026-02-23T12:00:00.000Z","type":"session_meta","payload":{"id":"x","timestamp":"2026-02-23T12:00:00.000Z","cwd":"/p"}}`
	user := func(text string) string {
		return `{"timestamp":"2026-02-23T12:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"` + text + `"}]}}`
	}
	cases := []struct {
		name  string
		lines []string
		line  int // 0: imports
	}{
		{"refusal part", []string{meta, user("q"), `{"timestamp":"2026-02-23T12:00:02.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"refusal","refusal":"no"}]}}`}, 3},
		{"text part", []string{meta, user("q"), `{"timestamp":"2026-02-23T12:00:02.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"yes"}]}}`}, 0},
		{"call without call_id", []string{meta, user("q"), `{"timestamp":"2026-02-23T12:00:02.000Z","type":"response_item","payload":{"type":"local_shell_call","status":"completed","action":{"type":"exec","command":["ls"]}}}`}, 3},
		{"rollback of a compacted turn", []string{meta, user("a"), user("b"), `{"timestamp":"2026-02-23T12:00:03.000Z","type":"compacted","payload":{"message":"","replacement_history":[]}}`, `{"timestamp":"2026-02-23T12:00:04.000Z","type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":1}}`}, 5},
		{"rollback of a turn after it", []string{meta, user("a"), `{"timestamp":"2026-02-23T12:00:03.000Z","type":"compacted","payload":{"message":"","replacement_history":[]}}`, user("b"), `{"timestamp":"2026-02-23T12:00:04.000Z","type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":1}}`}, 0},
		{"legacy compaction over the budget", []string{meta, user(strings.Repeat("x", 70000)), `{"timestamp":"2026-02-23T12:00:03.000Z","type":"compacted","payload":{"message":"s"}}`}, 3},
		{"legacy compaction within it", []string{meta, user(strings.Repeat("x", 50000)), `{"timestamp":"2026-02-23T12:00:03.000Z","type":"compacted","payload":{"message":"s"}}`}, 0},
	}
	for _, c := range cases {
		f, err := codex.Parse(strings.NewReader(strings.Join(c.lines, "\n") + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		l, err := codex.Import(f)
		if c.line == 0 {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			} else if bad := l.CheckStrict(); bad != nil {
				t.Errorf("%s: strict: %v", c.name, bad)
			}
			continue
		}
		var x importer.Finding
		if !errors.As(err, &x) || !errors.Is(err, event.CodeImportNotImportable) || x.Line != c.line {
			t.Errorf("%s: got %v, want import.not_importable at line %d", c.name, err, c.line)
		}
	}
}
