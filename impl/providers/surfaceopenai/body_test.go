package surfaceopenai_test

import (
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/providers/convo"
	"github.com/surfacelog/surface/impl/providers/internal/gen"
	"github.com/surfacelog/surface/impl/providers/surfaceopenai"
)

// TestBodyKept: over random agent sessions and random tools, the request
// bodies (a ResponseNewParams, a ChatCompletionNewParams) decoded with the
// SDK's own request types and encoded again are the same JSON values:
// every input item keeps its "type" and every member. In the DeepSeek
// dialect the one member the SDK's type drops is reasoning_content, which
// DeepSeek reads and OpenAI's Chat API does not know: everything else is
// kept. Every tool is declared with its name, description and schema.
func TestBodyKept(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := gen.Session(t)
		tools := gen.Tools(t)

		input, err := surfaceopenai.ResponsesInput(s.Messages())
		if err != nil {
			t.Fatal(err)
		}
		rt, err := surfaceopenai.ResponsesTools(tools)
		if err != nil {
			t.Fatal(err)
		}
		body := gen.JSON(responses.ResponseNewParams{Model: "gpt-5", Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}, Tools: rt})
		gen.CheckBodyKept(t, body, func(b []byte) (any, error) {
			var p responses.ResponseNewParams
			return p, json.Unmarshal(b, &p)
		})
		var items struct{ Input []map[string]json.RawMessage }
		_ = json.Unmarshal(body, &items)
		for i, it := range items.Input {
			if it["type"] == nil {
				t.Fatalf("input item %d has no type: %s", i, gen.JSON(it))
			}
		}
		declared := func(body []byte, fn func(json.RawMessage) (string, string, json.RawMessage)) {
			var b struct{ Tools []json.RawMessage }
			_ = json.Unmarshal(body, &b)
			gen.CheckTools(t, tools, b.Tools, fn)
		}
		declared(body, func(raw json.RawMessage) (string, string, json.RawMessage) {
			var d struct {
				Name, Description string
				Parameters        json.RawMessage
				Strict            *bool
			}
			_ = json.Unmarshal(raw, &d)
			if d.Strict == nil {
				t.Fatalf("a Responses tool without strict: %s", raw)
			}
			return d.Name, d.Description, d.Parameters
		})

		ct, err := surfaceopenai.ChatTools(tools)
		if err != nil {
			t.Fatal(err)
		}
		for _, dialect := range []surfaceopenai.Dialect{surfaceopenai.OpenAIChat, surfaceopenai.DeepSeekChat} {
			msgs, err := surfaceopenai.ChatMessages(s.Messages(), surfaceopenai.WithDialect(dialect))
			if err != nil {
				t.Fatal(err)
			}
			body := gen.JSON(openai.ChatCompletionNewParams{Model: "gpt-5", Messages: msgs, Tools: ct})
			if dialect == surfaceopenai.DeepSeekChat {
				body = withoutReasoningContent(body)
			}
			gen.CheckBodyKept(t, body, func(b []byte) (any, error) {
				var p openai.ChatCompletionNewParams
				return p, json.Unmarshal(b, &p)
			})
			declared(body, func(raw json.RawMessage) (string, string, json.RawMessage) {
				var d struct {
					Function struct {
						Name, Description string
						Parameters        json.RawMessage
					}
				}
				_ = json.Unmarshal(raw, &d)
				return d.Function.Name, d.Function.Description, d.Function.Parameters
			})
		}
	})
}

// withoutReasoningContent is a Chat body without its assistant messages'
// reasoning_content.
func withoutReasoningContent(body []byte) []byte {
	var b map[string]json.RawMessage
	_ = json.Unmarshal(body, &b)
	var msgs []json.RawMessage
	_ = json.Unmarshal(b["messages"], &msgs)
	for i, m := range msgs {
		msgs[i] = gen.Without(m, "reasoning_content")
	}
	b["messages"] = gen.JSON(msgs)
	return gen.JSON(b)
}

var _ = convo.Tool{}
