package surfacegemini_test

import (
	"encoding/json"
	"testing"

	"google.golang.org/genai"
	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/providers/internal/gen"
	"github.com/surfacelog/surface/impl/providers/surfacegemini"
)

// request is a GenerateContent body as the genai SDK writes one: the
// SDK's own types for its members.
type request struct {
	Contents []*genai.Content `json:"contents"`
	Tools    []*genai.Tool    `json:"tools,omitempty"`
}

// TestBodyKept: over random agent sessions and random tools, the request
// body (contents and tools) decoded with the SDK's own types and encoded
// again is the same JSON value; every tool is declared with its name,
// description and schema as written.
func TestBodyKept(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := gen.Session(t)
		tools := gen.Tools(t)
		contents, err := surfacegemini.Contents(s.Messages())
		if err != nil {
			t.Fatal(err)
		}
		gt, err := surfacegemini.Tools(tools)
		if err != nil {
			t.Fatal(err)
		}
		body := gen.JSON(request{Contents: contents, Tools: gt})
		gen.CheckBodyKept(t, body, func(b []byte) (any, error) {
			var r request
			return r, json.Unmarshal(b, &r)
		})
		var b struct {
			Tools []struct {
				FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
			}
		}
		_ = json.Unmarshal(body, &b)
		var declared []json.RawMessage
		for _, tool := range b.Tools {
			declared = append(declared, tool.FunctionDeclarations...)
		}
		gen.CheckTools(t, tools, declared, func(raw json.RawMessage) (string, string, json.RawMessage) {
			var d struct {
				Name, Description    string
				ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
			}
			_ = json.Unmarshal(raw, &d)
			return d.Name, d.Description, d.ParametersJSONSchema
		})
	})
}
