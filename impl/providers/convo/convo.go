// Package convo is the provider-neutral middle of the adapters: it decodes
// the content blocks of a session's messages (package message) into typed
// Blocks, merges neighbouring messages of one role as providers that want
// alternation need, and turns a decoded model reply into the events a
// session appends. The adapters (surfaceanthropic, surfaceopenai,
// surfacegemini) map its Messages to their SDK's request types.
//
// The block format it reads is the library's (the seed system's):
//
//	{"type":"text","text":"..."}
//	{"type":"reasoning","text":"..."}
//	{"type":"image","mediaType":"image/png","data":"<base64>"}   or   {"type":"image","url":"https://..."}
//	{"type":"tool-call","id":"c1","name":"read","arguments":"{\"path\":\"a.go\"}"}   (arguments: JSON text, or an object)
//	{"type":"tool-result","toolCallId":"c1","content":[blocks],"isError":false}
//
// and the provider items a reply carries that its provider wants back
// unchanged (spec/README.md §14, PROV-1 to PROV-6): any block may carry
// "native", the provider's own item verbatim with the provider and model
// that issued it, and a "provider-item" block is one with no portable part
// at all (redacted thinking, an encrypted compaction, a server tool's
// call):
//
//	{"type":"reasoning","text":"...","native":{"provider":"anthropic","model":"claude-opus-4-5","opaque":true,"item":{"type":"thinking","thinking":"...","signature":"..."}}}
//	{"type":"provider-item","native":{"provider":"openai","model":"gpt-5.1","opaque":true,"item":{"type":"compaction","id":"cmp_1","encrypted_content":"..."}},"compaction":true}
//
// An adapter sends a native item, as it was, to the provider that issued
// it (Target.Replays), and the portable part (the block without native)
// to any other; a provider-item goes to its provider only.
//
// Steering and context messages arrive as text blocks already wrapped in
// their tags (<steering source=user> ... </steering>); they pass through
// as text.
package convo

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/view"
)

// Block types.
const (
	Text       = "text"
	Reasoning  = "reasoning"
	Image      = "image"
	ToolCall   = "tool-call"
	ToolResult = "tool-result"
	// ProviderItem is a block that is only a provider's item (PROV-2): it
	// has no portable part, and goes to its provider only.
	ProviderItem = "provider-item"
)

// Native is a provider's own item, kept verbatim (PROV-1): what the
// provider documents as "send back unchanged".
type Native struct {
	// Provider and Model issued the item ("anthropic", "openai",
	// "google", "deepseek"; the reply's model).
	Provider string `json:"provider"`
	Model    string `json:"model,omitempty"`
	// Opaque says the item carries what no other form holds: a signature,
	// encrypted content, redacted data, a compaction (PROV-4: library
	// compaction does not fold it unless told to).
	Opaque bool `json:"opaque,omitempty"`
	// Item is the provider's JSON, as it came.
	Item json.RawMessage `json:"item"`
}

// Block is one decoded content block.
type Block struct {
	Type string
	// Native is the provider's item the block came from, nil when it has
	// none.
	Native *Native
	// Compaction marks a provider-item that is a provider's compaction
	// (PROV-3).
	Compaction bool
	// Text is the text of a text or reasoning block.
	Text string
	// ID and Name are a tool call's; Arguments is the JSON text of its
	// arguments object ("{}" when the block has none).
	ID, Name, Arguments string
	// ToolCallID, Content and IsError are a tool result's.
	ToolCallID string
	Content    []Block
	IsError    bool
	// MediaType and Data (base64), or URL, are an image's.
	MediaType, Data, URL string
}

// Message is a decoded message: one surface node's, or several merged.
type Message struct {
	Role message.Role
	// Seqs are the surface nodes the message came from.
	Seqs   []int64
	Blocks []Block
}

// Calls returns the message's tool-call blocks.
func (m Message) Calls() []Block { return m.of(ToolCall) }

// Results returns the message's tool-result blocks.
func (m Message) Results() []Block { return m.of(ToolResult) }

func (m Message) of(t string) []Block {
	var out []Block
	for _, b := range m.Blocks {
		if b.Type == t {
			out = append(out, b)
		}
	}
	return out
}

// Error is a block an adapter cannot map: a block of an unknown type, or
// one whose members are not what its type needs.
type Error struct {
	// Seq is the surface node, Block the block's index in its message.
	Seq   int64
	Block int
	// Detail says what is wrong.
	Detail string
}

func (e *Error) Error() string {
	return fmt.Sprintf("convo: message of node %d, block %d: %s", e.Seq, e.Block, e.Detail)
}

// Decode decodes every message of msgs, in order.
func Decode(msgs view.Messages) ([]Message, error) {
	out := make([]Message, 0, msgs.Len())
	for _, m := range msgs.All() {
		d, err := DecodeMessage(m)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// DecodeMessage decodes one message.
func DecodeMessage(m message.Message) (Message, error) {
	out := Message{Role: m.Role, Seqs: []int64{m.Seq}, Blocks: make([]Block, 0, len(m.Content))}
	for i, raw := range m.Content {
		b, err := decodeBlock(raw)
		if err != nil {
			return Message{}, &Error{Seq: m.Seq, Block: i, Detail: err.Error()}
		}
		out.Blocks = append(out.Blocks, b)
	}
	return out, nil
}

type wireBlock struct {
	Type       string            `json:"type"`
	Native     *Native           `json:"native"`
	Compaction bool              `json:"compaction"`
	Text       *string           `json:"text"`
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	Arguments  json.RawMessage   `json:"arguments"`
	ToolCallID string            `json:"toolCallId"`
	Content    []json.RawMessage `json:"content"`
	IsError    bool              `json:"isError"`
	MediaType  string            `json:"mediaType"`
	Data       string            `json:"data"`
	URL        string            `json:"url"`
}

func decodeBlock(raw json.RawMessage) (Block, error) {
	var w wireBlock
	if err := json.Unmarshal(raw, &w); err != nil {
		return Block{}, fmt.Errorf("not a block: %v", err)
	}
	b := Block{Type: w.Type, Native: w.Native, Compaction: w.Compaction}
	if w.Native != nil && (w.Native.Provider == "" || len(w.Native.Item) == 0) {
		return Block{}, fmt.Errorf("a native item needs a provider and an item")
	}
	switch w.Type {
	case ProviderItem:
		if w.Native == nil {
			return Block{}, fmt.Errorf("a provider-item block without its native item")
		}
		b.Text = ""
		if w.Text != nil {
			b.Text = *w.Text
		}
	case Text, Reasoning:
		if w.Text == nil {
			return Block{}, fmt.Errorf("a %s block without text", w.Type)
		}
		b.Text = *w.Text
	case ToolCall:
		if w.ID == "" || w.Name == "" {
			return Block{}, fmt.Errorf("a tool-call block needs an id and a name")
		}
		args, err := ArgumentsText(w.Arguments)
		if err != nil {
			return Block{}, fmt.Errorf("tool call %q: %v", w.ID, err)
		}
		b.ID, b.Name, b.Arguments = w.ID, w.Name, args
	case ToolResult:
		if w.ToolCallID == "" {
			return Block{}, fmt.Errorf("a tool-result block needs a toolCallId")
		}
		b.ToolCallID, b.IsError = w.ToolCallID, w.IsError
		for k, c := range w.Content {
			inner, err := decodeBlock(c)
			if err != nil {
				return Block{}, fmt.Errorf("content %d of the result of %q: %v", k, w.ToolCallID, err)
			}
			if inner.Type == ToolCall || inner.Type == ToolResult {
				return Block{}, fmt.Errorf("content %d of the result of %q is a %s block", k, w.ToolCallID, inner.Type)
			}
			b.Content = append(b.Content, inner)
		}
	case Image:
		if (w.Data == "" || w.MediaType == "") && w.URL == "" {
			return Block{}, fmt.Errorf("an image block needs mediaType and data, or url")
		}
		b.MediaType, b.Data, b.URL = w.MediaType, w.Data, w.URL
	default:
		if w.Native == nil {
			return Block{}, fmt.Errorf("a block of type %q, which no adapter maps", w.Type)
		}
		// Another provider's kind of block, with its item: it goes to that
		// provider only, as a provider-item would.
	}
	return b, nil
}

// ArgumentsText returns the JSON text of a tool call's arguments: raw is
// an object, or a string holding an object's text (the seed system's
// form), or absent ("{}").
func ArgumentsText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "{}", nil
	}
	if raw[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return "", err
		}
		raw = json.RawMessage(text)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return "", fmt.Errorf("the arguments are not a JSON object")
	}
	return string(raw), nil
}

// Merge merges each run of neighbouring messages of one role into one
// message (its Seqs all of theirs), for providers that want user and
// assistant turns to alternate. In a merged message the tool-result blocks
// come first, in their order, then the other blocks in theirs: a
// provider reads the results as the answer to the calls just before.
func Merge(ms []Message) []Message {
	var out []Message
	for _, m := range ms {
		if n := len(out); n > 0 && out[n-1].Role == m.Role {
			last := &out[n-1]
			last.Seqs = append(last.Seqs, m.Seqs...)
			last.Blocks = append(last.Blocks, m.Blocks...)
			continue
		}
		out = append(out, Message{Role: m.Role, Seqs: append([]int64(nil), m.Seqs...), Blocks: append([]Block(nil), m.Blocks...)})
	}
	for i := range out {
		out[i].Blocks = ResultsFirst(out[i].Blocks)
	}
	return out
}

// ResultsFirst returns blocks with the tool results first, each group in
// its order.
func ResultsFirst(blocks []Block) []Block {
	out := make([]Block, 0, len(blocks))
	for _, b := range blocks {
		if b.Type == ToolResult {
			out = append(out, b)
		}
	}
	for _, b := range blocks {
		if b.Type != ToolResult {
			out = append(out, b)
		}
	}
	return out
}

// ResultText is the text of a tool result's content, for providers whose
// results are a string: the text blocks joined by newlines (an image is
// "[image]").
func ResultText(b Block) string {
	var buf bytes.Buffer
	for i, c := range b.Content {
		if i > 0 {
			buf.WriteByte('\n')
		}
		switch c.Type {
		case Text, Reasoning:
			buf.WriteString(c.Text)
		case Image:
			buf.WriteString("[image]")
		}
	}
	return buf.String()
}
