package surfaceanthropic

import (
	"encoding/json"
	"regexp"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/surfacelog/surface/impl/providers/convo"
)

// ToolRules is the Messages API's pattern for a tool's name.
var ToolRules = convo.ToolRules{Provider: "anthropic", Name: regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)}

// Tools maps the harness's tools to the Messages API's "tools": each an
// input_schema holding the tool's JSON Schema as written (properties and
// required as the SDK types them, every other member as it is). It
// refuses a name outside ToolRules and parameters that are not an object
// schema (*convo.ToolError).
func Tools(tools []convo.Tool) ([]anthropic.ToolUnionParam, error) {
	out := make([]anthropic.ToolUnionParam, 0, len(tools))
	for _, t := range tools {
		members, err := t.Schema(ToolRules)
		if err != nil {
			return nil, err
		}
		p := anthropic.ToolParam{Name: t.Name}
		p.InputSchema.Properties, p.InputSchema.Required, p.InputSchema.ExtraFields, err = schemaParts(t, members)
		if err != nil {
			return nil, err
		}
		if t.Description != "" {
			p.Description = anthropic.String(t.Description)
		}
		if t.Strict {
			p.Strict = anthropic.Bool(true)
		}
		out = append(out, anthropic.ToolUnionParam{OfTool: &p})
	}
	return out, nil
}

// BetaTools is Tools for the beta Messages API (BetaMessages).
func BetaTools(tools []convo.Tool) ([]anthropic.BetaToolUnionParam, error) {
	out := make([]anthropic.BetaToolUnionParam, 0, len(tools))
	for _, t := range tools {
		members, err := t.Schema(ToolRules)
		if err != nil {
			return nil, err
		}
		p := anthropic.BetaToolParam{Name: t.Name}
		p.InputSchema.Properties, p.InputSchema.Required, p.InputSchema.ExtraFields, err = schemaParts(t, members)
		if err != nil {
			return nil, err
		}
		if t.Description != "" {
			p.Description = anthropic.String(t.Description)
		}
		if t.Strict {
			p.Strict = anthropic.Bool(true)
		}
		out = append(out, anthropic.BetaToolUnionParam{OfTool: &p})
	}
	return out, nil
}

// schemaParts splits an object schema as the SDK's input schema holds it:
// properties (kept as written), required, and every other member but
// "type" (always "object") as an extra field.
func schemaParts(t convo.Tool, members map[string]json.RawMessage) (props any, required []string, extra map[string]any, err error) {
	if p, ok := members["properties"]; ok {
		props = p
	}
	if r, ok := members["required"]; ok {
		if json.Unmarshal(r, &required) != nil {
			return nil, nil, nil, &convo.ToolError{Provider: ToolRules.Provider, Tool: t.Name, Detail: "its schema's required is not a list of names"}
		}
	}
	for k, v := range members {
		switch k {
		case "properties", "required", "type":
		default:
			if extra == nil {
				extra = map[string]any{}
			}
			extra[k] = v
		}
	}
	return props, required, extra, nil
}
