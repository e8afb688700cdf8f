package harness_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/importer/harness"
)

// wantFindings reads the "# findings" section of an importer's .want file
// ("line code" per finding).
func wantFindings(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in := false
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		switch {
		case line == "# findings":
			in = true
		case strings.HasPrefix(line, "# "):
			in = false
		case in:
			out = append(out, line)
		}
	}
	return out
}

// TestReadEveryFixture: Read, by the harness's name, gives for each of
// the importers' hand-written files the findings its .want file lists, and
// an import exactly when the file has none that refuse it; the same file
// with a torn last line says how long the tear is.
func TestReadEveryFixture(t *testing.T) {
	dirs := map[string]string{"codex": "../codex/testdata", "claude-code": "../claudecode/testdata"}
	for _, name := range harness.Names {
		paths, _ := filepath.Glob(filepath.Join(dirs[name], "*.jsonl"))
		if len(paths) < 5 {
			t.Fatalf("%s: %d files", name, len(paths))
		}
		imported := 0
		for _, path := range paths {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			res, err := harness.Read(name, bytes.NewReader(raw))
			if err != nil {
				t.Fatalf("%s %s: %v", name, path, err)
			}
			var got []string
			for _, f := range res.Findings {
				got = append(got, fmt.Sprintf("%d %s", f.Line, f.Code))
			}
			if want := wantFindings(t, strings.TrimSuffix(path, ".jsonl")+".want"); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s %s: findings %q, want %q", name, path, got, want)
			}
			if (res.Log == nil) == (res.ImportErr == nil) {
				t.Errorf("%s %s: a log %v and an import error %v", name, path, res.Log != nil, res.ImportErr)
			}
			if res.Log != nil {
				imported++
				if len(res.Log.Events) == 0 {
					t.Errorf("%s %s: an import of no event", name, path)
				}
			}
			// A file that ends in a newline is whole; one that does not
			// (a crashed writer's) is torn by its last line's length.
			tornBefore := 0
			if i := bytes.LastIndexByte(raw, '\n'); i < len(raw)-1 {
				tornBefore = len(raw) - 1 - i
			}
			if res.Torn != tornBefore {
				t.Errorf("%s %s: torn %d, want %d", name, path, res.Torn, tornBefore)
			}
			torn := `{"timestamp":"2026-`
			res, err = harness.Read(name, bytes.NewReader(append(raw, torn...)))
			if err != nil || res.Torn != tornBefore+len(torn) {
				t.Errorf("%s %s with %d bytes more on its last line: torn %d, %v", name, path, len(torn), res.Torn, err)
			}
		}
		if imported == 0 {
			t.Errorf("%s: no file imported", name)
		}
	}
}

// TestReadRefusals: a name Read does not know (a look-alike of a known
// one among them) and a reader that fails are errors, with no result.
func TestReadRefusals(t *testing.T) {
	for _, name := range []string{"", "Codex", "claude_code", "claudecode", "codex "} {
		if harness.Known(name) {
			t.Errorf("%q is known", name)
		}
		res, err := harness.Read(name, strings.NewReader(""))
		if err == nil || res != nil || !strings.Contains(err.Error(), "unknown harness "+name+":") {
			t.Errorf("%q: %v %v", name, res, err)
		}
	}
	boom := errors.New("disk gone")
	for _, name := range harness.Names {
		if !harness.Known(name) {
			t.Errorf("%q is not known", name)
		}
		res, err := harness.Read(name, iotest.ErrReader(boom))
		if !errors.Is(err, boom) || res != nil {
			t.Errorf("%s, a failing reader: %v %v", name, res, err)
		}
		// An empty file is read, not refused: its one finding is that it
		// holds no session, and nothing is imported.
		if res, err := harness.Read(name, strings.NewReader("")); err != nil || res == nil || len(res.Findings) != 1 || res.Findings[0].Code != event.CodeImportNoSession || res.Log != nil || res.ImportErr == nil || res.Torn != 0 {
			t.Errorf("%s, an empty file: %+v %v", name, res, err)
		}
	}
}

// ExampleRead reads a Codex CLI rollout by the harness's name.
func ExampleRead() {
	rollout := `{"timestamp":"2026-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"0199a000-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.46.0"}}
{"timestamp":"2026-01-01T00:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}}
`
	res, err := harness.Read("codex", strings.NewReader(rollout))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(res.Findings), "findings;", res.ImportErr == nil, "imported")
	// Output: 0 findings; true imported
}
