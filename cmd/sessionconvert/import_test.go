package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/session"
)

// TestImport converts the importers' hand-written logs: a valid one
// becomes a JSONL file that resumes in strict mode with the same number of
// events; a log whose import breaks a strict rule writes nothing (exit 1).
func TestImport(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		from, in string
		code     int
	}{
		{"codex", "../../impl/importer/codex/testdata/rollback.jsonl", 0},
		{"codex", "../../impl/importer/codex/testdata/unanswered_mid.jsonl", 0}, // Codex resumes it: the finding is a note
		{"codex", "../../impl/importer/codex/testdata/pairing_broken.jsonl", 1},
		{"claude-code", "../../impl/importer/claudecode/testdata/compacted.jsonl", 0},
		{"claude-code", "../../impl/importer/claudecode/testdata/broken_links.jsonl", 1},
	} {
		out := filepath.Join(dir, c.from+"-"+filepath.Base(c.in))
		var stdout, stderr bytes.Buffer
		code := run([]string{"-from", c.from, c.in, out}, &stdout, &stderr)
		if code != c.code {
			t.Fatalf("%s: exit %d, want %d: %s%s", c.in, code, c.code, stdout.String(), stderr.String())
		}
		if code != 0 {
			if _, _, _, err := persist.ReadJSONL(out); err == nil {
				t.Errorf("%s: an output was written", c.in)
			}
			continue
		}
		if strings.Contains(c.in, "unanswered") && !strings.Contains(stderr.String(), "note: line 4: import.call_unanswered") {
			t.Errorf("%s: no note of the finding: %s", c.in, stderr.String())
		}
		h, events, _, err := persist.ReadJSONL(out)
		if err != nil {
			t.Fatal(err)
		}
		if h.ID == "" {
			t.Errorf("%s: header without id", c.in)
		}
		if _, err := session.Seed(events, session.WithStrict()); err != nil {
			t.Errorf("%s: the converted log does not resume in strict mode: %v", c.in, err)
		}
	}
}
