// Package spec embeds the normative specification (README.md, the event
// catalog events.json, the error table errors.json) so that tools can read
// it: the conformance runner prints coverage against Rules, and tests check
// that every rule is exercised.
package spec

import (
	_ "embed"
	"regexp"
	"strings"
)

//go:embed README.md
var Markdown string

//go:embed events.json
var EventsJSON []byte

//go:embed errors.json
var ErrorsJSON []byte

// Rule is one numbered rule of README.md.
type Rule struct {
	ID    string // e.g. "SURF-13"
	Title string // e.g. "not reversed"
	// Level is "SHOULD" when the rule's title says so, else "MUST".
	Level string
}

var ruleHeading = regexp.MustCompile(`(?m)^\*\*((?:SURF|REP|STORE|COMP|STRICT|REL|PROV|IMP)-\d+) \(([^)]*)\)\.\*\*`)

// Rules returns the rules of README.md in document order.
func Rules() []Rule {
	var out []Rule
	for _, m := range ruleHeading.FindAllStringSubmatch(Markdown, -1) {
		r := Rule{ID: m[1], Title: m[2], Level: "MUST"}
		if regexp.MustCompile(`SHOULD$`).MatchString(m[2]) {
			r.Level = "SHOULD"
		}
		out = append(out, r)
	}
	return out
}

//go:embed DIFFERENCES.md
var DifferencesMarkdown string

// Difference is one row of DIFFERENCES.md: a deliberate difference from
// the seed system.
type Difference struct {
	ID    string // e.g. "D2"
	Topic string // e.g. "check order"
}

var differenceRow = regexp.MustCompile(`(?m)^\| (D\d+) \| ([^|]*) \|`)

// Differences returns the rows of DIFFERENCES.md in document order.
func Differences() []Difference {
	var out []Difference
	for _, m := range differenceRow.FindAllStringSubmatch(DifferencesMarkdown, -1) {
		out = append(out, Difference{ID: m[1], Topic: m[2]})
	}
	return out
}

// ReleasedTypes returns the types the released seed system knows (REL-2),
// as listed in spec/README.md between the released-types markers.
func ReleasedTypes() []string {
	i := strings.Index(Markdown, "<!-- released-types -->")
	j := strings.Index(Markdown, "<!-- /released-types -->")
	if i < 0 || j < i {
		return nil
	}
	var out []string
	for _, m := range releasedType.FindAllStringSubmatch(Markdown[i:j], -1) {
		out = append(out, m[1])
	}
	return out
}

var releasedType = regexp.MustCompile("`([a-z][a-z0-9/-]*)`")
