package codex_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surfacelog/surface/impl/importer"
	"github.com/surfacelog/surface/impl/importer/codex"
	"github.com/surfacelog/surface/impl/session"
)

// messagesOf seeds a session with an imported log and returns its
// messages.
func messagesOf(t testing.TB, l *importer.Log) []msgOf {
	t.Helper()
	s, err := session.Seed(l.Events)
	if err != nil {
		t.Fatalf("the imported log does not load: %v", err)
	}
	ms := s.Messages()
	out := make([]msgOf, 0, ms.Len())
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i)
		out = append(out, msgOf{seq: m.Seq, role: string(m.Role), content: m.Content})
	}
	return out
}

func findingLines(fs []importer.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%d %s", f.Line, f.Code))
	}
	return out
}

// want reads a .want file: its "# findings" and "# resend" sections.
func want(t *testing.T, path string) (findings, resend []string, hasResend bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cur *[]string
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		switch line {
		case "# findings":
			cur = &findings
		case "# resend":
			cur, hasResend = &resend, true
		default:
			*cur = append(*cur, line)
		}
	}
	return findings, resend, hasResend
}

// TestFiles runs the rollouts written by hand from the format's
// description (testdata/*.jsonl): Check reports exactly the findings of
// the .want file; a file without findings imports, passes strict mode, and
// its messages are, item for item, the history the .want file lists, which
// is also what the independent reconstruction rebuilds.
func TestFiles(t *testing.T) {
	paths, _ := filepath.Glob("testdata/*.jsonl")
	if len(paths) < 10 {
		t.Fatalf("%d test files", len(paths))
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := codex.Parse(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			wantFindings, wantResend, hasResend := want(t, strings.TrimSuffix(path, ".jsonl")+".want")
			if d := cmp.Diff(wantFindings, findingLines(codex.Check(f))); d != "" {
				t.Errorf("findings (-want +got):\n%s", d)
			}
			// IMP-3: whatever the findings, an import that succeeds keeps
			// every line, as a message or a record.
			if l, err := codex.Import(f); err == nil {
				seen := map[int]bool{}
				for _, n := range l.Lines {
					seen[n] = true
				}
				for _, line := range f.Lines {
					if !seen[line.N] {
						t.Errorf("line %d left no event", line.N)
					}
				}
			}
			if !hasResend {
				return
			}
			l, err := codex.Import(f)
			if err != nil {
				t.Fatalf("import: %v", err)
			}
			if bad := l.CheckStrict(); bad != nil {
				t.Fatalf("the imported log breaks strict mode: %v", bad)
			}
			if d := cmp.Diff(wantResend, renderAll(rebuild(f))); d != "" {
				t.Errorf("the reconstruction (-want +got):\n%s", d)
			}
			if d := cmp.Diff(wantResend, renderAll(project(l, messagesOf(t, l)))); d != "" {
				t.Errorf("the imported messages (-want +got):\n%s", d)
			}
		})
	}
}
