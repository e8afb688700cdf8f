package explore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Op is a surface marker of the abstract log.
type Op struct {
	Kind       string // "none", "append", "replace"
	Start, End int64
}

// Event is an event of the abstract log (Event of Surface.tla).
type Event struct {
	T    string  // user, summary, asst, result, call, tstart, tend, sstart, send, cstart, cend
	Op   Op      // NoOp for the types that are not nodes
	Src  []int64 // sorted, distinct
	Call int     // the tool-call id of asst, result and call; 0 otherwise
}

// State is a state of Surface.tla.
type State struct {
	Log      []Event
	Surface  []int64
	Shadowed []int64 // sorted
	Crashed  bool
}

var (
	noOp     = Op{Kind: "none"}
	appendOp = Op{Kind: "append"}
)

func ev(t string, op Op, src []int64, call int) Event {
	if src == nil {
		src = []int64{}
	}
	return Event{T: t, Op: op, Src: src, Call: call}
}

func (e Event) equal(f Event) bool {
	return e.T == f.T && e.Op == f.Op && e.Call == f.Call && slices.Equal(e.Src, f.Src)
}

// Config is a model-checking config (an MC*.cfg file): its constants and
// the invariants and properties it checks.
type Config struct {
	MaxEvents  int
	Calls      []int
	Bug        string // "none", or one of Bugs
	Invariants []string
	Properties []string
}

// Bugs are the planted wrong edits of Surface.tla (its Bug constant). The
// explorer plants the same ones.
var Bugs = []string{
	"append_without_marker", "reversed_range", "repair_closes_nothing", "closers_reversed", "close_shadowed_call",
	"commit_without_lock", "commit_keeps_lock", "abort_leaves_summary", "balanced_with_one_open",
	"step_crosses_turns", "step_end_keeps_calls", "result_clears_first_registration",
	"summary_over_provider_compaction", "commit_ends_twice", "commit_end_late",
	"step_in_ended_turn",
}

// Options deliberately break the explorer itself, to show that its checks
// bite even where Surface.tla has no Bug for it.
type Options struct {
	// HalfOpen makes the step-by-step Apply of a replace keep its end node.
	HalfOpen bool
	// ExtraInvariant, when set, is checked on every state as well.
	ExtraInvariant func(*State) string
}

// Result of an exploration.
type Result struct {
	Distinct  int
	Generated int
	// Digest is the SHA-256 of the distinct states, each in its canonical
	// form (Canonical), sorted, one per line: TLC's state set has the same
	// digest (tlc_test.go reads it off TLC's -dump file).
	Digest string
	// Violation is the name of the first broken invariant or property, ""
	// if none; Detail says where.
	Violation string
	Detail    string
}

// Explore walks every state of Surface.tla reachable within cfg's bounds,
// breadth first, checking the invariants and properties cfg names.
func Explore(cfg Config, opts Options) Result {
	x := &explorer{cfg: cfg, opts: opts, model: newOracle()}
	return x.run()
}

type explorer struct {
	cfg   Config
	opts  Options
	model *oracle
}

// crossCheck says whether the spec's functions are compared with model/:
// only when nothing is planted, since a planted bug makes the spec reach
// logs the model rightly rejects.
func (x *explorer) crossCheck() bool { return x.cfg.Bug == "none" }

func (x *explorer) run() Result {
	init := State{Log: []Event{}, Surface: []int64{}, Shadowed: []int64{}}
	seen := map[string]bool{init.Canonical(): true}
	queue := []State{init}
	res := Result{Distinct: 1, Generated: 1}
	fail := func(name, detail string) Result {
		res.Violation, res.Detail = name, detail
		return res
	}
	if v := x.invariants(&init); v != "" {
		return fail(v, "in the initial state")
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		ts, err := x.next(&s)
		if err != "" {
			return fail("ModelAgreement", err)
		}
		for _, t := range ts {
			res.Generated++
			if v := x.stepProperties(&s, &t); v != "" {
				return fail(v, fmt.Sprintf("%s\n  from %s\n  to   %s", t.action, s.Canonical(), t.to.Canonical()))
			}
			k := t.to.Canonical()
			if seen[k] {
				continue
			}
			seen[k] = true
			res.Distinct++
			if v := x.invariants(&t.to); v != "" {
				return fail(v, "in state "+k)
			}
			queue = append(queue, t.to)
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	res.Digest = Digest(keys)
	return res
}

// Digest is the digest of a set of states in canonical form.
func Digest(canonical []string) string {
	keys := slices.Clone(canonical)
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

type transition struct {
	action string
	to     State
}

// next lists the successors of s the way TLC generates them: one per
// action and binding of its bound variables that is enabled, a rejected
// candidate (SURF-17) included, whose successor is s itself.
func (x *explorer) next(s *State) ([]transition, string) {
	var out []transition
	var disagreement string
	stay := func(action string) {
		out = append(out, transition{action, *s})
	}
	// Offer of Surface.tla.
	offer := func(action string, e Event) {
		if s.Crashed || len(s.Log) >= x.cfg.MaxEvents {
			return
		}
		ok := x.valid(s.Surface, e)
		if x.crossCheck() && disagreement == "" {
			if accepted := x.model.accepts(s.Log, e); accepted != ok {
				disagreement = fmt.Sprintf("%s: the spec says valid=%v, model/ says %v, for %+v after %s", action, ok, accepted, e, s.Canonical())
			}
		}
		if !ok {
			stay(action)
			return
		}
		to := State{Log: append(slices.Clone(s.Log), e), Surface: x.apply(s.Surface, e, int64(len(s.Log))), Shadowed: s.Shadowed}
		if e.Op.Kind == "replace" {
			to.Shadowed = union(s.Shadowed, shadows(s.Surface, e.Op))
		}
		out = append(out, transition{action, to})
	}
	l := s.Log
	open := openTurn(l)
	pend := x.pending(l, x.cfg.Calls)
	offer("AppendUser", ev("user", appendOp, nil, 0))
	offer("NoMarker", ev("user", noOp, nil, 0))
	offer("MarkerOnCall", ev("call", appendOp, nil, 0))
	for _, c := range append([]int{0}, x.cfg.Calls...) {
		if open {
			offer("AppendAssistant", ev("asst", appendOp, nil, c))
		}
	}
	for _, c := range x.cfg.Calls {
		if slices.Contains(pend, c) {
			offer("AppendCall", ev("call", noOp, nil, c))
			offer("AppendResult", ev("result", appendOp, nil, c))
		}
	}
	if !open {
		offer("TurnStart", ev("tstart", noOp, nil, 0))
	}
	if open {
		offer("TurnEnd", ev("tend", noOp, nil, 0))
	}
	// step_in_ended_turn: a step start is also accepted right after a
	// turn's end that left no step open (the check takes the turn just
	// ended for an open one).
	inTurn := open
	if x.cfg.Bug == "step_in_ended_turn" && len(l) > 0 && l[len(l)-1].T == "tend" {
		from := 0 // TurnStartAt: the index after the last turn start
		for k := range l {
			if l[k].T == "tstart" {
				from = k + 1
			}
		}
		unended := false
		for k := from; k < len(l); k++ {
			if l[k].T == "sstart" {
				unended = true
			} else if l[k].T == "send" {
				unended = false
			}
		}
		inTurn = !unended
	}
	if inTurn && !x.stepOpen(l) {
		offer("StepStart", ev("sstart", noOp, nil, 0))
	}
	if x.stepOpen(l) {
		offer("StepEnd", ev("send", noOp, nil, 0))
	}
	n := len(s.Surface)
	for i := 1; i <= n; i++ {
		for j := 1; j <= n; j++ {
			for _, short := range []bool{false, true} {
				lo, hi := min(i, j), max(i, j)
				src := slices.Clone(s.Surface[lo-1 : hi])
				if short {
					src = slices.DeleteFunc(src, func(v int64) bool { return v == s.Surface[hi-1] })
				}
				slices.Sort(src)
				offer("Replace", ev("user", Op{Kind: "replace", Start: s.Surface[i-1], End: s.Surface[j-1]}, src, 0))
			}
		}
	}
	if !locked(l) && open {
		offer("CompactBegin", ev("cstart", noOp, nil, 0))
	}
	if open { // ProviderCompact (PROV-3)
		if n == 0 {
			offer("ProviderCompact", ev("pcomp", appendOp, nil, 0))
		} else {
			src := slices.Clone(s.Surface)
			slices.Sort(src)
			offer("ProviderCompact", ev("pcomp", Op{Kind: "replace", Start: s.Surface[0], End: s.Surface[n-1]}, src, 0))
		}
	}
	lastPcomp := lastProviderCompaction(l, s.Surface)
	if locked(l) {
		if x.cfg.Bug == "abort_leaves_summary" {
			if !s.Crashed && len(l)+2 <= x.cfg.MaxEvents {
				out = append(out, transition{"CompactAbort", State{
					Log:      append(slices.Clone(l), ev("summary", appendOp, nil, 0), ev("cend", noOp, nil, 0)),
					Surface:  append(slices.Clone(s.Surface), int64(len(l))),
					Shadowed: s.Shadowed,
				}})
			}
		} else {
			offer("CompactAbort", ev("cend", noOp, nil, 0))
		}
	}
	for i := 1; i <= n; i++ {
		for j := i; j <= n; j++ {
			if s.Crashed || !(locked(l) || x.cfg.Bug == "commit_without_lock") || len(l)+2 > x.cfg.MaxEvents {
				continue
			}
			before, after := x.balancedCut(l, s.Surface, i-1, x.cfg.Calls), x.balancedCut(l, s.Surface, j, x.cfg.Calls)
			if x.crossCheck() && disagreement == "" {
				mb, ma := x.model.balanced(l, s.Surface[i-1], false), x.model.balanced(l, s.Surface[j-1], true)
				if mb != before || ma != after {
					disagreement = fmt.Sprintf("CompactCommit(%d, %d): the spec's cuts are balanced %v/%v, model/'s %v/%v, in %s", i, j, before, after, mb, ma, s.Canonical())
				}
			}
			if !before || !after {
				continue
			}
			if i <= lastPcomp && x.cfg.Bug != "summary_over_provider_compaction" {
				continue // PROV-4
			}
			src := slices.Clone(s.Surface[i-1 : j])
			slices.Sort(src)
			e := ev("summary", Op{Kind: "replace", Start: s.Surface[i-1], End: s.Surface[j-1]}, src, 0)
			written := []Event{e, ev("cend", noOp, nil, 0)}
			surface := x.apply(s.Surface, e, int64(len(l)))
			switch x.cfg.Bug {
			case "commit_keeps_lock":
				written = written[:1]
			case "commit_ends_twice":
				written = append(written, ev("cend", noOp, nil, 0))
			case "commit_end_late":
				written = []Event{e, ev("user", appendOp, nil, 0), ev("cend", noOp, nil, 0)}
				surface = append(surface, int64(len(l)+1))
			}
			to := State{
				Log:      append(slices.Clone(l), written...),
				Surface:  surface,
				Shadowed: union(s.Shadowed, s.Surface[i-1:j]),
			}
			if x.crossCheck() && disagreement == "" && !x.model.valid(to.Log) {
				disagreement = "CompactCommit: model/ rejects the log " + to.Canonical()
			}
			out = append(out, transition{"CompactCommit", to})
		}
	}
	if !s.Crashed {
		out = append(out, transition{"Seed", State{Log: l, Surface: x.fold(l), Shadowed: s.Shadowed}})
		out = append(out, transition{"Crash", State{Log: l, Surface: []int64{}, Shadowed: s.Shadowed, Crashed: true}})
	} else {
		cl := x.closers(l, x.fold(l))
		if x.crossCheck() && disagreement == "" {
			if want := x.model.closers(l); !eventsEqual(cl, want) {
				disagreement = fmt.Sprintf("Recover: the spec's closers %+v, model/'s %+v, after %s", cl, want, s.Canonical())
			}
		}
		full := append(slices.Clone(l), cl...)
		out = append(out, transition{"Recover", State{Log: full, Surface: x.fold(full), Shadowed: s.Shadowed}})
		for k := 1; k <= len(x.cfg.Calls)+3; k++ {
			if k < len(cl) {
				out = append(out, transition{"CrashMidRepair", State{Log: append(slices.Clone(l), cl[:k]...), Surface: s.Surface, Shadowed: s.Shadowed, Crashed: true}})
			}
		}
	}
	if x.crossCheck() && disagreement == "" && !s.Crashed {
		if got, want := x.fold(l), x.model.fold(l); !slices.Equal(got, want) {
			disagreement = fmt.Sprintf("Fold: the spec's %v, model/'s %v, of %s", got, want, s.Canonical())
		}
	}
	return out, disagreement
}

// --- the definitions of Surface.tla ---

func isNode(t string) bool {
	return t == "user" || t == "summary" || t == "asst" || t == "result" || t == "pcomp"
}

// lastProviderCompaction is LastProviderCompaction: the 1-based position
// of the last provider compaction on the surface s, 0 when there is none.
func lastProviderCompaction(l []Event, s []int64) int {
	last := 0
	for p, seq := range s {
		if l[seq].T == "pcomp" {
			last = p + 1
		}
	}
	return last
}

// apply is Apply: the step-by-step surface, what the implementation's
// linked list does.
func (x *explorer) apply(s []int64, e Event, seq int64) []int64 {
	switch e.Op.Kind {
	case "append":
		return append(slices.Clone(s), seq)
	case "replace":
		i, j := slices.Index(s, e.Op.Start), slices.Index(s, e.Op.End)
		out := slices.Clone(s[:i])
		out = append(out, seq)
		if x.opts.HalfOpen && i < j {
			j-- // broken: [start, end)
		}
		return append(out, s[j+1:]...)
	}
	return slices.Clone(s)
}

// shadows is Shadows: the inclusive range, empty when reversed (SubSeq).
func shadows(s []int64, op Op) []int64 {
	i, j := slices.Index(s, op.Start), slices.Index(s, op.End)
	if i > j {
		return nil
	}
	return s[i : j+1]
}

func (x *explorer) fold(l []Event) []int64 {
	s := []int64{}
	for k, e := range l {
		s = x.apply(s, e, int64(k))
	}
	return s
}

func (x *explorer) valid(s []int64, e Event) bool {
	markerOK := (isNode(e.T) && e.Op.Kind != "none") || (!isNode(e.T) && e.Op.Kind == "none" && len(e.Src) == 0) ||
		(x.cfg.Bug == "append_without_marker" && isNode(e.T) && e.Op.Kind == "none")
	if !markerOK {
		return false
	}
	if e.Op.Kind != "replace" {
		return true
	}
	i, j := slices.Index(s, e.Op.Start), slices.Index(s, e.Op.End)
	if i < 0 || j < 0 || (i > j && x.cfg.Bug != "reversed_range") {
		return false
	}
	for _, n := range shadows(s, e.Op) {
		if !slices.Contains(e.Src, n) {
			return false
		}
	}
	return true
}

func openTurn(l []Event) bool { return turnStartAt(l) > 0 }

// turnStartAt is TurnStartAt: the 1-based position of the open turn's
// start, or 0.
func turnStartAt(l []Event) int {
	at := 0
	for i, e := range l {
		if e.T == "tstart" {
			at = i + 1
		}
	}
	if at > 0 {
		for _, e := range l[at:] {
			if e.T == "tend" {
				return 0
			}
		}
	}
	return at
}

// lastAfter is the largest 1-based position after from whose event has
// type t (and call c when c > 0), or 0.
func lastAfter(l []Event, from int, t string, c int) int {
	at := 0
	for k := from + 1; k <= len(l); k++ {
		if l[k-1].T == t && (c == 0 || l[k-1].Call == c) {
			at = k
		}
	}
	return at
}

func (x *explorer) stepOpen(l []Event) bool {
	if !openTurn(l) {
		return false
	}
	from := turnStartAt(l)
	if x.cfg.Bug == "step_crosses_turns" {
		from = 0 // broken: a step opened in an earlier turn counts
	}
	start := lastAfter(l, from, "sstart", 0)
	return start > 0 && lastAfter(l, start, "send", 0) == 0
}

func (x *explorer) callsFrom(l []Event) int {
	if x.cfg.Bug == "step_end_keeps_calls" {
		return turnStartAt(l)
	}
	return max(turnStartAt(l), lastAfter(l, turnStartAt(l), "send", 0))
}

// regs is Regs: the 1-based positions registering call c.
func (x *explorer) regs(l []Event, c int) []int {
	var out []int
	for k := x.callsFrom(l) + 1; k <= len(l); k++ {
		if l[k-1].T == "asst" && l[k-1].Call == c {
			out = append(out, k)
		}
	}
	return out
}

func (x *explorer) pending(l []Event, calls []int) []int {
	if !openTurn(l) {
		return nil
	}
	var out []int
	for _, c := range calls {
		r := x.regs(l, c)
		if len(r) == 0 {
			continue
		}
		last := r[len(r)-1]
		if x.cfg.Bug == "result_clears_first_registration" {
			last = r[0]
		}
		if lastAfter(l, last, "result", c) == 0 {
			out = append(out, c)
		}
	}
	return out
}

func (x *explorer) callSources(l []Event, c int) []int64 {
	r := x.regs(l, c)
	if at := lastAfter(l, r[len(r)-1], "call", c); at > 0 {
		return []int64{int64(at - 1)}
	}
	return []int64{}
}

func (x *explorer) host(l []Event, c int) int64 { r := x.regs(l, c); return int64(r[len(r)-1] - 1) }

func locked(l []Event) bool {
	start := lastAfter(l, 0, "cstart", 0)
	return start > 0 && lastAfter(l, start, "cend", 0) == 0
}

// balancedCut is BalancedCut: no call is open after the first k nodes.
func (x *explorer) balancedCut(l []Event, s []int64, k int, calls []int) bool {
	for _, c := range calls {
		n := 0
		for _, seq := range s[:k] {
			e := l[seq]
			if e.T == "asst" && e.Call == c {
				n++
			} else if e.T == "result" && e.Call == c && n > 0 {
				n--
			}
		}
		if n != 0 && !(n == 1 && x.cfg.Bug == "balanced_with_one_open") {
			return false
		}
	}
	return true
}

// closers is Closers: what a recovery appends.
func (x *explorer) closers(l []Event, s []int64) []Event {
	if x.cfg.Bug == "repair_closes_nothing" {
		return nil
	}
	out := []Event{}
	if locked(l) {
		out = append(out, ev("cend", noOp, nil, 0))
	}
	if !openTurn(l) {
		return out
	}
	order := x.pending(l, x.cfg.Calls)
	sort.SliceStable(order, func(a, b int) bool { return x.regs(l, order[a])[0] < x.regs(l, order[b])[0] })
	if x.cfg.Bug == "closers_reversed" {
		slices.Reverse(order)
	}
	for _, c := range order {
		if slices.Contains(s, x.host(l, c)) || x.cfg.Bug == "close_shadowed_call" {
			out = append(out, ev("result", appendOp, x.callSources(l, c), c))
		}
	}
	if x.stepOpen(l) {
		out = append(out, ev("send", noOp, nil, 0))
	}
	return append(out, ev("tend", noOp, nil, 0))
}

func union(a, b []int64) []int64 {
	out := slices.Clone(a)
	for _, v := range b {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

func eventsEqual(a, b []Event) bool {
	return slices.EqualFunc(a, b, Event.equal)
}

// --- invariants and step properties ---

func (x *explorer) invariants(s *State) string {
	for _, name := range x.cfg.Invariants {
		check, ok := invariants[name]
		if w, isWitness := witnesses[name]; isWitness {
			check, ok = func(x *explorer, s *State) bool { return w(s.Log) }, true
		}
		if !ok {
			return "UnknownInvariant_" + name
		}
		if !check(x, s) {
			return name
		}
	}
	if x.opts.ExtraInvariant != nil {
		return x.opts.ExtraInvariant(s)
	}
	return ""
}

func (x *explorer) stepProperties(from *State, t *transition) string {
	for _, name := range x.cfg.Properties {
		check, ok := properties[name]
		if !ok {
			return "UnknownProperty_" + name
		}
		if !check(x, from, t) {
			return name
		}
	}
	return ""
}

var types = []string{"user", "summary", "asst", "result", "call", "tstart", "tend", "sstart", "send", "cstart", "cend", "pcomp"}

var invariants = map[string]func(x *explorer, s *State) bool{
	"REP1_TurnsDecl": func(x *explorer, s *State) bool { return rep1TurnsDecl(s.Log) },
	"PROV4_SummaryAfterProviderDecl": func(x *explorer, s *State) bool {
		for _, e := range s.Log {
			if e.T == "summary" {
				for _, src := range e.Src {
					if s.Log[src].T == "pcomp" {
						return false
					}
				}
			}
		}
		return true
	},
	"REP2_StepsDecl":             func(x *explorer, s *State) bool { return rep2StepsDecl(s.Log) },
	"REP3_ResultsAnswerDecl":     func(x *explorer, s *State) bool { return rep3ResultsAnswerDecl(s.Log) },
	"COMP2_BracketsDecl":         func(x *explorer, s *State) bool { return comp2BracketsDecl(s.Log) },
	"COMP5_SummaryInBracketDecl": func(x *explorer, s *State) bool { return x.comp5SummaryInBracketDecl(s.Log) },
	"COMP5_CommitEndsDecl":       func(x *explorer, s *State) bool { return comp5CommitEndsDecl(s.Log) },
	"COMP4_BalancedDecl":         func(x *explorer, s *State) bool { return x.comp4BalancedDecl(s.Log) },
	"TypeOK": func(x *explorer, s *State) bool {
		for _, e := range s.Log {
			if !slices.Contains(types, e.T) || !slices.Contains([]string{"none", "append", "replace"}, e.Op.Kind) ||
				(e.Op.Kind != "replace" && (e.Op.Start != 0 || e.Op.End != 0)) || e.Op.Start < 0 || e.Op.End < 0 ||
				(e.Call != 0 && !slices.Contains(x.cfg.Calls, e.Call)) {
				return false
			}
		}
		return true
	},
	"SURF6_7_Markers": func(x *explorer, s *State) bool {
		for _, e := range s.Log {
			if isNode(e.T) != (e.Op.Kind != "none") {
				return false
			}
		}
		return true
	},
	"SURF15_NodesDistinctInLog": func(x *explorer, s *State) bool {
		for i, n := range s.Surface {
			if slices.Index(s.Surface, n) != i || n >= int64(len(s.Log)) || !isNode(s.Log[n].T) {
				return false
			}
		}
		return true
	},
	"SURF15_NoResurrection": func(x *explorer, s *State) bool {
		for _, n := range s.Shadowed {
			if slices.Contains(s.Surface, n) {
				return false
			}
		}
		return true
	},
	"SURF12_13_RangeOnSurface": func(x *explorer, s *State) bool {
		for k, e := range s.Log {
			if e.Op.Kind != "replace" {
				continue
			}
			before := x.fold(s.Log[:k])
			i, j := slices.Index(before, e.Op.Start), slices.Index(before, e.Op.End)
			if i < 0 || j < 0 || i > j {
				return false
			}
		}
		return true
	},
	"SURF14_Coverage": func(x *explorer, s *State) bool {
		for k, e := range s.Log {
			if e.Op.Kind != "replace" {
				continue
			}
			for _, n := range shadows(x.fold(s.Log[:k]), e.Op) {
				if !slices.Contains(e.Src, n) {
					return false
				}
			}
		}
		return true
	},
	"SURF14_23_Lineage": func(x *explorer, s *State) bool {
		surface := x.fold(s.Log)
		for _, n := range s.Shadowed {
			found := false
			for _, m := range surface {
				if reach(s.Log, m)[n] {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	},
	"SURF25_SurfaceIsFold": func(x *explorer, s *State) bool {
		return s.Crashed || slices.Equal(s.Surface, x.fold(s.Log))
	},
	"REP3_ClosedOnce": func(x *explorer, s *State) bool {
		for k1, a := range s.Log {
			for k2 := k1 + 1; k2 < len(s.Log); k2++ {
				b := s.Log[k2]
				if a.T != "result" || b.T != "result" || a.Call != b.Call {
					continue
				}
				between := false
				for _, m := range s.Log[k1+1 : k2] {
					if m.T == "tstart" || (m.T == "asst" && m.Call == a.Call) {
						between = true
					}
				}
				if !between {
					return false
				}
			}
		}
		return true
	},
	"COMP2_OneOpenCompaction": func(x *explorer, s *State) bool {
		open := false
		for _, e := range s.Log {
			switch e.T {
			case "cstart":
				if open {
					return false
				}
				open = true
			case "cend":
				open = false
			}
		}
		return true
	},
	"COMP4_Balanced": func(x *explorer, s *State) bool {
		for k, e := range s.Log {
			if e.T != "summary" || e.Op.Kind != "replace" {
				continue
			}
			before := x.fold(s.Log[:k])
			i, j := slices.Index(before, e.Op.Start), slices.Index(before, e.Op.End)
			if !x.balancedCut(s.Log, before, i, x.cfg.Calls) || !x.balancedCut(s.Log, before, j+1, x.cfg.Calls) {
				return false
			}
		}
		return true
	},
}

// reach is the set of seqs reachable from m through sources, m excluded
// unless a cycle returns to it (Reach(l, {m}) \ {m}).
func reach(l []Event, m int64) map[int64]bool {
	seen := map[int64]bool{}
	stack := slices.Clone(l[m].Src)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[n] {
			continue
		}
		seen[n] = true
		stack = append(stack, l[n].Src...)
	}
	delete(seen, m)
	return seen
}

var properties = map[string]func(x *explorer, from *State, t *transition) bool{
	"REP_RecoveryDecl": func(x *explorer, from *State, t *transition) bool {
		return t.action != "Recover" || x.recoveryDecl(from.Log, t.to.Log[len(from.Log):])
	},
	"AppendOnly": func(x *explorer, from *State, t *transition) bool {
		return len(t.to.Log) >= len(from.Log) && eventsEqual(from.Log, t.to.Log[:len(from.Log)])
	},
	"REP3_ClosersExact": func(x *explorer, from *State, t *transition) bool {
		if t.action != "Recover" {
			return true
		}
		return closersExact(x, from.Log, x.fold(from.Log), t.to.Log[len(from.Log):])
	},
	"REP5_RecoveryCloses": func(x *explorer, from *State, t *transition) bool {
		if t.action != "Recover" {
			return true
		}
		return !openTurn(t.to.Log) && !locked(t.to.Log) && len(x.closers(t.to.Log, x.fold(t.to.Log))) == 0
	},
	"REP5_Reentrant": func(x *explorer, from *State, t *transition) bool {
		if !from.Crashed || !t.to.Crashed || len(t.to.Log) == len(from.Log) && eventsEqual(from.Log, t.to.Log) {
			return true
		}
		before := x.closers(from.Log, x.fold(from.Log))
		after := x.closers(t.to.Log, x.fold(t.to.Log))
		done := min(len(t.to.Log)-len(from.Log), len(before))
		return eventsEqual(after, before[done:])
	},
}

// closersExact is ClosersExact: REP-3, REP-4 and REP-6 said declaratively.
func closersExact(x *explorer, l []Event, s []int64, cl []Event) bool {
	var expected []int
	for _, c := range x.pending(l, x.cfg.Calls) {
		if slices.Contains(s, x.host(l, c)) {
			expected = append(expected, c)
		}
	}
	n := 0
	if locked(l) {
		n = 1
	}
	want := n + len(expected)
	if x.stepOpen(l) {
		want++
	}
	if openTurn(l) {
		want++
	}
	if len(cl) != want {
		return false
	}
	if locked(l) && !cl[0].equal(ev("cend", noOp, nil, 0)) {
		return false
	}
	var got []int
	for i, e := range cl {
		if e.T != "result" {
			continue
		}
		if len(x.regs(l, e.Call)) == 0 || i < n || i >= n+len(expected) || !e.equal(ev("result", appendOp, x.callSources(l, e.Call), e.Call)) {
			return false
		}
		if len(got) > 0 && x.regs(l, got[len(got)-1])[0] >= x.regs(l, e.Call)[0] {
			return false
		}
		got = append(got, e.Call)
	}
	sortedGot, sortedWant := slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(expected))
	if !slices.Equal(sortedGot, sortedWant) || len(got) != len(expected) {
		return false
	}
	if x.stepOpen(l) && !cl[len(cl)-2].equal(ev("send", noOp, nil, 0)) {
		return false
	}
	if openTurn(l) && !cl[len(cl)-1].equal(ev("tend", noOp, nil, 0)) {
		return false
	}
	return true
}

// --- canonical form ---

// Canonical renders s as a TLA+ value, with record fields in alphabetical
// order and set elements in ascending order: the form tlc_test.go brings
// TLC's dump of a state to.
func (s *State) Canonical() string {
	var b strings.Builder
	b.WriteString("[crashed |-> ")
	b.WriteString(strings.ToUpper(strconv.FormatBool(s.Crashed)))
	b.WriteString(", log |-> <<")
	for i, e := range s.Log {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `[call |-> %d, op |-> [end |-> %d, kind |-> %q, start |-> %d], src |-> %s, t |-> %q]`,
			e.Call, e.Op.End, e.Op.Kind, e.Op.Start, set(e.Src), e.T)
	}
	b.WriteString(">>, shadowed |-> ")
	b.WriteString(set(s.Shadowed))
	b.WriteString(", surface |-> <<")
	for i, n := range s.Surface {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(n, 10))
	}
	b.WriteString(">>]")
	return b.String()
}

func set(v []int64) string {
	w := slices.Sorted(slices.Values(v))
	parts := make([]string, len(w))
	for i, n := range w {
		parts[i] = strconv.FormatInt(n, 10)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
