package event

import (
	"bytes"
	"encoding/json"
	"iter"

	"github.com/surfacelog/surface/internal/jsonscan"
)

// Helpers that walk compact, already validated JSON text (as stored in
// Event.Data) without decoding it.

// skip returns the index just past the JSON value that starts at b[i].
func skip(b []byte, i int) int {
	switch b[i] {
	case '"':
		if j := jsonscan.ShortEnd(b, i); j > 0 { // inlined: no call for a key
			return j
		} else {
			return jsonscan.EndFrom(b, -j)
		}
	case '{', '[':
		depth := 0
		for {
			switch b[i] {
			case '"':
				if j := jsonscan.ShortEnd(b, i); j > 0 {
					i = j
				} else {
					i = jsonscan.EndFrom(b, -j)
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
	default: // number or literal
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' {
			i++
		}
		return i
	}
}

// ArrayElements returns the elements of a compact JSON array, sharing
// memory with it.
func ArrayElements(arr []byte) [][]byte {
	var out [][]byte
	for el := range elements(arr) {
		out = append(out, el)
	}
	return out
}

// elements yields the elements of a compact JSON array in order, each
// sharing memory with it (capacity clipped), without a slice of them.
func elements(arr []byte) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		if len(arr) < 2 || arr[0] != '[' || arr[1] == ']' {
			return
		}
		for i := 1; ; {
			j := skip(arr, i)
			if !yield(arr[i:j:j]) || arr[j] == ']' {
				return
			}
			i = j + 1
		}
	}
}

// ObjectMember returns the value of member name of a compact JSON object.
func ObjectMember(obj []byte, name string) ([]byte, bool) {
	if len(obj) < 2 || obj[0] != '{' || obj[1] == '}' {
		return nil, false
	}
	i := 1
	for {
		kEnd := skip(obj, i)
		key := obj[i:kEnd]
		vEnd := skip(obj, kEnd+1)
		if keyEquals(key, name) {
			return obj[kEnd+1 : vEnd : vEnd], true
		}
		if obj[vEnd] == '}' {
			return nil, false
		}
		i = vEnd + 1
	}
}

// ObjectMembers looks up several members of a compact JSON object in one
// walk: vals[k] is set to what ObjectMember(obj, names[k]) returns, nil
// when obj has no such member (a value is never empty). The walk ends
// once every name is found. vals must be at least as long as names.
func ObjectMembers(obj []byte, names []string, vals [][]byte) {
	clear(vals[:len(names)])
	if len(obj) < 2 || obj[0] != '{' || obj[1] == '}' {
		return
	}
	left := len(names)
	for i := 1; ; {
		kEnd := skip(obj, i)
		vEnd := skip(obj, kEnd+1)
		key := obj[i:kEnd]
		raw := key[1 : len(key)-1]
		escaped := bytes.IndexByte(raw, '\\') >= 0
		for k, name := range names {
			if vals[k] == nil && (!escaped && string(raw) == name || escaped && keyEquals(key, name)) {
				vals[k] = obj[kEnd+1 : vEnd : vEnd]
				left--
			}
		}
		if left == 0 || obj[vEnd] == '}' {
			return
		}
		i = vEnd + 1
	}
}

func keyEquals(quoted []byte, name string) bool {
	raw := quoted[1 : len(quoted)-1]
	for _, c := range raw {
		if c == '\\' {
			s, ok := decodeString(quoted)
			return ok && s == name
		}
	}
	return string(raw) == name
}

// StringMember returns the string value of member name of a compact JSON
// object, or "" when the member is absent or not a string.
func StringMember(obj []byte, name string) string {
	raw, ok := ObjectMember(obj, name)
	if !ok {
		return ""
	}
	s, _ := decodeString(raw)
	return s
}

// ToolCallIDs returns the ids of the tool calls of an assistant message's
// data, in order: its content blocks with "type":"tool-call" and a string
// "id". These are the calls that tool pairing (COMP-4) and repair (REP-2)
// register.
func ToolCallIDs(data []byte) []string {
	content, _ := ObjectMember(data, "content")
	var ids []string
	for _, b := range ArrayElements(content) {
		if t, _ := ObjectMember(b, "type"); string(t) != `"tool-call"` {
			continue
		}
		raw, ok := ObjectMember(b, "id")
		var id string
		if ok && json.Unmarshal(raw, &id) == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// ToolCallBlock is a tool-call block of an assistant message: its id,
// its name and its arguments as stored (raw JSON; nil when absent).
type ToolCallBlock struct {
	ID        string
	Name      string
	Arguments []byte
}

// ToolCalls returns the tool-call blocks of an assistant message's data
// whose id is a string, in order (the calls ToolCallIDs lists).
func ToolCalls(data []byte) []ToolCallBlock {
	content, _ := ObjectMember(data, "content")
	var out []ToolCallBlock
	for _, b := range ArrayElements(content) {
		if t, _ := ObjectMember(b, "type"); string(t) != `"tool-call"` {
			continue
		}
		raw, ok := ObjectMember(b, "id")
		var id string
		if !ok || json.Unmarshal(raw, &id) != nil {
			continue
		}
		args, _ := ObjectMember(b, "arguments")
		out = append(out, ToolCallBlock{ID: id, Name: StringMember(b, "name"), Arguments: args})
	}
	return out
}
