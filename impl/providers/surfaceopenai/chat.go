// Package surfaceopenai maps a session's messages to OpenAI requests
// (github.com/openai/openai-go/v3): Chat Completions (ChatMessages) and
// Responses (ResponsesInput); checks each against its API's rules
// (ValidateChat, ValidateResponses); and maps a response back to the
// events a session appends (ChatReply, ResponsesReply).
//
// Chat Completions wants the tool messages of an assistant's tool_calls
// right after it, so the results are moved before any other user content
// that came between; a tool message has no error flag, so a failed
// result's text is prefixed "[error] ". Reasoning blocks are left out
// (neither API takes them back as input without the provider's own ids).
// Images are image_url parts (a data: URL for base64 data).
package surfaceopenai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"

	"github.com/surfacelog/surface/impl/providers/convo"
	"github.com/surfacelog/surface/impl/view"
)

// ErrorPrefix starts the text of a tool result that failed, in the APIs
// that have no error flag.
const ErrorPrefix = "[error] "

// ChatMessages returns the Chat Completions messages for msgs
// (s.Messages()).
func ChatMessages(msgs view.Messages) ([]openai.ChatCompletionMessageParamUnion, error) {
	ms, err := convo.Decode(msgs)
	if err != nil {
		return nil, err
	}
	return ChatFromConvo(ms)
}

// ChatFromConvo maps decoded messages.
func ChatFromConvo(ms []convo.Message) ([]openai.ChatCompletionMessageParamUnion, error) {
	var out []openai.ChatCompletionMessageParamUnion
	for _, m := range convo.Merge(ms) {
		if m.Role == "assistant" {
			a := openai.ChatCompletionAssistantMessageParam{}
			var text []string
			for _, b := range m.Blocks {
				switch b.Type {
				case convo.Text:
					text = append(text, b.Text)
				case convo.ToolCall:
					a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID: b.ID, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.Name, Arguments: b.Arguments}}})
				case convo.Reasoning:
				default:
					return nil, fmt.Errorf("surfaceopenai: assistant message of nodes %v: a %s block has no Chat form", m.Seqs, b.Type)
				}
			}
			if len(text) > 0 {
				a.Content.OfString = openai.String(strings.Join(text, "\n"))
			}
			if len(text) == 0 && len(a.ToolCalls) == 0 {
				continue // reasoning only: nothing to send
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
			continue
		}
		// A user turn: its results first, as tool messages, then the rest.
		var parts []openai.ChatCompletionContentPartUnionParam
		for _, b := range m.Blocks {
			switch b.Type {
			case convo.ToolResult:
				out = append(out, openai.ToolMessage(resultText(b), b.ToolCallID))
			case convo.Text:
				parts = append(parts, openai.TextContentPart(b.Text))
			case convo.Image:
				parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: imageURL(b)}))
			default:
				return nil, fmt.Errorf("surfaceopenai: user message of nodes %v: a %s block has no Chat form", m.Seqs, b.Type)
			}
		}
		if len(parts) > 0 {
			out = append(out, openai.UserMessage(parts))
		}
	}
	return out, nil
}

// resultText is a tool result as text, with ErrorPrefix when it failed.
func resultText(b convo.Block) string {
	t := convo.ResultText(b)
	if b.IsError {
		return ErrorPrefix + t
	}
	return t
}

func imageURL(b convo.Block) string {
	if b.URL != "" {
		return b.URL
	}
	return "data:" + b.MediaType + ";base64," + b.Data
}

// ChatReply decodes a Chat Completions response (its first choice).
func ChatReply(resp *openai.ChatCompletion) (convo.Reply, error) {
	if len(resp.Choices) == 0 {
		return convo.Reply{}, fmt.Errorf("surfaceopenai: the response has no choice")
	}
	c := resp.Choices[0]
	r := convo.Reply{Provider: "openai", Model: resp.Model, StopReason: string(c.FinishReason)}
	if c.Message.Content != "" {
		r.Blocks = append(r.Blocks, convo.Block{Type: convo.Text, Text: c.Message.Content})
	}
	for i, tc := range c.Message.ToolCalls {
		args, err := convo.ArgumentsText(json.RawMessage(quote(tc.Function.Arguments)))
		if err != nil {
			return convo.Reply{}, fmt.Errorf("surfaceopenai: tool call %d (%q): %w", i, tc.ID, err)
		}
		r.Blocks = append(r.Blocks, convo.Block{Type: convo.ToolCall, ID: tc.ID, Name: tc.Function.Name, Arguments: args})
	}
	u := resp.Usage
	cached := u.PromptTokensDetails.CachedTokens
	r.Usage = &convo.Usage{InputTokens: u.PromptTokens - cached, OutputTokens: u.CompletionTokens, CacheReadTokens: cached, ReasoningTokens: u.CompletionTokensDetails.ReasoningTokens}
	return r, nil
}

// quote is s as a JSON string literal.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
