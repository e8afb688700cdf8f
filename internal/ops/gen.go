package ops

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/surfacelog/surface/impl/event"
)

// Generators of steps, valid and invalid. They draw every choice from a
// Chooser, so the same generators serve rapid (tests, fuzzing through
// rapid.MakeFuzz) and plain programs of numbers (gopter in the CLI). They
// look at the model's State to aim replaces, sources and forks at
// interesting places.

// Chooser makes the choices of a generator.
type Chooser interface {
	// Intn returns a number in [0, n); n > 0.
	Intn(n int, label string) int
}

func between(c Chooser, lo, hi int64, label string) int64 {
	return lo + int64(c.Intn(int(hi-lo+1), label))
}

func boolean(c Chooser, label string) bool { return c.Intn(2, label) == 1 }

func pick[T any](c Chooser, xs []T, label string) T { return xs[c.Intn(len(xs), label)] }

func permutation(c Chooser, n int, label string) []int {
	p := indexes(n)
	for i := n - 1; i > 0; i-- {
		j := c.Intn(i+1, label)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

var runes = []rune{'a', 'Z', '0', ' ', '"', '\\', '<', '>', '&', '\n', '\x00', '\x1f', 'é', '€', '\u2028', '🙂'}

func randomString(c Chooser, label string) string {
	n := c.Intn(7, label+"_len")
	out := make([]rune, n)
	for i := range out {
		out[i] = pick(c, runes, label)
	}
	return string(out)
}

var texts = []string{"", "hello", "a \"quoted\" <b>&amp;</b>", "line\nbreak\ttab", "\u2028sep\u2029", "ünïcødé 🙂", "back\\slash", "\x01\x1f ctl"}

func genString(t Chooser, label string) string {
	if boolean(t, label+"_rand") {
		return randomString(t, label)
	}
	return pick(t, texts, label)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// jsonText renders members as an object, in the given order, with random
// insignificant whitespace.
func jsonText(t Chooser, keys, values []string) string {
	ws := func() string { return pick(t, []string{"", "", "", " ", "\n ", "\t"}, "ws") }
	var b strings.Builder
	b.WriteString(ws() + "{")
	for i := range keys {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(ws() + quote(keys[i]) + ws() + ":" + ws() + values[i] + ws())
	}
	b.WriteString("}" + ws())
	return b.String()
}

func genBlock(t Chooser) string {
	switch t.Intn(4, "block") {
	case 0, 1:
		return `{"type":"text","text":` + quote(genString(t, "text")) + `}`
	case 2:
		id := "call-" + strconv.Itoa(t.Intn(6, "callid"))
		return `{"type":"tool-call","id":` + quote(id) + `,"name":"read","arguments":{"path":"/tmp/x"}}`
	default:
		return `{ "type" : "image", "data" : "AAAA", "n" : 1.50 }`
	}
}

func genValue(t Chooser, f event.FieldSpec) string {
	switch f.Kind {
	case event.KindInteger:
		return strconv.FormatInt(between(t, -3, 1<<40, "int"), 10)
	case event.KindString:
		if len(f.Enum) > 0 {
			return quote(pick(t, f.Enum, "enum"))
		}
		return quote(genString(t, "str"))
	case event.KindBoolean:
		return strconv.FormatBool(boolean(t, "bool"))
	case event.KindArray:
		return pick(t, []string{`[]`, `[1,"two",{"three":3}]`, `[{"content":"todo","status":"pending"}]`}, "array")
	case event.KindObject:
		return pick(t, []string{`{}`, `{"provider":"mock","model":"m1"}`, `{"input":10,"output":2}`}, "object")
	case event.KindBlocks:
		n := t.Intn(4, "nblocks")
		parts := make([]string, n)
		for i := range parts {
			parts[i] = genBlock(t)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case event.KindTagged:
		kind := genString(t, "kind")
		if len(f.Tags) > 0 && boolean(t, "knownTag") {
			kind = pick(t, f.Tags, "tag")
		}
		return `{"kind":` + quote(kind) + `}`
	default:
		return pick(t, []string{`null`, `1e3`, `"x"`, `[true,false]`, `{"a":{"b":[]}}`}, "any")
	}
}

// GenData returns valid data for a catalog type.
func GenData(t Chooser, spec *event.TypeSpec) json.RawMessage {
	var keys, values []string
	for _, f := range spec.Fields {
		if !f.Required && boolean(t, "opt_"+f.Name) {
			continue
		}
		keys = append(keys, f.Name)
		values = append(values, genValue(t, f))
	}
	if t.Intn(6, "extra") == 5 {
		keys = append(keys, "extra")
		values = append(values, `{"x":1}`)
	}
	perm := permutation(t, len(keys), "order")
	k2, v2 := make([]string, len(keys)), make([]string, len(keys))
	for i, p := range perm {
		k2[i], v2[i] = keys[p], values[p]
	}
	return json.RawMessage(jsonText(t, k2, v2))
}

func indexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// badData returns data that breaks SURF-4 or SURF-5 (or a Go value that
// cannot be marshalled).
func badData(t Chooser, spec *event.TypeSpec) any {
	good := string(GenData(t, spec))
	switch t.Intn(13, "bad") {
	case 0:
		return json.RawMessage(`[]`)
	case 1:
		return json.RawMessage(`null`)
	case 2:
		return json.RawMessage(`{"a":1,"a":2}`)
	case 3:
		return json.RawMessage(`{"n":-0}`)
	case 4:
		return json.RawMessage(`{"n":9007199254740993}`)
	case 5:
		return json.RawMessage("{\"s\":\"\xff\"}")
	case 6:
		return json.RawMessage(`{"unterminated":`)
	case 7:
		return map[string]any{"nan": math.NaN()}
	case 8:
		return map[string]any{"ch": make(chan int)}
	case 9:
		return json.RawMessage(`{"n":1e999}`)
	case 10:
		if len(spec.Fields) > 0 { // drop a required field
			return json.RawMessage(`{"other":1}`)
		}
		return json.RawMessage(`7`)
	case 11:
		return json.RawMessage(strings.Repeat("[", 10001) + strings.Repeat("]", 10001))
	default: // wrong kind for the first field
		if len(spec.Fields) == 0 {
			return json.RawMessage(good + "x")
		}
		f := spec.Fields[0]
		wrong := `"wrong"`
		if f.Kind == event.KindString || f.Kind == event.KindAny {
			wrong = `1.5`
			if f.Kind == event.KindAny {
				return json.RawMessage(`{"a":1}}`)
			}
		}
		return json.RawMessage(`{` + quote(f.Name) + `:` + wrong + `}`)
	}
}

// surfaceTypes and otherTypes partition the catalog.
func partition() (surface, other []event.Type) {
	for _, ty := range event.Types() {
		if event.IsSurface(ty) {
			surface = append(surface, ty)
		} else {
			other = append(other, ty)
		}
	}
	return
}

// genSources returns a valid-looking source list for the event at seq.
func genSources(t Chooser, seq int64, must []int64) []int64 {
	srcs := slices.Clone(must)
	if seq > 0 {
		for n := t.Intn(4, "nsrc"); n > 0; n-- {
			s := between(t, 0, seq-1, "src")
			if !slices.Contains(srcs, s) {
				srcs = append(srcs, s)
			}
		}
	}
	if len(srcs) > 1 {
		perm := permutation(t, len(srcs), "srcorder")
		out := make([]int64, len(srcs))
		for i, p := range perm {
			out[i] = srcs[p]
		}
		srcs = out
	}
	return srcs
}

// breakSources makes a source list invalid.
func breakSources(t Chooser, seq int64, srcs []int64) []int64 {
	switch t.Intn(4, "badsrc") {
	case 0:
		return []int64{}
	case 1:
		return append(slices.Clone(srcs), -1)
	case 2:
		if len(srcs) > 0 {
			return append(slices.Clone(srcs), srcs[0])
		}
		return []int64{0, 0}
	default:
		return append(slices.Clone(srcs), seq+between(t, 0, 2, "fwd"))
	}
}

// GenAppend returns an append step, valid or not, for the state st.
func GenAppend(t Chooser, st State) Step {
	surfaceTypes, otherTypes := partition()
	seq := int64(len(st.Events))
	s := Step{Kind: KindAppend}
	isSurface := t.Intn(3, "surfaceType") > 0
	if isSurface {
		s.Type = pick(t, surfaceTypes, "type")
	} else {
		s.Type = pick(t, otherTypes, "type")
	}
	spec, _ := event.Lookup(s.Type)
	s.Data = GenData(t, spec)
	if isSurface {
		s.Intent = &event.Intent{Op: event.Append()}
		if boolean(t, "withSources") {
			s.Intent.Sources = genSources(t, seq, nil)
			if s.Intent.Sources == nil && s.Type == event.TypeAssistantMessage {
				s.Intent.Sources = []int64{} // known empty provenance (SURF-9)
			}
		}
	}
	// Break it, some of the time.
	switch t.Intn(25, "fault") {
	case 1:
		s.Type = event.Type(pick(t, []string{"user/msg", "", "request/header-delta", "USER/MESSAGE"}, "unknown"))
	case 2, 3:
		s.Data = badData(t, spec)
	case 4:
		if isSurface {
			s.Intent = nil // surface.op_missing
		} else {
			s.Intent = &event.Intent{Op: event.Append()} // surface.op_forbidden
		}
	case 5:
		if isSurface {
			s.Intent = &event.Intent{} // zero intent: surface.op_missing
		} else {
			s.Intent = &event.Intent{Sources: []int64{0}} // surface.sources_forbidden
		}
	case 6:
		if isSurface {
			s.Intent.Sources = breakSources(t, seq, s.Intent.Sources)
		}
	case 7:
		if isSurface {
			s.Intent.Op = pick(t, []event.SurfaceOp{
				{Kind: event.OpMalformed}, {Kind: event.OpMalformedReplace}, {Kind: 9},
				event.Replace(-1, 0), event.Replace(0, event.MaxSafeInteger+1),
			}, "badop")
		}
	}
	return s
}

// GenReplace returns a replace step aimed at the surface of st: valid, or
// broken in one of the ways SURF-12 to SURF-14 forbid. Ranges cover the
// whole surface, its head, its tail, one node, or any span, and so nest
// over earlier replacement nodes (SURF-15).
func GenReplace(t Chooser, st State) Step {
	surfaceTypes, _ := partition()
	seq := int64(len(st.Events))
	ty := pick(t, surfaceTypes, "type")
	spec, _ := event.Lookup(ty)
	s := Step{Kind: KindAppend, Type: ty, Data: GenData(t, spec)}
	n := len(st.Surface)
	offSurface := func(label string) int64 {
		var cands []int64
		for x := int64(0); x <= seq+1; x++ {
			if !slices.Contains(st.Surface, x) {
				cands = append(cands, x)
			}
		}
		return pick(t, cands, label)
	}
	if n == 0 {
		s.Intent = &event.Intent{Op: event.Replace(offSurface("start"), offSurface("end")), Sources: genSources(t, seq, nil)}
		return s
	}
	var i, j int
	switch t.Intn(5, "shape") {
	case 0: // the whole surface
		i, j = 0, n-1
	case 1: // head
		j = t.Intn(n, "j")
	case 2: // tail
		i, j = t.Intn(n, "i"), n-1
	case 3: // one node
		i = t.Intn(n, "i")
		j = i
	default:
		i = t.Intn(n, "i")
		j = i + t.Intn(n-i, "j")
	}
	start, end := st.Surface[i], st.Surface[j]
	sources := genSources(t, seq, st.Surface[i:j+1])
	op := event.Replace(start, end)
	switch t.Intn(10, "fault") {
	case 1: // reversed (SURF-13)
		if i < j {
			op = event.Replace(end, start)
		}
	case 2: // incomplete (SURF-14)
		drop := st.Surface[i+t.Intn(j-i+1, "drop")]
		sources = slices.DeleteFunc(sources, func(x int64) bool { return x == drop })
		if len(sources) == 0 {
			sources = nil
		}
	case 3: // start off the surface (SURF-12)
		op.Start = offSurface("start")
	case 4: // end off the surface (SURF-12)
		op.End = offSurface("end")
	case 5: // sources absent
		sources = nil
	}
	s.Intent = &event.Intent{Op: op, Sources: sources}
	return s
}

// GenSeed returns a seed step: the log of st, perhaps broken in one place,
// as events or in wire form.
func GenSeed(t Chooser, st State) Step {
	events := make([]event.Event, len(st.Events))
	for i := range st.Events {
		events[i] = st.Events[i].Clone()
	}
	if len(events) > 0 && t.Intn(3, "breakSeed") == 1 {
		k := t.Intn(len(events), "at")
		e := &events[k]
		switch t.Intn(7, "how") {
		case 0: // seq gap (SURF-2)
			e.Seq += between(t, 1, 3, "gap")
		case 1: // marker removed (SURF-7) or added (SURF-6)
			if e.Op.IsZero() {
				e.Op = event.Append()
			} else {
				e.Op = event.SurfaceOp{}
			}
		case 2: // a source pointing forward (SURF-9)
			if e.Sources != nil || event.IsSurface(e.Type) {
				e.Sources = append(e.Sources, e.Seq+between(t, 0, 5, "fwd"))
			} else {
				e.Sources = []int64{0}
			}
		case 3: // unknown type
			e.Type = "assistant/messages"
		case 4: // data broken
			e.Data = json.RawMessage(`{"a":-0.0}`)
		case 5: // time out of range (SURF-1)
			e.Time = -1
		default: // two events swapped
			if k+1 < len(events) {
				events[k], events[k+1] = events[k+1], events[k]
			}
		}
	}
	if boolean(t, "asJSON") {
		lines := make([]json.RawMessage, 0, len(events))
		for _, e := range events {
			b, err := e.MarshalJSON()
			if err != nil {
				b = []byte(`{"type":"user/message","seq":0,"time":0,"data":{},"surfaceOp":["bad"]}`)
			}
			lines = append(lines, b)
		}
		if len(lines) > 0 && t.Intn(4, "breakWire") == 1 {
			k := t.Intn(len(lines), "wireAt")
			lines[k] = json.RawMessage(pick(t, wireFaults(lines[k]), "wireFault"))
		}
		return Step{Kind: KindSeedJSON, Lines: lines}
	}
	return Step{Kind: KindSeed, Events: events}
}

// wireFaults returns broken variants of one wire-form event.
func wireFaults(line []byte) []string {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(line, &m)
	set := func(k, v string) string {
		c := map[string]json.RawMessage{}
		for a, b := range m {
			c[a] = b
		}
		if v == "" {
			delete(c, k)
		} else {
			c[k] = json.RawMessage(v)
		}
		out, _ := json.Marshal(c)
		return string(out)
	}
	return []string{
		`not json`,
		`[1,2]`,
		set("extra", `1`),
		set("seq", `"1"`),
		set("seq", `1.5`),
		set("time", `-4`),
		set("data", ""),
		set("type", `7`),
		set("surfaceOp", `"prepend"`),
		set("surfaceOp", `null`),
		set("surfaceOp", `{"op":"replace","start":0}`),
		set("surfaceOp", `{"op":"replace","start":0,"end":1,"x":2}`),
		set("surfaceOp", `{"op":"swap","start":0,"end":0}`),
		set("surfaceOp", `{"op":"replace","start":0.5,"end":0}`),
		set("sourceEventSeqs", `"0"`),
		set("sourceEventSeqs", `[0.5]`),
		set("sourceEventSeqs", `null`),
		set("sourceEventSeqs", `[]`),
		`{"type":"user/message","type":"user/message","seq":0,"time":0,"data":{}}`,
	}
}

// GenFork returns a fork step: at a turn/end of st most of the time.
func GenFork(t Chooser, st State) Step {
	var ends []int64
	for _, e := range st.Events {
		if e.Type == event.TypeTurnEnd {
			ends = append(ends, e.Seq)
		}
	}
	s := Step{Kind: KindFork, Continue: boolean(t, "continue")}
	if len(ends) > 0 && t.Intn(5, "atEnd") > 0 {
		s.Boundary = pick(t, ends, "boundary")
	} else if len(st.Events) > 0 && boolean(t, "inRange") {
		s.Boundary = between(t, 0, int64(len(st.Events))-1, "boundary")
	} else {
		s.Boundary = between(t, -1, int64(len(st.Events))+1, "boundary")
	}
	return s
}

// GenProvenance returns a provenance query.
func GenProvenance(t Chooser, st State) Step {
	return Step{Kind: KindProvenance, Seq: between(t, -1, int64(len(st.Events)), "seq")}
}

// GenStep returns any step.
func GenStep(t Chooser, st State) Step {
	switch t.Intn(20, "kind") {
	case 19:
		return GenSeed(t, st)
	case 18:
		return GenFork(t, st)
	case 16, 17:
		return GenProvenance(t, st)
	case 12, 13, 14, 15:
		return GenReplace(t, st)
	default:
		return GenAppend(t, st)
	}
}
