package surfaceopenai

import (
	"regexp"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/surfacelog/surface/impl/providers/convo"
)

// ToolRules is the OpenAI APIs' pattern for a function's name.
var ToolRules = convo.ToolRules{Provider: "openai", Name: regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)}

// ResponsesTools maps the harness's tools to the Responses API's "tools":
// function tools whose parameters are the tool's JSON Schema as written,
// with "strict" always sent (the API's default is strict, which holds
// only for schemas written for it). It refuses a name outside ToolRules
// and parameters that are not an object schema (*convo.ToolError).
func ResponsesTools(tools []convo.Tool) ([]responses.ToolUnionParam, error) {
	out := make([]responses.ToolUnionParam, 0, len(tools))
	for _, t := range tools {
		members, err := t.Schema(ToolRules)
		if err != nil {
			return nil, err
		}
		f := responses.FunctionToolParam{Name: t.Name, Parameters: convo.AsAny(members), Strict: openai.Bool(t.Strict)}
		if t.Description != "" {
			f.Description = openai.String(t.Description)
		}
		out = append(out, responses.ToolUnionParam{OfFunction: &f})
	}
	return out, nil
}

// ChatTools maps the harness's tools to Chat Completions' "tools"
// (DeepSeek's too): function tools whose parameters are the tool's JSON
// Schema as written; "strict" is sent only when set.
func ChatTools(tools []convo.Tool) ([]openai.ChatCompletionToolUnionParam, error) {
	out := make([]openai.ChatCompletionToolUnionParam, 0, len(tools))
	for _, t := range tools {
		members, err := t.Schema(ToolRules)
		if err != nil {
			return nil, err
		}
		f := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(convo.AsAny(members))}
		if t.Description != "" {
			f.Description = openai.String(t.Description)
		}
		if t.Strict {
			f.Strict = openai.Bool(true)
		}
		out = append(out, openai.ChatCompletionFunctionTool(f))
	}
	return out, nil
}
