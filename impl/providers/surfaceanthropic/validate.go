package surfaceanthropic

import (
	"encoding/json"
	"slices"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/surfacelog/surface/impl/providers/convo"
)

// Validate checks params, as they go on the wire, against the Messages
// API's rules, and returns every violation with its message index:
// roles are user or assistant; the first message is the user's; user and
// assistant alternate; no content is empty; a tool_result answers a
// tool_use of the assistant message just before it, comes before any
// other block of its message, and is the only result of that call; every
// tool_use is answered in the next message; no tool_use id is used twice.
//
// It reads the JSON the SDK sends, not the adapter's own structures, so it
// checks the adapter's output as the API would.
func Validate(params []anthropic.MessageParam) []convo.Violation {
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if v := convo.Wire(params, &msgs); v != nil {
		return v
	}
	var c convo.Collector
	add := c.Add
	type blk struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		ToolUseID string `json:"tool_use_id"`
	}
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
		pastResults := false
		for k, b := range blocks {
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
