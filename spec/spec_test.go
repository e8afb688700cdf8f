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

// TestErrorSummaries: the summaries of errors.json that once lagged the
// rules' text name what the rules now say (SURF-1's ignorable and
// duplicate members, SURF-3's registered and ignorable types and what
// makes a registration invalid, SURF-4's UTF-8 and depth limit, SURF-5's
// enums and nullable fields), and each of these rules' text names it too.
func TestErrorSummaries(t *testing.T) {
	var table struct {
		Codes []struct{ Code, Rule, Summary string }
	}
	if err := json.Unmarshal(spec.ErrorsJSON, &table); err != nil {
		t.Fatal(err)
	}
	rules := map[string]string{} // each rule's text, up to the next rule or section
	heading := regexp.MustCompile(`(?m)^(\*\*(?:SURF|REP|STORE|COMP|STRICT|REL|PROV)-\d+ \(|## )`)
	for _, r := range spec.Rules() {
		at := strings.Index(spec.Markdown, "**"+r.ID+" (")
		text := spec.Markdown[at+2:]
		if next := heading.FindStringIndex(text); next != nil {
			text = text[:next[0]]
		}
		rules[r.ID] = strings.Join(strings.Fields(text), " ")
	}
	want := map[string][]string{
		"event.invalid_envelope": {"ignorable", "twice", "2^53-1"},
		"event.unknown_type":     {"registered", "ignorable"},
		"event.data_not_json":    {"duplicate", "UTF-8", "10,000", "2^53-1", "negative zero"},
		"event.data_invalid":     {"registered", "enum", "nullable", "required"},
		"vocabulary.invalid":     {"catalog", "twice", "surface-eligible", "surrounding space", "enum"},
	}
	seen := 0
	for _, c := range table.Codes {
		words, ok := want[c.Code]
		if !ok {
			continue
		}
		seen++
		for _, w := range words {
			if !strings.Contains(c.Summary, w) {
				t.Errorf("errors.json %s: the summary does not mention %q: %s", c.Code, w, c.Summary)
			}
			if !strings.Contains(rules[c.Rule], w) && !strings.Contains(rules[c.Rule], strings.TrimSuffix(w, "d")) {
				t.Errorf("%s (for %s) does not mention %q", c.Rule, c.Code, w)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("%d of %d codes found in errors.json", seen, len(want))
	}
}

// TestReleasedTypes: the spec lists the released vocabulary's 48 types,
// once each, sorted as the released system's generated list is.
func TestReleasedTypes(t *testing.T) {
	types := spec.ReleasedTypes()
	if len(types) != 48 {
		t.Fatalf("%d released types listed: %v", len(types), types)
	}
	seen := map[string]bool{}
	for i, ty := range types {
		if seen[ty] {
			t.Errorf("%s listed twice", ty)
		}
		seen[ty] = true
		if i > 0 && types[i-1] > ty {
			t.Errorf("%s listed after %s", ty, types[i-1])
		}
	}
	for _, want := range []string{"session/end-seed", "team/task", "user/message", "web/deepseek-search-llm-request"} {
		if !seen[want] {
			t.Errorf("%s missing", want)
		}
	}
	for _, not := range []string{"context/message", "steering/message", "compact/start", "prompt/blocked"} {
		if seen[not] {
			t.Errorf("%s listed", not)
		}
	}
}

// TestDifferencesRows: every row of DIFFERENCES.md is read, in document
// order, numbered once each; a table given in place of the file is read
// row by row, the first row at the very start of the text included.
func TestDifferencesRows(t *testing.T) {
	rows := spec.Differences()
	if len(rows) < 50 {
		t.Fatalf("%d rows read from DIFFERENCES.md", len(rows))
	}
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r.ID] || strings.TrimSpace(r.Topic) == "" {
			t.Errorf("row %s read twice or without a topic (%q)", r.ID, r.Topic)
		}
		seen[r.ID] = true
	}
	keep := spec.DifferencesMarkdown
	defer func() { spec.DifferencesMarkdown = keep }()
	spec.DifferencesMarkdown = "| D1 | first | x |\n| D2 | second | y |\nnot a row | D3 | z |\n| D4 | fourth |"
	got := spec.Differences()
	if len(got) != 3 || got[0] != (spec.Difference{ID: "D1", Topic: "first"}) || got[2].ID != "D4" {
		t.Fatalf("rows of a three-row table: %+v", got)
	}
}

// TestReleasedTypesMarkers: the list is read between its markers wherever
// they are (a start marker at the very start of the text too), and not at
// all when a marker is missing or the end comes first.
func TestReleasedTypesMarkers(t *testing.T) {
	keep := spec.Markdown
	defer func() { spec.Markdown = keep }()
	for text, want := range map[string]int{
		"<!-- released-types -->`a/b` `c`<!-- /released-types -->":         2,
		"x <!-- released-types -->`a/b`<!-- /released-types --> `d/e`":     1,
		"<!-- /released-types -->`a/b`<!-- released-types -->":             0,
		"`a/b`<!-- /released-types -->":                                    0,
		"<!-- released-types -->`a/b`":                                     0,
		"<!-- released-types --><!-- /released-types -->`a/b` `c/d` `e/f`": 0,
	} {
		spec.Markdown = text
		if got := spec.ReleasedTypes(); len(got) != want {
			t.Errorf("%q: %v, want %d types", text, got, want)
		}
	}
}
