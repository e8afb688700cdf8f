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
	// Blocks are the assistant message's: text, reasoning, tool-call, and
	// the provider's items (Native, ProviderItem), in the reply's order.
	// A tool call without an ID gets one when it is appended (Append).
	Blocks []Block
	// Usage is the provider's token count, nil when it gave none.
	Usage *Usage
	// StopReason is the provider's own word for why the reply ended.
	StopReason string
	// Response is what the provider said of the reply besides its
	// content, as a JSON object (PROV-6): its "id", "conversation",
	// "previousResponseId", "appliedEdits", "iterations" (usage per
	// sampling iteration); nil when it said none of these. It is kept in
	// the assistant/message's "response" member, never sent back.
	Response json.RawMessage
}

// Calls returns the reply's tool calls.
func (r Reply) Calls() []Block { return Message{Blocks: r.Blocks}.Calls() }

// Compacted reports whether the reply holds a provider's compaction item
// (PROV-3).
func (r Reply) Compacted() bool {
	for _, b := range r.Blocks {
		if b.Compaction {
			return true
		}
	}
	return false
}

// EncodeBlock returns the library's JSON form of b. A tool call's
// arguments are written as JSON text, the seed system's form; a block's
// native item is written last, as it came.
func EncodeBlock(b Block) json.RawMessage {
	var v any
	switch b.Type {
	case Text, Reasoning:
		v = struct {
			Type   string  `json:"type"`
			Text   string  `json:"text"`
			Native *Native `json:"native,omitempty"`
		}{b.Type, b.Text, b.Native}
	case ToolCall:
		v = struct {
			Type      string  `json:"type"`
			ID        string  `json:"id"`
			Name      string  `json:"name"`
			Arguments string  `json:"arguments"`
			Native    *Native `json:"native,omitempty"`
		}{ToolCall, b.ID, b.Name, b.Arguments, b.Native}
	case Image:
		v = struct {
			Type      string  `json:"type"`
			MediaType string  `json:"mediaType,omitempty"`
			Data      string  `json:"data,omitempty"`
			URL       string  `json:"url,omitempty"`
			Native    *Native `json:"native,omitempty"`
		}{Image, b.MediaType, b.Data, b.URL, b.Native}
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
	default: // ProviderItem, or another provider's kind of block with its item
		v = struct {
			Type       string  `json:"type"`
			Text       string  `json:"text,omitempty"`
			Compaction bool    `json:"compaction,omitempty"`
			Native     *Native `json:"native,omitempty"`
		}{b.Type, b.Text, b.Compaction, b.Native}
	}
	out, err := json.Marshal(v)
	if err != nil { // a native item that is not JSON: keep the rest
		if b.Native != nil {
			nb := b
			nb.Native = nil
			return EncodeBlock(nb)
		}
	}
	return out
}

// Data is the assistant/message data of the reply for turn and step, with
// its provenance, usage and response record.
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
	if len(r.Response) > 0 {
		d.Response = r.Response
	}
	return d
}

// AppendOption configures Reply.Append.
type AppendOption func(*appendOptions)

type appendOptions struct{ chunks []int64 }

// WithChunks names the streamed assistant/chunk events the reply was
// assembled from: they become the message's sourceEventSeqs.
func WithChunks(seqs ...int64) AppendOption {
	return func(o *appendOptions) { o.chunks = append(o.chunks, seqs...) }
}

// Append appends the reply to s as one batch: the assistant/message, then
// a tool/call per call (the seed system's record of each). It returns the
// events appended; run the calls and append each result with its
// tool/call's seq as sources.
//
// A tool call without an id (a provider that names none) gets
// "call_SEQ_K", SEQ the seq of the message that makes it and K the call's
// index in it: unique in the session and the same after a resume, since
// the log keeps it.
//
// A reply that holds a provider's compaction item replaces the whole
// surface before it (PROV-3): the provider no longer sees what it folded.
// The replacing message holds the reply's blocks up to the compaction
// item; what follows it (the reply's answer, its calls) is appended as a
// second message, in the same batch, so the calls are made by an appended
// message (STRICT-7) and a provider is sent the same items in the same
// order. The response record, usage and chunks go with the last message.
func (r Reply) Append(ctx context.Context, s *session.Session, turn, step int64, opts ...AppendOption) ([]event.Event, error) {
	var o appendOptions
	for _, f := range opts {
		f(&o)
	}
	return s.AppendBatch(ctx, func(tx session.Tx) ([]session.Draft, error) {
		seq := int64(tx.Len())
		var drafts []session.Draft
		var calls []Block
		rest := r
		if cut := lastCompaction(r.Blocks); cut >= 0 && tx.Surface().Len() > 0 {
			nodes := tx.Surface()
			first, last := nodes.At(0), nodes.At(nodes.Len()-1)
			var sources []int64
			for i := 0; i < nodes.Len(); i++ {
				sources = append(sources, nodes.At(i))
			}
			head := Reply{Provider: r.Provider, Model: r.Model, Blocks: r.Blocks[:cut+1]}
			if cut == len(r.Blocks)-1 {
				head, rest = r, Reply{}
				sources = append(o.chunks, sources...)
			} else {
				rest.Blocks = r.Blocks[cut+1:]
			}
			head.Blocks = withIDs(head.Blocks, seq)
			calls = append(calls, Message{Blocks: head.Blocks}.Calls()...)
			drafts = append(drafts, session.Draft{Type: event.TypeAssistantMessage, Data: head.Data(turn, step), Intent: &event.Intent{Op: event.Replace(first, last), Sources: sources}})
			seq++
		}
		if rest.Blocks != nil || drafts == nil {
			rest.Blocks = withIDs(rest.Blocks, seq)
			calls = append(calls, Message{Blocks: rest.Blocks}.Calls()...)
			drafts = append(drafts, session.Draft{Type: event.TypeAssistantMessage, Data: rest.Data(turn, step), Intent: &event.Intent{Op: event.Append(), Sources: o.chunks}})
		}
		for _, c := range calls {
			drafts = append(drafts, session.Draft{Type: event.TypeToolCall, Data: event.ToolCallData{Turn: turn, Step: step, CallID: c.ID, Name: c.Name, Arguments: c.Arguments}})
		}
		return drafts, nil
	})
}

// lastCompaction is the index of the last compaction block of blocks, -1
// when there is none.
func lastCompaction(blocks []Block) int {
	for i := len(blocks) - 1; i >= 0; i-- {
		if blocks[i].Compaction {
			return i
		}
	}
	return -1
}

// withIDs is blocks with an id given to each tool call that has none:
// "call_SEQ_K", SEQ the seq of the message that holds them.
func withIDs(blocks []Block, seq int64) []Block {
	out := append([]Block(nil), blocks...)
	k := 0
	for i := range out {
		if out[i].Type != ToolCall {
			continue
		}
		if out[i].ID == "" {
			out[i].ID = fmt.Sprintf("call_%d_%d", seq, k)
		}
		k++
	}
	return out
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
