package event

import (
	"encoding/json"
	"math"
	"strconv"
	"sync"
	"unicode/utf8"
)

// Check validates the event-local rules SURF-1 to SURF-9 for e as the
// candidate at index wantSeq of a log, in the order of SURF-16. It replaces
// e.Data by its compact form (SURF-4). The positional replace rules
// (SURF-12 to SURF-14) need the surface and are checked by the caller.
func Check(e *Event, wantSeq int64) *Error { return (*Vocabulary)(nil).check(e, wantSeq, false) }

// check is Check with the types of v; with dataChecked, e.Data is known to
// be compact and to pass SURF-4 and SURF-5 (a Decoder checked it as it
// decoded it).
func (v *Vocabulary) check(e *Event, wantSeq int64, dataChecked bool) *Error {
	// SURF-1: the envelope's integers.
	if e.Seq < 0 || e.Seq > MaxSafeInteger {
		return Errorf(CodeInvalidEnvelope, -1, "seq %d is not an integer in [0, 2^53-1]", e.Seq)
	}
	if e.Time < 0 || e.Time > MaxSafeInteger {
		return Errorf(CodeInvalidEnvelope, e.Seq, "time %d is not an integer in [0, 2^53-1]", e.Time)
	}
	// SURF-2
	if e.Seq != wantSeq {
		return Errorf(CodeSeqNotContiguous, e.Seq, "seq %d where %d was expected", e.Seq, wantSeq)
	}
	// SURF-3: a known type, or an unknown one marked ignorable (kept,
	// never on the surface).
	spec, ok := v.Lookup(e.Type)
	if !ok && !e.Ignorable {
		return Errorf(CodeUnknownType, e.Seq, "unknown event type %q (an event of a type this reader does not know is kept only when it is marked \"ignorable\": true)", e.Type)
	}
	if !dataChecked {
		if err := checkData(e, spec, ok); err != nil {
			return err
		}
	}
	return CheckMarkers(e, ok && spec.Surface)
}

// CheckMarkers checks an event's markers, SURF-6 to SURF-9, in that order,
// for an event whose type is surface-eligible (surface) or not. Check
// calls it with the catalog's eligibility; a reader of another vocabulary
// (impl/released) with its own.
func CheckMarkers(e *Event, surface bool) *Error {
	// SURF-6
	if !surface {
		if !e.Op.IsZero() {
			return Errorf(CodeOpForbidden, e.Seq, "%s is not surface-eligible and cannot carry surfaceOp", e.Type)
		}
		if e.Sources != nil {
			return Errorf(CodeSourcesForbidden, e.Seq, "%s is not surface-eligible and cannot carry sourceEventSeqs", e.Type)
		}
		return nil
	}
	// SURF-7, SURF-8
	switch e.Op.Kind {
	case OpNone:
		return Errorf(CodeOpMissing, e.Seq, "%s is surface-eligible and needs a surfaceOp marker", e.Type)
	case OpAppend:
	case OpReplace:
		if !validSeq(e.Op.Start) || !validSeq(e.Op.End) {
			return Errorf(CodeReplaceInvalid, e.Seq, "replace endpoints must be integers in [0, 2^53-1]")
		}
	case OpMalformedReplace:
		return Errorf(CodeReplaceInvalid, e.Seq, "surfaceOp object is not exactly {op:\"replace\", start, end}")
	default:
		return Errorf(CodeOpInvalid, e.Seq, "surfaceOp is neither \"append\" nor a replace object")
	}
	// SURF-9
	return checkSources(e)
}

func validSeq(v int64) bool { return v >= 0 && v <= MaxSafeInteger }

func checkSources(e *Event) *Error {
	if e.Sources == nil {
		return nil
	}
	if len(e.Sources) == 0 {
		if e.Type == "assistant/message" {
			return nil
		}
		return Errorf(CodeSourcesEmpty, e.Seq, "sourceEventSeqs is empty on %s", e.Type)
	}
	for _, s := range e.Sources {
		if !validSeq(s) {
			return Errorf(CodeSourcesInvalid, e.Seq, "sourceEventSeqs holds %d, not an integer in [0, 2^53-1]", s)
		}
	}
	if dup, ok := firstDuplicate(e.Sources); ok {
		return Errorf(CodeSourcesDuplicate, e.Seq, "sourceEventSeqs names %d twice", dup)
	}
	for _, s := range e.Sources {
		if s >= e.Seq {
			return Errorf(CodeSourcesNotEarlier, e.Seq, "sourceEventSeqs names %d, not earlier than %d", s, e.Seq)
		}
	}
	return nil
}

func firstDuplicate(xs []int64) (int64, bool) {
	if len(xs) <= 8 {
		for i := 1; i < len(xs); i++ {
			for j := 0; j < i; j++ {
				if xs[i] == xs[j] {
					return xs[i], true
				}
			}
		}
		return 0, false
	}
	seen := make(map[int64]struct{}, len(xs))
	for _, x := range xs {
		if _, ok := seen[x]; ok {
			return x, true
		}
		seen[x] = struct{}{}
	}
	return 0, false
}

// memberScratch holds the member lists that checkData lends to
// scanDataInto, so that checking an event's data allocates only its
// compact text.
var memberScratch = sync.Pool{New: func() any { return new([]member) }}

// checkData checks e.Data against SURF-4 and, when the type is known,
// SURF-5, and replaces it with its compact form.
func checkData(e *Event, spec *TypeSpec, known bool) *Error {
	scratch := memberScratch.Get().(*[]member)
	end, compact, members, why := scanDataInto(e.Data, skipSpace(e.Data, 0), make([]byte, 0, len(e.Data)), scratch)
	if why == "" && skipSpace(e.Data, end) != len(e.Data) {
		why = "trailing bytes after the JSON value"
	}
	shape := ""
	if why == "" && known { // SURF-5 (the shape of an unknown type is unknown)
		shape = checkShape(spec, compact, members)
	}
	clear(*scratch) // keep no reference to the caller's bytes
	memberScratch.Put(scratch)
	switch {
	case why != "":
		return Errorf(CodeDataNotJSON, e.Seq, "data of %s: %s", e.Type, why)
	case shape != "":
		return Errorf(CodeDataInvalid, e.Seq, "data of %s: %s", e.Type, shape)
	}
	e.Data = compact
	return nil
}

// checkShape checks SURF-5 on compact, valid JSON.
func checkShape(spec *TypeSpec, data []byte, members []member) string {
	if len(data) == 0 || data[0] != '{' {
		return "not a JSON object"
	}
	next := 0 // where the next field is looked for first
	for i := range spec.Fields {
		f := &spec.Fields[i]
		v, ok := findMember(data, members, f.Name, &next)
		if !ok {
			if f.Required {
				return "missing required field " + strconv.Quote(f.Name)
			}
			continue
		}
		if why := kindProblem(f, v); why != "" {
			return "field " + strconv.Quote(f.Name) + " " + why
		}
	}
	return ""
}

// findMember returns the value of the member called name. Members mostly
// come in the order of the type's fields, so the search starts at *next,
// the member after the last one found, and goes round; *next is moved
// past the member found.
func findMember(data []byte, members []member, name string, next *int) ([]byte, bool) {
	from := min(*next, len(members))
	for k := from; k < len(members); k++ {
		if m := &members[k]; string(m.key) == name {
			*next = k + 1
			return data[m.start:m.end], true
		}
	}
	for k := range from {
		if m := &members[k]; string(m.key) == name {
			*next = k + 1
			return data[m.start:m.end], true
		}
	}
	return nil, false
}

func kindProblem(f *FieldSpec, v []byte) string {
	if f.Nullable && string(v) == "null" {
		return ""
	}
	switch f.Kind {
	case KindAny:
		return ""
	case KindInteger:
		if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
			return "is not a number"
		}
		if shortDigits(v) {
			return "" // exact: what ParseFloat and Trunc would say, at no cost
		}
		x, err := strconv.ParseFloat(string(v), 64)
		if err != nil || x != math.Trunc(x) {
			return "is not an integer"
		}
	case KindString:
		if v[0] != '"' {
			return "is not a string"
		}
		if len(f.Enum) > 0 {
			raw, plain := plainString(v) // compared in place: no copy
			if !plain {
				s, _ := decodeString(v)
				raw = []byte(s)
			}
			for _, e := range f.Enum {
				if string(raw) == e {
					return ""
				}
			}
			return "is not one of the allowed values"
		}
	case KindBoolean:
		if v[0] != 't' && v[0] != 'f' {
			return "is not a boolean"
		}
	case KindArray:
		if v[0] != '[' {
			return "is not an array"
		}
	case KindObject:
		if v[0] != '{' {
			return "is not an object"
		}
	case KindBlocks:
		if v[0] != '[' {
			return "is not an array of blocks"
		}
		for b := range elements(v) {
			if b[0] != '{' {
				return "holds a block that is not an object"
			}
			t, ok := ObjectMember(b, "type")
			if !ok || t[0] != '"' {
				return "holds a block without a string \"type\""
			}
		}
	case KindTagged:
		if v[0] != '{' {
			return "is not an object"
		}
		k, ok := ObjectMember(v, "kind")
		if !ok || k[0] != '"' {
			return "has no string \"kind\""
		}
	}
	return ""
}

// shortDigits reports whether v is a literal of at most 15 digits, with
// or without a minus: an integer a float64 holds exactly.
func shortDigits(v []byte) bool {
	d := v
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 15 {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func decodeString(v []byte) (string, bool) {
	if raw, ok := plainString(v); ok {
		return string(raw), true
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false
	}
	return s, true
}

// plainString returns the text between the quotes of a JSON string token
// that holds no escape, no control character and only UTF-8: what
// encoding/json would decode it to, without decoding. ok is false for any
// other token; decode those.
func plainString(tok []byte) (raw []byte, ok bool) {
	if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' {
		return nil, false
	}
	raw = tok[1 : len(tok)-1]
	ascii := true
	for _, c := range raw {
		if c < 0x20 || c == '"' || c == '\\' {
			return nil, false
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	if !ascii && !utf8.Valid(raw) {
		return nil, false
	}
	return raw, true
}
