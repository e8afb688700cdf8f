package gen

import (
	"encoding/json"
	"fmt"

	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/providers/convo"
)

// Tools draws the tools a harness declares: names every provider takes
// (letters, digits, underscores, dashes), descriptions with characters
// JSON escapes or none, and schemas of the kinds harnesses write: no
// parameters, flat and nested properties, required lists, enums, arrays,
// additionalProperties, numbers beyond float64's precision, $defs and
// members no SDK types.
func Tools(t *rapid.T) []convo.Tool {
	n := rapid.IntRange(0, 4).Draw(t, "tools")
	out := make([]convo.Tool, 0, n)
	for i := 0; i < n; i++ {
		name := rapid.StringMatching(`[a-zA-Z_][a-zA-Z0-9_-]{0,20}`).Draw(t, "toolName") + fmt.Sprint(i)
		desc := ""
		if rapid.Bool().Draw(t, "described") {
			desc = Word(t, "toolDescription")
		}
		schema := rapid.SampledFrom([]string{
			``,
			`{"type":"object","properties":{}}`,
			`{"type":"object","properties":{"path":{"type":"string","description":"the file"}},"required":["path"]}`,
			`{"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":9007199254740993},"mode":{"type":"string","enum":["a","b"]}},"required":["n"],"additionalProperties":false}`,
			`{"type":"object","properties":{"edits":{"type":"array","items":{"$ref":"#/$defs/edit"}}},"$defs":{"edit":{"type":"object","properties":{"old":{"type":"string"},"new":{"type":"string"}}}}}`,
			`{"properties":{"q":{"type":"string"}},"x-harness":{"cost":1.50}}`,
			`{"type":"object","properties":{"deep":{"type":"object","properties":{"x":{"type":["string","null"]}}}},"description":"nested \"quoted\" ✓"}`,
		}).Draw(t, "schema")
		out = append(out, convo.Tool{Name: name, Description: desc, Parameters: json.RawMessage(schema), Strict: rapid.Bool().Draw(t, "strict")})
	}
	return out
}

// CheckBodyKept: body, a request as the adapter's SDK types marshal it,
// decoded with the SDK's own request type (decode) and encoded again, is
// the same JSON value: the SDK a harness builds, logs or replays the
// request with keeps every member of it. The one loss allowed is the
// SDKs' own: a tool schema's numbers, which their request types hold as
// float64 (an integer beyond 2^53 comes back rounded); the tools member
// is compared with numbers read as float64, everything else exactly.
func CheckBodyKept(t *rapid.T, body []byte, decode func([]byte) (any, error)) {
	v, err := decode(body)
	if err != nil {
		t.Fatalf("the SDK's request type does not decode the body: %v\n%s", err, body)
	}
	again, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("the SDK's request type does not encode what it decoded: %v", err)
	}
	if !SameJSON(Without(body, "tools"), Without(again, "tools")) {
		t.Fatalf("the SDK's request type changed the body:\nsent   %s\nkept   %s", Canonical(body), Canonical(again))
	}
	var a, b struct{ Tools any }
	_ = json.Unmarshal(body, &a)
	_ = json.Unmarshal(again, &b)
	if !Equal(a.Tools, b.Tools) {
		t.Fatalf("the SDK's request type changed the tools:\nsent   %s\nkept   %s", Canonical(JSON(a.Tools)), Canonical(JSON(b.Tools)))
	}
}

// CheckTools: every tool is in the body's tools, under the member names
// given (name, description, schema), its schema the one declared, with
// "type":"object" where the provider adds it.
func CheckTools(t *rapid.T, tools []convo.Tool, declared []json.RawMessage, member func(json.RawMessage) (name, desc string, schema json.RawMessage)) {
	if len(declared) != len(tools) {
		t.Fatalf("%d tools declared, %d given", len(declared), len(tools))
	}
	for i, tool := range tools {
		name, desc, schema := member(declared[i])
		if name != tool.Name || desc != tool.Description {
			t.Fatalf("tool %d: %q %q, want %q %q", i, name, desc, tool.Name, tool.Description)
		}
		want := map[string]json.RawMessage{}
		if len(tool.Parameters) > 0 {
			_ = json.Unmarshal(tool.Parameters, &want)
		} else {
			want["properties"] = json.RawMessage(`{}`)
		}
		var got map[string]json.RawMessage
		_ = json.Unmarshal(schema, &got)
		if _, ok := want["type"]; !ok {
			if got["type"] != nil {
				want["type"] = json.RawMessage(`"object"`)
			}
		}
		if !SameJSON(JSON(want), JSON(got)) {
			t.Fatalf("tool %q: schema %s, want %s", tool.Name, Canonical(schema), Canonical(JSON(want)))
		}
	}
}
