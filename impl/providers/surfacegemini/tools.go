package surfacegemini

import (
	"encoding/json"
	"regexp"

	"google.golang.org/genai"

	"github.com/surfacelog/surface/impl/providers/convo"
)

// ToolRules is Gemini's pattern for a function's name: a letter or an
// underscore first, then letters, digits, underscores, dots, colons and
// dashes, 128 at most.
var ToolRules = convo.ToolRules{Provider: "gemini", Name: regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$`)}

// Tools maps the harness's tools to Gemini's "tools": one tool holding a
// function declaration per tool, its parametersJsonSchema the tool's JSON
// Schema as written. Gemini has no strict switch; Strict is ignored. It
// refuses a name outside ToolRules and parameters that are not an object
// schema (*convo.ToolError).
func Tools(tools []convo.Tool) ([]*genai.Tool, error) {
	if len(tools) == 0 {
		return nil, nil
	}
	decls := make([]*genai.FunctionDeclaration, 0, len(tools))
	for _, t := range tools {
		members, err := t.Schema(ToolRules)
		if err != nil {
			return nil, err
		}
		schema, _ := json.Marshal(members)
		if len(t.Parameters) > 0 && string(t.Parameters) != "null" {
			schema = t.Parameters // as written: member order and numbers kept
		}
		decls = append(decls, &genai.FunctionDeclaration{Name: t.Name, Description: t.Description, ParametersJsonSchema: json.RawMessage(schema)})
	}
	return []*genai.Tool{{FunctionDeclarations: decls}}, nil
}
