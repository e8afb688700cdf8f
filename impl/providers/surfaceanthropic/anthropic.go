// Package surfaceanthropic maps a session's messages to the request of
// Anthropic's Messages API (github.com/anthropics/anthropic-sdk-go/v2),
// checks a request against that API's rules, and maps a response back to
// the events a session appends.
//
// The mapping: each tool result of the library is its own user message,
// and a summary, a steering message or a repaired prompt can sit beside
// another user message, so neighbouring messages of one role are merged
// (Anthropic wants user and assistant to alternate), with the tool results
// first in their message. Reasoning blocks are left out: Anthropic replays
// thinking only with the signature it issued, which the log does not keep.
// A tool result's error is is_error; images are base64 or URL sources.
package surfaceanthropic

import (
	"encoding/json"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/surfacelog/surface/impl/providers/convo"
	"github.com/surfacelog/surface/impl/view"
)

// Messages returns the Messages API params for msgs (s.Messages()).
func Messages(msgs view.Messages) ([]anthropic.MessageParam, error) {
	ms, err := convo.Decode(msgs)
	if err != nil {
		return nil, err
	}
	return FromConvo(ms)
}

// FromConvo maps decoded messages.
func FromConvo(ms []convo.Message) ([]anthropic.MessageParam, error) {
	var kept []convo.Message
	for _, m := range ms {
		var blocks []convo.Block
		for _, b := range m.Blocks {
			if b.Type != convo.Reasoning {
				blocks = append(blocks, b)
			}
		}
		if len(blocks) > 0 {
			m.Blocks = blocks
			kept = append(kept, m)
		}
	}
	out := make([]anthropic.MessageParam, 0, len(kept))
	for _, m := range convo.Merge(kept) {
		blocks := make([]anthropic.ContentBlockParamUnion, 0, len(m.Blocks))
		for _, b := range m.Blocks {
			p, err := block(b)
			if err != nil {
				return nil, fmt.Errorf("surfaceanthropic: message of nodes %v: %w", m.Seqs, err)
			}
			blocks = append(blocks, p)
		}
		if m.Role == "assistant" {
			out = append(out, anthropic.NewAssistantMessage(blocks...))
		} else {
			out = append(out, anthropic.NewUserMessage(blocks...))
		}
	}
	return out, nil
}

func block(b convo.Block) (anthropic.ContentBlockParamUnion, error) {
	switch b.Type {
	case convo.Text:
		return anthropic.NewTextBlock(b.Text), nil
	case convo.Image:
		if b.URL != "" {
			return anthropic.NewImageBlock(anthropic.URLImageSourceParam{URL: b.URL}), nil
		}
		return anthropic.NewImageBlockBase64(b.MediaType, b.Data), nil
	case convo.ToolCall:
		return anthropic.NewToolUseBlock(b.ID, json.RawMessage(b.Arguments), b.Name), nil
	case convo.ToolResult:
		r := anthropic.ToolResultBlockParam{ToolUseID: b.ToolCallID, IsError: anthropic.Bool(b.IsError)}
		for _, c := range b.Content {
			switch c.Type {
			case convo.Text, convo.Reasoning:
				r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: c.Text}})
			case convo.Image:
				img, _ := block(c)
				r.Content = append(r.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: img.OfImage})
			}
		}
		return anthropic.ContentBlockParamUnion{OfToolResult: &r}, nil
	}
	return anthropic.ContentBlockParamUnion{}, fmt.Errorf("a %s block has no Anthropic form", b.Type)
}

// Reply decodes a Messages API response: its text, thinking (as
// reasoning) and tool_use blocks, its usage (input tokens net of the
// cache, as the seed system counts them) and stop reason.
func Reply(resp *anthropic.Message) (convo.Reply, error) {
	r := convo.Reply{Provider: "anthropic", Model: string(resp.Model), StopReason: string(resp.StopReason)}
	for i, c := range resp.Content {
		switch c.Type {
		case "text":
			r.Blocks = append(r.Blocks, convo.Block{Type: convo.Text, Text: c.Text})
		case "thinking":
			r.Blocks = append(r.Blocks, convo.Block{Type: convo.Reasoning, Text: c.Thinking})
		case "redacted_thinking":
		case "tool_use":
			args, err := convo.ArgumentsText(c.Input)
			if err != nil {
				return convo.Reply{}, fmt.Errorf("surfaceanthropic: content %d, tool_use %q: %w", i, c.ID, err)
			}
			r.Blocks = append(r.Blocks, convo.Block{Type: convo.ToolCall, ID: c.ID, Name: c.Name, Arguments: args})
		default:
			return convo.Reply{}, fmt.Errorf("surfaceanthropic: content %d is a %s block, which the session does not record", i, c.Type)
		}
	}
	u := resp.Usage
	r.Usage = &convo.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens}
	return r, nil
}
