package convo

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

// Usage is a model call's token accounting, in the seed system's
// TokenUsage shape: the counts are disjoint (InputTokens is uncached
// input only).
type Usage struct {
	InputTokens      int64 `json:"inputTokens"`
	OutputTokens     int64 `json:"outputTokens"`
	CacheReadTokens  int64 `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64 `json:"cacheWriteTokens,omitempty"`
	ReasoningTokens  int64 `json:"reasoningTokens,omitempty"`
}

// Reply is a model's response, decoded by an adapter: what the session
// records of it.
type Reply struct {
	// Provider and Model become the message's provenance.
	Provider, Model string
	// Blocks are the assistant message's: text, reasoning, tool-call.
	Blocks []Block
	// Usage is the provider's token count, nil when it gave none.
	Usage *Usage
	// StopReason is the provider's own word for why the reply ended.
	StopReason string
}

// Calls returns the reply's tool calls.
func (r Reply) Calls() []Block { return Message{Blocks: r.Blocks}.Calls() }

// EncodeBlock returns the library's JSON form of b. A tool call's
// arguments are written as JSON text, the seed system's form.
func EncodeBlock(b Block) json.RawMessage {
	var v any
	switch b.Type {
	case Text, Reasoning:
		v = struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{b.Type, b.Text}
	case ToolCall:
		v = struct {
			Type      string `json:"type"`
			ID        string `json:"id"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		}{ToolCall, b.ID, b.Name, b.Arguments}
	case Image:
		v = struct {
			Type      string `json:"type"`
			MediaType string `json:"mediaType,omitempty"`
			Data      string `json:"data,omitempty"`
			URL       string `json:"url,omitempty"`
		}{Image, b.MediaType, b.Data, b.URL}
	case ToolResult:
		content := make([]json.RawMessage, len(b.Content))
		for i, c := range b.Content {
			content[i] = EncodeBlock(c)
		}
		v = struct {
			Type       string            `json:"type"`
			ToolCallID string            `json:"toolCallId"`
			Content    []json.RawMessage `json:"content"`
			IsError    bool              `json:"isError"`
		}{ToolResult, b.ToolCallID, content, b.IsError}
	}
	out, _ := json.Marshal(v) // strings and ints only: cannot fail
	return out
}

// Data is the assistant/message data of the reply for turn and step, with
// its provenance and usage.
func (r Reply) Data(turn, step int64) event.AssistantMessageData {
	d := event.AssistantMessageData{Turn: turn, Step: step, Content: make([]json.RawMessage, 0, len(r.Blocks))}
	for _, b := range r.Blocks {
		d.Content = append(d.Content, EncodeBlock(b))
	}
	d.Provenance, _ = json.Marshal(struct {
		Provider string `json:"provider"`
		Model    string `json:"model"`
	}{r.Provider, r.Model})
	if r.Usage != nil {
		d.Usage, _ = json.Marshal(r.Usage)
	}
	return d
}

// Append appends the reply to s as one batch: the assistant/message, then
// a tool/call per call (the seed system's record of each). It returns the
// events appended; run the calls and append each result with
// s.AppendToolResult (sources: the tool/call's seq).
func (r Reply) Append(ctx context.Context, s *session.Session, turn, step int64) ([]event.Event, error) {
	return s.AppendBatchContext(ctx, func(session.Tx) ([]session.Draft, error) {
		drafts := []session.Draft{{Type: event.TypeAssistantMessage, Data: r.Data(turn, step), Intent: &event.Intent{Op: event.Append()}}}
		for _, c := range r.Calls() {
			drafts = append(drafts, session.Draft{Type: event.TypeToolCall, Data: event.ToolCallData{Turn: turn, Step: step, CallID: c.ID, Name: c.Name, Arguments: c.Arguments}})
		}
		return drafts, nil
	})
}

// Violation is a rule of a provider that a request breaks.
type Violation struct {
	// Index is the message's (or input item's) index in the request; -1
	// for the request as a whole.
	Index int
	// Rule is a stable name: "roles", "alternation", "first_user",
	// "result_without_call", "call_without_result", "results_first",
	// "duplicate_call", "duplicate_result", "empty_content", "order".
	Rule string
	// Detail says what is wrong.
	Detail string
}

func (v Violation) String() string { return v.Rule + " at " + itoa(v.Index) + ": " + v.Detail }

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// Collector gathers the violations a validator finds.
type Collector struct{ List []Violation }

// Add records a violation of rule at index i.
func (c *Collector) Add(i int, rule, format string, args ...any) {
	c.List = append(c.List, Violation{Index: i, Rule: rule, Detail: fmt.Sprintf(format, args...)})
}

// Wire decodes params, marshalled as the SDK sends them, into dst, so a
// validator checks what goes on the wire rather than the adapter's own
// structures. It returns the violation that stops the check, or nil.
func Wire(params, dst any) []Violation {
	raw, err := json.Marshal(params)
	if err == nil {
		err = json.Unmarshal(raw, dst)
	}
	if err != nil {
		return []Violation{{Index: -1, Rule: "encoding", Detail: err.Error()}}
	}
	return nil
}
