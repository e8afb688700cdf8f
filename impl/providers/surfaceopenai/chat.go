// Package surfaceopenai maps a session's messages to OpenAI requests
// (github.com/openai/openai-go/v3): Chat Completions (ChatMessages) and
// Responses (ResponsesInput); checks each against its API's rules
// (ValidateChat, ValidateResponses); and maps a response, whole or
// streamed, back to the events a session appends (ChatReply, ChatStream,
// ResponsesReply, ResponsesStream).
//
// Chat Completions wants the tool messages of an assistant's tool_calls
// right after it, so the results are moved before any other user content
// that came between; a tool message has no error flag, so a failed
// result's text is prefixed "[error] ". Chat Completions takes no
// reasoning back, except in the DeepSeek dialect (and other
// OpenAI-compatible servers that want it), which sends each assistant
// turn's reasoning as reasoning_content, as the seed system's DeepSeek
// serializer does. The Responses API gets back every item an OpenAI reply
// brought, as it came (spec §14, PROV-1), reasoning with its encrypted
// content included. Images are image_url parts (a data: URL for base64
// data).
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

// Dialect is the Chat Completions server's flavour.
type Dialect int

const (
	// OpenAIChat is OpenAI's own API: no reasoning goes back; an
	// assistant turn with neither text nor tool calls is left out.
	OpenAIChat Dialect = iota
	// DeepSeekChat is DeepSeek's OpenAI-compatible API (and others that
	// want reasoning back): every assistant turn with reasoning carries it
	// as reasoning_content (its reasoning blocks joined with nothing
	// between), and content is always a string ("" for a turn with no
	// text; never null), as the seed system's DeepSeek serializer writes
	// it. In thinking mode with tools, DeepSeek answers 400 when a tool
	// calling turn's reasoning_content is missing.
	DeepSeekChat
)

// ChatOption configures ChatMessages and ChatReply.
type ChatOption func(*chatOptions)

type chatOptions struct{ dialect Dialect }

// WithDialect chooses the server's dialect (default OpenAIChat).
func WithDialect(d Dialect) ChatOption { return func(o *chatOptions) { o.dialect = d } }

func chatOpts(opts []ChatOption) chatOptions {
	var o chatOptions
	for _, f := range opts {
		f(&o)
	}
	return o
}

// ChatMessages returns the Chat Completions messages for msgs
// (s.Messages()).
func ChatMessages(msgs view.Messages, opts ...ChatOption) ([]openai.ChatCompletionMessageParamUnion, error) {
	ms, err := convo.Decode(msgs)
	if err != nil {
		return nil, err
	}
	return ChatFromConvo(ms, opts...)
}

// ChatFromConvo maps decoded messages.
func ChatFromConvo(ms []convo.Message, opts ...ChatOption) ([]openai.ChatCompletionMessageParamUnion, error) {
	o := chatOpts(opts)
	deepseek := o.dialect == DeepSeekChat
	out := []openai.ChatCompletionMessageParamUnion{} // never null on the wire
	for _, m := range convo.Merge(ms) {
		if m.Role == "assistant" {
			a := openai.ChatCompletionAssistantMessageParam{}
			var text, reasoning []string
			for _, b := range m.Blocks {
				switch b.Type {
				case convo.Text:
					text = append(text, b.Text)
				case convo.ToolCall:
					a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID: b.ID, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.Name, Arguments: b.Arguments}}})
				case convo.Reasoning:
					reasoning = append(reasoning, b.Text)
				case convo.ProviderItem:
					if b.Text != "" {
						text = append(text, b.Text)
					}
				default:
					if b.Native == nil {
						return nil, fmt.Errorf("surfaceopenai: assistant message of nodes %v: a %s block has no Chat form", m.Seqs, b.Type)
					}
				}
			}
			if deepseek {
				// The seed system's DeepSeek serializer: text joined with
				// nothing between, always a string; reasoning back on every
				// turn that has it.
				a.Content.OfString = openai.String(strings.Join(text, ""))
				if r := strings.Join(reasoning, ""); r != "" {
					a.SetExtraFields(map[string]any{"reasoning_content": r})
				}
			} else {
				if len(text) > 0 {
					a.Content.OfString = openai.String(strings.Join(text, "\n"))
				}
				if len(text) == 0 && len(a.ToolCalls) == 0 {
					continue // reasoning only: nothing OpenAI takes
				}
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
			continue
		}
		// A user turn: its results first, as tool messages, then the rest.
		var parts []openai.ChatCompletionContentPartUnionParam
		for _, b := range m.Blocks {
			switch b.Type {
			case convo.ToolResult:
				text := resultText(b)
				if deepseek && text == "" {
					text = "(no output)" // DeepSeek wants some content, as the seed system sends it
				}
				out = append(out, openai.ToolMessage(text, b.ToolCallID))
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

// ChatReply decodes a Chat Completions response (its first choice): its
// reasoning_content (DeepSeek's, and other compatible servers'), text and
// tool calls, usage and finish reason. In the DeepSeek dialect the
// provenance's provider is "deepseek".
func ChatReply(resp *openai.ChatCompletion, opts ...ChatOption) (convo.Reply, error) {
	raw := []byte(resp.RawJSON())
	if len(raw) == 0 {
		var err error
		if raw, err = json.Marshal(resp); err != nil {
			return convo.Reply{}, fmt.Errorf("surfaceopenai: %w", err)
		}
	}
	return ChatReplyJSON(raw, opts...)
}

// ChatReplyJSON decodes a Chat Completions response from its JSON, as the
// server sent it.
func ChatReplyJSON(raw []byte, opts ...ChatOption) (convo.Reply, error) {
	o := chatOpts(opts)
	var resp struct {
		ID      string `json:"id"`
		Model   string `json:"model"`
		Choices []struct {
			FinishReason string `json:"finish_reason"`
			Message      struct {
				Content          *string `json:"content"`
				ReasoningContent *string `json:"reasoning_content"`
				ToolCalls        []struct {
					ID       string `json:"id"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens        int64 `json:"prompt_tokens"`
			CompletionTokens    int64 `json:"completion_tokens"`
			PromptTokensDetails struct {
				CachedTokens int64 `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
			CompletionTokensDetails struct {
				ReasoningTokens int64 `json:"reasoning_tokens"`
			} `json:"completion_tokens_details"`
			PromptCacheHitTokens int64 `json:"prompt_cache_hit_tokens"` // DeepSeek's name
		} `json:"usage"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return convo.Reply{}, fmt.Errorf("surfaceopenai: the response is not a chat completion: %w", err)
	}
	if len(resp.Choices) == 0 {
		return convo.Reply{}, fmt.Errorf("surfaceopenai: the response has no choice")
	}
	c := resp.Choices[0]
	provider := convo.OpenAI
	if o.dialect == DeepSeekChat {
		provider = convo.DeepSeek
	}
	r := convo.Reply{Provider: provider, Model: resp.Model, StopReason: c.FinishReason}
	if c.Message.ReasoningContent != nil && *c.Message.ReasoningContent != "" {
		r.Blocks = append(r.Blocks, convo.Block{Type: convo.Reasoning, Text: *c.Message.ReasoningContent})
	}
	if c.Message.Content != nil && *c.Message.Content != "" {
		r.Blocks = append(r.Blocks, convo.Block{Type: convo.Text, Text: *c.Message.Content})
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
	if cached == 0 {
		cached = u.PromptCacheHitTokens
	}
	r.Usage = &convo.Usage{InputTokens: u.PromptTokens - cached, OutputTokens: u.CompletionTokens, CacheReadTokens: cached, ReasoningTokens: u.CompletionTokensDetails.ReasoningTokens}
	if resp.ID != "" {
		r.Response, _ = json.Marshal(map[string]string{"id": resp.ID})
	}
	return r, nil
}

// quote is s as a JSON string literal.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
