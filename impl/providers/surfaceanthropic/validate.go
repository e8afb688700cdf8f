package surfaceanthropic

import (
	"encoding/json"
	"regexp"
	"slices"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/surfacelog/surface/impl/providers/convo"
)

// Rules lists what Validate checks, by rule name (docs/providers.md has
// the table of every validator's rules).
var Rules = []string{
	"roles", "first_user", "alternation", "empty_content", "empty_text", "unknown_block",
	"result_without_call", "results_first", "duplicate_result", "call_without_result",
	"duplicate_call", "tool_id", "tool_input", "thinking_first", "compaction_first",
	"cache_breakpoints", "cache_on_thinking",
}

// MaxBreakpoints is the most cache_control breakpoints a request may set
// (its system prompt and tools included).
const MaxBreakpoints = 4

var toolID = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// known are the content block types the Messages API (beta included)
// takes in a request.
var known = append(slices.Clone(stable), "compaction", "mcp_tool_use", "mcp_tool_result", "tool_reference", "fallback")

// Validate checks params, as they go on the wire, against the Messages
// API's rules, and returns every violation with its message index: roles
// are user or assistant; the first message is the user's; user and
// assistant alternate; no content is empty and no text block is empty; a
// block's type is one the API knows; a tool_result answers a tool_use of
// the assistant message just before it, comes before any other block of
// its message, and is the only result of that call; every tool_use is
// answered in the next message; at most four cache_control breakpoints,
// none on a thinking block; a tool_use id matches
// ^[a-zA-Z0-9_-]+$ and is not used twice, and its input is an object;
// thinking and redacted_thinking come first in their message (after a
// compaction block, which is the first block of its message).
//
// It reads the JSON the SDK sends, not the adapter's own structures, so it
// checks the adapter's output as the API would.
func Validate(params []anthropic.MessageParam) []convo.Violation {
	raw, err := json.Marshal(params)
	if err != nil {
		return []convo.Violation{{Index: -1, Rule: "encoding", Detail: err.Error()}}
	}
	return ValidateJSON(raw)
}

// ValidateBeta checks beta params as Validate checks stable ones.
func ValidateBeta(params []anthropic.BetaMessageParam) []convo.Violation {
	raw, err := json.Marshal(params)
	if err != nil {
		return []convo.Violation{{Index: -1, Rule: "encoding", Detail: err.Error()}}
	}
	return ValidateJSON(raw)
}

// ValidateJSON checks the messages of a request body, as JSON.
func ValidateJSON(messages []byte) []convo.Violation {
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(messages, &msgs); err != nil {
		return []convo.Violation{{Index: -1, Rule: "encoding", Detail: err.Error()}}
	}
	var c convo.Collector
	add := c.Add
	type blk struct {
		Type      string          `json:"type"`
		ID        string          `json:"id"`
		ToolUseID string          `json:"tool_use_id"`
		Text      *string         `json:"text"`
		Input     json.RawMessage `json:"input"`
		Cache     json.RawMessage `json:"cache_control"`
	}
	breakpoints := 0
	seenCalls := map[string]bool{}
	var open []string // the tool_use ids of the previous assistant message
	for i, m := range msgs {
		var blocks []blk
		var text string
		if json.Unmarshal(m.Content, &text) == nil {
			if text == "" {
				add(i, "empty_content", "empty text content")
			}
		} else if err := json.Unmarshal(m.Content, &blocks); err != nil || len(blocks) == 0 {
			add(i, "empty_content", "no content blocks")
		}
		switch {
		case m.Role != "user" && m.Role != "assistant":
			add(i, "roles", "role %q", m.Role)
		case i == 0 && m.Role != "user":
			add(i, "first_user", "the first message is the %s's", m.Role)
		case i > 0 && m.Role == msgs[i-1].Role:
			add(i, "alternation", "two %s messages in a row", m.Role)
		}
		answered := map[string]bool{}
		pastResults, pastThinking := false, false
		for k, b := range blocks {
			if len(b.Cache) > 0 && string(b.Cache) != "null" {
				breakpoints++
				if breakpoints == MaxBreakpoints+1 {
					add(i, "cache_breakpoints", "block %d is the %dth cache_control breakpoint: the API takes at most %d in a request", k, breakpoints, MaxBreakpoints)
				}
				if b.Type == "thinking" || b.Type == "redacted_thinking" {
					add(i, "cache_on_thinking", "a %s block at %d carries cache_control, which the API refuses", b.Type, k)
				}
			}
			if !slices.Contains(known, b.Type) {
				add(i, "unknown_block", "block %d is of type %q, which the API does not take", k, b.Type)
			}
			switch b.Type {
			case "text":
				if b.Text == nil || *b.Text == "" {
					add(i, "empty_text", "block %d is an empty text block", k)
				}
			case "thinking", "redacted_thinking":
				if pastThinking {
					add(i, "thinking_first", "a %s block at %d comes after another kind of block", b.Type, k)
				}
			case "compaction":
				if k != 0 {
					add(i, "compaction_first", "a compaction block at %d is not the first block of its message", k)
				}
			}
			if b.Type != "thinking" && b.Type != "redacted_thinking" && b.Type != "compaction" {
				pastThinking = true
			}
			switch b.Type {
			case "tool_result":
				if pastResults {
					add(i, "results_first", "tool_result for %q at block %d comes after another block", b.ToolUseID, k)
				}
				if answered[b.ToolUseID] {
					add(i, "duplicate_result", "a second tool_result for %q", b.ToolUseID)
				} else if !slices.Contains(open, b.ToolUseID) || m.Role != "user" {
					add(i, "result_without_call", "tool_result for %q answers no tool_use of the message before", b.ToolUseID)
				}
				answered[b.ToolUseID] = true
			case "tool_use":
				pastResults = true
				if m.Role != "assistant" {
					add(i, "roles", "a tool_use in a %s message", m.Role)
				}
				if seenCalls[b.ID] {
					add(i, "duplicate_call", "tool_use id %q is used twice", b.ID)
				}
				if !toolID.MatchString(b.ID) {
					add(i, "tool_id", "tool_use id %q does not match ^[a-zA-Z0-9_-]+$", b.ID)
				}
				var obj map[string]json.RawMessage
				if json.Unmarshal(b.Input, &obj) != nil || obj == nil {
					add(i, "tool_input", "tool_use %q: input %s is not an object", b.ID, b.Input)
				}
				seenCalls[b.ID] = true
			default:
				pastResults = true
			}
		}
		for _, id := range open {
			if !answered[id] {
				add(i, "call_without_result", "tool_use %q of message %d is not answered here", id, i-1)
			}
		}
		open = nil
		if m.Role == "assistant" {
			for _, b := range blocks {
				if b.Type == "tool_use" {
					open = append(open, b.ID)
				}
			}
		}
	}
	for _, id := range open {
		add(len(msgs), "call_without_result", "tool_use %q of the last message is not answered", id)
	}
	return c.List
}
