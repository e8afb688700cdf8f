package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
)

const maxSafe = 1<<53 - 1

// State is everything derived from a log.
type State struct {
	// Log is the log as stored: every event's data in compact form.
	Log []event.Event
	// Surface is the seqs of the surface nodes, head to tail.
	Surface []int64
	// Messages are the messages derived from the surface.
	Messages []message.Message
}

func reject(code event.Code, index int, seq int64, format string, args ...any) *event.Error {
	e := event.Errorf(code, seq, format, args...)
	e.Index = index
	return e
}

// Option configures the model.
type Option func(*options)

type options struct {
	vocabulary *event.Vocabulary
	strict     bool
}

// WithStrict makes the model's session refuse appends that break the
// strict rules (STRICT-1 to STRICT-7), and seeds and forks of logs that
// break them (STRICT-8). Derive and repair are not affected.
func WithStrict() Option {
	return func(o *options) { o.strict = true }
}

// WithVocabulary makes the model know the types v registers (SURF-3).
func WithVocabulary(v *event.Vocabulary) Option {
	return func(o *options) { o.vocabulary = v }
}

func optionsOf(opts []Option) options {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return o
}

// Derive checks every event of events against every rule, in order, and
// returns the derived state, or the first rejection (with its index).
func Derive(events []event.Event, opts ...Option) (*State, error) {
	o := optionsOf(opts)
	st := &State{}
	for i, e := range events {
		stored, err := accept(o, st.Log, st.Surface, e, i)
		if err != nil {
			return nil, err
		}
		st.Log = append(st.Log, stored)
		st.Surface = step(st.Surface, stored)
	}
	for _, seq := range st.Surface {
		if m, ok := toMessage(st.Log[seq]); ok {
			st.Messages = append(st.Messages, m)
		}
	}
	if st.Surface == nil {
		st.Surface = []int64{}
	}
	if st.Messages == nil {
		st.Messages = []message.Message{}
	}
	return st, nil
}

// step returns the surface after event e, which accept has passed.
func step(surface []int64, e event.Event) []int64 {
	if !isSurfaceType(e.Type) {
		return surface
	}
	if e.Op.Kind == event.OpAppend {
		return append(slices.Clone(surface), e.Seq)
	}
	i := slices.Index(surface, e.Op.Start)
	j := slices.Index(surface, e.Op.End)
	var next []int64
	next = append(next, surface[:i]...)
	next = append(next, e.Seq)
	next = append(next, surface[j+1:]...)
	return next
}

func isSurfaceType(t event.Type) bool {
	spec, ok := event.Lookup(t)
	return ok && spec.Surface
}

// accept checks e as event index of a log whose previous events are log and
// whose surface is surface, in the order of SURF-16. It returns e with its
// data compacted.
func accept(o options, log []event.Event, surface []int64, e event.Event, index int) (event.Event, *event.Error) {
	// SURF-1
	if e.Seq < 0 || e.Seq > maxSafe {
		return e, reject(event.CodeInvalidEnvelope, index, -1, "seq out of range") // no seq to name
	}
	if e.Time < 0 || e.Time > maxSafe {
		return e, reject(event.CodeInvalidEnvelope, index, e.Seq, "time out of range")
	}
	// SURF-2
	if e.Seq != int64(len(log)) {
		return e, reject(event.CodeSeqNotContiguous, index, e.Seq, "seq %d at index %d", e.Seq, len(log))
	}
	// SURF-3: known (catalog or registered), or unknown and ignorable
	spec, known := o.vocabulary.Lookup(e.Type)
	if !known && !e.Ignorable {
		return e, reject(event.CodeUnknownType, index, e.Seq, "unknown type %q", e.Type)
	}
	// SURF-4
	if why := losslessProblem(e.Data); why != "" {
		return e, reject(event.CodeDataNotJSON, index, e.Seq, "%s", why)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, e.Data); err != nil {
		return e, reject(event.CodeDataNotJSON, index, e.Seq, "%v", err)
	}
	e.Data = compact.Bytes()
	// SURF-5 (an unknown type has no shape to check)
	if known {
		if why := shapeProblem(spec, e.Data); why != "" {
			return e, reject(event.CodeDataInvalid, index, e.Seq, "%s", why)
		}
	}
	// SURF-6
	if !known || !spec.Surface {
		if e.Op.Kind != event.OpNone {
			return e, reject(event.CodeOpForbidden, index, e.Seq, "surfaceOp on %s", e.Type)
		}
		if e.Sources != nil {
			return e, reject(event.CodeSourcesForbidden, index, e.Seq, "sourceEventSeqs on %s", e.Type)
		}
		return e, nil
	}
	// SURF-7
	if e.Op.Kind == event.OpNone {
		return e, reject(event.CodeOpMissing, index, e.Seq, "no surfaceOp on %s", e.Type)
	}
	// SURF-8
	switch e.Op.Kind {
	case event.OpAppend:
	case event.OpReplace:
		if e.Op.Start < 0 || e.Op.Start > maxSafe || e.Op.End < 0 || e.Op.End > maxSafe {
			return e, reject(event.CodeReplaceInvalid, index, e.Seq, "bad replace endpoints")
		}
	case event.OpMalformedReplace:
		return e, reject(event.CodeReplaceInvalid, index, e.Seq, "bad replace object")
	default:
		return e, reject(event.CodeOpInvalid, index, e.Seq, "bad surfaceOp")
	}
	// SURF-9
	if e.Sources != nil {
		if len(e.Sources) == 0 && e.Type != event.TypeAssistantMessage {
			return e, reject(event.CodeSourcesEmpty, index, e.Seq, "empty sources")
		}
		for _, s := range e.Sources {
			if s < 0 || s > maxSafe {
				return e, reject(event.CodeSourcesInvalid, index, e.Seq, "source %d", s)
			}
		}
		for a := range e.Sources {
			for b := range a {
				if e.Sources[a] == e.Sources[b] {
					return e, reject(event.CodeSourcesDuplicate, index, e.Seq, "source %d twice", e.Sources[a])
				}
			}
		}
		for _, s := range e.Sources {
			if s >= e.Seq {
				return e, reject(event.CodeSourcesNotEarlier, index, e.Seq, "source %d", s)
			}
		}
	}
	if e.Op.Kind != event.OpReplace {
		return e, nil
	}
	// SURF-12
	i := slices.Index(surface, e.Op.Start)
	if i < 0 {
		return e, reject(event.CodeReplaceStartNotOnSurface, index, e.Seq, "start %d", e.Op.Start)
	}
	j := slices.Index(surface, e.Op.End)
	if j < 0 {
		return e, reject(event.CodeReplaceEndNotOnSurface, index, e.Seq, "end %d", e.Op.End)
	}
	// SURF-13
	if i > j {
		return e, reject(event.CodeReplaceReversed, index, e.Seq, "start after end")
	}
	// SURF-14
	var missing []int64
	for _, shadowed := range surface[i : j+1] {
		if !slices.Contains(e.Sources, shadowed) {
			missing = append(missing, shadowed)
		}
	}
	if missing != nil {
		err := reject(event.CodeReplaceSourcesIncomplete, index, e.Seq, "missing %v", missing)
		err.Missing = missing
		return e, err
	}
	return e, nil
}

// losslessProblem says why data breaks SURF-4, or "".
func losslessProblem(data []byte) string {
	if !json.Valid(data) {
		return "not valid JSON"
	}
	if !utf8.Valid(data) {
		return "invalid UTF-8"
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return walk(dec, 0)
}

// walk reads one JSON value from dec and reports a duplicate key or a
// number that is not lossless.
func walk(dec *json.Decoder, depth int) string {
	tok, err := dec.Token()
	if err != nil {
		return err.Error()
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth+1 > 10000 {
			return "too deep"
		}
		if t == '[' {
			for dec.More() {
				if why := walk(dec, depth+1); why != "" {
					return why
				}
			}
		} else {
			keys := map[string]bool{}
			for dec.More() {
				k, _ := dec.Token()
				key := k.(string)
				if keys[key] {
					return "duplicate key " + key
				}
				keys[key] = true
				if why := walk(dec, depth+1); why != "" {
					return why
				}
			}
		}
		dec.Token() // closing delimiter
	case json.Number:
		lit := string(t)
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil {
			return "number out of range"
		}
		if f == 0 && math.Signbit(f) {
			return "negative zero"
		}
		if !strings.ContainsAny(lit, ".eE") && math.Abs(f) > maxSafe {
			return "unsafe integer"
		}
	}
	return ""
}

func decodeAny(b []byte) any {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil && err != io.EOF {
		return nil
	}
	return v
}

// shapeProblem says why data breaks SURF-5, or "".
func shapeProblem(spec *event.TypeSpec, data []byte) string {
	obj, ok := decodeAny(data).(map[string]any)
	if !ok {
		return "data is not an object"
	}
	for _, f := range spec.Fields {
		v, present := obj[f.Name]
		if !present {
			if f.Required {
				return "missing " + f.Name
			}
			continue
		}
		if !hasKind(f, v) {
			return "wrong kind for " + f.Name
		}
	}
	return ""
}

func hasKind(f event.FieldSpec, v any) bool {
	if f.Nullable && v == nil {
		return true
	}
	switch f.Kind {
	case event.KindAny:
		return true
	case event.KindInteger:
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		x, err := strconv.ParseFloat(string(n), 64)
		return err == nil && x == math.Trunc(x)
	case event.KindString:
		s, ok := v.(string)
		return ok && (len(f.Enum) == 0 || slices.Contains(f.Enum, s))
	case event.KindBoolean:
		_, ok := v.(bool)
		return ok
	case event.KindArray:
		_, ok := v.([]any)
		return ok
	case event.KindObject:
		_, ok := v.(map[string]any)
		return ok
	case event.KindBlocks:
		arr, ok := v.([]any)
		if !ok {
			return false
		}
		for _, b := range arr {
			obj, ok := b.(map[string]any)
			if !ok {
				return false
			}
			if _, ok := obj["type"].(string); !ok {
				return false
			}
		}
		return true
	case event.KindTagged:
		obj, ok := v.(map[string]any)
		if !ok {
			return false
		}
		_, ok = obj["kind"].(string)
		return ok
	}
	return false
}

// toMessage maps a stored surface event to its message (SURF-20 to SURF-22).
func toMessage(e event.Event) (message.Message, bool) {
	var d struct {
		Content  []json.RawMessage `json:"content"`
		CallID   json.RawMessage   `json:"callId"`
		IsError  json.RawMessage   `json:"isError"`
		Envelope string            `json:"envelope"`
		Source   struct {
			Kind string `json:"kind"`
		} `json:"source"`
	}
	_ = json.Unmarshal(e.Data, &d)
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(e.Data, &raw)
	content := d.Content
	if content == nil {
		content = []json.RawMessage{}
	}
	m := message.Message{Seq: e.Seq, Role: message.RoleUser}
	switch e.Type {
	case event.TypeUserMessage:
		m.Content = content
	case event.TypeAssistantMessage:
		if len(content) == 0 {
			return m, false
		}
		m.Role = message.RoleAssistant
		m.Content = content
		m.Provenance = raw["provenance"] // nil when the event has none
	case event.TypeToolResult:
		block := fmt.Sprintf(`{"type":"tool-result","toolCallId":%s,"content":%s,"isError":%s}`, d.CallID, raw["content"], d.IsError)
		m.Content = []json.RawMessage{json.RawMessage(block)}
	case event.TypeContextMessage:
		if d.Envelope == "raw" {
			m.Content = content
		} else {
			m.Content = wrap("context", kindLiteral(e.Data), content)
		}
	case event.TypeSteeringMessage:
		m.Content = wrap("steering", kindLiteral(e.Data), content)
	default:
		return m, false
	}
	return m, true
}

// kindLiteral returns the JSON text of data.source.kind.
func kindLiteral(data []byte) json.RawMessage {
	var d struct {
		Source struct {
			Kind json.RawMessage `json:"kind"`
		} `json:"source"`
	}
	_ = json.Unmarshal(data, &d)
	return d.Source.Kind
}

// stringifyLiteral is JSON.stringify(JSON.parse(lit)) for a JSON string
// literal: JavaScript strings are UTF-16, so an escaped lone surrogate
// survives, as a lowercase \u escape.
func stringifyLiteral(lit []byte) string {
	var units []uint16
	body := lit[1 : len(lit)-1]
	for len(body) > 0 {
		if body[0] == '\\' && body[1] == 'u' {
			n, _ := strconv.ParseUint(string(body[2:6]), 16, 32)
			units = append(units, uint16(n))
			body = body[6:]
			continue
		}
		if body[0] == '\\' {
			esc := map[byte]uint16{'b': 8, 'f': 12, 'n': 10, 'r': 13, 't': 9, '"': '"', '\\': '\\', '/': '/'}
			units = append(units, esc[body[1]])
			body = body[2:]
			continue
		}
		r, size := utf8.DecodeRune(body)
		units = append(units, utf16.Encode([]rune{r})...)
		body = body[size:]
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(units); i++ {
		u := rune(units[i])
		if u >= 0xd800 && u <= 0xdbff && i+1 < len(units) && units[i+1] >= 0xdc00 && units[i+1] <= 0xdfff {
			b.WriteString(strings.Trim(jsString(string(utf16.DecodeRune(u, rune(units[i+1])))), `"`))
			i++
			continue
		}
		if u >= 0xd800 && u <= 0xdfff {
			fmt.Fprintf(&b, `\u%04x`, u)
			continue
		}
		s := jsString(string(u))
		b.WriteString(s[1 : len(s)-1])
	}
	b.WriteByte('"')
	return b.String()
}

func wrap(tag string, kind json.RawMessage, content []json.RawMessage) []json.RawMessage {
	text := func(s string) json.RawMessage {
		return json.RawMessage(`{"type":"text","text":` + jsString(s) + `}`)
	}
	out := []json.RawMessage{text("<" + tag + " source=" + stringifyLiteral(kind) + ">")}
	out = append(out, content...)
	return append(out, text("</"+tag+">"))
}

// jsString is JSON.stringify of a string.
func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Provenance returns the seqs reachable from seq through sourceEventSeqs,
// ascending, without seq itself (SURF-23), by iterating to a fixpoint.
func Provenance(log []event.Event, seq int64) ([]int64, error) {
	if seq < 0 || seq >= int64(len(log)) {
		return nil, event.Errorf(event.CodeProvenanceUnknownSeq, seq, "unknown seq")
	}
	set := map[int64]bool{}
	for _, s := range log[seq].Sources {
		set[s] = true
	}
	for changed := true; changed; {
		changed = false
		for s := range set {
			for _, t := range log[s].Sources {
				if !set[t] {
					set[t] = true
					changed = true
				}
			}
		}
	}
	delete(set, seq)
	out := []int64{}
	for s := range set {
		out = append(out, s)
	}
	slices.Sort(out)
	return out, nil
}

// ForkPrefix returns the events a fork at boundary inherits (SURF-24).
func ForkPrefix(log []event.Event, boundary int64) ([]event.Event, error) {
	if boundary < 0 || boundary >= int64(len(log)) {
		return nil, event.Errorf(event.CodeForkBoundaryOutOfRange, boundary, "out of range")
	}
	if log[boundary].Type != event.TypeTurnEnd {
		return nil, event.Errorf(event.CodeForkOpenTurn, boundary, "not a turn/end")
	}
	return slices.Clone(log[:boundary+1]), nil
}
