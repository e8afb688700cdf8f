package event

import (
	"encoding/json"
	"math"
	"strconv"
)

// MarshalJSON writes the wire form of an event (SURF-1): the members type,
// seq, time, data, then sourceEventSeqs and surfaceOp when present.
func (e Event) MarshalJSON() ([]byte, error) {
	return e.AppendJSON(nil)
}

// AppendJSON appends the wire form of e to dst.
func (e Event) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"type":`...)
	t, err := json.Marshal(string(e.Type))
	if err != nil {
		return nil, err
	}
	dst = append(dst, t...)
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendInt(dst, e.Seq, 10)
	dst = append(dst, `,"time":`...)
	dst = strconv.AppendInt(dst, e.Time, 10)
	dst = append(dst, `,"data":`...)
	if len(e.Data) == 0 {
		return nil, Errorf(CodeDataNotJSON, e.Seq, "empty data")
	}
	dst = append(dst, e.Data...)
	if e.Sources != nil {
		dst = append(dst, `,"sourceEventSeqs":[`...)
		for i, s := range e.Sources {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, s, 10)
		}
		dst = append(dst, ']')
	}
	switch e.Op.Kind {
	case OpNone:
	case OpAppend:
		dst = append(dst, `,"surfaceOp":"append"`...)
	case OpReplace:
		dst = append(dst, `,"surfaceOp":{"op":"replace","start":`...)
		dst = strconv.AppendInt(dst, e.Op.Start, 10)
		dst = append(dst, `,"end":`...)
		dst = strconv.AppendInt(dst, e.Op.End, 10)
		dst = append(dst, '}')
	default:
		return nil, Errorf(CodeOpInvalid, e.Seq, "a malformed surfaceOp has no wire form")
	}
	return append(dst, '}'), nil
}

// UnmarshalJSON decodes the wire form of an event; see Decode.
func (e *Event) UnmarshalJSON(b []byte) error {
	ev, err := Decode(b)
	if err != nil {
		return err
	}
	*e = ev
	return nil
}

// Decode reads the wire form of one event. A broken envelope (SURF-1) is
// rejected here with event.invalid_envelope. A malformed surfaceOp or
// sourceEventSeqs is not rejected here: it is decoded to a canonical invalid
// value (OpMalformed, OpMalformedReplace, or a source of -1) so that Check
// reports it in the order of SURF-16, after contiguity and data checks.
// Data is kept as given; Check compacts it.
func Decode(b []byte) (Event, error) {
	var e Event
	members, ok := objectMembers(b)
	if !ok {
		return e, Errorf(CodeInvalidEnvelope, -1, "an event must be a JSON object without duplicate members")
	}
	var have [6]bool
	for _, m := range members {
		switch m.key {
		case "type":
			var s string
			if json.Unmarshal(m.value, &s) != nil || m.value[0] != '"' {
				return e, Errorf(CodeInvalidEnvelope, -1, "type must be a string")
			}
			e.Type, have[0] = Type(s), true
		case "seq":
			v, ok := safeInteger(m.value)
			if !ok {
				return e, Errorf(CodeInvalidEnvelope, -1, "seq must be an integer in [0, 2^53-1]")
			}
			e.Seq, have[1] = v, true
		case "time":
			v, ok := safeInteger(m.value)
			if !ok {
				return e, Errorf(CodeInvalidEnvelope, -1, "time must be an integer in [0, 2^53-1]")
			}
			e.Time, have[2] = v, true
		case "data":
			e.Data, have[3] = m.value, true
		case "sourceEventSeqs":
			e.Sources, have[4] = decodeSources(m.value), true
		case "surfaceOp":
			e.Op, have[5] = decodeOp(m.value), true
		default:
			return e, Errorf(CodeInvalidEnvelope, -1, "unknown member %q", m.key)
		}
	}
	if !have[0] || !have[1] || !have[2] || !have[3] {
		return e, Errorf(CodeInvalidEnvelope, -1, "type, seq, time and data are required")
	}
	return e, nil
}

type rawMember struct {
	key   string
	value []byte
}

// objectMembers splits a JSON object into its members, keeping each value's
// (compacted) text. It fails on invalid JSON, a non-object, or a duplicate
// key of the object; values are checked for syntax only.
func objectMembers(b []byte) ([]rawMember, bool) {
	out, members, why := scan(b, true)
	if why != "" || len(out) == 0 || out[0] != '{' {
		return nil, false
	}
	res := make([]rawMember, len(members))
	for i, m := range members {
		res[i] = rawMember{key: string(m.key), value: out[m.start:m.end:m.end]}
	}
	return res, true
}

// safeInteger reads a JSON number with an integral value in [0, 2^53-1].
func safeInteger(v []byte) (int64, bool) {
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f != math.Trunc(f) || f < 0 || f > MaxSafeInteger {
		return 0, false
	}
	return int64(f), true
}

func decodeSources(v []byte) []int64 {
	var raw []json.RawMessage
	if v[0] != '[' || json.Unmarshal(v, &raw) != nil {
		return []int64{-1}
	}
	out := make([]int64, len(raw))
	for i, r := range raw {
		s, ok := safeInteger(r)
		if !ok {
			s = -1
		}
		out[i] = s
	}
	return out
}

func decodeOp(v []byte) SurfaceOp {
	if v[0] == '"' {
		var s string
		if json.Unmarshal(v, &s) == nil && s == "append" {
			return Append()
		}
		return SurfaceOp{Kind: OpMalformed}
	}
	if v[0] != '{' {
		return SurfaceOp{Kind: OpMalformed}
	}
	members, ok := objectMembers(v)
	if !ok || len(members) != 3 {
		return SurfaceOp{Kind: OpMalformedReplace}
	}
	op := SurfaceOp{Kind: OpReplace}
	var haveOp, haveStart, haveEnd bool
	for _, m := range members {
		switch m.key {
		case "op":
			var s string
			haveOp = m.value[0] == '"' && json.Unmarshal(m.value, &s) == nil && s == "replace"
		case "start":
			op.Start, haveStart = safeInteger(m.value)
		case "end":
			op.End, haveEnd = safeInteger(m.value)
		}
	}
	if !haveOp || !haveStart || !haveEnd {
		return SurfaceOp{Kind: OpMalformedReplace}
	}
	return op
}

// DecodeMarkers decodes the wire form of a surfaceOp and a sourceEventSeqs
// value the way Decode does (nil means absent), for callers that build an
// event from parts: malformed values become the canonical invalid values
// that Check rejects in order.
func DecodeMarkers(surfaceOp, sources []byte) (SurfaceOp, []int64) {
	var op SurfaceOp
	var srcs []int64
	if len(surfaceOp) > 0 {
		if _, _, why := scan(surfaceOp, true); why != "" {
			op = SurfaceOp{Kind: OpMalformed}
		} else {
			op = decodeOp(surfaceOp)
		}
	}
	if len(sources) > 0 {
		srcs = decodeSources(sources)
	}
	return op, srcs
}

// MarkerJSON returns the wire form of a surfaceOp (nil when absent). A
// malformed marker gets a representative malformed value.
func MarkerJSON(op SurfaceOp) []byte {
	switch op.Kind {
	case OpNone:
		return nil
	case OpAppend:
		return []byte(`"append"`)
	case OpReplace:
		return []byte(`{"op":"replace","start":` + strconv.FormatInt(op.Start, 10) + `,"end":` + strconv.FormatInt(op.End, 10) + `}`)
	case OpMalformedReplace:
		return []byte(`{"op":"replace","start":0}`)
	default:
		return []byte(`"prepend"`)
	}
}
