// Package docs holds the user guide; its test keeps the guide's code
// blocks equal to the Example functions they are taken from.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// marker names the Example function whose body the next code block is.
var marker = regexp.MustCompile("(?m)^<!-- example: (\\S+) (Example\\w*) -->\n```go\n((?s:.*?))```")

// TestGuideSnippets: every code block of guide.md that names an Example
// is that Example's body (without its Output comment), so each snippet
// compiles and runs in CI as printed. A guide without such blocks fails.
func TestGuideSnippets(t *testing.T) {
	guide, err := os.ReadFile("guide.md")
	if err != nil {
		t.Fatal(err)
	}
	found := marker.FindAllStringSubmatch(string(guide), -1)
	if len(found) < 8 {
		t.Fatalf("the guide has %d example blocks, want its 8 or more", len(found))
	}
	for _, m := range found {
		file, name, block := m[1], m[2], m[3]
		body, err := exampleBody(filepath.Join("..", file), name)
		if err != nil {
			t.Errorf("%s %s: %v", file, name, err)
			continue
		}
		if strings.TrimSpace(body) != strings.TrimSpace(block) {
			t.Errorf("the guide's block for %s (%s) is not its body; it should read:\n%s", name, file, body)
		}
	}
}

// exampleBody returns the body of func name in file, one tab of indent
// removed, up to its Output comment.
func exampleBody(file, name string) (string, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	s := string(src)
	head := "func " + name + "() {\n"
	i := strings.Index(s, head)
	if i < 0 {
		return "", os.ErrNotExist
	}
	s = s[i+len(head):]
	end := strings.Index(s, "\n}\n")
	if end < 0 {
		return "", os.ErrNotExist
	}
	s = s[:end+1]
	if k := strings.Index(s, "\n\t// Output:"); k >= 0 {
		s = s[:k+1]
	}
	var out []string
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		out = append(out, strings.TrimPrefix(line, "\t"))
	}
	return strings.Join(out, "\n"), nil
}
