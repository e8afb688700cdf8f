package spec_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/surfacelog/surface/conformance"
)

func compile(t *testing.T, ref string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	for _, name := range []string{"result", "step", "vector", "protocol"} {
		f, err := os.Open("schemas/" + name + ".schema.json")
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource("https://surfacelog.dev/schemas/"+name+".schema.json", doc); err != nil {
			t.Fatal(err)
		}
	}
	s, err := c.Compile("https://surfacelog.dev/schemas/" + ref)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(t *testing.T, s *jsonschema.Schema, b []byte, what string) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := s.Validate(v); err != nil {
		t.Fatalf("%s does not match its schema: %v\n%.500s", what, err, b)
	}
}

// TestVectorsMatchSchema: every vector file matches
// schemas/vector.schema.json.
func TestVectorsMatchSchema(t *testing.T) {
	s := compile(t, "vector.schema.json")
	entries, _ := os.ReadDir("../conformance/vectors")
	for _, e := range entries {
		b, err := os.ReadFile("../conformance/vectors/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		validate(t, s, b, e.Name())
	}
}

// TestProtocolMatchesSchema: the requests of a runner and the answers of
// the Go testee match schemas/protocol.schema.json.
func TestProtocolMatchesSchema(t *testing.T) {
	req := compile(t, "protocol.schema.json#/$defs/request")
	hello := compile(t, "protocol.schema.json#/$defs/hello")
	resp := compile(t, "protocol.schema.json#/$defs/response")
	vectors, _ := conformance.Embedded()
	var in bytes.Buffer
	add := func(r conformance.Request) {
		b, _ := json.Marshal(r)
		validate(t, req, b, "request")
		in.Write(append(b, '\n'))
	}
	add(conformance.Request{Type: "hello", Protocol: conformance.ProtocolVersion})
	for _, v := range vectors[:80] {
		add(conformance.Request{Type: "reset"})
		for _, s := range v.Steps {
			s.Expect = nil
			add(conformance.Request{Type: "step", Step: &s})
		}
	}
	add(conformance.Request{Type: "bye"})
	var out bytes.Buffer
	if err := conformance.Serve(conformance.NewImplMachine(), strings.NewReader(in.String()), &out); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<24)
	first := true
	for sc.Scan() {
		if first {
			validate(t, hello, sc.Bytes(), "hello")
			first = false
			continue
		}
		validate(t, resp, sc.Bytes(), "response")
	}
}
