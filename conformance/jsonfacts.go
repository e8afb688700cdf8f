package conformance

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"unicode/utf8"
)

// jsonFacts are the properties of a JSON text that SURF-4 refuses and a
// JavaScript reader does not: found here by a reader of its own (a token
// walk of encoding/json and a byte scan), not by impl/event, so that a
// classification of the seed system's outcomes does not lean on the code
// it is compared with.
type jsonFacts struct {
	invalidUTF8 bool
	depth       int  // deepest nesting of arrays and objects; the value itself is level 1
	duplicate   bool // an object with a key twice, at any depth
	unsafeInt   bool // an integer literal beyond 2^53-1
	notFinite   bool // a number beyond the double range
	negZero     bool // a number that is negative zero
	syntaxError bool
}

// factsOf reads b (a JSON text, or not).
func factsOf(b []byte) jsonFacts {
	f := jsonFacts{invalidUTF8: !utf8.Valid(b), depth: nesting(b)}
	if f.depth > 9000 { // encoding/json's own limit is 10,000; deeper than that is a fact already
		return f
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // the next string token of an object is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() != "EOF" {
				f.syntaxError = true
			}
			return f
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		isKey := top != nil && top.object && top.key
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, &frame{object: true, keys: map[string]bool{}, key: true})
				continue
			case '[':
				stack = append(stack, &frame{})
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if isKey {
				if top.keys[t] {
					f.duplicate = true
				}
				top.keys[t] = true
				top.key = false
				continue
			}
		case json.Number:
			f.number(string(t))
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true
		}
	}
}

func (f *jsonFacts) number(lit string) {
	v, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(v, 0) {
		f.notFinite = true
		return
	}
	if v == 0 && lit[0] == '-' {
		f.negZero = true
	}
	if !bytes.ContainsAny([]byte(lit), ".eE") {
		n, ok := new(big.Int).SetString(lit, 10)
		if ok && n.CmpAbs(big.NewInt(1<<53-1)) > 0 {
			f.unsafeInt = true
		}
	}
}

// nesting is the deepest nesting of arrays and objects in b, strings
// skipped (the data value itself is level 1).
func nesting(b []byte) int {
	depth, deepest := 0, 0
	in, esc := false, false
	for _, c := range b {
		switch {
		case in && esc:
			esc = false
		case in && c == '\\':
			esc = true
		case in && c == '"':
			in = false
		case in:
		case c == '"':
			in = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// lossy reports whether the facts hold something SURF-4 refuses.
func (f jsonFacts) lossy() bool {
	return f.invalidUTF8 || f.depth > 10000 || f.duplicate || f.unsafeInt || f.notFinite || f.negZero
}
