package jsonscan

import "bytes"

// short is how far StringEnd walks byte by byte before it hands the search
// to bytes.IndexByte: keys, ids and small values end sooner, and for them
// a loop costs less than a call.
const short = 32

// StringEnd returns the index just past the string literal whose opening
// quote is b[i], or len(b) when the literal is not closed. A backslash
// escapes the byte after it; the closing quote is the first one not
// escaped.
func StringEnd(b []byte, i int) int {
	j := i + 1
	head := b[j:min(len(b), j+short)]
	for k, c := range head {
		switch c {
		case '"':
			return j + k + 1
		case '\\':
			return walk(b, j+k)
		}
	}
	j += len(head)
	// No escape is pending at j. A quote with no backslash just before it
	// ends the literal; a backslash there may be escaped itself, so the
	// walk decides.
	if k := bytes.IndexByte(b[j:], '"'); k >= 0 && (k == 0 || b[j+k-1] != '\\') {
		return j + k + 1
	}
	return walk(b, j)
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
