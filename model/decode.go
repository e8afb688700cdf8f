package model

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/surfacelog/surface/impl/event"
)

// The model's own reading of the wire form (SURF-1), written plainly and
// apart from the implementation's decoder, so that differential tests see
// the decoder's mistakes too. It shares only types with impl/event.

func envelopeError(why string) *event.Error {
	return event.Errorf(event.CodeInvalidEnvelope, -1, "%s", why)
}

// DecodeLine reads one wire-form event. The envelope is checked here
// (SURF-1); a malformed surfaceOp or sourceEventSeqs becomes a canonical
// invalid value that the rules report in their order; data is kept as
// sent.
func DecodeLine(line []byte) (event.Event, error) {
	var e event.Event
	members, ok := objectOf(line)
	if !ok {
		return e, envelopeError("an event must be one JSON object without repeated members")
	}
	have := map[string]bool{}
	for _, m := range members {
		have[m.key] = true
		switch m.key {
		case "type":
			var s string
			if m.val[0] != '"' || json.Unmarshal(m.val, &s) != nil {
				return e, envelopeError("type must be a string")
			}
			e.Type = event.Type(s)
		case "seq", "time":
			v, ok := integer(m.val)
			if !ok {
				return e, envelopeError(m.key + " must be an integer in [0, 2^53-1]")
			}
			if m.key == "seq" {
				e.Seq = v
			} else {
				e.Time = v
			}
		case "data":
			e.Data = append([]byte(nil), m.val...)
		case "sourceEventSeqs":
			e.Sources = sourcesOf(m.val)
		case "surfaceOp":
			e.Op = markerOf(m.val)
		case "ignorable":
			if string(m.val) != "true" {
				return e, envelopeError("ignorable must be true")
			}
			e.Ignorable = true
		default:
			return e, envelopeError("unknown member " + m.key)
		}
	}
	if !have["type"] || !have["seq"] || !have["time"] || !have["data"] {
		return e, envelopeError("type, seq, time and data are required")
	}
	return e, nil
}

// DecodeMarkers decodes a surfaceOp and a sourceEventSeqs value given as
// JSON text (nil: absent), as DecodeLine does.
func DecodeMarkers(surfaceOp, sources []byte) (event.SurfaceOp, []int64) {
	var op event.SurfaceOp
	var srcs []int64
	if surfaceOp != nil {
		if _, ok := skipValue(surfaceOp, 0); !ok || !json.Valid(surfaceOp) {
			op = event.SurfaceOp{Kind: event.OpMalformed}
		} else {
			op = markerOf(bytes.TrimSpace(surfaceOp))
		}
	}
	if sources != nil {
		srcs = sourcesOf(bytes.TrimSpace(sources))
	}
	return op, srcs
}

type rawMember struct {
	key string
	val []byte
}

// objectOf splits one JSON object into its members (values as sent,
// without surrounding space), failing on anything else, on a repeated
// member, and on trailing bytes.
func objectOf(b []byte) ([]rawMember, bool) {
	i := ws(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	var out []rawMember
	seen := map[string]bool{}
	i = ws(b, i+1)
	if i < len(b) && b[i] == '}' {
		return out, ws(b, i+1) == len(b)
	}
	for {
		kEnd, ok := skipValue(b, i)
		if !ok || b[i] != '"' {
			return nil, false
		}
		var key string
		if json.Unmarshal(b[i:kEnd], &key) != nil || seen[key] {
			return nil, false
		}
		seen[key] = true
		i = ws(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = ws(b, i+1)
		vEnd, ok := skipValue(b, i)
		if !ok {
			return nil, false
		}
		out = append(out, rawMember{key, b[i:vEnd]})
		i = ws(b, vEnd)
		if i >= len(b) {
			return nil, false
		}
		if b[i] == '}' {
			return out, ws(b, i+1) == len(b)
		}
		if b[i] != ',' {
			return nil, false
		}
		i = ws(b, i+1)
	}
}

func ws(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value at b[i] (recursively, at any
// depth), checking its syntax.
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c == '{' || c == '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i = ws(b, i+1)
		if i < len(b) && b[i] == closer {
			return i + 1, true
		}
		for {
			if c == '{' {
				end, ok := skipValue(b, i)
				if !ok || b[i] != '"' {
					return 0, false
				}
				i = ws(b, end)
				if i >= len(b) || b[i] != ':' {
					return 0, false
				}
				i = ws(b, i+1)
			}
			end, ok := skipValue(b, i)
			if !ok {
				return 0, false
			}
			i = ws(b, end)
			if i >= len(b) {
				return 0, false
			}
			if b[i] == closer {
				return i + 1, true
			}
			if b[i] != ',' {
				return 0, false
			}
			i = ws(b, i+1)
		}
	case c == '"':
		for j := i + 1; j < len(b); j++ {
			switch {
			case b[j] == '\\':
				j++
			case b[j] == '"':
				if !json.Valid(b[i : j+1]) {
					return 0, false
				}
				return j + 1, true
			case b[j] < 0x20:
				return 0, false
			}
		}
		return 0, false
	default:
		j := i
		for j < len(b) && !bytes.ContainsRune([]byte(" \t\r\n,]}:"), rune(b[j])) {
			j++
		}
		if j == i || !json.Valid(b[i:j]) {
			return 0, false
		}
		return j, true
	}
}

// integer reads a JSON number whose double value is an integer in
// [0, 2^53-1], as JavaScript reads it: 1.0, 1e0 and -0 are integers.
func integer(v []byte) (int64, bool) {
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f != math.Trunc(f) || f < 0 || f > maxSafe {
		return 0, false
	}
	return int64(f), true
}

// sourcesOf decodes sourceEventSeqs: -1 marks a bad element, and anything
// that is not an array is one bad element (SURF-9).
func sourcesOf(v []byte) []int64 {
	var elems []json.RawMessage
	if len(v) == 0 || v[0] != '[' || json.Unmarshal(v, &elems) != nil {
		return []int64{-1}
	}
	out := make([]int64, len(elems))
	for k, el := range elems {
		if n, ok := integer(el); ok {
			out[k] = n
		} else {
			out[k] = -1
		}
	}
	return out
}

// markerOf decodes a surfaceOp value (SURF-8): the string "append", an
// object that is exactly {op:"replace", start, end}, or a malformed one.
func markerOf(v []byte) event.SurfaceOp {
	if len(v) > 0 && v[0] == '"' {
		var s string
		if json.Unmarshal(v, &s) == nil && s == "append" {
			return event.Append()
		}
		return event.SurfaceOp{Kind: event.OpMalformed}
	}
	if len(v) == 0 || v[0] != '{' {
		return event.SurfaceOp{Kind: event.OpMalformed}
	}
	members, ok := objectOf(v)
	if !ok || len(members) != 3 {
		return event.SurfaceOp{Kind: event.OpMalformedReplace}
	}
	op := event.SurfaceOp{Kind: event.OpReplace}
	var okOp, okStart, okEnd bool
	for _, m := range members {
		switch m.key {
		case "op":
			var s string
			okOp = m.val[0] == '"' && json.Unmarshal(m.val, &s) == nil && s == "replace"
		case "start":
			op.Start, okStart = integer(m.val)
		case "end":
			op.End, okEnd = integer(m.val)
		}
	}
	if !okOp || !okStart || !okEnd {
		return event.SurfaceOp{Kind: event.OpMalformedReplace}
	}
	return op
}
