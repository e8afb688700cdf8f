package event

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/bits"
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
	var s scanner // not a composite literal: see scanDataInto
	s.in, s.out, s.lenient = data, make([]byte, 0, len(data)), lenient
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
			// Field by field, as in scanDataInto.
			s.members = append(s.members, member{})
			m := &s.members[len(s.members)-1]
			m.key, m.start, m.end = key, start, len(s.out)
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
//
// Its position is a local (s.pos is written when it returns), and runs
// of plain bytes are skipped eight at a time (plainRun).
func (s *scanner) str(decode bool) ([]byte, bool) {
	in := s.in
	start := s.pos
	i := start + 1 // opening quote
	escaped := false
	for {
		i = plainRun(in, i)
		if i >= len(in) {
			s.pos = i
			return nil, s.fail("unterminated string")
		}
		c := in[i]
		switch {
		case c == '"':
			i++
			s.pos = i
			raw := in[start:i]
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
			if i+1 >= len(in) {
				s.pos = i
				return nil, s.fail("unexpected end of JSON")
			}
			switch in[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(in) || !isHex4(in[i+2:i+6]) {
					s.pos = i
					return nil, s.fail("invalid \\u escape")
				}
				i += 6
			default:
				s.pos = i
				return nil, s.fail("invalid escape")
			}
		case c < 0x20:
			s.pos = i
			return nil, s.fail("control character in string")
		case c < utf8.RuneSelf || s.lenient:
			i++
		default:
			r, size := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && size == 1 {
				s.pos = i
				return nil, s.fail("invalid UTF-8")
			}
			i += size
		}
	}
}

// plainRun returns the index of the first byte at or after i, within a
// string token, that is not plain: a quote, a backslash, a control
// character or a byte of a multi-byte character (past the end of in if
// all are plain). It reads eight bytes at a time while eight remain.
func plainRun(in []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for i+8 <= len(in) {
		w := binary.LittleEndian.Uint64(in[i:])
		// A byte's high bit is set in one of the terms exactly when the
		// byte is below 0x20 (c - 0x20 wraps), is a quote or a backslash
		// (c ^ q is zero, and 0 - 1 wraps) or is 0x80 or more (c - 0x20
		// keeps the bit from 0xa0 on, (c ^ '"') - 1 below that). Only a
		// byte that wraps borrows from the next, so the lowest byte
		// flagged is the first that is not plain (TestPlainRun tries
		// every value, and every pair of values in a word).
		special := ((w - ones*0x20) | ((w ^ (ones * '"')) - ones) | ((w ^ (ones * '\\')) - ones)) & highs
		if special != 0 {
			return i + bits.TrailingZeros64(special)/8
		}
		i += 8
	}
	for i < len(in) {
		if c := in[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return i
		}
		i++
	}
	return i
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
