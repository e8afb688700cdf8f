package explore

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/model"
)

// Op is a surface marker of the abstract log.
type Op struct {
	Kind       string // "none", "append", "replace"
	Start, End int64
}

// Event is an event of the abstract log (see Surface.tla).
type Event struct {
	T    string // user, asst, result, call, tstart, tend
	Op   Op
	Src  []int64 // sorted
	Call int
}

// State is a state of Surface.tla.
type State struct {
	Log      []Event
	Surface  []int64
	Shadowed []int64 // sorted
	Crashed  bool
}

func (s *State) key() string {
	var b strings.Builder
	for _, e := range s.Log {
		fmt.Fprintf(&b, "%s/%s/%d/%d/%v/%d;", e.T, e.Op.Kind, e.Op.Start, e.Op.End, e.Src, e.Call)
	}
	fmt.Fprintf(&b, "|%v|%v|%v", s.Surface, s.Shadowed, s.Crashed)
	return b.String()
}

// Config is the constants of a model-checking config.
type Config struct {
	MaxEvents int
	Calls     []int
}

// ReadConfig reads the constants of an MC*.cfg file.
func ReadConfig(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	var c Config
	m := regexp.MustCompile(`MaxEvents\s*=\s*(\d+)`).FindSubmatch(b)
	if m == nil {
		return c, fmt.Errorf("%s: no MaxEvents", path)
	}
	c.MaxEvents, _ = strconv.Atoi(string(m[1]))
	m = regexp.MustCompile(`Calls\s*=\s*\{([^}]*)\}`).FindSubmatch(b)
	if m == nil {
		return c, fmt.Errorf("%s: no Calls", path)
	}
	for _, f := range strings.Split(string(m[1]), ",") {
		if f = strings.TrimSpace(f); f != "" {
			n, _ := strconv.Atoi(f)
			c.Calls = append(c.Calls, n)
		}
	}
	return c, nil
}

// Options deliberately break the explorer, to show that its checks bite.
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
	// Violation is the first broken invariant or property, "" if none.
	Violation string
}

// Explore walks every state of the spec within cfg's bounds.
func Explore(cfg Config, opts Options) Result {
	x := &explorer{cfg: cfg, opts: opts}
	return x.run()
}

type explorer struct {
	cfg  Config
	opts Options
}

func (x *explorer) run() Result {
	init := State{Log: []Event{}, Surface: []int64{}, Shadowed: []int64{}}
	seen := map[string]bool{init.key(): true}
	queue := []State{init}
	res := Result{Distinct: 1, Generated: 1}
	if v := x.invariants(&init); v != "" {
		res.Violation = "initial state: " + v
		return res
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, t := range x.next(&s) {
			res.Generated++
			if v := x.stepProperties(&s, &t); v != "" {
				res.Violation = fmt.Sprintf("%s\n  from %+v\n  to %+v", v, s, t.to)
				return res
			}
			k := t.to.key()
			if seen[k] {
				continue
			}
			seen[k] = true
			res.Distinct++
			if v := x.invariants(&t.to); v != "" {
				res.Violation = fmt.Sprintf("%s in state %+v", v, t.to)
				return res
			}
			queue = append(queue, t.to)
		}
	}
	return res
}

type transition struct {
	action string
	to     State
}

var appendOp = Op{Kind: "append"}

func (x *explorer) next(s *State) []transition {
	var out []transition
	emit := func(action string, e Event, shadowed []int64) {
		if s.Crashed || len(s.Log) >= x.cfg.MaxEvents {
			return
		}
		to := State{Log: append(slices.Clone(s.Log), e), Surface: x.apply(s.Surface, e, int64(len(s.Log))), Shadowed: shadowed, Crashed: false}
		out = append(out, transition{action, to})
	}
	open := openTurn(s.Log)
	emit("AppendUser", Event{T: "user", Op: appendOp, Src: []int64{}}, s.Shadowed)
	for _, c := range append([]int{0}, x.cfg.Calls...) {
		if open {
			emit("AppendAssistant", Event{T: "asst", Op: appendOp, Src: []int64{}, Call: c}, s.Shadowed)
		}
	}
	for _, c := range x.cfg.Calls {
		if open && slices.Contains(pending(s.Log, x.cfg.Calls), c) {
			emit("AppendCall", Event{T: "call", Op: Op{Kind: "none"}, Src: []int64{}, Call: c}, s.Shadowed)
			emit("AppendResult", Event{T: "result", Op: appendOp, Src: []int64{}, Call: c}, s.Shadowed)
		}
	}
	if !open {
		emit("TurnStart", Event{T: "tstart", Op: Op{Kind: "none"}, Src: []int64{}}, s.Shadowed)
	} else {
		emit("TurnEnd", Event{T: "tend", Op: Op{Kind: "none"}, Src: []int64{}}, s.Shadowed)
	}
	for i := 1; i <= len(s.Surface); i++ {
		for j := i; j <= len(s.Surface); j++ {
			src := slices.Clone(s.Surface[i-1 : j])
			slices.Sort(src)
			sh := union(s.Shadowed, src)
			emit("Replace", Event{T: "user", Op: Op{Kind: "replace", Start: s.Surface[i-1], End: s.Surface[j-1]}, Src: src}, sh)
		}
	}
	if !s.Crashed {
		out = append(out, transition{"Seed", State{Log: s.Log, Surface: fold(s.Log), Shadowed: s.Shadowed}})
		out = append(out, transition{"Crash", State{Log: s.Log, Surface: []int64{}, Shadowed: s.Shadowed, Crashed: true}})
	} else {
		log := append(slices.Clone(s.Log), closers(s.Log)...)
		out = append(out, transition{"Recover", State{Log: log, Surface: fold(log), Shadowed: s.Shadowed}})
	}
	return out
}

// apply is the step-by-step surface (Apply of the TLA+ spec): what the
// implementation's linked list does.
func (x *explorer) apply(s []int64, e Event, seq int64) []int64 {
	switch e.Op.Kind {
	case "append":
		return append(slices.Clone(s), seq)
	case "replace":
		i, j := slices.Index(s, e.Op.Start), slices.Index(s, e.Op.End)
		out := slices.Clone(s[:i])
		out = append(out, seq)
		if x.opts.HalfOpen && i != j {
			j-- // broken: [start, end)
		}
		return append(out, s[j+1:]...)
	}
	return slices.Clone(s)
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

func openTurn(l []Event) bool {
	return turnStartAt(l) >= 0
}

// turnStartAt is the index of the open turn's turn start, or -1.
func turnStartAt(l []Event) int {
	at := -1
	for i, e := range l {
		switch e.T {
		case "tstart":
			at = i
		case "tend":
			at = -1
		}
	}
	return at
}

// pending mirrors Pending of the TLA+ spec: calls registered in the open
// turn with no result after their last registration.
func pending(l []Event, calls []int) []int {
	start := turnStartAt(l)
	var out []int
	for _, c := range calls {
		last := -1
		for k := start + 1; k < len(l); k++ {
			if l[k].T == "asst" && l[k].Call == c {
				last = k
			}
		}
		if last < 0 {
			continue
		}
		answered := false
		for k := last + 1; k < len(l); k++ {
			if l[k].T == "result" && l[k].Call == c {
				answered = true
			}
		}
		if !answered {
			out = append(out, c)
		}
	}
	return out
}

// --- the bridge to model/ ---

// concrete turns the abstract log into a real one.
func concrete(l []Event) []event.Event {
	out := make([]event.Event, len(l))
	for i, e := range l {
		ce := event.Event{Seq: int64(i), Time: int64(i)}
		var data string
		callID := `"c` + strconv.Itoa(e.Call) + `"`
		switch e.T {
		case "user":
			ce.Type, data = event.TypeUserMessage, `{"content":[{"type":"text","text":"u"}],"source":{"kind":"user"}}`
		case "asst":
			ce.Type, data = event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[{"type":"text","text":"a"}]}`
			if e.Call != 0 {
				data = `{"turn":1,"step":1,"content":[{"type":"text","text":"a"},{"type":"tool-call","id":` + callID + `,"name":"x","arguments":"{}"}]}`
			}
		case "result":
			ce.Type, data = event.TypeToolResult, `{"turn":1,"step":1,"callId":`+callID+`,"content":[],"isError":false}`
		case "call":
			ce.Type, data = event.TypeToolCall, `{"turn":1,"step":1,"callId":`+callID+`,"name":"x","arguments":"{}"}`
		case "tstart":
			ce.Type, data = event.TypeTurnStart, `{"turn":1,"trigger":{"kind":"message"}}`
		case "tend":
			ce.Type, data = event.TypeTurnEnd, `{"turn":1,"reason":{"kind":"completed"}}`
		}
		ce.Data = json.RawMessage(data)
		switch e.Op.Kind {
		case "append":
			ce.Op = event.Append()
		case "replace":
			ce.Op = event.Replace(e.Op.Start, e.Op.End)
		}
		if len(e.Src) > 0 {
			ce.Sources = slices.Clone(e.Src)
		}
		out[i] = ce
	}
	return out
}

// fold is Fold of the TLA+ spec, computed by the model.
func fold(l []Event) []int64 {
	st, err := model.Derive(concrete(l))
	if err != nil {
		panic(fmt.Sprintf("model rejects a log the spec reaches: %v\nlog: %+v", err, l))
	}
	return st.Surface
}

// closers is Closers of the TLA+ spec, computed by the model.
func closers(l []Event) []Event {
	var out []Event
	for _, c := range model.Closers(concrete(l)) {
		switch c.Type {
		case event.TypeToolResult:
			var d struct{ CallID string }
			_ = json.Unmarshal(c.Data, &d)
			n, _ := strconv.Atoi(strings.TrimPrefix(d.CallID, "c"))
			src := []int64{}
			if c.Sources != nil {
				src = slices.Clone(c.Sources)
			}
			out = append(out, Event{T: "result", Op: appendOp, Src: src, Call: n})
		case event.TypeTurnEnd:
			out = append(out, Event{T: "tend", Op: Op{Kind: "none"}, Src: []int64{}})
		default:
			panic("unexpected closer " + string(c.Type))
		}
	}
	return out
}

// --- invariants and step properties ---

var nodeTypes = []string{"user", "asst", "result"}

func (x *explorer) invariants(s *State) string {
	// TypeOK
	for _, e := range s.Log {
		if !slices.Contains([]string{"user", "asst", "result", "call", "tstart", "tend"}, e.T) ||
			!slices.Contains([]string{"none", "append", "replace"}, e.Op.Kind) ||
			(e.Op.Kind != "replace" && (e.Op.Start != 0 || e.Op.End != 0)) {
			return "TypeOK"
		}
	}
	// SURF15_NodesDistinctInLog
	for i, n := range s.Surface {
		if slices.Index(s.Surface, n) != i || n >= int64(len(s.Log)) || !slices.Contains(nodeTypes, s.Log[n].T) {
			return "SURF15_NodesDistinctInLog"
		}
	}
	// SURF15_NoResurrection
	for _, n := range s.Shadowed {
		if slices.Contains(s.Surface, n) {
			return "SURF15_NoResurrection"
		}
	}
	// SURF14_Coverage
	for k, e := range s.Log {
		if e.Op.Kind != "replace" {
			continue
		}
		before := fold(s.Log[:k])
		i, j := slices.Index(before, e.Op.Start), slices.Index(before, e.Op.End)
		for _, n := range before[i : j+1] {
			if !slices.Contains(e.Src, n) {
				return "SURF14_Coverage"
			}
		}
	}
	// SURF25_SurfaceIsFold
	if !s.Crashed && !slices.Equal(s.Surface, fold(s.Log)) {
		return "SURF25_SurfaceIsFold"
	}
	// REP3_ClosedOnce
	for k1 := range s.Log {
		for k2 := k1 + 1; k2 < len(s.Log); k2++ {
			a, b := s.Log[k1], s.Log[k2]
			if a.T != "result" || b.T != "result" || a.Call != b.Call {
				continue
			}
			between := false
			for m := k1 + 1; m < k2; m++ {
				if s.Log[m].T == "tstart" || (s.Log[m].T == "asst" && s.Log[m].Call == a.Call) {
					between = true
				}
			}
			if !between {
				return "REP3_ClosedOnce"
			}
		}
	}
	if x.opts.ExtraInvariant != nil {
		return x.opts.ExtraInvariant(s)
	}
	return ""
}

func (x *explorer) stepProperties(from *State, t *transition) string {
	// AppendOnly
	if len(t.to.Log) < len(from.Log) {
		return "AppendOnly"
	}
	for i := range from.Log {
		if fmt.Sprint(from.Log[i]) != fmt.Sprint(t.to.Log[i]) {
			return "AppendOnly"
		}
	}
	// REP5_RecoveryCloses
	if t.action == "Recover" && (openTurn(t.to.Log) || len(closers(t.to.Log)) > 0) {
		return "REP5_RecoveryCloses"
	}
	return ""
}
