package conformance

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestSeedFilesExplained: every entry of a committed seed file names the
// row the classifier gives its failure today, of a vector that exists; the
// vectors' differences tags are exactly the rows of their entries; and
// every rule of the classifier explains at least one recorded failure (a
// rule nothing needs is a rule nothing tests).
func TestSeedFilesExplained(t *testing.T) {
	vectors, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Vector{}
	for _, v := range vectors {
		byID[v.ID] = v
	}
	for _, sys := range SeedSystems {
		k, err := SeedKnownFailures(sys)
		if err != nil {
			t.Fatal(err)
		}
		if len(k.Failures) < 100 {
			t.Fatalf("%s: %d recorded failures", sys, len(k.Failures))
		}
		used := map[string]bool{}
		for id, entry := range k.Failures {
			v, ok := byID[id]
			if !ok {
				t.Errorf("%s: %s is no vector", sys, id)
				continue
			}
			known := ParseKnown(entry)
			if known.Raw != "" || len(known.Rows) != 1 {
				t.Errorf("%s: %s: %q names no row and failure", sys, id, entry)
				continue
			}
			e, ok := ExplanationOf(sys, v, known.Failure)
			if !ok || e.Row != known.Rows[0] {
				t.Errorf("%s: %s: the file says %s, the classifier %q", sys, id, known.Rows[0], e.Row)
			}
			used[e.Why] = true
			if !slices.Contains(v.Differences, known.Rows[0]) {
				t.Errorf("%s: %s is not tagged %s (tags %v): run go generate", sys, id, known.Rows[0], v.Differences)
			}
		}
		for _, e := range Explanations(sys) {
			if !used[e.Why] {
				t.Errorf("%s: the rule %s %q explains no recorded failure", sys, e.Row, e.Why)
			}
		}
	}
	rows, err := SeedRows()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vectors {
		if !slices.Equal(v.Differences, rows[v.ID]) {
			t.Errorf("%s is tagged %v, its recorded failures say %v", v.ID, v.Differences, rows[v.ID])
		}
	}
}

// TestExplainNeedsItsEvidence puts look-alike pairs side by side: the same
// failure signature on a vector that has what a rule looks for, and on the
// same vector with that one thing taken away. The first is explained by
// the row; the second is not (an undocumented difference must not hide
// behind a row because its codes look alike).
func TestExplainNeedsItsEvidence(t *testing.T) {
	vectors, _ := Embedded()
	byID := map[string]Vector{}
	for _, v := range vectors {
		byID[v.ID] = v
	}
	get := func(id string) Vector {
		v, ok := byID[id]
		if !ok {
			t.Fatalf("no vector %s", id)
		}
		v.Steps = slices.Clone(v.Steps)
		return v
	}
	text := func(s string) *string { return &s }
	cases := []struct {
		name, system, row, id, failure string
		without                        func(v *Vector) // takes the evidence away
	}{
		{"invalid UTF-8", SeedB736, "D47", "surface.edge.data.invalid_utf8.001", "step 6 append: want event.data_not_json, got success", func(v *Vector) {
			v.Steps[6].DataBase64, v.Steps[6].DataText = nil, text(`{"turn":1,"step":1}`)
		}},
		{"duplicate key", SeedB736, "D48", "surface.edge.data.duplicate_key.001", "step 6 append: want event.data_not_json, got success", func(v *Vector) {
			v.Steps[6].DataText = text(`{"todos":[],"other":[]}`)
		}},
		{"a replace start off the surface", SeedB736, "D2", "surface.edge.provenance.transitive.001", "", func(v *Vector) {
			// The replace starts on the surface: only its sources are wrong.
			v.Steps[7].SurfaceOp = json.RawMessage(`{"op":"replace","start":6,"end":4}`)
		}},
		{"provenance", SeedB736, "D4", "strict.seed_and_repair.001", "step 1 seed: want success, got event.data_invalid", func(v *Vector) {
			lines := slices.Clone(*v.Steps[1].Lines)
			for i, l := range lines {
				lines[i] = strings.Replace(l, `"content":[`, `"provenance":{"provider":"p","model":"m"},"content":[`, 1)
			}
			v.Steps[1].Lines = &lines
		}},
		{"a shadowed pending call", SeedB736, "D12", "repair.shadowed_call.001", "", func(v *Vector) {
			// Without the replace that shadows the calls' message.
			v.Steps = slices.Delete(v.Steps, 7, 8)
		}},
		{"an open compaction", SeedB736, "D24", "repair.open_compaction.001", "", func(v *Vector) {
			v.Steps = slices.Delete(v.Steps, 5, 6)
		}},
		{"a concurrent begin", SeedB736, "D60", "compaction.commit.log_changed_allowed.001", "", func(v *Vector) {
			for i := range v.Steps {
				v.Steps[i].Concurrent = false
			}
		}},
		{"an unknown type", SeedB736, "D20", "surface.edge.append.unknown_type.001", "", func(v *Vector) {
			v.Steps[6].Type = text("user/message")
		}},
		{"the unused frame bit", SeedNpmRC8, "D66", "released.open.zstd_unused_bit.001", "", func(v *Vector) {
			// The same frames with the reserved bit 3 set instead: a
			// corrupt file both readers must refuse, not D66.
			f := slices.Clone(*v.Steps[0].File)
			f[4] ^= 0x18
			v.Steps[0].File = &f
		}},
		{"a boundary outside a turn", SeedNpmRC8, "D62", "surface.exhaustive.075", "", func(v *Vector) {
			ts := text("turn/start")
			v.Steps = slices.Insert(v.Steps, 0, Step{Op: "append", Type: ts, DataText: text(`{"turn":1,"trigger":{"kind":"message"}}`)})
			v.Steps[2].Boundary = new(int64) // still boundary... inside the open turn below
			*v.Steps[2].Boundary = 1
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := get(c.id)
			sig := c.failure
			if sig == "" { // the recorded failure
				k, _ := SeedKnownFailures(c.system)
				sig = k.Failures[c.id]
			}
			f, err := ParseFailure(strings.TrimPrefix(sig, c.row+": "))
			if err != nil {
				t.Fatalf("%q: %v", sig, err)
			}
			if got := Explain(c.system, v, f); got != c.row {
				t.Fatalf("with the evidence: %q, want %s", got, c.row)
			}
			if c.without == nil {
				return
			}
			c.without(&v)
			if got := Explain(c.system, v, f); got == c.row {
				t.Fatalf("without the evidence still %s", got)
			}
		})
	}
}
