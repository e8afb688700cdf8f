package convert

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
)

// member is one member of a JSON object in the order it is written.
type member struct {
	key   string
	value []byte // nil: left out
}

// members splits a JSON object (compact, as events hold it) into its
// members in order.
func members(obj []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{t.(string), v})
	}
	return out, nil
}

// object writes the members that have a value, in order.
func object(ms ...member) []byte {
	b := []byte{'{'}
	first := true
	for _, m := range ms {
		if m.value == nil {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, message.QuoteJS(m.key)...)
		b = append(b, ':')
		b = append(b, m.value...)
	}
	return append(b, '}')
}

// get returns the value of key among ms (nil when absent).
func get(ms []member, key string) []byte {
	for _, m := range ms {
		if m.key == key {
			return m.value
		}
	}
	return nil
}

// without returns ms less the members named.
func without(ms []member, keys ...string) []member {
	var out []member
	for _, m := range ms {
		drop := false
		for _, k := range keys {
			drop = drop || m.key == k
		}
		if !drop {
			out = append(out, m)
		}
	}
	return out
}

// only reports the first member of ms whose key is not in keys.
func only(ms []member, keys ...string) (string, bool) {
	for _, m := range ms {
		ok := false
		for _, k := range keys {
			ok = ok || m.key == k
		}
		if !ok {
			return m.key, false
		}
	}
	return "", true
}

func str(s string) []byte { return []byte(message.QuoteJS(s)) }

// stringValue decodes a JSON string value ("" and false when it is not one).
func stringValue(v []byte) (string, bool) {
	var s string
	if v == nil || json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

func array(items ...json.RawMessage) []byte {
	b := []byte{'['}
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	return append(b, ']')
}

// refuse is the typed error for an event that cannot be converted.
func refuse(e *event.Event, format string, args ...any) error {
	return event.Errorf(event.CodeConvertNotConvertible, e.Seq, "%s at %d: "+format, append([]any{e.Type, e.Seq}, args...)...)
}
