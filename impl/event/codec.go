package event

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// MarshalJSON writes the wire form of an event (SURF-1): the members type,
// seq, time, data, then sourceEventSeqs, surfaceOp and ignorable when
// present.
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
	if e.Ignorable {
		dst = append(dst, `,"ignorable":true`...)
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
// Data is compacted when it is valid JSON and kept as sent otherwise; Check
// checks it. To decode many events in one scan each, use a Decoder.
func Decode(b []byte) (Event, error) {
	var a arena
	e, _, err := decodeWire(b, &a)
	if err != nil {
		return Event{}, err
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
	if n, ok := parseSmallInt(v); ok {
		return n, true
	}
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f != math.Trunc(f) || f < 0 || f > MaxSafeInteger {
		return 0, false
	}
	return int64(f), true
}

// decodeSources reads a sourceEventSeqs value; anything that is not an
// array of safe integers decodes to a list holding -1 in the bad places
// (sources.invalid in check order).
func decodeSources(v []byte) []int64 {
	i := skipSpace(v, 0)
	if i >= len(v) || v[i] != '[' || !ValidSyntax(v) {
		return []int64{-1}
	}
	out := make([]int64, 0, 4)
	i = skipSpace(v, i+1)
	if i < len(v) && v[i] == ']' {
		return out
	}
	for {
		end := valueEnd(v, i)
		s, ok := safeInteger(v[i:end])
		if !ok {
			s = -1
		}
		out = append(out, s)
		i = skipSpace(v, end)
		if v[i] == ']' {
			return out
		}
		i = skipSpace(v, i+1) // past ','
	}
}

func decodeOp(v []byte) SurfaceOp {
	if string(v) == `"append"` {
		return Append()
	}
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
// value the way Decode does, for callers that build an event from parts:
// nil means absent, surrounding whitespace is insignificant, and malformed
// values (an empty one among them) become the canonical invalid values that
// Check rejects in order.
func DecodeMarkers(surfaceOp, sources []byte) (SurfaceOp, []int64) {
	var op SurfaceOp
	var srcs []int64
	if surfaceOp != nil {
		if v := bytes.TrimSpace(surfaceOp); !ValidSyntax(v) {
			op = SurfaceOp{Kind: OpMalformed}
		} else {
			op = decodeOp(v)
		}
	}
	if sources != nil {
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
