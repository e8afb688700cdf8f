package event

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// MarshalData returns the JSON text of a Go value given as an event's data
// (SURF-4): a json.RawMessage or []byte is taken as it is (Check scans it
// later); any other value is first walked, so that a value nested deeper
// than the data depth limit, a cycle, or a string that is not valid UTF-8
// is refused with event.data_not_json before encoding/json sees it
// (encoding/json would overflow the stack on the first and silently write
// U+FFFD for the last, so two different call ids could collide). A value
// that encoding/json cannot marshal (a channel, a NaN) is refused with the
// same code and encoding/json's own message. HTML characters are not
// escaped.
func MarshalData(v any) ([]byte, *Error) {
	switch d := v.(type) {
	case json.RawMessage:
		return d, nil
	case []byte:
		return d, nil
	}
	var w goWalker
	if err := w.walk(reflect.ValueOf(v), 1); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		e := Errorf(CodeDataNotJSON, -1, "data cannot be marshalled: %v", err)
		e.Cause = err
		return nil, e
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// goWalker walks a Go value as encoding/json would write it. It keeps the
// path to the current value as a stack, turned into text only for an
// error, so a deep value costs no more than its own size.
type goWalker struct{ path []pathElem }

// pathElem is a step of a path: a struct field's name, a map key, or an
// index.
type pathElem struct {
	name  string
	key   reflect.Value
	index int
}

func (w *goWalker) where() string {
	if len(w.path) == 0 {
		return "the top"
	}
	var b strings.Builder
	b.WriteString("data")
	for i, p := range w.path {
		if len(w.path) > 12 && i == 6 {
			fmt.Fprintf(&b, "...(%d more)...", len(w.path)-12)
		}
		if len(w.path) > 12 && i >= 6 && i < len(w.path)-6 {
			continue
		}
		switch {
		case p.key.IsValid():
			fmt.Fprintf(&b, ".%v", p.key.Interface())
		case p.name != "":
			b.WriteString("." + p.name)
		default:
			fmt.Fprintf(&b, "[%d]", p.index)
		}
	}
	return b.String()
}

// walk checks v, which encoding/json would write at JSON nesting level
// depth (the data value is level 1), and everything in it.
func (w *goWalker) walk(v reflect.Value, depth int) *Error {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		if v.Type().Implements(marshalerType) || v.Type().Implements(textMarshalerType) {
			return nil // its own bytes; Check scans them
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		return nil
	}
	t := v.Type()
	if t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
		reflect.PointerTo(t).Implements(marshalerType) && v.CanAddr() {
		return nil
	}
	deeper := func() *Error {
		if depth > maxDepth {
			return Errorf(CodeDataNotJSON, -1, "data nested deeper than %d levels (or a cycle) at %s", maxDepth, w.where())
		}
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); !utf8.ValidString(s) {
			return Errorf(CodeDataNotJSON, -1, "string at %s is not valid UTF-8: %q", w.where(), s)
		}
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		if err := deeper(); err != nil {
			return err
		}
		it := v.MapRange()
		for it.Next() {
			k := it.Key()
			if k.Kind() == reflect.String && !utf8.ValidString(k.String()) {
				return Errorf(CodeDataNotJSON, -1, "key at %s is not valid UTF-8: %q", w.where(), k.String())
			}
			w.path = append(w.path, pathElem{key: k})
			if err := w.walk(it.Value(), depth+1); err != nil {
				return err
			}
			w.path = w.path[:len(w.path)-1]
		}
	case reflect.Slice:
		if v.IsNil() || t.Elem().Kind() == reflect.Uint8 && !t.Elem().Implements(marshalerType) {
			return nil // null, or base64 text
		}
		fallthrough
	case reflect.Array:
		if err := deeper(); err != nil {
			return err
		}
		for i := range v.Len() {
			w.path = append(w.path, pathElem{index: i})
			if err := w.walk(v.Index(i), depth+1); err != nil {
				return err
			}
			w.path = w.path[:len(w.path)-1]
		}
	case reflect.Struct:
		if err := deeper(); err != nil {
			return err
		}
		return w.fields(v, depth)
	}
	return nil
}

// walkFields walks the exported fields of struct v, whose object is at
// level depth; an embedded struct's fields are at the same level.
func (w *goWalker) fields(v reflect.Value, depth int) *Error {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Tag.Get("json") == "-" {
			continue
		}
		fv := v.Field(i)
		if f.Anonymous {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue
				}
				ft, fv = ft.Elem(), fv.Elem()
			}
			if ft.Kind() == reflect.Struct && f.Tag.Get("json") == "" {
				if err := w.fields(fv, depth); err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		w.path = append(w.path, pathElem{name: f.Name})
		if err := w.walk(fv, depth+1); err != nil {
			return err
		}
		w.path = w.path[:len(w.path)-1]
	}
	return nil
}
