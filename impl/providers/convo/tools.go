package convo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
)

// Tool is a tool the harness offers the model, declared once and mapped
// to each provider's form by its adapter (surfaceanthropic.Tools,
// surfaceopenai.ResponsesTools and ChatTools, surfacegemini.Tools).
type Tool struct {
	// Name is what the model calls the tool by, and what a tool-call
	// block's name holds.
	Name string
	// Description says what the tool does and when to use it.
	Description string
	// Parameters is the JSON Schema of the tool's arguments: an object
	// schema ({"type":"object","properties":...}); nil means no
	// arguments. It is sent as it is written (numbers, member order).
	Parameters json.RawMessage
	// Strict asks the provider to hold the model's arguments to the
	// schema (OpenAI's and Anthropic's strict mode; the schema must then
	// be one they accept in that mode). Gemini has no such switch.
	Strict bool
}

// ToolRules is the name pattern of one provider's tools.
type ToolRules struct {
	Provider string
	Name     *regexp.Regexp
}

// Schema returns t's parameters as the members of a JSON object, checked
// against rules: the name matches the provider's pattern, the schema is a
// JSON object whose "type", when given, is "object". No parameters give
// {"type":"object","properties":{}}.
func (t Tool) Schema(rules ToolRules) (map[string]json.RawMessage, error) {
	if !rules.Name.MatchString(t.Name) {
		return nil, &ToolError{Provider: rules.Provider, Tool: t.Name, Detail: "its name does not match " + rules.Name.String()}
	}
	params := bytes.TrimSpace(t.Parameters)
	if len(params) == 0 || string(params) == "null" {
		params = []byte(`{"type":"object","properties":{}}`)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(params, &members); err != nil || members == nil {
		return nil, &ToolError{Provider: rules.Provider, Tool: t.Name, Detail: "its parameters are not a JSON object"}
	}
	if ty, ok := members["type"]; ok && string(bytes.TrimSpace(ty)) != `"object"` {
		return nil, &ToolError{Provider: rules.Provider, Tool: t.Name, Detail: fmt.Sprintf("its parameters are a schema of type %s; a tool takes an object", ty)}
	}
	return members, nil
}

// ToolError is a tool an adapter cannot declare to its provider.
type ToolError struct {
	Provider, Tool string
	// Detail says what is wrong.
	Detail string
}

func (e *ToolError) Error() string {
	return fmt.Sprintf("convo: %s tool %q: %s", e.Provider, e.Tool, e.Detail)
}

// AsAny is members as a map of any whose values marshal as written.
func AsAny(members map[string]json.RawMessage) map[string]any {
	out := make(map[string]any, len(members))
	for k, v := range members {
		out[k] = v
	}
	return out
}
