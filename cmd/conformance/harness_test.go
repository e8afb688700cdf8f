package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateFrom runs validate --from over the hand-written test files
// of both importers: a valid log exits 0 with OK, a broken one 1 with
// each finding at its line, a missing file 2 (IMP-7); the files are not
// changed (IMP-1).
func TestValidateFrom(t *testing.T) {
	cases := []struct {
		from, file string
		code       int
		want       []string
	}{
		{"codex", "../../impl/importer/codex/testdata/parallel.jsonl", 0, []string{"parallel.jsonl: OK imports as"}},
		{"codex", "../../impl/importer/codex/testdata/crashed.jsonl", 0, []string{"a torn last line of 99 bytes"}},
		{"codex", "../../impl/importer/codex/testdata/unanswered_mid.jsonl", 1, []string{"unanswered_mid.jsonl:4: import.call_unanswered", "INVALID 1 findings"}},
		{"codex", "../../impl/importer/codex/testdata/pairing_broken.jsonl", 1, []string{":4: import.output_orphan", ":8: import.call_duplicate", ":4: strict.call_unknown"}},
		{"codex", "../../impl/importer/codex/testdata/no_meta.jsonl", 1, []string{":0: import.no_session", "INVALID 1 findings; the import fails"}},
		{"claude-code", "../../impl/importer/claudecode/testdata/parallel_offchain.jsonl", 0, []string{"OK imports as 9 events"}},
		{"claude-code", "../../impl/importer/claudecode/testdata/broken_links.jsonl", 1, []string{":3: import.parent_missing", ":4: import.parent_cycle", ":6: import.uuid_conflict", ":7: import.session_mismatch", ":9: import.line_invalid"}},
		{"claude-code", "../../impl/importer/claudecode/testdata/broken_pairing.jsonl", 1, []string{":2: import.call_unanswered", ":5: import.call_duplicate"}},
		{"codex", filepath.Join(t.TempDir(), "missing.jsonl"), 2, []string{"ERROR"}},
		{"claude-code", "../../impl/importer/codex/testdata/basic.jsonl", 1, []string{"import.no_session"}},
	}
	for _, c := range cases {
		before, _ := os.ReadFile(c.file)
		var out, errb bytes.Buffer
		code := run([]string{"validate", "--from", c.from, c.file}, nil, &out, &errb)
		if code != c.code {
			t.Errorf("%s %s: exit %d, want %d\n%s%s", c.from, c.file, code, c.code, out.String(), errb.String())
		}
		for _, w := range c.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s %s: output lacks %q:\n%s", c.from, c.file, w, out.String())
			}
		}
		if after, _ := os.ReadFile(c.file); !bytes.Equal(before, after) {
			t.Errorf("%s changed", c.file)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"validate", "--from", "cursor", "x"}, nil, &out, &errb); code != 2 {
		t.Errorf("--from cursor: exit %d, want 2", code)
	}
}
