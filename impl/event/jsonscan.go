package event

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// maxDepth is the deepest nesting of arrays and objects accepted in data,
// the same bound as encoding/json (SURF-4).
const maxDepth = 10000

// member is one member of the top-level data object, as offsets into the
// compact text.
type member struct {
	key        []byte // the key, unescaped (shares the input when it had no escape)
	start, end int
}

// scanner validates JSON text against SURF-4 and writes its compact form.
type scanner struct {
	in      []byte
	pos     int
	out     []byte
	depth   int
	members []member // members of the top-level object, if it is one
	bad     string   // why the text was rejected
	// lenient checks syntax only (and duplicate keys of the top-level
	// object): the envelope decoder reads data this way and leaves the
	// SURF-4 checks of data to Check.
	lenient bool
}

// compactData checks data against SURF-4 and returns its compact form and
// the members of its top-level object. On failure it returns a reason.
func compactData(data []byte) (out []byte, members []member, reason string) {
	return scan(data, false)
}

func scan(data []byte, lenient bool) (out []byte, members []member, reason string) {
	s := scanner{in: data, out: make([]byte, 0, len(data)), lenient: lenient}
	s.ws()
	if !s.value() {
		return nil, nil, s.bad
	}
	s.ws()
	if s.pos != len(s.in) {
		return nil, nil, "trailing bytes after the JSON value"
	}
	return s.out, s.members, ""
}

func (s *scanner) fail(why string) bool {
	if s.bad == "" {
		s.bad = why + " at byte " + strconv.Itoa(s.pos)
	}
	return false
}

func (s *scanner) ws() {
	for s.pos < len(s.in) {
		switch s.in[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) value() bool {
	if s.pos >= len(s.in) {
		return s.fail("unexpected end of JSON")
	}
	switch c := s.in[s.pos]; {
	case c == '{':
		return s.object()
	case c == '[':
		return s.array()
	case c == '"':
		_, ok := s.str(false)
		return ok
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	default:
		return s.fail("invalid character " + strconv.QuoteRune(rune(c)))
	}
}

func (s *scanner) lit(word string) bool {
	if !bytes.HasPrefix(s.in[s.pos:], []byte(word)) {
		return s.fail("invalid literal")
	}
	s.out = append(s.out, word...)
	s.pos += len(word)
	return true
}

func (s *scanner) enter() bool {
	s.depth++
	if s.depth > maxDepth {
		return s.fail("nesting deeper than 10000")
	}
	return true
}

func (s *scanner) object() bool {
	if !s.enter() {
		return false
	}
	top := s.depth == 1
	s.pos++
	s.out = append(s.out, '{')
	s.ws()
	var keyBuf [8][]byte
	keys := keyBuf[:0] // small objects: no allocation
	var keySet map[string]struct{}
	if s.pos < len(s.in) && s.in[s.pos] == '}' {
		s.pos++
		s.out = append(s.out, '}')
		s.depth--
		return true
	}
	for {
		s.ws()
		if s.pos >= len(s.in) || s.in[s.pos] != '"' {
			return s.fail("expected an object key")
		}
		check := !s.lenient || top
		key, ok := s.str(check)
		if !ok {
			return false
		}
		// Duplicate keys are not lossless: readers disagree on which wins.
		if !check {
			// syntax only
		} else if keySet != nil {
			if _, dup := keySet[string(key)]; dup {
				return s.fail("duplicate object key " + strconv.Quote(string(key)))
			}
			keySet[string(key)] = struct{}{}
		} else {
			for _, k := range keys {
				if string(k) == string(key) {
					return s.fail("duplicate object key " + strconv.Quote(string(key)))
				}
			}
			keys = append(keys, key)
			if len(keys) > 16 {
				keySet = make(map[string]struct{}, 32)
				for _, k := range keys {
					keySet[string(k)] = struct{}{}
				}
			}
		}
		s.ws()
		if s.pos >= len(s.in) || s.in[s.pos] != ':' {
			return s.fail("expected ':'")
		}
		s.pos++
		s.out = append(s.out, ':')
		s.ws()
		start := len(s.out)
		if !s.value() {
			return false
		}
		if top {
			s.members = append(s.members, member{key: key, start: start, end: len(s.out)})
		}
		s.ws()
		if s.pos >= len(s.in) {
			return s.fail("unexpected end of JSON")
		}
		switch s.in[s.pos] {
		case ',':
			s.pos++
			s.out = append(s.out, ',')
		case '}':
			s.pos++
			s.out = append(s.out, '}')
			s.depth--
			return true
		default:
			return s.fail("expected ',' or '}'")
		}
	}
}

func (s *scanner) array() bool {
	if !s.enter() {
		return false
	}
	s.pos++
	s.out = append(s.out, '[')
	s.ws()
	if s.pos < len(s.in) && s.in[s.pos] == ']' {
		s.pos++
		s.out = append(s.out, ']')
		s.depth--
		return true
	}
	for {
		s.ws()
		if !s.value() {
			return false
		}
		s.ws()
		if s.pos >= len(s.in) {
			return s.fail("unexpected end of JSON")
		}
		switch s.in[s.pos] {
		case ',':
			s.pos++
			s.out = append(s.out, ',')
		case ']':
			s.pos++
			s.out = append(s.out, ']')
			s.depth--
			return true
		default:
			return s.fail("expected ',' or ']'")
		}
	}
}

// str scans a string token and copies it to out verbatim. With decode, it
// also returns its value: the input's bytes when the token has no escape,
// a decoded copy otherwise.
func (s *scanner) str(decode bool) ([]byte, bool) {
	start := s.pos
	s.pos++ // opening quote
	escaped := false
	for s.pos < len(s.in) {
		c := s.in[s.pos]
		switch {
		case c == '"':
			s.pos++
			raw := s.in[start:s.pos]
			s.out = append(s.out, raw...)
			if !decode {
				return nil, true
			}
			if !escaped {
				return raw[1 : len(raw)-1 : len(raw)-1], true
			}
			var v string
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, s.fail("invalid string")
			}
			return []byte(v), true
		case c == '\\':
			escaped = true
			if s.pos+1 >= len(s.in) {
				return nil, s.fail("unexpected end of JSON")
			}
			switch s.in[s.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.pos += 2
			case 'u':
				if s.pos+6 > len(s.in) || !isHex4(s.in[s.pos+2:s.pos+6]) {
					return nil, s.fail("invalid \\u escape")
				}
				s.pos += 6
			default:
				return nil, s.fail("invalid escape")
			}
		case c < 0x20:
			return nil, s.fail("control character in string")
		case c < utf8.RuneSelf || s.lenient:
			s.pos++
		default:
			r, size := utf8.DecodeRune(s.in[s.pos:])
			if r == utf8.RuneError && size == 1 {
				return nil, s.fail("invalid UTF-8")
			}
			s.pos += size
		}
	}
	return nil, s.fail("unterminated string")
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func (s *scanner) number() bool {
	start := s.pos
	i := s.pos
	if s.in[i] == '-' {
		i++
	}
	if i >= len(s.in) || !isDigit(s.in[i]) {
		return s.fail("invalid number")
	}
	if s.in[i] == '0' {
		i++
	} else {
		for i < len(s.in) && isDigit(s.in[i]) {
			i++
		}
	}
	integer := true
	if i < len(s.in) && s.in[i] == '.' {
		integer = false
		i++
		if i >= len(s.in) || !isDigit(s.in[i]) {
			return s.fail("invalid number")
		}
		for i < len(s.in) && isDigit(s.in[i]) {
			i++
		}
	}
	if i < len(s.in) && (s.in[i] == 'e' || s.in[i] == 'E') {
		integer = false
		i++
		if i < len(s.in) && (s.in[i] == '+' || s.in[i] == '-') {
			i++
		}
		if i >= len(s.in) || !isDigit(s.in[i]) {
			return s.fail("invalid number")
		}
		for i < len(s.in) && isDigit(s.in[i]) {
			i++
		}
	}
	lit := s.in[start:i]
	s.pos = i
	if s.lenient {
		s.out = append(s.out, lit...)
		return true
	}
	if why := numberProblem(lit, integer); why != "" {
		return s.fail(why)
	}
	s.out = append(s.out, lit...)
	return true
}

// numberProblem says why a syntactically valid number literal is not
// lossless (SURF-4), or "" when it is.
func numberProblem(lit []byte, integer bool) string {
	// Short integer literals are always exact.
	if integer && len(lit) <= 15 {
		if len(lit) == 2 && lit[0] == '-' && lit[1] == '0' {
			return "negative zero"
		}
		return ""
	}
	v, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return "number out of range"
	}
	if v == 0 && math.Signbit(v) {
		return "negative zero"
	}
	if integer && math.Abs(v) > MaxSafeInteger {
		return "integer beyond 2^53-1"
	}
	return ""
}
