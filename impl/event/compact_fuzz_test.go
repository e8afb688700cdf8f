package event

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCompactWalkers: the walkers over compact JSON (ObjectMember,
// ArrayElements, skip) find what encoding/json finds, in any compact
// JSON: every top-level member of an object by its name (escaped names
// too), every element of an array, and the end of the value. The seeds
// are strings ending in runs of backslashes, escaped quotes and
// look-alike keys, where a quote finder can stop one quote early.
func FuzzCompactWalkers(f *testing.F) {
	for _, s := range []string{
		`{"a":"x\\","b":"\\\"q","c":"\"","d":""}`,
		`{"k\"":1,"k":"\\\\","k\\":[{"k":"\\\"\\"}]}`,
		`["\\",["\"]"],"]\\\\\"",{"]":"["}]`,
		`{"text":"a \"quoted\" word","type":"text","t\u0065xt":1}`,
		`["","\"\"","\\\\\\\\"]`,
		`{"a":[1,{"b":"}"}],"c\u0064":"x","e":{"f":[]}}`,
		// Past the 32 bytes walked before the search begins.
		`{"text":"` + strings.Repeat("long text ", 4) + `\"quoted\" \\","next":1}`,
		`["` + strings.Repeat("é", 20) + `\\\"","]"]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || !json.Valid([]byte(s)) {
			return
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(s)); err != nil {
			t.Fatal(err)
		}
		c := buf.Bytes()
		if end := skip(c, 0); end != len(c) {
			t.Fatalf("skip(%s) = %d, want %d", c, end, len(c))
		}
		switch c[0] {
		case '{':
			var members map[string]json.RawMessage
			if err := json.Unmarshal(c, &members); err != nil {
				return
			}
			if countKeys(c) != len(members) {
				return // a name repeated: the log keeps none
			}
			for name, want := range members {
				got, ok := ObjectMember(c, name)
				if !ok || !bytes.Equal(got, want) {
					t.Fatalf("ObjectMember(%s, %q) = %s %v, want %s", c, name, got, ok, want)
				}
			}
			if _, ok := ObjectMember(c, "\x00absent"); ok {
				t.Fatalf("ObjectMember(%s) found a name it does not hold", c)
			}
			// ObjectMembers: all names at once, an absent one among
			// them, in the object's order and reversed, and one alone.
			names := []string{"\x00absent"}
			for name := range members {
				names = append(names, name)
			}
			slices.Sort(names)
			reversed := slices.Clone(names)
			slices.Reverse(reversed)
			for _, ns := range [][]string{names, reversed, names[len(names)-1:]} {
				vals := make([][]byte, len(ns)+1)
				vals[len(ns)] = []byte("untouched")
				ObjectMembers(c, ns, vals)
				for k, name := range ns {
					if want := members[name]; !bytes.Equal(vals[k], want) || (vals[k] == nil) != (want == nil) {
						t.Fatalf("ObjectMembers(%s, %q)[%d] = %s, want %s", c, ns, k, vals[k], want)
					}
				}
				if string(vals[len(ns)]) != "untouched" {
					t.Fatalf("ObjectMembers(%s, %q) wrote past its names", c, ns)
				}
			}
		case '[':
			var els []json.RawMessage
			if err := json.Unmarshal(c, &els); err != nil {
				t.Fatal(err)
			}
			got := ArrayElements(c)
			if len(got) != len(els) {
				t.Fatalf("ArrayElements(%s) = %q, want %q", c, got, els)
			}
			for i := range els {
				if !bytes.Equal(got[i], els[i]) {
					t.Fatalf("ArrayElements(%s)[%d] = %s, want %s", c, i, got[i], els[i])
				}
			}
		}
	})
}

// countKeys is the number of top-level member names of the JSON object c.
func countKeys(c []byte) int {
	d := json.NewDecoder(bytes.NewReader(c))
	if _, err := d.Token(); err != nil {
		return -1
	}
	n := 0
	for d.More() {
		if _, err := d.Token(); err != nil {
			return -1
		}
		n++
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return -1
		}
	}
	return n
}
