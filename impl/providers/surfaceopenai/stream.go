package surfaceopenai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/surfacelog/surface/impl/providers/convo"
)

// ResponsesStream assembles a streamed Responses API response from its
// events into the response the API would have returned whole: every
// output item from its response.output_item.done event (complete there:
// a reasoning item's encrypted_content may be incomplete in
// output_item.added), and the response itself (id, model, usage, status)
// from response.created and then response.completed, .incomplete or
// .failed. The zero ResponsesStream is ready to use.
type ResponsesStream struct {
	resp  map[string]json.RawMessage
	items map[int]json.RawMessage
	err   error
}

// Add adds one event, as the API sent it (an SDK event's RawJSON).
func (s *ResponsesStream) Add(event json.RawMessage) error {
	if s.err != nil {
		return s.err
	}
	var e struct {
		Type        string                     `json:"type"`
		Response    map[string]json.RawMessage `json:"response"`
		OutputIndex int                        `json:"output_index"`
		Item        json.RawMessage            `json:"item"`
	}
	if err := json.Unmarshal(event, &e); err != nil {
		s.err = fmt.Errorf("surfaceopenai: a stream event that is not JSON: %w", err)
		return s.err
	}
	if s.items == nil {
		s.items = map[int]json.RawMessage{}
	}
	switch e.Type {
	case "response.created", "response.in_progress", "response.completed", "response.incomplete", "response.failed", "response.queued":
		if e.Response != nil {
			s.resp = e.Response
		}
	case "response.output_item.done":
		s.items[e.OutputIndex] = append(json.RawMessage(nil), e.Item...)
	case "error":
		s.err = fmt.Errorf("surfaceopenai: the stream reported an error: %s", event)
		return s.err
	}
	// Deltas and the other events say nothing the done items do not.
	return nil
}

// AddEvent adds an SDK event.
func (s *ResponsesStream) AddEvent(e responses.ResponseStreamEventUnion) error {
	return s.Add(json.RawMessage(e.RawJSON()))
}

// JSON is the response as the API would have returned it whole: the last
// response event's, with the output items of the done events (by their
// index) wherever that response's output lacks them.
func (s *ResponsesStream) JSON() (json.RawMessage, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.resp == nil {
		return nil, fmt.Errorf("surfaceopenai: the stream has no response event")
	}
	out := map[string]json.RawMessage{}
	for k, v := range s.resp {
		out[k] = v
	}
	var output []json.RawMessage
	_ = json.Unmarshal(out["output"], &output)
	if len(output) < len(s.items) || len(output) == 0 {
		idx := make([]int, 0, len(s.items))
		for i := range s.items {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		output = output[:0]
		for _, i := range idx {
			output = append(output, s.items[i])
		}
	}
	out["output"], _ = json.Marshal(output)
	return json.Marshal(out)
}

// Reply decodes the assembled response (ResponsesReplyJSON).
func (s *ResponsesStream) Reply() (convo.Reply, error) {
	raw, err := s.JSON()
	if err != nil {
		return convo.Reply{}, err
	}
	return ResponsesReplyJSON(raw)
}

// ChatStream assembles a streamed Chat Completions response from its
// chunks (choice 0): content, reasoning_content, tool calls by index
// (their id, name and argument deltas), finish reason and usage (the last
// chunk's). The zero ChatStream is ready to use.
type ChatStream struct {
	id, model, finish    string
	content, reasoning   bytes.Buffer
	sawContent, sawReply bool
	calls                map[int]*chatCall
	usage                json.RawMessage
	err                  error
}

type chatCall struct {
	id, name string
	args     bytes.Buffer
}

// Add adds one chunk, as the server sent it (an SDK chunk's RawJSON).
func (s *ChatStream) Add(chunk json.RawMessage) error {
	if s.err != nil {
		return s.err
	}
	var c struct {
		ID      string `json:"id"`
		Model   string `json:"model"`
		Choices []struct {
			Index        int     `json:"index"`
			FinishReason *string `json:"finish_reason"`
			Delta        struct {
				Content          *string `json:"content"`
				ReasoningContent *string `json:"reasoning_content"`
				ToolCalls        []struct {
					Index    int    `json:"index"`
					ID       string `json:"id"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"delta"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	if err := json.Unmarshal(chunk, &c); err != nil {
		s.err = fmt.Errorf("surfaceopenai: a chunk that is not JSON: %w", err)
		return s.err
	}
	s.sawReply = true
	if c.ID != "" {
		s.id = c.ID
	}
	if c.Model != "" {
		s.model = c.Model
	}
	if len(c.Usage) > 0 && string(c.Usage) != "null" {
		s.usage = append(json.RawMessage(nil), c.Usage...)
	}
	if s.calls == nil {
		s.calls = map[int]*chatCall{}
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			s.finish = *ch.FinishReason
		}
		if d := ch.Delta.Content; d != nil {
			s.content.WriteString(*d)
			s.sawContent = true
		}
		if d := ch.Delta.ReasoningContent; d != nil {
			s.reasoning.WriteString(*d)
		}
		for _, tc := range ch.Delta.ToolCalls {
			call := s.calls[tc.Index]
			if call == nil {
				call = &chatCall{}
				s.calls[tc.Index] = call
			}
			if tc.ID != "" {
				call.id = tc.ID
			}
			if tc.Function.Name != "" {
				call.name = tc.Function.Name
			}
			call.args.WriteString(tc.Function.Arguments)
		}
	}
	return nil
}

// AddChunk adds an SDK chunk.
func (s *ChatStream) AddChunk(c openai.ChatCompletionChunk) error {
	return s.Add(json.RawMessage(c.RawJSON()))
}

// JSON is the completion as the server would have returned it whole.
func (s *ChatStream) JSON() (json.RawMessage, error) {
	if s.err != nil {
		return nil, s.err
	}
	if !s.sawReply {
		return nil, fmt.Errorf("surfaceopenai: the stream has no chunk")
	}
	msg := map[string]any{"role": "assistant", "content": s.content.String()}
	if s.reasoning.Len() > 0 {
		msg["reasoning_content"] = s.reasoning.String()
	}
	idx := make([]int, 0, len(s.calls))
	for i := range s.calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var calls []map[string]any
	for _, i := range idx {
		c := s.calls[i]
		calls = append(calls, map[string]any{"id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": c.args.String()}})
	}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	out := map[string]any{"id": s.id, "object": "chat.completion", "model": s.model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": s.finish}}}
	if s.usage != nil {
		out["usage"] = s.usage
	}
	return json.Marshal(out)
}

// Reply decodes the assembled completion (ChatReplyJSON).
func (s *ChatStream) Reply(opts ...ChatOption) (convo.Reply, error) {
	raw, err := s.JSON()
	if err != nil {
		return convo.Reply{}, err
	}
	return ChatReplyJSON(raw, opts...)
}
