package surfaceopenai

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/surfacelog/surface/impl/providers/convo"
)

// ValidateChat checks Chat Completions messages, as they go on the wire,
// and returns every violation with its message index: roles are known;
// a user message has content and an assistant message content or
// tool_calls; a tool message answers a tool_call of the last assistant
// message and follows it with nothing but other tool messages between;
// every tool_call is answered before the next non-tool message; no call
// id is used twice, and no call is answered twice. In the DeepSeek
// dialect an assistant message's content is a string, never null or
// absent (null_content).
func ValidateChat(msgs []openai.ChatCompletionMessageParamUnion, opts ...ChatOption) []convo.Violation {
	raw, err := json.Marshal(msgs)
	if err != nil {
		return []convo.Violation{{Index: -1, Rule: "encoding", Detail: err.Error()}}
	}
	return ValidateChatJSON(raw, opts...)
}

// ValidateChatJSON checks the messages of a request body, as JSON (what
// the SDK's types cannot hold too: a role it does not know).
func ValidateChatJSON(messages []byte, opts ...ChatOption) []convo.Violation {
	o := chatOpts(opts)
	var wire []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	}
	if err := json.Unmarshal(messages, &wire); err != nil {
		return []convo.Violation{{Index: -1, Rule: "encoding", Detail: err.Error()}}
	}
	var c convo.Collector
	add := c.Add
	seen := map[string]bool{}
	var open []string // calls of the last assistant message not answered yet
	answered := map[string]bool{}
	closeOpen := func(i int) {
		for _, id := range open {
			if !answered[id] {
				add(i, "call_without_result", "tool call %q is not answered before message %d", id, i)
			}
		}
		open = nil
	}
	for i, m := range wire {
		switch m.Role {
		case "system", "developer", "user":
			closeOpen(i)
			if empty(m.Content) {
				add(i, "empty_content", "a %s message without content", m.Role)
			}
		case "assistant":
			closeOpen(i)
			if o.dialect == DeepSeekChat {
				// Unmarshal takes null for a string: look at the text.
				if c := bytes.TrimSpace(m.Content); len(c) == 0 || c[0] != '"' {
					add(i, "null_content", "an assistant message whose content is %s, not a string", orAbsent(m.Content))
				}
			}
			var str *string
			_ = json.Unmarshal(m.Content, &str)
			if empty(m.Content) && len(m.ToolCalls) == 0 && !(o.dialect == DeepSeekChat && str != nil) {
				// DeepSeek takes a reasoning-only turn sent with content "".
				add(i, "empty_content", "an assistant message with neither content nor tool_calls")
			}
			answered = map[string]bool{}
			for _, c := range m.ToolCalls {
				if seen[c.ID] {
					add(i, "duplicate_call", "tool call id %q is used twice", c.ID)
				}
				seen[c.ID] = true
				open = append(open, c.ID)
				var args map[string]json.RawMessage
				if json.Unmarshal([]byte(c.Function.Arguments), &args) != nil {
					add(i, "arguments", "tool call %q: arguments are not a JSON object", c.ID)
				}
			}
		case "tool":
			switch {
			case answered[m.ToolCallID]:
				add(i, "duplicate_result", "a second tool message for %q", m.ToolCallID)
			case !slices.Contains(open, m.ToolCallID):
				add(i, "result_without_call", "tool message for %q answers no call of the assistant message before it", m.ToolCallID)
			}
			answered[m.ToolCallID] = true
		default:
			add(i, "roles", "role %q", m.Role)
		}
	}
	closeOpen(len(wire))
	return c.List
}

// ResponsesRules lists what ValidateResponses checks, by rule name.
var ResponsesRules = []string{"item_type", "roles", "empty_content", "duplicate_call", "arguments", "duplicate_result", "result_without_call", "call_without_result", "duplicate_item"}

// ChatRules lists what ValidateChat checks, by rule name.
var ChatRules = []string{"roles", "empty_content", "null_content", "duplicate_call", "arguments", "duplicate_result", "result_without_call", "call_without_result"}

// responsesItems are the input item types the Responses API takes.
var responsesItems = []string{"message", "function_call", "function_call_output", "reasoning", "compaction", "compaction_trigger", "item_reference",
	"file_search_call", "computer_call", "computer_call_output", "web_search_call", "image_generation_call", "code_interpreter_call",
	"local_shell_call", "local_shell_call_output", "shell_call", "shell_call_output", "apply_patch_call", "apply_patch_call_output",
	"mcp_list_tools", "mcp_approval_request", "mcp_approval_response", "mcp_call", "custom_tool_call", "custom_tool_call_output",
	"tool_search_call", "tool_search_output", "additional_tools", "configuration_update", "program", "program_output"}

// ValidateResponses checks Responses API input items, as they go on the
// wire: every item says its type (the SDK's own request type drops an
// item without one) and the API knows it; messages have a known role and
// content; every function_call_output answers an earlier function_call,
// once; every function_call is answered; no call_id is used twice, and
// no item id (an output item sent back) is either.
func ValidateResponses(items responses.ResponseInputParam) []convo.Violation {
	raw, err := json.Marshal(items)
	if err != nil {
		return []convo.Violation{{Index: -1, Rule: "encoding", Detail: err.Error()}}
	}
	return ValidateResponsesJSON(raw)
}

// ValidateResponsesJSON checks the input of a request body, as JSON.
func ValidateResponsesJSON(input []byte) []convo.Violation {
	var wire []struct {
		Type    string          `json:"type"`
		ID      string          `json:"id"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		CallID  string          `json:"call_id"`
		Args    string          `json:"arguments"`
	}
	if err := json.Unmarshal(input, &wire); err != nil {
		return []convo.Violation{{Index: -1, Rule: "encoding", Detail: err.Error()}}
	}
	var c convo.Collector
	add := c.Add
	calls := map[string]int{} // call_id -> index of its function_call
	outputs := map[string]bool{}
	ids := map[string]bool{}
	for i, it := range wire {
		if it.ID != "" {
			if ids[it.ID] {
				add(i, "duplicate_item", "item id %q is sent twice", it.ID)
			}
			ids[it.ID] = true
		}
		switch it.Type {
		case "":
			add(i, "item_type", "an item without a type")
		case "message":
			if it.Role != "user" && it.Role != "assistant" && it.Role != "system" && it.Role != "developer" {
				add(i, "roles", "role %q", it.Role)
			}
			if empty(it.Content) {
				add(i, "empty_content", "a %s message without content", it.Role)
			}
		case "function_call":
			if _, dup := calls[it.CallID]; dup {
				add(i, "duplicate_call", "call_id %q is used twice", it.CallID)
			}
			calls[it.CallID] = i
			var args map[string]json.RawMessage
			if json.Unmarshal([]byte(it.Args), &args) != nil {
				add(i, "arguments", "call %q: arguments are not a JSON object", it.CallID)
			}
		case "function_call_output":
			switch _, made := calls[it.CallID]; {
			case outputs[it.CallID]:
				add(i, "duplicate_result", "a second output for %q", it.CallID)
			case !made:
				add(i, "result_without_call", "output for %q answers no earlier function_call", it.CallID)
			}
			outputs[it.CallID] = true
		default:
			if !slices.Contains(responsesItems, it.Type) {
				add(i, "item_type", "item type %q, which the API does not take", it.Type)
			}
		}
	}
	for i, it := range wire {
		if it.Type == "function_call" && calls[it.CallID] == i && !outputs[it.CallID] {
			add(i, "call_without_result", "function_call %q is not answered", it.CallID)
		}
	}
	return c.List
}

func empty(raw json.RawMessage) bool {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s == ""
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		return len(list) == 0
	}
	return true // null or absent
}

func orAbsent(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "absent"
	}
	return string(raw)
}
