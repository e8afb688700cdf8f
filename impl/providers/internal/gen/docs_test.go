package gen_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/providers/surfaceanthropic"
	"github.com/surfacelog/surface/impl/providers/surfacegemini"
	"github.com/surfacelog/surface/impl/providers/surfaceopenai"
)

// TestValidatorTable: the table of docs/providers.md lists, for each
// validator, exactly the rules its Rules list names, and the page gives
// their counts.
func TestValidatorTable(t *testing.T) {
	page, err := os.ReadFile("../../../../docs/providers.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(page)
	start, end := strings.Index(text, "<!-- validator rules -->"), strings.Index(text, "<!-- end validator rules -->")
	if start < 0 || end < start {
		t.Fatal("docs/providers.md has no validator rules table")
	}
	rows := strings.Split(strings.TrimSpace(text[start:end]), "\n")[1:]
	header := cells(rows[0])
	lists := map[string][]string{
		"Anthropic": surfaceanthropic.Rules,
		"Responses": surfaceopenai.ResponsesRules,
		"Chat":      surfaceopenai.ChatRules,
		"Gemini":    surfacegemini.Rules,
	}
	table := map[string][]string{}
	for _, row := range rows[2:] {
		c := cells(row)
		rule := strings.Trim(c[0], "`")
		for i, col := range header {
			if _, ok := lists[col]; ok && c[i] == "✓" {
				table[col] = append(table[col], rule)
			}
		}
	}
	var counts []string
	for _, v := range []string{"Anthropic", "Responses", "Chat", "Gemini"} {
		want := slices.Sorted(slices.Values(lists[v]))
		got := slices.Sorted(slices.Values(table[v]))
		if !slices.Equal(got, want) {
			t.Errorf("%s: the table lists %v, its validator checks %v", v, got, want)
		}
		counts = append(counts, fmt.Sprintf("%s %d", v, len(want)))
	}
	if line := "Rule counts: " + strings.Join(counts, ", ") + "."; !strings.Contains(text, line) {
		t.Errorf("docs/providers.md should say %q", line)
	}
}

func cells(row string) []string {
	parts := strings.Split(strings.Trim(strings.TrimSpace(row), "|"), "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}
