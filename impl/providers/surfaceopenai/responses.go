package surfaceopenai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/surfacelog/surface/impl/providers/convo"
	"github.com/surfacelog/surface/impl/view"
)

// Option configures a Responses request mapping.
type Option func(*convo.Target)

// ForModel names the model the request goes to: an opaque item (encrypted
// reasoning, a compaction) issued by a model of another family is not sent
// back (PROV-2).
func ForModel(model string) Option { return func(t *convo.Target) { t.Model = model } }

// ResponsesInput returns the input items of a Responses API request for
// msgs (s.Messages()): every item a reply of OpenAI's brought (reasoning
// with its encrypted content, assistant messages with their phase,
// function calls, compaction and server-tool items) as it came and where
// it came; for what other providers wrote, messages (each item with its
// "type"), function_call items for tool calls, and function_call_output
// items for their results (right after the calls, before other user
// content; a failed result's output starts with ErrorPrefix).
func ResponsesInput(msgs view.Messages, opts ...Option) (responses.ResponseInputParam, error) {
	ms, err := convo.Decode(msgs)
	if err != nil {
		return nil, err
	}
	return ResponsesFromConvo(ms, opts...)
}

// ResponsesFromConvo maps decoded messages.
func ResponsesFromConvo(ms []convo.Message, opts ...Option) (responses.ResponseInputParam, error) {
	t := convo.Target{Provider: convo.OpenAI}
	for _, o := range opts {
		o(&t)
	}
	out := responses.ResponseInputParam{} // never null on the wire
	for _, m := range convo.Merge(ms) {
		if m.Role == "assistant" {
			var text []string
			flush := func() {
				if len(text) > 0 {
					item := responses.ResponseInputItemParamOfMessage(strings.Join(text, "\n"), responses.EasyInputMessageRoleAssistant)
					item.OfMessage.Type = responses.EasyInputMessageTypeMessage
					out = append(out, item)
					text = nil
				}
			}
			for _, b := range m.Blocks {
				if t.Replays(b.Native) {
					flush()
					out = append(out, nativeItem(b.Native.Item))
					continue
				}
				switch b.Type {
				case convo.Text:
					text = append(text, b.Text)
				case convo.ToolCall:
					flush()
					out = append(out, responses.ResponseInputItemParamOfFunctionCall(b.Arguments, b.ID, b.Name))
				case convo.ProviderItem:
					if b.Text != "" {
						text = append(text, b.Text)
					}
				case convo.Reasoning:
					// another provider's reasoning: OpenAI takes only its own
				default:
					if b.Native == nil {
						return nil, fmt.Errorf("surfaceopenai: assistant message of nodes %v: a %s block has no Responses form", m.Seqs, b.Type)
					}
				}
			}
			flush()
			continue
		}
		var parts responses.ResponseInputMessageContentListParam
		for _, b := range m.Blocks {
			switch b.Type {
			case convo.ToolResult:
				item := responses.ResponseInputItemParamOfFunctionCallOutput(resultText(b))
				item.OfFunctionCallOutput.CallID = openai.String(b.ToolCallID)
				out = append(out, item)
			case convo.Text:
				parts = append(parts, responses.ResponseInputContentParamOfInputText(b.Text))
			case convo.Image:
				img := responses.ResponseInputContentParamOfInputImage(responses.ResponseInputImageDetailAuto)
				img.OfInputImage.ImageURL = openai.String(imageURL(b))
				parts = append(parts, img)
			default:
				return nil, fmt.Errorf("surfaceopenai: user message of nodes %v: a %s block has no Responses form", m.Seqs, b.Type)
			}
		}
		if len(parts) > 0 {
			item := responses.ResponseInputItemParamOfMessage(parts, responses.EasyInputMessageRoleUser)
			item.OfMessage.Type = responses.EasyInputMessageTypeMessage
			out = append(out, item)
		}
	}
	return out, nil
}

// nativeItem is an output item of an earlier response, sent back as it
// came: the params carry its JSON verbatim.
func nativeItem(item json.RawMessage) responses.ResponseInputItemUnionParam {
	ov := param.Override[responses.ResponseInputItemItemReferenceParam](item)
	return responses.ResponseInputItemUnionParam{OfItemReference: &ov}
}

// ResponsesReply decodes a Responses API response: its output items, each
// kept whole (PROV-1): a message as its text with the item (id, phase,
// annotations), a reasoning item as its summaries' text with the item (id,
// encrypted_content: request it with include ["reasoning.encrypted_content"]
// when store is false), a function call as a tool call with the item, a
// compaction item or a server tool's item as a provider item; its usage,
// status, and the response's id, conversation and previous response.
func ResponsesReply(resp *responses.Response) (convo.Reply, error) {
	raw := []byte(resp.RawJSON())
	if len(raw) == 0 {
		var err error
		if raw, err = json.Marshal(resp); err != nil {
			return convo.Reply{}, fmt.Errorf("surfaceopenai: %w", err)
		}
	}
	return ResponsesReplyJSON(raw)
}

// ResponsesReplyJSON decodes a Responses API response from its JSON, as
// the API sent it.
func ResponsesReplyJSON(raw []byte) (convo.Reply, error) {
	var resp struct {
		ID                 string            `json:"id"`
		Model              string            `json:"model"`
		Status             string            `json:"status"`
		Output             []json.RawMessage `json:"output"`
		PreviousResponseID *string           `json:"previous_response_id"`
		Conversation       *struct {
			ID string `json:"id"`
		} `json:"conversation"`
		Usage struct {
			InputTokens        int64 `json:"input_tokens"`
			OutputTokens       int64 `json:"output_tokens"`
			InputTokensDetails struct {
				CachedTokens int64 `json:"cached_tokens"`
			} `json:"input_tokens_details"`
			OutputTokensDetails struct {
				ReasoningTokens int64 `json:"reasoning_tokens"`
			} `json:"output_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return convo.Reply{}, fmt.Errorf("surfaceopenai: the response is not a Responses response: %w", err)
	}
	r := convo.Reply{Provider: convo.OpenAI, Model: resp.Model, StopReason: resp.Status}
	native := func(item json.RawMessage, opaque bool) *convo.Native {
		return &convo.Native{Provider: convo.OpenAI, Model: resp.Model, Opaque: opaque, Item: append(json.RawMessage(nil), item...)}
	}
	for i, item := range resp.Output {
		var it struct {
			Type    string `json:"type"`
			Content []struct {
				Type    string `json:"type"`
				Text    string `json:"text"`
				Refusal string `json:"refusal"`
			} `json:"content"`
			Summary []struct {
				Text string `json:"text"`
			} `json:"summary"`
			EncryptedContent *string `json:"encrypted_content"`
			CallID           string  `json:"call_id"`
			Name             string  `json:"name"`
			Arguments        string  `json:"arguments"`
		}
		if err := json.Unmarshal(item, &it); err != nil {
			return convo.Reply{}, fmt.Errorf("surfaceopenai: output %d is not an item: %w", i, err)
		}
		switch it.Type {
		case "message":
			var text []string
			for _, c := range it.Content {
				switch c.Type {
				case "output_text":
					text = append(text, c.Text)
				case "refusal":
					text = append(text, c.Refusal)
				}
			}
			r.Blocks = append(r.Blocks, convo.Block{Type: convo.Text, Text: strings.Join(text, "\n"), Native: native(item, false)})
		case "reasoning":
			var text []string
			for _, s := range it.Summary {
				text = append(text, s.Text)
			}
			opaque := it.EncryptedContent != nil && *it.EncryptedContent != ""
			r.Blocks = append(r.Blocks, convo.Block{Type: convo.Reasoning, Text: strings.Join(text, "\n\n"), Native: native(item, opaque)})
		case "function_call":
			args, err := convo.ArgumentsText(json.RawMessage(quote(it.Arguments)))
			if err != nil {
				return convo.Reply{}, fmt.Errorf("surfaceopenai: output %d, function call %q: %w", i, it.CallID, err)
			}
			r.Blocks = append(r.Blocks, convo.Block{Type: convo.ToolCall, ID: it.CallID, Name: it.Name, Arguments: args, Native: native(item, false)})
		case "compaction":
			r.Blocks = append(r.Blocks, convo.Block{Type: convo.ProviderItem, Compaction: true, Native: native(item, true)})
		case "":
			return convo.Reply{}, fmt.Errorf("surfaceopenai: output %d has no type", i)
		default:
			// web_search_call, file_search_call, image_generation_call,
			// code_interpreter_call, mcp_*: the API's own tools, sent back as
			// they came.
			r.Blocks = append(r.Blocks, convo.Block{Type: convo.ProviderItem, Native: native(item, false)})
		}
	}
	u := resp.Usage
	cached := u.InputTokensDetails.CachedTokens
	r.Usage = &convo.Usage{InputTokens: u.InputTokens - cached, OutputTokens: u.OutputTokens, CacheReadTokens: cached, ReasoningTokens: u.OutputTokensDetails.ReasoningTokens}
	rec := map[string]string{}
	if resp.ID != "" {
		rec["id"] = resp.ID
	}
	if resp.Conversation != nil && resp.Conversation.ID != "" {
		rec["conversation"] = resp.Conversation.ID
	}
	if resp.PreviousResponseID != nil && *resp.PreviousResponseID != "" {
		rec["previousResponseId"] = *resp.PreviousResponseID
	}
	if len(rec) > 0 {
		r.Response, _ = json.Marshal(rec)
	}
	return r, nil
}
