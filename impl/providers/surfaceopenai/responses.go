package surfaceopenai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/surfacelog/surface/impl/providers/convo"
	"github.com/surfacelog/surface/impl/view"
)

// ResponsesInput returns the input items of a Responses API request for
// msgs (s.Messages()): messages, function_call items for tool calls and
// function_call_output items for their results (right after the calls,
// before other user content; a failed result's output starts with
// ErrorPrefix).
func ResponsesInput(msgs view.Messages) (responses.ResponseInputParam, error) {
	ms, err := convo.Decode(msgs)
	if err != nil {
		return nil, err
	}
	return ResponsesFromConvo(ms)
}

// ResponsesFromConvo maps decoded messages.
func ResponsesFromConvo(ms []convo.Message) (responses.ResponseInputParam, error) {
	var out responses.ResponseInputParam
	for _, m := range convo.Merge(ms) {
		if m.Role == "assistant" {
			var text []string
			flush := func() {
				if len(text) > 0 {
					out = append(out, responses.ResponseInputItemParamOfMessage(strings.Join(text, "\n"), responses.EasyInputMessageRoleAssistant))
					text = nil
				}
			}
			for _, b := range m.Blocks {
				switch b.Type {
				case convo.Text:
					text = append(text, b.Text)
				case convo.ToolCall:
					flush()
					out = append(out, responses.ResponseInputItemParamOfFunctionCall(b.Arguments, b.ID, b.Name))
				case convo.Reasoning:
				default:
					return nil, fmt.Errorf("surfaceopenai: assistant message of nodes %v: a %s block has no Responses form", m.Seqs, b.Type)
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
			out = append(out, responses.ResponseInputItemParamOfMessage(parts, responses.EasyInputMessageRoleUser))
		}
	}
	return out, nil
}

// ResponsesReply decodes a Responses API response: output_text of its
// messages, the summaries of its reasoning items (as reasoning), and its
// function calls.
func ResponsesReply(resp *responses.Response) (convo.Reply, error) {
	r := convo.Reply{Provider: "openai", Model: string(resp.Model), StopReason: string(resp.Status)}
	for i, item := range resp.Output {
		switch item.Type {
		case "message":
			for _, c := range item.Content {
				if c.Type == "output_text" {
					r.Blocks = append(r.Blocks, convo.Block{Type: convo.Text, Text: c.Text})
				}
			}
		case "reasoning":
			for _, s := range item.Summary {
				r.Blocks = append(r.Blocks, convo.Block{Type: convo.Reasoning, Text: s.Text})
			}
		case "function_call":
			args, err := convo.ArgumentsText(json.RawMessage(quote(item.Arguments.OfString)))
			if err != nil {
				return convo.Reply{}, fmt.Errorf("surfaceopenai: output %d, function call %q: %w", i, item.CallID, err)
			}
			r.Blocks = append(r.Blocks, convo.Block{Type: convo.ToolCall, ID: item.CallID, Name: item.Name, Arguments: args})
		default:
			return convo.Reply{}, fmt.Errorf("surfaceopenai: output %d is a %s item, which the session does not record", i, item.Type)
		}
	}
	u := resp.Usage
	cached := u.InputTokensDetails.CachedTokens
	r.Usage = &convo.Usage{InputTokens: u.InputTokens - cached, OutputTokens: u.OutputTokens, CacheReadTokens: cached, ReasoningTokens: u.OutputTokensDetails.ReasoningTokens}
	return r, nil
}
