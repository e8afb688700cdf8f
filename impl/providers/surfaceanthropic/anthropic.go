// Package surfaceanthropic maps a session's messages to the request of
// Anthropic's Messages API (github.com/anthropics/anthropic-sdk-go/v2),
// checks a request against that API's rules, and maps a response (whole
// or streamed) back to the events a session appends.
//
// The mapping: each tool result of the library is its own user message,
// and a summary, a steering message or a repaired prompt can sit beside
// another user message, so neighbouring messages of one role are merged
// (Anthropic wants user and assistant to alternate), with the tool results
// first in their message. A reply's thinking, redacted thinking,
// compaction and server-tool blocks are kept verbatim in the log (spec
// §14, PROV-1) and sent back as they came, in their place, to Anthropic
// (to the same model family when ForModel names one); reasoning without
// Anthropic's signature is left out, since the API takes thinking only
// with the signature it issued. A tool result's error is is_error; images
// are base64 or URL sources.
//
// Messages builds the stable API's params; a history that holds an item
// only the beta API knows (a compaction block) needs BetaMessages, whose
// params the beta endpoint takes (client.Beta.Messages.New).
package surfaceanthropic

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/surfacelog/surface/impl/providers/convo"
	"github.com/surfacelog/surface/impl/view"
)

// Option configures a request mapping.
type Option func(*convo.Target)

// ForModel names the model the request goes to: an opaque item (a
// signature, a compaction) issued by a model of another family is not
// sent back (PROV-2).
func ForModel(model string) Option { return func(t *convo.Target) { t.Model = model } }

// WithCache marks the request for Anthropic's prompt cache: a
// cache_control breakpoint (ephemeral, five minutes) on the last block of
// the message holding surface node stable, the end of the head of the
// prompt that never changes (a pinned head, compaction.StableHead; -1 for
// none), and on the last block of the last message, so that each request
// reads what the one before wrote and writes only what is new. Put a
// breakpoint on the system prompt (or the last tool) yourself: that makes
// three of the four the API allows. A block that cannot carry one
// (thinking, an item sent as it came) passes it to the block before it in
// its message.
func WithCache(stable int64) Option {
	return func(t *convo.Target) { t.Cache, t.CacheStable = true, stable }
}

func target(opts []Option) convo.Target {
	t := convo.Target{Provider: convo.Anthropic}
	for _, o := range opts {
		o(&t)
	}
	return t
}

// stable are the block types the stable API's params know; an item of
// another type goes only to the beta API.
var stable = []string{"text", "image", "document", "search_result", "thinking", "redacted_thinking", "tool_use", "tool_result",
	"server_tool_use", "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result", "bash_code_execution_tool_result",
	"text_editor_code_execution_tool_result", "tool_search_tool_result", "container_upload"}

// Placeholder is the text of the user message put before a history that
// starts with a compaction block (PROV-3): the API drops every block
// before the compaction, and wants the first message to be the user's.
const Placeholder = "(earlier conversation compacted)"

// msg is a mapped message: its role, the stable params of its blocks, and
// for each block the native item sent as it came (nil for a mapped one).
type msg struct {
	role   string
	seqs   []int64
	blocks []anthropic.ContentBlockParamUnion
	native []json.RawMessage
}

// Messages returns the Messages API params for msgs (s.Messages()).
func Messages(msgs view.Messages, opts ...Option) ([]anthropic.MessageParam, error) {
	ms, err := convo.Decode(msgs)
	if err != nil {
		return nil, err
	}
	return FromConvo(ms, opts...)
}

// FromConvo maps decoded messages.
func FromConvo(ms []convo.Message, opts ...Option) ([]anthropic.MessageParam, error) {
	mapped, err := mapMessages(ms, target(opts))
	if err != nil {
		return nil, err
	}
	out := make([]anthropic.MessageParam, 0, len(mapped))
	for _, m := range mapped {
		for _, n := range m.native {
			if n != nil && !slices.Contains(stable, itemType(n)) {
				return nil, fmt.Errorf("surfaceanthropic: the history holds a %s block, which only the beta API takes: use BetaMessages", itemType(n))
			}
		}
		if m.role == "assistant" {
			out = append(out, anthropic.NewAssistantMessage(m.blocks...))
		} else {
			out = append(out, anthropic.NewUserMessage(m.blocks...))
		}
	}
	return out, nil
}

// BetaMessages returns the params of the beta Messages API for msgs: the
// same messages, and every item as it came, those only the beta API knows
// (a compaction block) included.
func BetaMessages(msgs view.Messages, opts ...Option) ([]anthropic.BetaMessageParam, error) {
	ms, err := convo.Decode(msgs)
	if err != nil {
		return nil, err
	}
	mapped, err := mapMessages(ms, target(opts))
	if err != nil {
		return nil, err
	}
	out := make([]anthropic.BetaMessageParam, 0, len(mapped))
	for _, m := range mapped {
		blocks := make([]anthropic.BetaContentBlockParamUnion, len(m.blocks))
		for i, b := range m.blocks {
			if n := m.native[i]; n != nil {
				ov := param.Override[anthropic.BetaTextBlockParam](n)
				blocks[i] = anthropic.BetaContentBlockParamUnion{OfText: &ov}
				continue
			}
			raw, err := json.Marshal(b)
			if err == nil {
				err = json.Unmarshal(raw, &blocks[i])
			}
			if err != nil {
				return nil, fmt.Errorf("surfaceanthropic: a %s block as a beta param: %w", itemType(raw), err)
			}
		}
		if m.role == "assistant" {
			out = append(out, anthropic.BetaMessageParam{OfAssistant: &anthropic.BetaAssistantMessageParam{Content: blocks}})
		} else {
			out = append(out, anthropic.NewBetaUserMessage(blocks...))
		}
	}
	return out, nil
}

func itemType(raw []byte) string {
	var t struct{ Type string }
	_ = json.Unmarshal(raw, &t)
	return t.Type
}

func mapMessages(ms []convo.Message, t convo.Target) ([]msg, error) {
	var kept []convo.Message
	for _, m := range ms {
		var blocks []convo.Block
		for _, b := range m.Blocks {
			switch {
			case t.Replays(b.Native):
				blocks = append(blocks, b)
			case b.Type == convo.Reasoning, b.Type == convo.ProviderItem && b.Text == "", b.Type == convo.Text && b.Text == "":
				// unsigned reasoning, another provider's item with no portable
				// part, an empty text block (the API refuses it): nothing to send
			case b.Type == convo.ProviderItem:
				blocks = append(blocks, convo.Block{Type: convo.Text, Text: b.Text})
			default:
				if b.Native != nil && !slices.Contains([]string{convo.Text, convo.ToolCall, convo.Image, convo.ToolResult}, b.Type) {
					continue // another provider's kind of block
				}
				b.Native = nil
				blocks = append(blocks, b)
			}
		}
		if len(blocks) > 0 {
			m.Blocks = blocks
			kept = append(kept, m)
		}
	}
	var out []msg
	for _, m := range convo.Merge(kept) {
		mm := msg{role: string(m.Role), seqs: m.Seqs}
		for _, b := range m.Blocks {
			if b.Native != nil {
				ov := param.Override[anthropic.TextBlockParam](b.Native.Item)
				mm.blocks = append(mm.blocks, anthropic.ContentBlockParamUnion{OfText: &ov})
				mm.native = append(mm.native, b.Native.Item)
				continue
			}
			p, err := block(b)
			if err != nil {
				return nil, fmt.Errorf("surfaceanthropic: message of nodes %v: %w", m.Seqs, err)
			}
			mm.blocks = append(mm.blocks, p)
			mm.native = append(mm.native, nil)
		}
		out = append(out, mm)
	}
	if len(out) > 0 && out[0].role == "assistant" && len(out[0].native) > 0 && out[0].native[0] != nil && itemType(out[0].native[0]) == "compaction" {
		// PROV-3: the API drops what comes before a compaction block; the
		// first message must still be the user's.
		out = append([]msg{{role: "user", blocks: []anthropic.ContentBlockParamUnion{anthropic.NewTextBlock(Placeholder)}, native: []json.RawMessage{nil}}}, out...)
	}
	if t.Cache && len(out) > 0 {
		for i := range out {
			if t.CacheStable >= 0 && slices.Contains(out[i].seqs, t.CacheStable) && i < len(out)-1 {
				markCache(&out[i])
			}
		}
		markCache(&out[len(out)-1])
	}
	return out, nil
}

// markCache puts a cache_control breakpoint on the last block of m that
// can carry one.
func markCache(m *msg) {
	cc := anthropic.NewCacheControlEphemeralParam()
	for i := len(m.blocks) - 1; i >= 0; i-- {
		if m.native[i] != nil {
			continue
		}
		switch b := &m.blocks[i]; {
		case b.OfText != nil:
			b.OfText.CacheControl = cc
		case b.OfImage != nil:
			b.OfImage.CacheControl = cc
		case b.OfToolUse != nil:
			b.OfToolUse.CacheControl = cc
		case b.OfToolResult != nil:
			b.OfToolResult.CacheControl = cc
		case b.OfDocument != nil:
			b.OfDocument.CacheControl = cc
		default:
			continue
		}
		return
	}
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

// Reply decodes a Messages API response: its text, thinking (reasoning
// with the thinking block kept whole), redacted thinking, compaction and
// server-tool blocks (kept whole), and tool_use blocks; its usage (input
// tokens net of the cache, as the seed system counts them), stop reason,
// id, applied context edits and usage per iteration.
func Reply(resp *anthropic.Message) (convo.Reply, error) {
	raw := []byte(resp.RawJSON())
	if len(raw) == 0 {
		var err error
		if raw, err = json.Marshal(resp); err != nil {
			return convo.Reply{}, fmt.Errorf("surfaceanthropic: %w", err)
		}
	}
	return ReplyJSON(raw)
}

// ReplyBeta decodes a beta Messages API response, as Reply does.
func ReplyBeta(resp *anthropic.BetaMessage) (convo.Reply, error) {
	raw := []byte(resp.RawJSON())
	if len(raw) == 0 {
		var err error
		if raw, err = json.Marshal(resp); err != nil {
			return convo.Reply{}, fmt.Errorf("surfaceanthropic: %w", err)
		}
	}
	return ReplyJSON(raw)
}

// ReplyJSON decodes a Messages API response from its JSON, as the API
// sent it (the SDK's RawJSON), so that every block is kept as it came.
func ReplyJSON(raw []byte) (convo.Reply, error) {
	var resp struct {
		ID                string            `json:"id"`
		Model             string            `json:"model"`
		StopReason        string            `json:"stop_reason"`
		Content           []json.RawMessage `json:"content"`
		ContextManagement *struct {
			AppliedEdits json.RawMessage `json:"applied_edits"`
		} `json:"context_management"`
		Usage struct {
			InputTokens              int64           `json:"input_tokens"`
			OutputTokens             int64           `json:"output_tokens"`
			CacheReadInputTokens     int64           `json:"cache_read_input_tokens"`
			CacheCreationInputTokens int64           `json:"cache_creation_input_tokens"`
			Iterations               json.RawMessage `json:"iterations"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return convo.Reply{}, fmt.Errorf("surfaceanthropic: the response is not a message: %w", err)
	}
	r := convo.Reply{Provider: convo.Anthropic, Model: resp.Model, StopReason: resp.StopReason}
	native := func(item json.RawMessage, opaque bool) *convo.Native {
		return &convo.Native{Provider: convo.Anthropic, Model: resp.Model, Opaque: opaque, Item: append(json.RawMessage(nil), item...)}
	}
	for i, item := range resp.Content {
		var c struct {
			Type     string          `json:"type"`
			Text     string          `json:"text"`
			Thinking string          `json:"thinking"`
			ID       string          `json:"id"`
			Name     string          `json:"name"`
			Input    json.RawMessage `json:"input"`
			Content  json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(item, &c); err != nil {
			return convo.Reply{}, fmt.Errorf("surfaceanthropic: content %d is not a block: %w", i, err)
		}
		switch c.Type {
		case "text":
			b := convo.Block{Type: convo.Text, Text: c.Text}
			if hasMembersBeyond(item, "type", "text") { // citations: kept for Anthropic
				b.Native = native(item, false)
			}
			r.Blocks = append(r.Blocks, b)
		case "thinking":
			r.Blocks = append(r.Blocks, convo.Block{Type: convo.Reasoning, Text: c.Thinking, Native: native(item, true)})
		case "redacted_thinking":
			r.Blocks = append(r.Blocks, convo.Block{Type: convo.ProviderItem, Native: native(item, true)})
		case "compaction":
			b := convo.Block{Type: convo.ProviderItem, Compaction: true, Native: native(item, true)}
			var summary string
			if json.Unmarshal(c.Content, &summary) == nil {
				b.Text = summary // the portable part: other providers get the summary
			}
			r.Blocks = append(r.Blocks, b)
		case "tool_use":
			args, err := convo.ArgumentsText(c.Input)
			if err != nil {
				return convo.Reply{}, fmt.Errorf("surfaceanthropic: content %d, tool_use %q: %w", i, c.ID, err)
			}
			r.Blocks = append(r.Blocks, convo.Block{Type: convo.ToolCall, ID: c.ID, Name: c.Name, Arguments: args})
		case "":
			return convo.Reply{}, fmt.Errorf("surfaceanthropic: content %d has no type", i)
		default:
			// server_tool_use, web_search_tool_result, ..., and kinds this
			// adapter does not know yet: the API wants them back as they came.
			r.Blocks = append(r.Blocks, convo.Block{Type: convo.ProviderItem, Native: native(item, false)})
		}
	}
	u := resp.Usage
	r.Usage = &convo.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens}
	rec := map[string]json.RawMessage{}
	if resp.ID != "" {
		rec["id"], _ = json.Marshal(resp.ID)
	}
	if resp.ContextManagement != nil && isPresent(resp.ContextManagement.AppliedEdits) {
		rec["appliedEdits"] = resp.ContextManagement.AppliedEdits
	}
	if isPresent(u.Iterations) {
		rec["iterations"] = u.Iterations
	}
	if len(rec) > 0 {
		r.Response, _ = json.Marshal(rec)
	}
	return r, nil
}

func isPresent(v json.RawMessage) bool { return len(v) > 0 && string(v) != "null" }

// hasMembersBeyond reports whether the JSON object item has a member not
// named in known.
func hasMembersBeyond(item json.RawMessage, known ...string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(item, &m) != nil {
		return false
	}
	for k, v := range m {
		if !slices.Contains(known, k) && isPresent(v) && string(v) != "[]" {
			return true
		}
	}
	return false
}
