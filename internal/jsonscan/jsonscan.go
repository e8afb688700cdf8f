package jsonscan

import "bytes"

// short is how far StringEnd walks byte by byte before it hands the search
// to bytes.IndexByte: keys, ids and small values end sooner, and for them
// a loop costs less than a call.
const short = 32

// StringEnd returns the index just past the string literal whose opening
// quote is b[i], or len(b) when the literal is not closed. A backslash
// escapes the byte after it; the closing quote is the first one not
// escaped. Where it is called per literal, the same is
//
//	if j := ShortEnd(b, i); j > 0 { end = j } else { end = EndFrom(b, -j) }
//
// with ShortEnd inlined: no call for a short literal without escapes.
func StringEnd(b []byte, i int) int {
	if j := ShortEnd(b, i); j > 0 {
		return j
	} else {
		return EndFrom(b, -j)
	}
}

// ShortEnd looks for the end of the string literal whose opening quote is
// b[i] in its first short bytes, by a loop small enough to be inlined
// where it is called (keys, ids and small values end there). It returns
// the index just past the closing quote when it found it with no escape
// before it, else -s: the search goes on at b[s] (EndFrom), a backslash
// or the first byte it did not read.
func ShortEnd(b []byte, i int) int {
	end := min(len(b), i+1+short)
	for j := i + 1; j < end; j++ {
		if b[j] == '"' {
			return j + 1
		}
		if b[j] == '\\' {
			return -j
		}
	}
	return -end
}

// EndFrom is StringEnd of a literal where ShortEnd left the search, at
// b[s]: no escape is pending there.
func EndFrom(b []byte, s int) int {
	if s < len(b) && b[s] == '\\' {
		return walk(b, s)
	}
	// A quote with no backslash just before it ends the literal (the byte
	// before s is one ShortEnd read, or the opening quote); a backslash
	// there may be escaped itself, so the walk decides.
	if k := bytes.IndexByte(b[s:], '"'); k >= 0 && (k == 0 || b[s+k-1] != '\\') {
		return s + k + 1
	}
	return walk(b, s)
}

// walk is StringEnd byte by byte from b[j], where no escape is pending.
func walk(b []byte, j int) int {
	for ; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}
