package message

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/surfacelog/surface/internal/jsonscan"
)

// The token meter (EstimateTokens) reads each block once, over its raw
// bytes: one walk finds the members it needs, and the lengths are counted
// from the literals themselves, without decoding a string, compacting the
// text or formatting a number but where JavaScript would write it
// differently. It gives exactly the counts of the straightforward reading
// (decode, compact, re-quote; meter_ref_test.go keeps that version, and
// FuzzMeter compares the two).

// meterBlocks is the meter's estimate of a list of blocks.
func meterBlocks(blocks []json.RawMessage) int {
	n := 0
	for _, b := range blocks {
		n += meterBlock(b)
	}
	return n
}

func quarter(units int) int { return (units + 3) / 4 }

// blockMembers are the members of a content block the meter reads, as
// raw JSON values (nil when absent): the first occurrence of each.
type blockMembers struct {
	typ, text, name, args, content, native []byte
	hasText, hasNative                     bool
}

func meterBlock(b []byte) int {
	var m blockMembers
	if !scanBlock(b, &m) {
		return quarter(jsonUnits(b)) + 4
	}
	switch string(literalText(m.typ)) {
	case "text", "reasoning":
		if m.hasText {
			if units, ok := stringUnits(m.text); ok {
				return quarter(units) + 4
			}
		}
	case "tool-call":
		nameUnits, _ := stringUnits(m.name)
		argUnits, ok := stringUnits(m.args)
		if !ok { // an object: its JSON text
			argUnits = jsonUnits(m.args)
		}
		return quarter(nameUnits) + quarter(argUnits) + 4
	case "tool-result":
		n := 4
		for el, rest := firstElement(m.content); el != nil; el, rest = nextElement(rest) {
			n += meterBlock(el)
		}
		return n
	}
	if m.hasNative {
		// PROV-7: a provider's item is priced by its portable text only.
		units, _ := stringUnits(m.text)
		return quarter(units) + 4
	}
	return quarter(jsonUnits(b)) + 4
}

// scanBlock fills m from the top-level members of the JSON object b; it
// is false when b is not an object.
func scanBlock(b []byte, m *blockMembers) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return true
	}
	for i < len(b) && b[i] == '"' {
		kEnd := jsonscan.ShortEnd(b, i) // inlined: a key ends in its loop
		if kEnd < 0 {
			kEnd = jsonscan.EndFrom(b, -kEnd)
		}
		key := b[i:kEnd]
		i = skipSpace(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return true
		}
		vStart := skipSpace(b, i+1)
		vEnd := skipValue(b, vStart)
		v := b[vStart:vEnd]
		switch string(literalText(key)) {
		case "type":
			if m.typ == nil {
				m.typ = v
			}
		case "text":
			if !m.hasText {
				m.text, m.hasText = v, true
			}
		case "name":
			if m.name == nil {
				m.name = v
			}
		case "arguments":
			if m.args == nil {
				m.args = v
			}
		case "content":
			if m.content == nil {
				m.content = v
			}
		case "native":
			if !m.hasNative {
				m.native, m.hasNative = v, true
			}
		}
		i = skipSpace(b, vEnd)
		if i >= len(b) || b[i] != ',' {
			return true
		}
		i = skipSpace(b, i+1)
	}
	return true
}

// literalText is the string the literal lit holds: its bytes between the
// quotes when it has no escape (the usual case: no copy), else decoded,
// and empty when it does not decode or is not a string. It reads both the
// blocks' member names and their "type".
func literalText(lit []byte) []byte {
	if len(lit) < 2 || lit[0] != '"' {
		return nil
	}
	if bytes.IndexByte(lit, '\\') < 0 {
		return lit[1 : len(lit)-1]
	}
	var s string
	_ = json.Unmarshal(lit, &s)
	return []byte(s)
}

// firstElement returns the first element of the JSON array arr and what
// follows it (nil when arr is not an array or is empty); nextElement the
// next one from there.
func firstElement(arr []byte) (el, rest []byte) {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return nil, nil
	}
	return element(arr[i+1:])
}

func nextElement(rest []byte) (el, more []byte) {
	i := skipSpace(rest, 0)
	if i >= len(rest) || rest[i] != ',' {
		return nil, nil
	}
	return element(rest[i+1:])
}

func element(b []byte) (el, rest []byte) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] == ']' {
		return nil, nil
	}
	end := skipValue(b, i)
	return b[i:end], b[end:]
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipValue returns the index just past the JSON value at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		if j := jsonscan.ShortEnd(b, i); j > 0 {
			return j
		} else {
			return jsonscan.EndFrom(b, -j)
		}
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				if end := jsonscan.ShortEnd(b, j); end > 0 {
					j = end - 1
				} else {
					j = jsonscan.EndFrom(b, -end) - 1
				}
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && !isSpace(b[j]) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
		j++
	}
	return j
}

// units walks the UTF-16 code units of the string literal lit (its
// quotes included) as JavaScript's JSON.parse reads them: an escape is
// one unit (a surrogate escape too), a raw character one or two (an
// invalid UTF-8 byte one, as U+FFFD).
func units(lit []byte, f func(u uint16)) {
	for i := 1; i < len(lit)-1; {
		c := lit[i]
		if c < utf8.RuneSelf && c != '\\' {
			f(uint16(c))
			i++
			continue
		}
		if c != '\\' {
			r, size := utf8.DecodeRune(lit[i:])
			if r >= 0x10000 {
				hi, lo := utf16.EncodeRune(r)
				f(uint16(hi))
				f(uint16(lo))
			} else {
				f(uint16(r))
			}
			i += size
			continue
		}
		if i+1 >= len(lit)-1 {
			return
		}
		switch e := lit[i+1]; e {
		case 'u':
			var v uint16
			for k := i + 2; k < i+6 && k < len(lit); k++ {
				v = v<<4 | uint16(hexVal(lit[k]))
			}
			f(v)
			i += 6
			continue
		case 'b':
			f('\b')
		case 'f':
			f('\f')
		case 'n':
			f('\n')
		case 'r':
			f('\r')
		case 't':
			f('\t')
		default: // '"', '\\', '/'
			f(uint16(e))
		}
		i += 2
	}
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 0
}

// stringUnits is the UTF-16 length of the string the JSON string literal
// lit holds (JavaScript's length); ok is false when lit is not a string.
func stringUnits(lit []byte) (int, bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return 0, false
	}
	body := lit[1 : len(lit)-1]
	if isASCII(body) && bytes.IndexByte(body, '\\') < 0 {
		return len(body), true // one unit a byte
	}
	n := 0
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c < utf8.RuneSelf && c != '\\':
			n++
			i++
		case c == '\\':
			n++ // an escape is one unit, a \u escape too
			if i+1 < len(body) && body[i+1] == 'u' {
				i += 6
			} else {
				i += 2
			}
		default:
			r, size := utf8.DecodeRune(body[i:])
			if r >= 0x10000 {
				n += 2
			} else {
				n++
			}
			i += size
		}
	}
	return n, true
}

// isASCII reports whether b holds only ASCII bytes, eight at a time.
func isASCII(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b)&0x8080808080808080 != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// quotedUnits is the UTF-16 length of what JSON.stringify writes for the
// string the literal lit holds: its quotes; two units for a quote, a
// backslash and \b \f \n \r \t; six for another control character and for
// a lone surrogate (a \u escape); one for any other unit.
func quotedUnits(lit []byte) int {
	n := 2
	pending := false // a high surrogate waiting for its low half
	units(lit, func(u uint16) {
		if pending {
			pending = false
			if u >= 0xdc00 && u <= 0xdfff {
				n += 2
				return
			}
			n += 6
		}
		switch {
		case u >= 0xd800 && u <= 0xdbff:
			pending = true
		case u >= 0xdc00 && u <= 0xdfff:
			n += 6
		case u == '"' || u == '\\' || u == '\b' || u == '\f' || u == '\n' || u == '\r' || u == '\t':
			n += 2
		case u < 0x20:
			n += 6
		default:
			n++
		}
	})
	if pending {
		n += 6
	}
	return n
}

// jsonUnits is the UTF-16 length of JSON text as JavaScript's
// JSON.stringify(JSON.parse(text)) would write it: no whitespace between
// tokens, each string literal quoted as JavaScript quotes it, each number
// as JavaScript writes it. (JavaScript also moves integer-like object keys
// first; the length does not change.)
func jsonUnits(raw []byte) int {
	n := 0
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case isSpace(c):
			i++
		case c == '"':
			j := i + 1
			for j < len(raw) && raw[j] != '"' {
				if raw[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(raw) {
				return n + unterminated(raw[i:])
			}
			n += quotedUnits(raw[i : j+1])
			i = j + 1
		case c == '-' || (c >= '0' && c <= '9'):
			j := i + 1
			for j < len(raw) && isNumberByte(raw[j]) {
				j++
			}
			n += numberUnits(raw[i:j])
			i = j
		default:
			n++ // JSON punctuation and literals are ASCII
			i++
		}
	}
	return n
}

// unterminated is the length a string literal cut short counts: its
// characters as they are.
func unterminated(b []byte) int {
	n := 0
	for _, r := range string(b) {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// numberUnits is the length of the number literal lit as JavaScript
// writes it. A literal JavaScript writes as it is (an integer or a decimal
// fraction of at most 15 significant digits, without leading or trailing
// zeros, at least 1e-6) is counted as it is; anything else goes through
// JSNumber.
func numberUnits(lit []byte) int {
	if plainNumber(lit) {
		return len(lit)
	}
	return len(JSNumber(lit))
}

func plainNumber(lit []byte) bool {
	b := lit
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	intEnd := 0
	for intEnd < len(b) && b[intEnd] >= '0' && b[intEnd] <= '9' {
		intEnd++
	}
	if intEnd == 0 || (b[0] == '0' && intEnd > 1) {
		return false
	}
	digits := intEnd
	if b[0] == '0' {
		digits = 0
	}
	if intEnd == len(b) {
		// An integer; -0 is written 0.
		return digits <= 15 && !(len(lit) == 2 && lit[0] == '-' && b[0] == '0')
	}
	if b[intEnd] != '.' || intEnd+1 == len(b) {
		return false // an exponent, or not a number
	}
	frac := b[intEnd+1:]
	for _, c := range frac {
		if c < '0' || c > '9' {
			return false
		}
	}
	if frac[len(frac)-1] == '0' {
		return false // trailing zeros are dropped
	}
	if b[0] == '0' {
		lead := 0
		for lead < len(frac) && frac[lead] == '0' {
			lead++
		}
		if lead >= 6 {
			return false // below 1e-6: written with an exponent
		}
		digits = len(frac) - lead
	} else {
		digits += len(frac)
	}
	return digits <= 15
}
