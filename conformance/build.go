package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/internal/ops"
)

// BaseTime is the time of the first appended event of a generated vector;
// each append step's time is BaseTime plus its index.
const BaseTime = 1_700_000_000_000

// FromOps converts generator steps into vector steps (without
// expectations). A step that the protocol cannot express (a Go value that
// does not marshal) is dropped.
func FromOps(steps []ops.Step) []Step {
	var out []Step
	for _, s := range steps {
		if vs, ok := fromOp(s, int64(len(out))); ok {
			out = append(out, vs)
		}
	}
	return out
}

func fromOp(s ops.Step, index int64) (Step, bool) {
	switch s.Kind {
	case ops.KindAppend:
		ty := string(s.Type)
		st := Step{Op: "append", Type: &ty}
		t := BaseTime + index
		st.Time = &t
		var data []byte
		switch d := s.Data.(type) {
		case json.RawMessage:
			data = d
		case []byte:
			data = d
		default:
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if enc.Encode(d) != nil {
				return st, false
			}
			data = bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
		}
		if utf8.Valid(data) {
			text := string(data)
			st.DataText = &text
		} else {
			st.DataBase64 = data
		}
		if s.Intent != nil {
			st.SurfaceOp = event.MarkerJSON(s.Intent.Op)
			if s.Intent.Sources != nil {
				st.SourceEventSeqs, _ = json.Marshal(s.Intent.Sources)
			}
		}
		return st, true
	case ops.KindSeed:
		lines := []string{}
		for _, e := range s.Events {
			lines = append(lines, WireLine(e))
		}
		return Step{Op: "seed", Lines: &lines}, true
	case ops.KindSeedJSON:
		lines := []string{}
		for _, l := range s.Lines {
			if !utf8.Valid(l) {
				return Step{}, false
			}
			lines = append(lines, string(l))
		}
		return Step{Op: "seed", Lines: &lines}, true
	case ops.KindFork:
		b := s.Boundary
		return Step{Op: "fork", Boundary: &b, Continue: s.Continue}, true
	case ops.KindProvenance:
		q := s.Seq
		return Step{Op: "provenance", Seq: &q}, true
	case ops.KindRepair:
		return Step{Op: "repair"}, true
	}
	st, ok := fromCompactionOp(s)
	if ok {
		t := BaseTime + index
		st.Time = &t
	}
	return st, ok
}

// fromCompactionOp converts a compaction step; its Time is set by fromOp.
func fromCompactionOp(s ops.Step) (Step, bool) {
	switch s.Kind {
	case ops.KindBegin:
		a, b := s.Start, s.End
		st := Step{Op: "compact_begin", Start: &a, End: &b, Snap: s.Snap}
		if s.V2 {
			st.Vocabulary = "compaction"
		}
		return st, true
	case ops.KindCommit:
		p, m := s.Provider, s.Model
		return Step{Op: "compact_commit", Summary: s.Blocks, Provider: &p, Model: &m, MaxTokens: s.MaxTokens, Plain: s.Plain}, validBlocks(s.Blocks)
	case ops.KindAbort:
		r := s.Reason
		return Step{Op: "compact_abort", Reason: &r}, true
	case ops.KindPrune:
		q := s.Seq
		return Step{Op: "prune", Seq: &q, Content: s.Blocks}, validBlocks(s.Blocks)
	case ops.KindSelect:
		st := Step{Op: "compact_select"}
		if s.KeepLast >= 0 {
			k := s.KeepLast
			st.KeepLast = &k
		} else {
			k := s.KeepTokens
			st.KeepTokens = &k
		}
		return st, true
	case ops.KindBalance:
		q := s.Seq
		return Step{Op: "balance", Seq: &q, After: s.After}, true
	}
	return Step{}, false
}

// validBlocks reports whether blocks can travel in a vector: each is JSON
// text (a block may still break SURF-5 on purpose).
func validBlocks(blocks []json.RawMessage) bool {
	for _, b := range blocks {
		if !json.Valid(b) {
			return false
		}
	}
	return true
}

// WireLine is the wire form of an event, which may be invalid: a
// malformed marker gets a representative malformed value, and data is
// written as it is, even when it is not JSON.
func WireLine(e event.Event) string {
	var b strings.Builder
	t, _ := json.Marshal(string(e.Type))
	b.WriteString(`{"type":` + string(t))
	b.WriteString(`,"seq":` + itoa(e.Seq) + `,"time":` + itoa(e.Time) + `,"data":` + string(e.Data))
	if e.Sources != nil {
		src, _ := json.Marshal(e.Sources)
		b.WriteString(`,"sourceEventSeqs":` + string(src))
	}
	if m := event.MarkerJSON(e.Op); m != nil {
		b.WriteString(`,"surfaceOp":` + string(m))
	}
	if e.Ignorable {
		b.WriteString(`,"ignorable":true`)
	}
	b.WriteString("}")
	return b.String()
}

func itoa(v int64) string { b, _ := json.Marshal(v); return string(b) }

// Expect runs steps on the model and records every result as the
// expectation. It returns the vector's rules (see Coverage) as well.
func Expect(steps []Step) ([]Step, []string) {
	m := NewModelMachine()
	m.Reset()
	out := make([]Step, len(steps))
	cov := newCoverage()
	for i, s := range steps {
		before := m.d.State()
		ps, err := s.Prepared()
		if err != nil {
			panic(fmt.Sprintf("step %d: %v", i, err)) // a generator bug: the vector's SQL does not run
		}
		resp, _ := m.Do(ps)
		r := resp.Result
		s.Expect = &r
		out[i] = s
		cov.step(s, r, before, m.d.State(), i < len(steps)-1)
	}
	return out, cov.rules()
}

// Features returns the features the steps need.
func Features(steps []Step) []string {
	set := map[string]bool{FeatureCore: true}
	for _, s := range steps {
		set[s.Feature()] = true
	}
	var out []string
	for f := range set {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// coverage works out which rules a vector exercises from its steps and
// results.
type coverage struct{ set map[string]bool }

func newCoverage() *coverage { return &coverage{set: map[string]bool{}} }

func (c *coverage) add(rules ...string) {
	for _, r := range rules {
		c.set[r] = true
	}
}

func (c *coverage) rules() []string {
	var out []string
	for r := range c.set {
		out = append(out, r)
	}
	slices.SortFunc(out, compareRuleIDs)
	return out
}

// SortRules sorts rule ids by prefix, then number (SURF-2 before SURF-10).
func SortRules(ids []string) { slices.SortFunc(ids, compareRuleIDs) }

func compareRuleIDs(a, b string) int {
	pa, na, _ := strings.Cut(a, "-")
	pb, nb, _ := strings.Cut(b, "-")
	if pa != pb {
		return strings.Compare(pa, pb)
	}
	if len(na) != len(nb) {
		return len(na) - len(nb)
	}
	return strings.Compare(na, nb)
}

func (c *coverage) step(s Step, r Result, before, after ops.State, more bool) {
	if r.Error != "" {
		c.add(event.CodeRule[event.Code(r.Error)], "SURF-16")
		if more {
			c.add("SURF-17") // later steps see the unchanged state
		}
	}
	switch s.Op {
	case "append":
		if r.Error != "" {
			return
		}
		c.add("SURF-1", "SURF-2", "SURF-3", "SURF-4", "SURF-5")
		if s.Ignorable {
			c.add("SURF-3")
		}
		e := after.Events[len(after.Events)-1]
		switch {
		case !event.IsSurface(e.Type):
			c.add("SURF-6")
		case e.Op.Kind == event.OpAppend:
			c.add("SURF-7", "SURF-8", "SURF-10")
		case e.Op.Kind == event.OpReplace:
			c.add("SURF-7", "SURF-8", "SURF-11", "SURF-12", "SURF-14")
			if slices.Index(before.Surface, e.Op.Start) > 0 && e.Op.Start > e.Op.End {
				c.add("SURF-13")
			}
			for _, seq := range before.Surface {
				if before.Events[seq].Op.Kind == event.OpReplace && slices.Contains(e.Sources, seq) {
					c.add("SURF-15") // a replacement node replaced again
				}
			}
		}
		if e.Sources != nil {
			c.add("SURF-9")
		}
		c.messages(after)
	case "seed":
		c.add("SURF-18")
		if r.Error == "" {
			c.add("SURF-25")
			c.messages(after)
		}
	case "fork":
		c.add("SURF-24")
		if r.Error == "" && s.Continue {
			c.add("SURF-25")
		}
	case "provenance":
		c.add("SURF-23")
	case "register":
		c.add("SURF-3")
	case "compact_begin", "compact_commit", "compact_abort", "prune", "compact_select", "balance":
		c.compaction(s, r, after)
	case "repair", "crash_reopen":
		c.add("REP-1", "REP-5")
		if r.Closers != nil && len(*r.Closers) > 0 {
			c.add("REP-2", "REP-3")
			var first struct{ Type string }
			_ = json.Unmarshal((*r.Closers)[0], &first)
			if first.Type == string(event.TypeCompactEnd) || first.Type == string(event.TypeCompactionEnd) {
				c.add("REP-6", "COMP-2")
			}
		}
		if s.Op == "crash_reopen" {
			c.add("STORE-1", "STORE-3", "STORE-7")
		}
		c.messages(after)
	}
}

// compaction adds the COMP rules a compaction step exercises.
func (c *coverage) compaction(s Step, r Result, after ops.State) {
	switch s.Op {
	case "compact_begin":
		c.add("COMP-3", "COMP-4")
		if r.Error == "" || r.Error == string(event.CodeCompactionLocked) {
			c.add("COMP-1", "COMP-2")
		}
	case "compact_commit":
		c.add("COMP-5")
		if !s.Plain && (r.Error == "" || r.Error == string(event.CodeCompactionNotSmaller)) {
			c.add("COMP-11")
		}
		if r.Error == "" {
			c.add("COMP-1", "COMP-2", "SURF-11", "SURF-14")
			c.messages(after)
		}
	case "compact_abort":
		c.add("COMP-6", "COMP-2")
	case "prune":
		c.add("COMP-7")
		if r.Error == "" {
			c.add("SURF-11", "SURF-21")
		}
	case "compact_select":
		c.add("COMP-8", "COMP-4")
	case "balance":
		c.add("COMP-4")
	}
}

func (c *coverage) messages(st ops.State) {
	if len(st.Surface) > 0 {
		c.add("SURF-19")
	}
	for _, seq := range st.Surface {
		switch st.Events[seq].Type {
		case event.TypeUserMessage, event.TypeAssistantMessage:
			c.add("SURF-20")
		case event.TypeToolResult:
			c.add("SURF-21")
		case event.TypeContextMessage, event.TypeSteeringMessage:
			c.add("SURF-22")
		}
	}
}

// Coverage counts, for each rule, the vectors that cover it, and for each
// error code, the vectors in which some step expects it.
func Coverage(vectors []Vector) (rules, codes map[string]int) {
	rules, codes = map[string]int{}, map[string]int{}
	for _, v := range vectors {
		for _, r := range v.Rules {
			rules[r]++
		}
		seen := map[string]bool{}
		for _, s := range v.Steps {
			if s.Expect != nil && s.Expect.Error != "" && !seen[s.Expect.Error] {
				seen[s.Expect.Error] = true
				codes[s.Expect.Error]++
			}
		}
	}
	return rules, codes
}
