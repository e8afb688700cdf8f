package surfaceopenai_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/providers/convo"
	"github.com/surfacelog/surface/impl/providers/internal/gen"
	"github.com/surfacelog/surface/impl/providers/surfaceopenai"
	"github.com/surfacelog/surface/impl/view"
)

var chat = gen.Adapter{
	Request: func(msgs view.Messages) (any, []convo.Violation, error) {
		p, err := surfaceopenai.ChatMessages(msgs)
		return p, surfaceopenai.ValidateChat(p), err
	},
	Respond: func(r convo.Reply) []byte {
		var text []string
		var calls []map[string]any
		for _, b := range r.Blocks {
			switch b.Type {
			case convo.Text:
				text = append(text, b.Text)
			case convo.ToolCall:
				calls = append(calls, map[string]any{"id": b.ID, "type": "function", "function": map[string]any{"name": b.Name, "arguments": b.Arguments}})
			}
		}
		msg := map[string]any{"role": "assistant", "content": strings.Join(text, "\n"), "tool_calls": calls}
		out, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-test",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": msg}},
			"usage":   map[string]any{"prompt_tokens": r.Usage.InputTokens, "completion_tokens": r.Usage.OutputTokens, "total_tokens": r.Usage.InputTokens + r.Usage.OutputTokens}})
		return out
	},
	Decode: func(b []byte) (convo.Reply, error) {
		var c openai.ChatCompletion
		if err := json.Unmarshal(b, &c); err != nil {
			return convo.Reply{}, err
		}
		return surfaceopenai.ChatReply(&c)
	},
	Carries: func(r convo.Reply) []convo.Block {
		var out []convo.Block
		for _, b := range r.Blocks {
			if b.Type != convo.Reasoning {
				out = append(out, b)
			}
		}
		return out
	},
}

var resp = gen.Adapter{
	Request: func(msgs view.Messages) (any, []convo.Violation, error) {
		p, err := surfaceopenai.ResponsesInput(msgs)
		return p, surfaceopenai.ValidateResponses(p), err
	},
	Respond: func(r convo.Reply) []byte {
		var output []any
		for i, b := range r.Blocks {
			switch b.Type {
			case convo.Reasoning:
				output = append(output, map[string]any{"type": "reasoning", "id": "rs", "summary": []any{map[string]any{"type": "summary_text", "text": b.Text}}})
			case convo.Text:
				output = append(output, map[string]any{"type": "message", "id": "m", "role": "assistant", "status": "completed",
					"content": []any{map[string]any{"type": "output_text", "text": b.Text, "annotations": []any{}}}})
			case convo.ToolCall:
				output = append(output, map[string]any{"type": "function_call", "id": "fc" + string(rune('a'+i)), "call_id": b.ID, "name": b.Name, "arguments": b.Arguments, "status": "completed"})
			}
		}
		out, _ := json.Marshal(map[string]any{"id": "r1", "object": "response", "created_at": 1, "model": "gpt-test", "status": "completed", "output": output,
			"usage": map[string]any{"input_tokens": r.Usage.InputTokens, "output_tokens": r.Usage.OutputTokens, "total_tokens": 1,
				"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}})
		return out
	},
	Decode: func(b []byte) (convo.Reply, error) {
		var r responses.Response
		if err := json.Unmarshal(b, &r); err != nil {
			return convo.Reply{}, err
		}
		return surfaceopenai.ResponsesReply(&r)
	},
	Carries: func(r convo.Reply) []convo.Block { return r.Blocks },
}

// TestRequestsPassValidate: over random agent sessions, both requests pass
// their validators and keep every call and result.
func TestRequestsPassValidate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { gen.CheckSessions(t, chat) })
	rapid.Check(t, func(t *rapid.T) { gen.CheckSessions(t, resp) })
	rapid.Check(t, func(t *rapid.T) {
		s := gen.Session(t)
		want := gen.CountsOf(s.Messages())
		msgs, err := surfaceopenai.ChatMessages(s.Messages())
		if err != nil {
			t.Fatal(err)
		}
		var got gen.Counts
		for _, m := range msgs {
			if m.OfAssistant != nil {
				got.Calls += len(m.OfAssistant.ToolCalls)
			}
			if m.OfTool != nil {
				got.Results++
			}
		}
		input, err := surfaceopenai.ResponsesInput(s.Messages())
		if err != nil {
			t.Fatal(err)
		}
		var rc, rr int
		for _, it := range input {
			if it.OfFunctionCall != nil {
				rc++
			}
			if it.OfFunctionCallOutput != nil {
				rr++
			}
		}
		if got.Calls != want.Calls || got.Results != want.Results || rc != want.Calls || rr != want.Results {
			t.Fatalf("chat %+v, responses %d calls %d results, the messages %+v", got, rc, rr, want)
		}
	})
}

// TestRoundTrip: response -> events -> request keeps the content.
func TestRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { gen.CheckRoundTrip(t, chat) })
	rapid.Check(t, func(t *rapid.T) { gen.CheckRoundTrip(t, resp) })
}

// TestErrorSurvivesAsText: Chat has no error flag: a failed result's text
// starts with ErrorPrefix.
func TestErrorSurvivesAsText(t *testing.T) {
	ms := []convo.Message{
		{Role: "user", Blocks: []convo.Block{{Type: convo.Text, Text: "q"}}},
		{Role: "assistant", Blocks: []convo.Block{{Type: convo.ToolCall, ID: "a", Name: "read", Arguments: "{}"}}},
		{Role: "user", Blocks: []convo.Block{{Type: convo.ToolResult, ToolCallID: "a", IsError: true, Content: []convo.Block{{Type: convo.Text, Text: "interrupted"}}}}},
	}
	msgs, err := surfaceopenai.ChatFromConvo(ms)
	if err != nil {
		t.Fatal(err)
	}
	if got := msgs[2].OfTool.Content.OfString.Value; got != surfaceopenai.ErrorPrefix+"interrupted" {
		t.Fatalf("tool message %q", got)
	}
}

// TestValidateCatches: each rule of both validators, broken on purpose.
func TestValidateCatches(t *testing.T) {
	call := func(id string) openai.ChatCompletionMessageParamUnion {
		a := openai.ChatCompletionAssistantMessageParam{ToolCalls: []openai.ChatCompletionMessageToolCallUnionParam{{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
			ID: id, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: "read", Arguments: "{}"}}}}}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
	}
	user := func(s string) openai.ChatCompletionMessageParamUnion { return openai.UserMessage(s) }
	tool := func(id string) openai.ChatCompletionMessageParamUnion { return openai.ToolMessage("ok", id) }
	chatCases := []struct {
		name string
		msgs []openai.ChatCompletionMessageParamUnion
		rule string
	}{
		{"ok", []openai.ChatCompletionMessageParamUnion{user("q"), call("a"), tool("a"), user("more")}, ""},
		{"user between call and result", []openai.ChatCompletionMessageParamUnion{user("q"), call("a"), user("x"), tool("a")}, "call_without_result"},
		{"stray tool", []openai.ChatCompletionMessageParamUnion{user("q"), tool("z")}, "result_without_call"},
		{"twice", []openai.ChatCompletionMessageParamUnion{user("q"), call("a"), tool("a"), tool("a")}, "duplicate_result"},
		{"id twice", []openai.ChatCompletionMessageParamUnion{user("q"), call("a"), tool("a"), call("a"), tool("a")}, "duplicate_call"},
		{"empty user", []openai.ChatCompletionMessageParamUnion{user("")}, "empty_content"},
		{"unanswered", []openai.ChatCompletionMessageParamUnion{user("q"), call("a")}, "call_without_result"},
	}
	covered := map[string]bool{}
	for _, c := range chatCases {
		covered[c.rule] = check(t, "chat "+c.name, surfaceopenai.ValidateChat(c.msgs), c.rule)
	}
	// The wire JSON, look-alikes side by side.
	q := `{"role":"user","content":"q"}`
	chatWire := []struct {
		name, msgs string
		dialect    surfaceopenai.Dialect
		rule       string
	}{
		{"a role the API lacks", `[{"role":"critic","content":"q"}]`, surfaceopenai.OpenAIChat, "roles"},
		{"arguments that are a list", `[` + q + `,{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"read","arguments":"[1]"}}]},{"role":"tool","tool_call_id":"a","content":"ok"}]`, surfaceopenai.OpenAIChat, "arguments"},
		{"arguments that are an object", `[` + q + `,{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"read","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"ok"}]`, surfaceopenai.OpenAIChat, ""},
		{"DeepSeek: content null", `[` + q + `,{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"read","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"ok"}]`, surfaceopenai.DeepSeekChat, "null_content"},
		{"DeepSeek: content absent", `[` + q + `,{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"read","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"ok"}]`, surfaceopenai.DeepSeekChat, "null_content"},
		{"DeepSeek: content empty", `[` + q + `,{"role":"assistant","content":"","tool_calls":[{"id":"a","type":"function","function":{"name":"read","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"ok"}]`, surfaceopenai.DeepSeekChat, ""},
		{"OpenAI: content absent", `[` + q + `,{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"read","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"ok"}]`, surfaceopenai.OpenAIChat, ""},
	}
	for _, c := range chatWire {
		covered[c.rule] = check(t, "chat "+c.name, surfaceopenai.ValidateChatJSON([]byte(c.msgs), surfaceopenai.WithDialect(c.dialect)), c.rule) || covered[c.rule]
	}
	for _, r := range surfaceopenai.ChatRules {
		if !covered[r] {
			t.Errorf("no case breaks Chat rule %s", r)
		}
	}
	fc := func(id string) responses.ResponseInputItemUnionParam {
		return responses.ResponseInputItemParamOfFunctionCall("{}", id, "read")
	}
	out := func(id string) responses.ResponseInputItemUnionParam {
		o := responses.ResponseInputItemParamOfFunctionCallOutput("ok")
		o.OfFunctionCallOutput.CallID = openai.String(id)
		return o
	}
	msg := func(s string) responses.ResponseInputItemUnionParam {
		m := responses.ResponseInputItemParamOfMessage(s, responses.EasyInputMessageRoleUser)
		m.OfMessage.Type = responses.EasyInputMessageTypeMessage
		return m
	}
	untyped := func(s string) responses.ResponseInputItemUnionParam {
		return responses.ResponseInputItemParamOfMessage(s, responses.EasyInputMessageRoleUser)
	}
	respCases := []struct {
		name  string
		items responses.ResponseInputParam
		rule  string
	}{
		{"ok", responses.ResponseInputParam{msg("q"), fc("a"), out("a")}, ""},
		{"output first", responses.ResponseInputParam{msg("q"), out("a"), fc("a")}, "result_without_call"},
		{"unanswered", responses.ResponseInputParam{msg("q"), fc("a")}, "call_without_result"},
		{"twice", responses.ResponseInputParam{msg("q"), fc("a"), out("a"), out("a")}, "duplicate_result"},
		{"empty", responses.ResponseInputParam{msg("")}, "empty_content"},
		{"no type", responses.ResponseInputParam{untyped("q")}, "item_type"},
	}
	covered = map[string]bool{}
	for _, c := range respCases {
		covered[c.rule] = check(t, "responses "+c.name, surfaceopenai.ValidateResponses(c.items), c.rule)
	}
	m := `{"type":"message","role":"user","content":"q"}`
	respWire := []struct{ name, items, rule string }{
		{"a role the API lacks", `[{"type":"message","role":"critic","content":"q"}]`, "roles"},
		{"an item type the API lacks", `[` + m + `,{"type":"hologram"}]`, "item_type"},
		{"one call_id twice", `[` + m + `,{"type":"function_call","call_id":"a","name":"read","arguments":"{}"},{"type":"function_call","call_id":"a","name":"read","arguments":"{}"},{"type":"function_call_output","call_id":"a","output":"ok"}]`, "duplicate_call"},
		{"arguments that are a number", `[` + m + `,{"type":"function_call","call_id":"a","name":"read","arguments":"5"},{"type":"function_call_output","call_id":"a","output":"ok"}]`, "arguments"},
		{"one item id twice", `[` + m + `,{"type":"reasoning","id":"rs_1","summary":[]},{"type":"reasoning","id":"rs_1","summary":[]}]`, "duplicate_item"},
		{"two item ids", `[` + m + `,{"type":"reasoning","id":"rs_1","summary":[]},{"type":"reasoning","id":"rs_2","summary":[]}]`, ""},
	}
	for _, c := range respWire {
		covered[c.rule] = check(t, "responses "+c.name, surfaceopenai.ValidateResponsesJSON([]byte(c.items)), c.rule) || covered[c.rule]
	}
	for _, r := range surfaceopenai.ResponsesRules {
		if !covered[r] {
			t.Errorf("no case breaks Responses rule %s", r)
		}
	}
}

// check reports whether v holds rule (and none when rule is "").
func check(t *testing.T, name string, v []convo.Violation, rule string) bool {
	t.Helper()
	found := false
	for _, x := range v {
		found = found || x.Rule == rule
	}
	if rule == "" && len(v) > 0 || rule != "" && !found {
		t.Errorf("%s: violations %v, want %q", name, v, rule)
	}
	return found
}
