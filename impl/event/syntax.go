package event

// ValidSyntax reports whether b is one JSON value (RFC 8259 grammar,
// surrounded by optional whitespace), at any nesting depth. It checks syntax
// only: it accepts duplicate keys, numbers of any size and invalid UTF-8 in
// strings, which SURF-4 rejects. A store uses it to tell a torn write (bytes
// that are not JSON at all) from a complete line that breaks a rule
// (STORE-2). It does not recurse, so no input can exhaust the stack.
func ValidSyntax(b []byte) bool {
	i := skipSpace(b, 0)
	end := valueEnd(b, i)
	return end >= 0 && skipSpace(b, end) == len(b)
}

// valueEnd returns the index just past the JSON value that starts at b[i]
// (checking its syntax as ValidSyntax does), or -1 when there is none.
func valueEnd(b []byte, i int) int {
	var open []byte // the containers entered and not yet closed: '{' or '['
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return -1
		}
		closed := false // whether the value ended (false: a container was entered)
		switch c := b[i]; {
		case c == '{' || c == '[':
			i = skipSpace(b, i+1)
			if i < len(b) && (c == '{' && b[i] == '}' || c == '[' && b[i] == ']') {
				i++
				closed = true
				break
			}
			open = append(open, c)
			if c == '{' {
				if i = memberKey(b, i); i < 0 {
					return -1
				}
			}
		case c == '"':
			if i = stringEnd(b, i); i < 0 {
				return -1
			}
			closed = true
		case c == '-' || isDigit(c):
			if i = numberEnd(b, i); i < 0 {
				return -1
			}
			closed = true
		case c == 't':
			if i = literalEnd(b, i, "true"); i < 0 {
				return -1
			}
			closed = true
		case c == 'f':
			if i = literalEnd(b, i, "false"); i < 0 {
				return -1
			}
			closed = true
		case c == 'n':
			if i = literalEnd(b, i, "null"); i < 0 {
				return -1
			}
			closed = true
		default:
			return -1
		}
		if !closed {
			continue
		}
		// After a value: close containers, or move to the next element.
		for {
			if len(open) == 0 {
				return i
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return -1
			}
			top := open[len(open)-1]
			if b[i] == ',' {
				i = skipSpace(b, i+1)
				if top == '{' {
					if i = memberKey(b, i); i < 0 {
						return -1
					}
				}
				break
			}
			if top == '{' && b[i] == '}' || top == '[' && b[i] == ']' {
				open = open[:len(open)-1]
				i++
				continue
			}
			return -1
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// memberKey reads `"key" :` at b[i] and returns the index of the value
// after it, or -1.
func memberKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = stringEnd(b, i); i < 0 {
		return -1
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipSpace(b, i+1)
}

// stringEnd returns the index just past the string token at b[i], or -1.
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			if i+1 >= len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if i+6 > len(b) || !isHex4(b[i+2:i+6]) {
					return -1
				}
				i += 5
			default:
				return -1
			}
		}
	}
	return -1
}

// numberEnd returns the index just past the number token at b[i], or -1.
func numberEnd(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	if i >= len(b) || !isDigit(b[i]) {
		return -1
	}
	if b[i] == '0' {
		i++
	} else {
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i
}

func literalEnd(b []byte, i int, word string) int {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return -1
	}
	return i + len(word)
}
