package conformance

import (
	"bytes"
	"maps"
	"strings"
	"testing"

	"github.com/surfacelog/surface/internal/zstdframe"
)

// TestCoverageCounts: Coverage counts each rule once per vector that
// lists it and each code once per vector with a step expecting it (a
// vector expecting it twice counts once); DifferenceCoverage counts rows
// per vector. Hand-made vectors, exact counts.
func TestCoverageCounts(t *testing.T) {
	step := func(code string) Step { return Step{Op: "append", Expect: &Result{Error: code}} }
	vectors := []Vector{
		{ID: "a", Rules: []string{"SURF-1", "SURF-2"}, Differences: []string{"D1", "D2"}, Steps: []Step{step("x.one"), step("x.one"), step("y.two"), {Op: "append"}}},
		{ID: "b", Rules: []string{"SURF-1"}, Differences: []string{"D1"}, Steps: []Step{step("x.one"), step("")}},
		{ID: "c", Steps: []Step{{Op: "append"}}},
	}
	rules, codes := Coverage(vectors)
	if want := map[string]int{"SURF-1": 2, "SURF-2": 1}; !maps.Equal(rules, want) {
		t.Errorf("rules %v, want %v", rules, want)
	}
	if want := map[string]int{"x.one": 2, "y.two": 1}; !maps.Equal(codes, want) {
		t.Errorf("codes %v, want %v", codes, want)
	}
	if got, want := DifferenceCoverage(vectors), map[string]int{"D1": 2, "D2": 1}; !maps.Equal(got, want) {
		t.Errorf("differences %v, want %v", got, want)
	}
}

// TestExplainNeedsARealFailure: a failure signature that points outside
// its vector's steps (before the first, at len(steps), past it), at a step
// of another op, or that shows nothing differing (same outcome, no
// member named) is explained by no row, for both seed systems, over every
// embedded vector.
func TestExplainNeedsARealFailure(t *testing.T) {
	vectors, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, system := range []string{SeedB736, SeedNpmRC8} {
		for _, v := range vectors {
			n := len(v.Steps)
			for _, f := range []Failure{
				{Step: -1, Op: "append", Want: "ok", Got: "event.data_invalid"},
				{Step: n, Op: "append", Want: "ok", Got: "event.data_invalid"},
				{Step: n + 1, Op: "append", Want: "ok", Got: "event.data_invalid"},
			} {
				if row := Explain(system, v, f); row != "" {
					t.Errorf("%s %s: %+v (outside the steps) explained by %s", system, v.ID, f, row)
				}
			}
			for i, s := range v.Steps {
				other := "fork"
				if s.Op == "fork" {
					other = "append"
				}
				want := "ok"
				if s.Expect != nil && s.Expect.Error != "" {
					want = s.Expect.Error
				}
				for _, f := range []Failure{
					{Step: i, Op: other, Want: want, Got: "event.data_invalid"},
					{Step: i, Op: s.Op, Want: want, Got: want},
					{Step: i, Op: s.Op, Want: want, Got: want, Differ: []string{}},
				} {
					if row := Explain(system, v, f); row != "" {
						t.Errorf("%s %s: %+v explained by %s", system, v.ID, f, row)
					}
				}
			}
		}
	}
}

// TestCheckOrderNeedsTheOtherBreak: D2 (two rules broken at once, checked
// in another order) explains a seed that the spec refuses for its seq and
// the seed system for its envelope only when a line of it is not a JSON
// object; the same failure over lines that are all objects is explained
// by no row of either system.
func TestCheckOrderNeedsTheOtherBreak(t *testing.T) {
	objects := []string{`{"type":"todo/write","seq":0,"time":1,"data":{"todos":[]}}`, `{"type":"todo/write","seq":2,"time":1,"data":{"todos":[]}}`}
	broken := []string{objects[0], `[1,2]`}
	f := Failure{Step: 0, Op: "seed", Want: "seq.not_contiguous", Got: "event.invalid_envelope"}
	for _, system := range []string{SeedB736, SeedNpmRC8} {
		for _, c := range []struct {
			lines []string
			row   string
		}{{broken, "D2"}, {objects, ""}} {
			lines := c.lines
			v := Vector{ID: "hand.check_order", Steps: []Step{{Op: "seed", Lines: &lines}}}
			if got := Explain(system, v, f); got != c.row {
				t.Errorf("%s, lines %q: explained by %q, want %q", system, c.lines, got, c.row)
			}
		}
	}
}

// TestLineHasMemberBySource: whether a step hands over an envelope member
// is read where the step keeps its text: a SQLite store's SQL, a JSONL
// store's file, a seed's lines; the same member named in another kind of
// step's field does not count.
func TestLineHasMemberBySource(t *testing.T) {
	jsonl := []byte(`{"type":"session","version":2,"id":"x","createdAt":1}` + "\n" + `{"type":"x/y","seq":0,"time":1,"data":{},"ignorable":true}`)
	lines := []string{`{"type":"x/y","seq":0,"time":1,"data":{},"ignorable":true}`}
	sql := []string{`INSERT INTO event_envelope (session_id, seq, ignorable) VALUES ('x', 0, 1)`}
	for _, c := range []struct {
		name string
		op   string
		step Step
		want bool
	}{
		{"a SQLite store's SQL", "store_open", Step{Op: "store_open", Format: "sqlite", SQL: sql}, true},
		{"a SQLite store without it", "store_open", Step{Op: "store_open", Format: "sqlite", SQL: []string{`INSERT INTO events VALUES (1)`}}, false},
		{"SQL beside a JSONL file without it", "store_open", Step{Op: "store_open", Format: "jsonl", SQL: sql, File: &[]byte{}}, false},
		{"a JSONL file", "store_open", Step{Op: "store_open", Format: "jsonl", File: &jsonl}, true},
		{"a seed's lines", "seed", Step{Op: "seed", Lines: &lines}, true},
		{"SQL on a seed", "seed", Step{Op: "seed", SQL: sql}, false},
	} {
		f := &failing{system: SeedB736, v: Vector{Steps: []Step{c.step}}, f: Failure{Step: 0, Op: c.op}, step: c.step}
		if got := f.lineHasMember("ignorable"); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRowsAtTheirEdges: D49 (a stack overflow) needs data nested deeper
// than 10,000 levels, not 10,000 itself; D4 (provenance refused first)
// needs an assistant message without provenance before the refused line,
// not another type.
func TestRowsAtTheirEdges(t *testing.T) {
	nested := func(depth int) *string {
		s := strings.Repeat("[", depth) + strings.Repeat("]", depth)
		s = `{"todos":` + s + `}`
		return &s
	}
	typ := "todo/write"
	overflow := Failure{Step: 0, Op: "append", Want: "event.data_not_json", Got: "real.stack_overflow"}
	for depth, want := range map[int]string{10000: "", 10001: "D49"} {
		// the todos member's array adds none: depth counts the arrays
		v := Vector{ID: "hand.depth", Steps: []Step{{Op: "append", Type: &typ, DataText: nested(depth - 1)}}}
		for _, system := range []string{SeedB736, SeedNpmRC8} {
			if got := Explain(system, v, overflow); got != want {
				t.Errorf("%s, nesting %d: explained by %q, want %q", system, depth, got, want)
			}
		}
	}
	idx := 1
	bad := `{"type":"todo/write","seq":5,"time":1,"data":{"todos":[]}}`
	for first, want := range map[string]string{
		`{"type":"assistant/message","seq":0,"time":1,"data":{"turn":1,"step":1,"content":[{"type":"text","text":"a"}]},"surfaceOp":"append"}`:   "D4",
		`{"type":"user/message","seq":0,"time":1,"data":{"content":[{"type":"text","text":"a"}],"source":{"kind":"user"}},"surfaceOp":"append"}`: "",
	} {
		lines := []string{first, bad}
		v := Vector{ID: "hand.provenance", Steps: []Step{{Op: "seed", Lines: &lines, Expect: &Result{Error: "seq.not_contiguous", Index: &idx}}}}
		f := Failure{Step: 0, Op: "seed", Want: "seq.not_contiguous", Got: "event.data_invalid"}
		if got := Explain(SeedB736, v, f); got != want {
			t.Errorf("first line %.40s: explained by %q, want %q", first, got, want)
		}
	}
}

// TestForkAndStoreLookBack: boundaryInOpenTurn counts the event at the
// boundary (a fork at a turn/start is inside that turn; one at the turn/end
// before it is not); afterRefused reads the last store_open before the
// failing step, not one after it nor an earlier one.
func TestForkAndStoreLookBack(t *testing.T) {
	lines := []string{
		`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"trigger":{"kind":"message"}}}`,
		`{"type":"user/message","seq":1,"time":1,"data":{"content":[{"type":"text","text":"a"}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
		`{"type":"turn/end","seq":2,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}`,
		`{"type":"turn/start","seq":3,"time":1,"data":{"turn":2,"trigger":{"kind":"message"}}}`,
	}
	for boundary, want := range map[int64]bool{0: true, 1: true, 2: false, 3: true} {
		b := boundary
		v := Vector{Steps: []Step{{Op: "seed", Lines: &lines}, {Op: "fork", Boundary: &b}}}
		c := &failing{system: SeedB736, v: v, f: Failure{Step: 1, Op: "fork"}, step: v.Steps[1]}
		if got := c.boundaryInOpenTurn(); got != want {
			t.Errorf("fork at %d: in an open turn %v, want %v", boundary, got, want)
		}
	}
	refused := Step{Op: "store_open", Expect: &Result{Error: "persist.corrupt"}}
	opened := Step{Op: "store_open", Expect: &Result{}}
	other := Step{Op: "append"}
	for _, c := range []struct {
		name  string
		steps []Step
		at    int
		want  bool
	}{
		{"refused just before", []Step{opened, refused, other}, 2, true},
		{"refused, then opened", []Step{refused, opened, other}, 2, false},
		{"refused only after", []Step{opened, other, refused}, 1, false},
		{"none before", []Step{other, refused}, 0, false},
	} {
		f := &failing{system: SeedB736, v: Vector{Steps: c.steps}, f: Failure{Step: c.at, Op: c.steps[c.at].Op}, step: c.steps[c.at]}
		if got := f.afterRefused("persist.corrupt"); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestFrameMagicLookAlikes: the unused-bit check and the released text
// read a zstd frame only from its magic: four bytes that are the magic
// alone (no descriptor) are no frame with the bit, and are kept as they
// are; a frame whose descriptor has bit 4 set is one.
func TestFrameMagicLookAlikes(t *testing.T) {
	magic := []byte{0x28, 0xb5, 0x2f, 0xfd}
	withBit := append(append([]byte(nil), magic...), 0x10)
	for _, c := range []struct {
		file []byte
		bit  bool
	}{{magic, false}, {withBit, true}, {magic[:3], false}, {append(append([]byte(nil), magic...), 0x08), false}} {
		f := c.file
		st := Step{Op: "released_open", File: &f}
		if got := (&failing{step: st}).unusedFrameBit(); got != c.bit {
			t.Errorf("% x: unused bit %v, want %v", c.file, got, c.bit)
		}
		if got := releasedText(st); !bytes.Equal(got, c.file) {
			t.Errorf("% x: released text % x, want the bytes as they are", c.file, got)
		}
	}
	// A whole frame is decompressed.
	frame := zstdframe.Frame(zstdframe.Shape{Single: true, Checksum: true}, []zstdframe.Block{zstdframe.Raw([]byte("{\"a\":1}\n"))})
	if got := releasedText(Step{Op: "released_open", File: &frame}); string(got) != "{\"a\":1}\n" {
		t.Errorf("a zstd frame's released text: %q", got)
	}
}

// TestD50NeedsARequestHeader: D50 (a loaded request/header without
// provider and model) explains a seed refused for such a header, and not
// for the same data under another type.
func TestD50NeedsARequestHeader(t *testing.T) {
	f := Failure{Step: 0, Op: "seed", Want: "success", Got: "event.data_invalid"}
	for typ, want := range map[string]string{"request/header": "D50", "todo/write": ""} {
		lines := []string{`{"type":"` + typ + `","seq":0,"time":1,"data":{"header":{"config":{"temperature":1}}}}`}
		v := Vector{ID: "hand.d50", Steps: []Step{{Op: "seed", Lines: &lines}}}
		if got := Explain(SeedB736, v, f); got != want {
			t.Errorf("%s: explained by %q, want %q", typ, got, want)
		}
	}
}
