package spec_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/spec"
)

// testText returns the text of every _test.go file of the module.
func testText(t *testing.T) string {
	var b strings.Builder
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, "_test.go") && !strings.HasSuffix(path, "spec_test.go") {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			b.Write(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestEveryRuleIsTested: each rule id of README.md appears in a test.
func TestEveryRuleIsTested(t *testing.T) {
	rules := spec.Rules()
	if len(rules) < 28 {
		t.Fatalf("parsed only %d rules", len(rules))
	}
	text := testText(t)
	for _, r := range rules {
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(r.ID) + `\b`).MatchString(text) {
			t.Errorf("rule %s (%s) is referenced by no test", r.ID, r.Title)
		}
	}
}

// TestEveryCodeIsTested: each error code is named by a test (its Go
// constant or its dotted form). TestStateMachine and TestRules check that
// each is also produced at run time.
func TestEveryCodeIsTested(t *testing.T) {
	var table struct {
		Codes []struct{ Code, GoName, Rule string }
	}
	if err := json.Unmarshal(spec.ErrorsJSON, &table); err != nil {
		t.Fatal(err)
	}
	text := testText(t)
	ids := map[string]bool{}
	for _, r := range spec.Rules() {
		ids[r.ID] = true
	}
	for _, c := range table.Codes {
		if !strings.Contains(text, "event."+c.GoName) && !strings.Contains(text, `"`+c.Code+`"`) {
			t.Errorf("code %s is named by no test", c.Code)
		}
		if !ids[c.Rule] {
			t.Errorf("code %s names rule %s, which README.md does not define", c.Code, c.Rule)
		}
	}
	if len(table.Codes) != len(event.Codes()) {
		t.Errorf("errors.json has %d codes, the generated code %d: run go generate", len(table.Codes), len(event.Codes()))
	}
}
