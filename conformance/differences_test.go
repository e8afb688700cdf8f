package conformance_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/surfacelog/surface/conformance"
	"github.com/surfacelog/surface/spec"
)

// TestDifferenceCoverage: every row of spec/DIFFERENCES.md is shown by a
// vector (tagged with it) or is listed in NoVector with why; a row in
// NoVector has no vector, and every tag names a row.
func TestDifferenceCoverage(t *testing.T) {
	vectors, err := conformance.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	byRow := conformance.DifferenceCoverage(vectors)
	rows := map[string]bool{}
	for _, d := range spec.Differences() {
		rows[d.ID] = true
		_, none := conformance.NoVector[d.ID]
		switch {
		case none && byRow[d.ID] > 0:
			t.Errorf("%s is listed as shown by no vector, and %d vectors show it", d.ID, byRow[d.ID])
		case !none && byRow[d.ID] == 0:
			t.Errorf("%s (%s) is shown by no vector and not listed in NoVector", d.ID, d.Topic)
		}
	}
	if len(rows) < 35 {
		t.Fatalf("%d rows read from DIFFERENCES.md", len(rows))
	}
	for row := range byRow {
		if !rows[row] {
			t.Errorf("vectors are tagged %s, which DIFFERENCES.md does not have", row)
		}
	}
	for row := range conformance.NoVector {
		if !rows[row] {
			t.Errorf("NoVector lists %s, which DIFFERENCES.md does not have", row)
		}
	}
}

// TestDecisionsArePinned: every vector that spec/README.md §12 names as
// pinning a decision exists.
func TestDecisionsArePinned(t *testing.T) {
	vectors, err := conformance.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, v := range vectors {
		ids[v.ID] = true
	}
	i := strings.Index(spec.Markdown, "## 12. Decisions")
	if i < 0 {
		t.Fatal("spec/README.md has no section 12 (decisions)")
	}
	named := regexp.MustCompile("`([a-z_]+(?:\\.[a-z0-9_]+)+\\.[0-9]{3})`").FindAllStringSubmatch(spec.Markdown[i:], -1)
	if len(named) < 12 {
		t.Fatalf("section 12 names %d vectors", len(named))
	}
	for _, m := range named {
		if !ids[m[1]] {
			t.Errorf("section 12 names %s, which is not a vector", m[1])
		}
	}
}
