package conformance

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/internal/ops"
	"github.com/surfacelog/surface/spec"
)

// The seed systems whose outcomes the rows of spec/DIFFERENCES.md explain:
// the TypeScript of toninfo/deepseek-harness at b736889ac7, and its
// released npm packages 0.1.0-rc.8 (../shared/tools/seed-testee runs both
// as testees).
const (
	SeedB736   = "b736"
	SeedNpmRC8 = "npm-rc8"
)

// SeedSystems lists the seed systems, in the order their rows tag a vector.
var SeedSystems = []string{SeedB736, SeedNpmRC8}

// Explanation is a rule of the classifier: the row of spec/DIFFERENCES.md
// that explains a seed system's failure of a vector when the failure and
// the vector have the shape the rule names.
type Explanation struct {
	Row string
	// Why says, in a line, what the rule recognises.
	Why   string
	match func(c *failing) bool
}

// failing is one failure of a seed system, with what a rule may look at.
type failing struct {
	system string
	v      Vector
	f      Failure
	step   Step
	lines  []map[string]json.RawMessage // the log the step acts on (lazily)
	loaded bool
}

// Explain returns the row of spec/DIFFERENCES.md that explains the failure
// f of vector v by the seed system (SeedB736 or SeedNpmRC8): the first
// rule of that system's table that recognises it, and "" when none does
// (a difference no row describes yet).
func Explain(system string, v Vector, f Failure) string {
	if e, ok := ExplanationOf(system, v, f); ok {
		return e.Row
	}
	return ""
}

// ExplanationOf is Explain with the rule that matched.
func ExplanationOf(system string, v Vector, f Failure) (Explanation, bool) {
	if f.Step < 0 || f.Step >= len(v.Steps) || v.Steps[f.Step].Op != f.Op {
		return Explanation{}, false
	}
	if f.Want == f.Got && len(f.Differ) == 0 {
		return Explanation{}, false // nothing differs: not a failure to explain
	}
	c := &failing{system: system, v: v, f: f, step: v.Steps[f.Step]}
	table := b736Rules
	if system == SeedNpmRC8 {
		table = npmRules
	}
	for _, r := range table {
		if r.match(c) {
			return r, true
		}
	}
	return Explanation{}, false
}

// Explanations lists the classifier's rules of a seed system.
func Explanations(system string) []Explanation {
	if system == SeedNpmRC8 {
		return append([]Explanation(nil), npmRules...)
	}
	return append([]Explanation(nil), b736Rules...)
}

// --- what a rule looks at ---

func (c *failing) want(codes ...string) bool { return oneOf(c.f.Want, codes) }
func (c *failing) got(codes ...string) bool  { return oneOf(c.f.Got, codes) }
func (c *failing) op(ops ...string) bool     { return oneOf(c.f.Op, ops) }

func (c *failing) differ(members ...string) bool {
	return c.f.Want == c.f.Got && subset(c.f.Differ, members) // some member differs (ExplanationOf)
}

func oneOf(x string, xs []string) bool {
	for _, y := range xs {
		if x == y || (strings.HasSuffix(y, ".") && strings.HasPrefix(x, y)) {
			return true
		}
	}
	return false
}

func subset(xs, of []string) bool {
	for _, x := range xs {
		if !oneOf(x, of) {
			return false
		}
	}
	return true
}

// data is the step's data bytes (an append).
func (c *failing) data() []byte {
	if c.step.DataBase64 != nil {
		return c.step.DataBase64
	}
	if c.step.DataText != nil {
		return []byte(*c.step.DataText)
	}
	return nil
}

// texts are the JSON texts the step hands over: an append's data, a
// seed's lines, the lines of a store_open's JSONL file.
func (c *failing) texts() [][]byte {
	switch c.f.Op {
	case "append":
		return [][]byte{c.data()}
	case "seed":
		var out [][]byte
		if c.step.Lines != nil {
			for _, l := range *c.step.Lines {
				out = append(out, []byte(l))
			}
		}
		return out
	case "store_open":
		if c.step.File == nil || c.step.Format == "sqlite" {
			return nil
		}
		return bytes.Split(*c.step.File, []byte("\n"))
	}
	return nil
}

// anyText reports whether a text the step hands over has the property.
func (c *failing) anyText(p func(jsonFacts) bool) bool {
	for _, t := range c.texts() {
		if p(factsOf(t)) {
			return true
		}
	}
	return false
}

// stepType is an append's type.
func (c *failing) stepType() string {
	if c.step.Type == nil {
		return ""
	}
	return *c.step.Type
}

// registered reports whether the vector registers type t.
func (c *failing) registered(t string) bool {
	for _, s := range c.v.Steps {
		for _, td := range s.Types {
			if td.Type == t {
				return true
			}
		}
	}
	return false
}

// hasStep reports whether the vector has a step of op before the failing one.
func (c *failing) hasStep(op string) bool {
	for _, s := range c.v.Steps[:c.f.Step] {
		if s.Op == op {
			return true
		}
	}
	return false
}

// log is the log the failing step acts on, each event a map of its wire
// members: a seed's lines, or the model's log after the steps before it
// (for a store_open, after it: what the file held and repair added).
func (c *failing) log() []map[string]json.RawMessage {
	if c.loaded {
		return c.lines
	}
	c.loaded = true
	var raw [][]byte
	if c.f.Op == "seed" {
		raw = c.texts()
	} else {
		upto := c.f.Step
		if c.f.Op == "store_open" {
			upto++
		}
		for _, e := range c.modelAfter(upto).Events {
			raw = append(raw, []byte(WireLine(e)))
		}
	}
	for _, l := range raw {
		var m map[string]json.RawMessage
		if json.Unmarshal(l, &m) == nil {
			c.lines = append(c.lines, m)
		}
	}
	return c.lines
}

// modelAfter is the model's state after the vector's first n steps.
func (c *failing) modelAfter(n int) ops.State {
	m := NewModelMachine()
	m.Reset()
	for _, s := range c.v.Steps[:n] {
		ps, err := s.Prepared()
		if err != nil {
			break
		}
		if _, err := m.Do(ps); err != nil {
			break
		}
	}
	return m.d.State()
}

// alsoBreaks reports whether the failing step breaks the rule of code as
// well as the one the spec reports first: the seed system then reports
// the other one (D2), which is a check order and not a disagreement about
// the rule. Only the codes the seed system was seen to report first are
// known here.
func (c *failing) alsoBreaks(code string) bool {
	switch code {
	case "replace.start_not_on_surface", "replace.end_not_on_surface", "replace.reversed":
		if c.f.Op != "append" {
			return false
		}
		var op struct {
			Op         string `json:"op"`
			Start, End *int64
		}
		if json.Unmarshal(c.step.SurfaceOp, &op) != nil || op.Op != "replace" || op.Start == nil || op.End == nil {
			return false
		}
		surface := c.modelAfter(c.f.Step).Surface
		at := func(seq int64) int { return slices.Index(surface, seq) }
		switch code {
		case "replace.start_not_on_surface":
			return at(*op.Start) < 0
		case "replace.end_not_on_surface":
			return at(*op.Start) >= 0 && at(*op.End) < 0
		default:
			return at(*op.Start) > at(*op.End) && at(*op.End) >= 0
		}
	case "event.invalid_envelope":
		// The seed system's adapter parses every line first: a line that
		// is not a JSON object is refused before any rule runs.
		for _, t := range c.texts() {
			var m map[string]json.RawMessage
			if json.Unmarshal(t, &m) != nil {
				return true
			}
		}
	}
	return false
}

// logHas reports whether an event of the log has the property.
func (c *failing) logHas(p func(typ string, data map[string]json.RawMessage, e map[string]json.RawMessage) bool) bool {
	for _, e := range c.log() {
		var typ string
		_ = json.Unmarshal(e["type"], &typ)
		var data map[string]json.RawMessage
		_ = json.Unmarshal(e["data"], &data)
		if p(typ, data, e) {
			return true
		}
	}
	return false
}

// lacksProviderModel reports whether obj lacks a non-empty string
// provider or model.
func lacksProviderModel(obj json.RawMessage) bool {
	var pm struct {
		Provider *string `json:"provider"`
		Model    *string `json:"model"`
	}
	if json.Unmarshal(obj, &pm) != nil {
		return true
	}
	return pm.Provider == nil || *pm.Provider == "" || pm.Model == nil || *pm.Model == ""
}

// openCompaction reports whether a compaction of the log was started and
// not ended (COMP-2: the last start event, until an end of its vocabulary
// and, for compaction/*, its compactionId).
func (c *failing) openCompaction() bool {
	open, id := "", ""
	c.logHas(func(typ string, data, _ map[string]json.RawMessage) bool {
		var cid string
		_ = json.Unmarshal(data["compactionId"], &cid)
		switch {
		case typ == "compact/start" || typ == "compaction/start":
			open, id = typ, cid
		case typ == "compact/end" && open == "compact/start",
			typ == "compaction/end" && open == "compaction/start" && cid == id:
			open = ""
		}
		return false
	})
	return open != ""
}

// objectArguments reports whether an assistant message of the log has a
// tool-call block whose arguments are not a string.
func (c *failing) objectArguments() bool {
	return c.logHas(func(typ string, data, _ map[string]json.RawMessage) bool {
		if typ != "assistant/message" {
			return false
		}
		var blocks []struct {
			Type      string          `json:"type"`
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(data["content"], &blocks)
		for _, b := range blocks {
			if b.Type == "tool-call" && len(b.Arguments) > 0 && b.Arguments[0] != '"' {
				return true
			}
		}
		return false
	})
}

// lineHasMember reports whether a text the step hands over (or, for an
// append, the step itself) carries the envelope member.
func (c *failing) lineHasMember(member string) bool {
	if c.f.Op == "append" {
		return member == "ignorable" && c.step.Ignorable
	}
	if c.f.Op == "store_open" && c.step.Format == "sqlite" {
		for _, s := range c.step.SQL {
			if strings.Contains(s, member) {
				return true
			}
		}
	}
	for _, t := range c.texts() {
		var m map[string]json.RawMessage
		if json.Unmarshal(t, &m) == nil {
			if _, ok := m[member]; ok {
				return true
			}
		}
	}
	return false
}

// duplicateMember reports whether a line the step hands over repeats an
// envelope member.
func (c *failing) duplicateMember() bool {
	for _, t := range c.texts() {
		dec := json.NewDecoder(bytes.NewReader(t))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			continue
		}
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			k, _ := tok.(string)
			if seen[k] {
				return true
			}
			seen[k] = true
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				break
			}
		}
	}
	return false
}

// unknownType reports whether the step's event type (an append), or a
// seed's line at the wanted index, is neither in the catalog nor
// registered.
func (c *failing) unknownType() bool {
	known := func(t string) bool { return event.Known(event.Type(t)) || c.registered(t) }
	if c.f.Op == "append" {
		return !known(c.stepType())
	}
	for _, t := range c.texts() {
		var e struct {
			Type *string `json:"type"`
		}
		if json.Unmarshal(t, &e) == nil && e.Type != nil && !known(*e.Type) {
			return true
		}
	}
	return false
}

// surfaceRuleCode reports whether code is a rejection by the surface rules
// a seed system shares (SURF-1 to SURF-16), in any check order.
func surfaceRuleCode(code string) bool {
	return oneOf(code, []string{"event.invalid_envelope", "seq.", "surface.", "sources.", "replace."})
}

// --- the rules ---

var b736Rules = []Explanation{
	{"D29", "a strict vector: the seed system has no strict mode and accepts what strict mode refuses", func(c *failing) bool {
		return c.hasStep("strict") && c.want("strict.") && c.got("success")
	}},
	{"D20", "a registration: the seed system's vocabulary is open, so registering is a no-op and never refused", func(c *failing) bool {
		return c.op("register") && c.want("vocabulary.invalid") && c.got("success")
	}},
	{"D20", "the data of a registered log-only type: the seed system checks no registration", func(c *failing) bool {
		return c.op("append") && c.registered(c.stepType()) && c.want("event.data_invalid") && c.got("success")
	}},
	{"D20", "the member ignorable: unknown to b736889ac7's envelope", func(c *failing) bool {
		return c.op("append", "seed", "store_open") && c.got("event.invalid_envelope") && c.lineHasMember("ignorable")
	}},
	{"D20", "an unknown type: the seed system's vocabulary is open, so the event is a log-only one (and a marker on it is forbidden)", func(c *failing) bool {
		return c.op("append", "seed") && c.want("event.unknown_type") && c.got("success", "surface.op_forbidden", "surface.sources_forbidden") && c.unknownType()
	}},
	{"D26", "a SQLite store holding an ignorable event: b736889ac7's schema has no place for the member", func(c *failing) bool {
		return c.op("store_file") && c.differ("file") && c.hasSQLiteStore() && c.logHas(func(_ string, _, e map[string]json.RawMessage) bool { _, ok := e["ignorable"]; return ok })
	}},
	{"D47", "data with invalid UTF-8: the seed system decodes it to U+FFFD and accepts it", func(c *failing) bool {
		return c.op("append", "seed", "store_open") && c.want("event.data_not_json") && c.got("success") && c.anyText(func(f jsonFacts) bool { return f.invalidUTF8 })
	}},
	{"D49", "data nested deeper than 10,000 levels: the seed system's recursion overflows its stack", func(c *failing) bool {
		return c.want("event.data_not_json") && c.got("real.stack_overflow") && c.anyText(func(f jsonFacts) bool { return f.depth > 10000 })
	}},
	{"D48", "data with a duplicate key: JSON.parse keeps the last value and the seed system accepts it", func(c *failing) bool {
		return c.want("event.data_not_json") && c.got("success", "real.accepted_then_derive_threw") && c.anyText(func(f jsonFacts) bool { return f.duplicate })
	}},
	{"D7", "an integer literal beyond 2^53-1: JSON.parse rounds it and the seed system accepts it", func(c *failing) bool {
		return c.want("event.data_not_json") && c.got("success") && c.anyText(func(f jsonFacts) bool { return f.unsafeInt || f.notFinite })
	}},
	{"D56", "an envelope integer written as negative zero: the seed system refuses it as not lossless", func(c *failing) bool {
		return c.op("seed") && c.want("success") && c.got("event.data_not_json") && c.anyText(func(f jsonFacts) bool { return f.negZero })
	}},
	{"D51", "an envelope member written twice: JSON.parse keeps the last and the seed system goes on", func(c *failing) bool {
		return c.op("seed") && c.want("event.invalid_envelope") && !c.got("event.invalid_envelope") && c.duplicateMember()
	}},
	{"D3", "data of the wrong shape: the seed system checks shapes by TypeScript types only, so it accepts the event (and may throw deriving it)", func(c *failing) bool {
		return c.op("append") && c.want("event.data_invalid") && c.got("success", "real.accepted_then_derive_threw") && !c.unknownType()
	}},
	{"D4", "a seeded assistant/message without {provider, model} provenance before the line the spec refuses: the seed system refuses it first", func(c *failing) bool {
		return c.op("seed") && c.f.Want != "success" && c.got("event.data_invalid") && c.step.Expect != nil && c.step.Expect.Index != nil &&
			c.lineBefore(*c.step.Expect.Index, func(typ string, data map[string]json.RawMessage) bool {
				return typ == "assistant/message" && lacksProviderModel(data["provenance"])
			})
	}},
	{"D4", "a loaded assistant/message without {provider, model} provenance: the seed system refuses it", func(c *failing) bool {
		return c.op("seed", "repair", "crash_reopen", "store_open", "fork") && c.want("success") && c.got("event.data_invalid") &&
			c.logHas(func(typ string, data, _ map[string]json.RawMessage) bool {
				return typ == "assistant/message" && lacksProviderModel(data["provenance"])
			})
	}},
	{"D50", "a loaded request/header without provider and model: the seed system refuses it", func(c *failing) bool {
		return c.op("seed", "repair", "crash_reopen", "store_open", "fork") && c.want("success") && c.got("event.data_invalid") &&
			c.logHas(func(typ string, data, _ map[string]json.RawMessage) bool {
				if typ != "request/header" || data == nil {
					return false
				}
				var header struct {
					Config json.RawMessage `json:"config"`
				}
				_ = json.Unmarshal(data["header"], &header)
				return lacksProviderModel(header.Config)
			})
	}},
	{"D2", "two rules broken at once: the seed system checks them in another order", func(c *failing) bool {
		return c.op("append", "seed") && surfaceRuleCode(c.f.Want) && surfaceRuleCode(c.f.Got) && c.f.Want != c.f.Got && c.alsoBreaks(c.f.Got)
	}},
	{"D21", "a compaction in the compaction/* vocabulary: b736889ac7 writes compact/* only", func(c *failing) bool {
		return c.op("compact_begin") && c.got("real.no_compaction_vocabulary") && c.step.Vocabulary == "compaction"
	}},
	{"D57", "a snapped compaction: the seed system cannot snap a range to balanced cuts", func(c *failing) bool {
		return c.op("compact_begin") && c.got("real.no_snap") && c.step.Snap
	}},
	{"D58", "a prune: the seed system has no tool-result prune", func(c *failing) bool {
		return c.op("prune") && c.got("real.no_prune")
	}},
	{"D22", "the balance of a cut at a seq not on the surface: the seed system throws", func(c *failing) bool {
		return c.op("balance") && c.want("success") && c.got("real.balance_seq_not_on_surface")
	}},
	{"D30", "a summary of blocks COMP-9 refuses: the seed system frames and prices it (and then finds it not smaller)", func(c *failing) bool {
		return c.op("compact_commit") && c.want("compaction.summary_invalid") && c.got("success", "real.summary_not_smaller")
	}},
	{"D32", "a plain commit: the seed system always frames the summary and checks its size", func(c *failing) bool {
		return c.op("compact_commit") && c.step.Plain && c.got("real.summary_not_smaller")
	}},
	{"D33", "a summary not smaller than what it shadows: the seed system throws the meter's text, which has no code", func(c *failing) bool {
		return c.op("compact_commit") && c.want("compaction.not_smaller") && c.got("real.summary_not_smaller")
	}},
	{"D53", "a commit without provider and model: the seed system's record then holds undefined members and is refused", func(c *failing) bool {
		return c.op("compact_commit") && c.got("event.data_not_json") && (c.step.Provider == nil || c.step.Model == nil)
	}},
	{"D54", "a folded tool call whose arguments are an object: the seed system's meter prices them NaN and its record is refused", func(c *failing) bool {
		return c.op("compact_commit") && c.got("event.data_not_json") && c.objectArguments()
	}},
	{"D60", "an append between begin and commit: the seed system aborts with its text, which has no code, and has no option to allow it", func(c *failing) bool {
		return c.op("compact_commit") && c.got("real.log_changed") && (c.want("compaction.log_changed") || c.want("success") && c.lastBegin().Concurrent)
	}},
	{"D59", "a compaction left open in an earlier, closed turn: the seed system's lock scan stops at the turn boundary", func(c *failing) bool {
		return c.op("compact_begin") && c.want("compaction.locked") && c.got("success") && c.openCompaction()
	}},
	{"D64", "a compaction over providers' items, or on history the provider holds: the seed system has no provider items and folds any range", func(c *failing) bool {
		return c.op("compact_begin", "prune", "compact_select") && c.want("compaction.opaque_items", "compaction.provider_compacted", "compaction.provider_history") && !c.f.failedAsWanted()
	}},
	{"D65", "a folded node holding a provider's item: the seed system's meter prices its JSON, opaque payload included", func(c *failing) bool {
		return c.op("compact_commit", "compact_select") && (c.differ("events") || c.differ("range")) && c.foldsNative()
	}},
	{"D36", "an abort with an empty reason: the seed system writes the empty error", func(c *failing) bool {
		return c.op("compact_abort") && c.differ("events") && c.step.Reason != nil && *c.step.Reason == ""
	}},
	{"D24", "a repair with a compaction open: the seed system's repair does not end it (so later closers move up a seq)", func(c *failing) bool {
		return c.op("repair", "crash_reopen") && c.differ("closers", "messages", "surface") && slices.Contains(c.f.Differ, "closers") && c.openCompaction()
	}},
	{"D12", "a repair with a pending call whose assistant message was shadowed: the seed system closes it with a tool/result", func(c *failing) bool {
		return c.op("repair", "crash_reopen") && c.differ("closers", "messages", "surface") && slices.Contains(c.f.Differ, "closers") && c.shadowedPendingCall()
	}},
	{"D52", "a session reopened before its first event: the seed system never wrote it", func(c *failing) bool {
		return c.op("crash_reopen") && c.got("real.session_not_found") && len(c.log()) == 0
	}},
	{"D28", "a fork child shorter than its seedLength: the seed system loads it", func(c *failing) bool {
		return c.op("store_open") && c.want("persist.fork_incomplete") && c.got("success")
	}},
	{"D31", "an empty id, or a file of another session: the seed system takes the id as given", func(c *failing) bool {
		return c.op("store_open") && c.want("persist.header_invalid", "persist.wrong_session")
	}},
	{"D17", "a file that is not a session: the seed system calls it corrupt, or stamps it", func(c *failing) bool {
		return c.op("store_open") && c.want("persist.not_a_session")
	}},
	{"D55", "a SQLite database of an unsupported schema version: the seed system switches it to WAL before it refuses it", func(c *failing) bool {
		return c.op("store_file") && c.differ("file") && c.hasSQLiteStore() && c.afterRefused("persist.schema_version")
	}},
	{"D16", "a torn last line: the seed system cuts it in place and keeps no copy", func(c *failing) bool {
		return c.op("store_open") && c.differ("report") && c.step.Format == "jsonl"
	}},
	{"D13", "a JSONL file with a complete line that breaks a rule, or damage before the last line: the seed system truncates it as a crash tail", func(c *failing) bool {
		return c.op("store_open") && c.step.Format == "jsonl" && c.got("success") && c.f.Want != "success"
	}},
}

// hasSQLiteStore reports whether the vector opened a SQLite store before
// the failing step.
func (c *failing) hasSQLiteStore() bool {
	for _, s := range c.v.Steps[:c.f.Step] {
		if s.Op == "store_open" && s.Format == "sqlite" {
			return true
		}
	}
	return false
}

// afterRefused reports whether the last store_open before the failing
// step is expected to be refused with code.
func (c *failing) afterRefused(code string) bool {
	for i := c.f.Step - 1; i >= 0; i-- {
		if s := c.v.Steps[i]; s.Op == "store_open" {
			return s.Expect != nil && s.Expect.Error == code
		}
	}
	return false
}

// ExplainReports builds the known-failures file of a seed system from the
// reports (--format json) of one or more runs of it against vectors: every
// failure with the row that explains it. A failure must be the same in
// every report, up to its digest; a digest that differs between reports
// (results carrying wall-clock times) is left out, so the entry matches
// any results with that step, op, outcomes and members. The second result
// lists what no rule explains, or what the reports disagree on; the file
// is complete only when it is empty.
func ExplainReports(system string, vectors []Vector, reports []*Report) (KnownFailures, []string) {
	k := KnownFailures{
		Comment:  "The vectors the seed system " + system + " fails, each with the row of spec/DIFFERENCES.md that explains the failure and the failure it predicts. Written by `conformance known-failures --seed " + system + " --explain REPORT.json` from a run of ../shared/tools/seed-testee; a digest left out changes between runs.",
		Failures: map[string]string{},
	}
	byID := map[string]Vector{}
	for _, v := range vectors {
		byID[v.ID] = v
	}
	var problems []string
	if len(reports) == 0 {
		return k, []string{"no report"}
	}
	for _, o := range reports[0].Outcomes {
		if o.Status != StatusFail && o.Status != StatusError {
			continue
		}
		f, err := ParseFailure(o.Signature)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %s (%s)", o.ID, o.Signature, firstLine(o.Detail)))
			continue
		}
		for _, r := range reports[1:] {
			other, found := r.find(o.ID)
			g, err := ParseFailure(other.Signature)
			switch {
			case !found || err != nil:
				problems = append(problems, fmt.Sprintf("%s: %s in one run, %s %q in another", o.ID, o.Signature, other.Status, other.Signature))
			case f.Short() != g.Short():
				problems = append(problems, fmt.Sprintf("%s: %s in one run, %s in another", o.ID, o.Signature, g))
			case f.Digest != g.Digest:
				f.Digest = ""
			}
		}
		v, ok := byID[o.ID]
		if !ok {
			problems = append(problems, o.ID+": no such vector")
			continue
		}
		row := Explain(system, v, f)
		if row == "" {
			problems = append(problems, fmt.Sprintf("%s: %s: no row explains it", o.ID, f))
			continue
		}
		k.Failures[o.ID] = Known{Rows: []string{row}, Failure: f}.String()
	}
	for _, r := range reports[1:] {
		for _, o := range r.Outcomes {
			if (o.Status == StatusFail || o.Status == StatusError) && k.Failures[o.ID] == "" {
				if first, _ := reports[0].find(o.ID); first.Status == StatusPass {
					problems = append(problems, fmt.Sprintf("%s: passes in one run, fails in another", o.ID))
				}
			}
		}
	}
	sort.Strings(problems)
	return k, problems
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

//go:embed seed/*.json
var seedFiles embed.FS

// SeedKnownFailures returns the committed known-failures file of a seed
// system (conformance/seed/SYSTEM.json): what its last recorded run
// failed, each failure with the row that explains it.
func SeedKnownFailures(system string) (KnownFailures, error) {
	var k KnownFailures
	b, err := seedFiles.ReadFile("seed/" + system + ".json")
	if err != nil {
		return k, fmt.Errorf("no known failures of a seed system %q: %w", system, err)
	}
	if err := json.Unmarshal(b, &k); err != nil {
		return k, fmt.Errorf("seed/%s.json: %w", system, err)
	}
	return k, nil
}

// SeedRows returns, per vector id, the rows of spec/DIFFERENCES.md that
// explain the seed systems' recorded failures of it (their union, sorted):
// the vectors' differences tags.
func SeedRows() (map[string][]string, error) {
	out := map[string][]string{}
	for _, sys := range SeedSystems {
		k, err := SeedKnownFailures(sys)
		if err != nil {
			return nil, err
		}
		for id, entry := range k.Failures {
			for _, r := range ParseKnown(entry).Rows {
				if !slices.Contains(out[id], r) {
					out[id] = append(out[id], r)
				}
			}
		}
	}
	for id := range out {
		slices.SortFunc(out[id], compareRows)
	}
	return out, nil
}

func compareRows(a, b string) int {
	x, _ := strconv.Atoi(strings.TrimPrefix(a, "D"))
	y, _ := strconv.Atoi(strings.TrimPrefix(b, "D"))
	return x - y
}

// releasedKnown are the 48 types the released seed system knows
// (spec/README.md §13, REL-2).
var releasedKnown = map[string]bool{}

// PackedKinds are the kinds of the released system's packed chunk rows
// (REL-1).
var PackedKinds = []string{"text-chunks", "reasoning-chunks", "tool-call-chunks"}

func init() {
	for _, t := range spec.ReleasedTypes() {
		releasedKnown[t] = true
	}
}

// b736Message reports whether a line or event is a message event in the
// b736889ac7 vocabulary (no identified message: no id, no message member).
func b736Message(typ string, data map[string]json.RawMessage) bool {
	switch typ {
	case "user/message", "assistant/message", "tool/result", "context/message", "steering/message":
		_, id := data["id"]
		_, msg := data["message"]
		return !id && !msg
	}
	return false
}

// reseeded reports whether the released session was built again from a
// seed before the failing step or by it (a seed, a fork that goes on, a
// repair, a crash, a store, or an append of an ignorable event, which the
// adapter can only hand over as a seed): the released system then appends
// session/end-seed, and every later seq moves by one.
func (c *failing) reseeded() bool {
	for _, s := range c.v.Steps[:c.f.Step+1] {
		switch {
		case s.Op == "seed", s.Op == "fork" && s.Continue, s.Op == "repair", s.Op == "crash_reopen", s.Op == "store_open", s.Op == "append" && s.Ignorable:
			return true
		}
	}
	return false
}

var npmRules = []Explanation{
	{"D20", "an unknown type appended: the released session's vocabulary is open at append, and refuses unknown types only on load", func(c *failing) bool {
		return c.op("append") && c.want("event.unknown_type") && c.got("success", "surface.op_forbidden", "surface.sources_forbidden") && c.unknownType()
	}},
	{"D20", "a registration: the released vocabulary has no registered types, so registering is a no-op", func(c *failing) bool {
		return c.op("register") && c.want("vocabulary.invalid") && c.got("success")
	}},
	{"D20", "the data of a registered log-only type: the released system checks no registration", func(c *failing) bool {
		return c.op("append") && c.registered(c.stepType()) && c.want("event.data_invalid") && c.got("success")
	}},
	{"D20", "a registered type loaded again: the released loader refuses a type it does not know", func(c *failing) bool {
		return c.op("crash_reopen", "repair", "store_open") && c.got("event.unknown_type") && c.logHas(func(typ string, _, _ map[string]json.RawMessage) bool { return c.registered(typ) })
	}},
	{"D49", "data nested deeper than 10,000 levels: the released system's recursion overflows its stack", func(c *failing) bool {
		return c.want("event.data_not_json") && c.got("real.stack_overflow") && c.anyText(func(f jsonFacts) bool { return f.depth > 10000 })
	}},
	{"D56", "an envelope integer written as negative zero: the released system refuses it as not lossless", func(c *failing) bool {
		return c.op("seed") && c.want("success") && c.got("event.data_not_json") && c.anyText(func(f jsonFacts) bool { return f.negZero })
	}},
	{"D39", "a type the released vocabulary dropped (context/message, steering/message, compact/*): unknown, or no longer surface-eligible", func(c *failing) bool {
		dropped := func(t string) bool { return t != "" && !releasedKnown[t] && event.Known(event.Type(t)) }
		if c.op("append") && dropped(c.stepType()) && c.got("surface.op_forbidden", "surface.sources_forbidden") {
			return true
		}
		return c.op("crash_reopen", "repair", "store_open", "seed") && c.got("event.unknown_type") &&
			c.logHas(func(typ string, _, _ map[string]json.RawMessage) bool { return dropped(typ) })
	}},
	{"D2", "two rules broken at once: the released system checks them in another order", func(c *failing) bool {
		return c.op("append", "seed") && surfaceRuleCode(c.f.Want) && surfaceRuleCode(c.f.Got) && c.f.Want != c.f.Got && c.alsoBreaks(c.f.Got)
	}},
	{"D40", "a message event in the b736889ac7 vocabulary: the released seed refuses it, lacking an identified message", func(c *failing) bool {
		return c.op("seed", "append") && c.got("event.data_invalid") && c.f.Want != "event.data_invalid" &&
			(c.op("append") && c.step.Ignorable || c.op("seed")) &&
			c.logHas(func(typ string, data, _ map[string]json.RawMessage) bool { return b736Message(typ, data) }) ||
			c.op("append") && c.step.Ignorable && c.got("event.data_invalid") && b736Message(c.stepType(), dataOf(c.data()))
	}},
	{"D24", "a repair with a compaction open: the released repair does not end it", func(c *failing) bool {
		return c.op("repair", "crash_reopen") && c.differ("closers") && c.openCompaction()
	}},
	{"D45", "a session built again from a seed: the released system appends session/end-seed, so later seqs move by one", func(c *failing) bool {
		return c.f.Want == "success" && c.differ("event", "messages", "surface", "closers") && c.reseeded() &&
			(slices.Contains(c.f.Differ, "event") || slices.Contains(c.f.Differ, "closers"))
	}},
	{"D40", "messages derived from the b736889ac7 vocabulary: the released system derives the data as stored, so role and content differ", func(c *failing) bool {
		return c.op("append", "seed", "fork", "repair", "crash_reopen") && c.differ("messages")
	}},
	{"D40", "an assistant message or tool result in the b736889ac7 vocabulary: the released system derives data.message, which is absent", func(c *failing) bool {
		return c.op("append") && c.want("success") && c.got("real.accepted_then_derive_threw") && b736Message(c.stepType(), dataOf(c.data()))
	}},
	{"D62", "a fork at a boundary outside any turn that is not a turn/end: the released system allows it", func(c *failing) bool {
		return c.op("fork") && c.want("fork.open_turn") && c.got("success") && !c.boundaryInOpenTurn()
	}},
	{"D3", "data of the wrong shape: the released system checks shapes by TypeScript types only, so it accepts the event (and may throw deriving it)", func(c *failing) bool {
		return c.op("append") && c.want("event.data_invalid") && c.got("success", "real.accepted_then_derive_threw", "surface.op_forbidden") && !c.unknownType()
	}},
	{"D38", "a header without delegationDepth: the released reader calls the file corrupt", func(c *failing) bool {
		return c.op("released_open") && c.want("persist.not_a_session") && c.got("persist.corrupt")
	}},
	{"D42", "a message without an identified message in a released file: the released loader upgrades it with a legacy id", func(c *failing) bool {
		return c.op("released_open") && c.want("released.message_invalid") && c.got("success")
	}},
	{"D63", "a packed row of an unknown kind: the released reader stops there and takes the rest as a torn tail", func(c *failing) bool {
		return c.op("released_open") && c.want("event.invalid_envelope") && c.got("success") && c.unknownPackedKind()
	}},
	{"D66", "a zstd frame descriptor with the unused bit set: the released reader's frame scanner refuses it as it refuses the reserved bit", func(c *failing) bool {
		return c.op("released_open") && c.want("success") && !c.got("success") && c.unusedFrameBit()
	}},
}

func dataOf(b []byte) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(b, &m)
	return m
}

// boundaryInOpenTurn reports whether a fork's boundary falls inside an
// open turn: the last turn/start or turn/end at or before it is a
// turn/start.
func (c *failing) boundaryInOpenTurn() bool {
	if c.step.Boundary == nil {
		return false
	}
	open := false
	for i, e := range c.log() {
		if int64(i) > *c.step.Boundary {
			break
		}
		var typ string
		_ = json.Unmarshal(e["type"], &typ)
		switch typ {
		case "turn/start":
			open = true
		case "turn/end":
			open = false
		}
	}
	return open
}

// unknownPackedKind reports whether a released_open's file has a line
// whose type ends in "-chunks" (a packed row) of a kind REL-1 does not
// list.
func (c *failing) unknownPackedKind() bool {
	for _, line := range bytes.Split(releasedText(c.step), []byte("\n")) {
		var e struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(line, &e) == nil && strings.HasSuffix(e.Type, "-chunks") && !slices.Contains(PackedKinds, e.Type) {
			return true
		}
	}
	return false
}

// unusedFrameBit reports whether a released_open's file is a .jsonl.zstd
// whose first frame descriptor has the unused bit 4 set (RFC 8878
// §3.1.1.1.1) and not the reserved bit 3.
func (c *failing) unusedFrameBit() bool {
	if c.step.File == nil {
		return false
	}
	b := *c.step.File
	return len(b) > 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd && b[4]&0x18 == 0x10
}

// releasedText is a released_open's file as text (a .jsonl.zstd
// decompressed).
func releasedText(s Step) []byte {
	if s.File == nil {
		return nil
	}
	b := *s.File
	if len(b) >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd {
		if out, err := zstdDecode(b); err == nil {
			return out
		}
	}
	return b
}

func zstdDecode(b []byte) ([]byte, error) {
	d, err := zstd.NewReader(nil)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.DecodeAll(b, nil)
}

// lastBegin is the last compact_begin step before the failing one.
func (c *failing) lastBegin() Step {
	for i := c.f.Step - 1; i >= 0; i-- {
		if c.v.Steps[i].Op == "compact_begin" {
			return c.v.Steps[i]
		}
	}
	return Step{}
}

// shadowedPendingCall reports whether the open turn of the log before the
// failing step has a tool call without a result whose assistant message is
// no longer on the surface (REP-4).
func (c *failing) shadowedPendingCall() bool {
	st := c.modelAfter(c.f.Step)
	calls := map[string]int64{} // call id -> the seq of its message
	for _, e := range st.Events {
		switch e.Type {
		case event.TypeTurnStart, event.TypeTurnEnd:
			clear(calls)
		case event.TypeAssistantMessage:
			var d struct {
				Content []struct {
					Type string `json:"type"`
					ID   string `json:"id"`
				} `json:"content"`
			}
			_ = json.Unmarshal(e.Data, &d)
			for _, b := range d.Content {
				if b.Type == "tool-call" {
					calls[b.ID] = e.Seq
				}
			}
		case event.TypeToolResult:
			var d struct {
				CallID string `json:"callId"`
			}
			_ = json.Unmarshal(e.Data, &d)
			delete(calls, d.CallID)
		}
	}
	for _, seq := range calls {
		if !slices.Contains(st.Surface, seq) {
			return true
		}
	}
	return false
}

// failedAsWanted reports whether the outcome got is the one wanted (never,
// for a failure: a guard that reads as what it is).
func (f Failure) failedAsWanted() bool { return f.Want == f.Got && len(f.Differ) == 0 }

// lineBefore reports whether a seed line before index has the property.
func (c *failing) lineBefore(index int, p func(typ string, data map[string]json.RawMessage) bool) bool {
	for i, t := range c.texts() {
		if i >= index {
			break
		}
		var e struct {
			Type string                     `json:"type"`
			Data map[string]json.RawMessage `json:"data"`
		}
		if json.Unmarshal(t, &e) == nil && p(e.Type, e.Data) {
			return true
		}
	}
	return false
}

// foldsNative reports whether a surface node of the log before the
// failing step holds a block with a provider's item (PROV-1).
func (c *failing) foldsNative() bool {
	st := c.modelAfter(c.f.Step)
	for _, m := range st.Messages {
		for _, b := range m.Content {
			var blk struct {
				Native json.RawMessage `json:"native"`
			}
			if json.Unmarshal(b, &blk) == nil && blk.Native != nil {
				return true
			}
		}
	}
	return false
}
