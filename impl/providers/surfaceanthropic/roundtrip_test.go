package surfaceanthropic_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/providers/internal/gen"
	"github.com/surfacelog/surface/impl/providers/surfaceanthropic"
)

// response draws a Messages API response as the API documents it (built
// here from those shapes, not by the SDK): thinking blocks first (several,
// some with empty text), redacted thinking, a compaction block (its
// summary, or null, with encrypted content and perhaps a signature),
// server tool use and its result, text (some with citations), parallel
// tool_use blocks; some blocks with a member the API may add tomorrow. It
// returns the response and whether it holds an item only the beta API
// knows.
func response(t *rapid.T) ([]byte, bool) {
	var content []map[string]any
	beta := false
	if rapid.IntRange(0, 4).Draw(t, "compaction") == 0 {
		c := map[string]any{"type": "compaction", "content": gen.Text(t, "summary"), "encrypted_content": gen.Opaque(t, "enc")}
		if rapid.Bool().Draw(t, "nullSummary") {
			c["content"] = nil
		}
		if rapid.Bool().Draw(t, "compactionSig") {
			c["signature"] = gen.Opaque(t, "csig")
		}
		gen.Extra(t, c, "cextra")
		content = append(content, c)
		beta = true
	}
	for i := range rapid.IntRange(0, 3).Draw(t, "thinking") {
		b := map[string]any{"type": "thinking", "thinking": gen.Text(t, "thought"), "signature": gen.Opaque(t, fmt.Sprint("sig", i))}
		gen.Extra(t, b, "textra")
		content = append(content, b)
	}
	for range rapid.IntRange(0, 2).Draw(t, "redacted") {
		content = append(content, map[string]any{"type": "redacted_thinking", "data": gen.Opaque(t, "data")})
	}
	if rapid.IntRange(0, 3).Draw(t, "server") == 0 {
		id := "srvtoolu_" + rapid.StringMatching(`[a-zA-Z0-9]{6}`).Draw(t, "sid")
		content = append(content,
			map[string]any{"type": "server_tool_use", "id": id, "name": "web_search", "input": map[string]any{"query": gen.Text(t, "q")}},
			map[string]any{"type": "web_search_tool_result", "tool_use_id": id, "content": []any{map[string]any{"type": "web_search_result", "url": "https://example.com", "title": "t", "encrypted_content": gen.Opaque(t, "wenc"), "page_age": nil}}})
	}
	if rapid.Bool().Draw(t, "text") {
		b := map[string]any{"type": "text", "text": "answer " + gen.Text(t, "say")}
		if rapid.IntRange(0, 3).Draw(t, "cite") == 0 {
			b["citations"] = []any{map[string]any{"type": "web_search_result_location", "url": "https://example.com", "title": "t", "encrypted_index": gen.Opaque(t, "eidx"), "cited_text": "c"}}
		}
		content = append(content, b)
	}
	for i := range rapid.IntRange(0, 3).Draw(t, "calls") {
		content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d%s", i, rapid.StringMatching(`[a-zA-Z0-9]{4}`).Draw(t, "tid")), "name": "read",
			"input": map[string]any{"path": "a.go", "n": i}})
	}
	if len(content) == 0 || !slices.ContainsFunc(content, func(b map[string]any) bool { return b["type"] != "thinking" && b["type"] != "redacted_thinking" }) {
		content = append(content, map[string]any{"type": "text", "text": "done"})
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": rapid.IntRange(1, 50).Draw(t, "out"), "cache_read_input_tokens": rapid.IntRange(0, 5).Draw(t, "cached")}
	resp := map[string]any{"id": "msg_rt", "type": "message", "role": "assistant", "model": "claude-opus-4-5-20251101", "content": content,
		"stop_reason": "tool_use", "stop_sequence": nil, "usage": usage}
	if beta {
		resp["context_management"] = map[string]any{"applied_edits": []any{map[string]any{"type": "compact_20260112"}}}
		usage["iterations"] = []any{map[string]any{"type": "compaction", "input_tokens": 1000, "output_tokens": 80}}
	}
	return gen.JSON(resp), beta
}

// TestProviderItemsRoundTrip: PROV-1, PROV-2, PROV-3, PROV-6. A response of every kind
// decoded by the SDK's own response type, through Reply, appended, stored
// in a JSONL file, resumed, and mapped to the next request: every block
// of the reply is in that request, in its place, as it came (value for
// value, future members included), in a body the API's rules accept; the
// SDK's own request type (beta when a compaction block is there) decodes
// the body and keeps every block it knows, value for value, losing only
// the members it has no field for. A compaction puts the placeholder user
// message first and replaces what came before. The reply's id, applied
// edits and iterations are kept in the message's response record.
func TestProviderItemsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	counts := map[string]int{}
	rapid.Check(t, func(t *rapid.T) {
		raw, beta := response(t)
		var msg anthropic.Message
		if err := json.Unmarshal(raw, &msg); err != nil {
			t.Fatal(err)
		}
		r, err := surfaceanthropic.Reply(&msg)
		if err != nil {
			t.Fatalf("reply: %v", err)
		}
		s := gen.Through(t, dir, r)
		defer s.Close(t.Context())
		var params any
		if beta {
			params, err = surfaceanthropic.BetaMessages(s.Messages(), surfaceanthropic.ForModel("claude-opus-4-5"))
		} else {
			params, err = surfaceanthropic.Messages(s.Messages(), surfaceanthropic.ForModel("claude-opus-4-5"))
		}
		if err != nil {
			t.Fatalf("request: %v", err)
		}
		body := gen.JSON(map[string]any{"model": "claude-opus-4-5", "max_tokens": 100, "messages": params})
		var wire struct {
			Messages []struct {
				Role    string            `json:"role"`
				Content []json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(body, &wire)
		if v := surfaceanthropic.ValidateJSON(gen.JSON(wire.Messages)); len(v) > 0 {
			t.Fatalf("the request breaks the API's rules: %v\n%s", v, body)
		}
		var original struct {
			Content []json.RawMessage `json:"content"`
		}
		_ = json.Unmarshal(raw, &original)
		// The reply's message: the first assistant message.
		var sent []json.RawMessage
		for i, m := range wire.Messages {
			if m.Role == "assistant" {
				sent = m.Content
				if i == 1 && wire.Messages[0].Role == "user" && beta && !slices.ContainsFunc(wire.Messages[0].Content, func(b json.RawMessage) bool { return gen.SameJSON(b, []byte(`{"type":"text","text":"go"}`)) }) {
					counts["placeholder"]++
				}
				break
			}
		}
		if len(sent) != len(original.Content) {
			t.Fatalf("%d blocks sent back for %d in the reply:\nreply %s\nsent  %s", len(sent), len(original.Content), raw, body)
		}
		for i, b := range original.Content {
			if !gen.SameJSON(sent[i], b) {
				t.Fatalf("block %d sent back as %s, it came as %s", i, sent[i], b)
			}
			var k struct{ Type string }
			_ = json.Unmarshal(b, &k)
			counts[k.Type]++
		}
		// The SDK's own request type keeps them, but for members it has no field for.
		var again []byte
		if beta {
			var p anthropic.BetaMessageNewParams
			if err := json.Unmarshal(body, &p); err != nil {
				t.Fatal(err)
			}
			again = gen.JSON(p)
		} else {
			var p anthropic.MessageNewParams
			if err := json.Unmarshal(body, &p); err != nil {
				t.Fatal(err)
			}
			again = gen.JSON(p)
		}
		var decoded struct {
			Messages []struct {
				Role    string            `json:"role"`
				Content []json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(again, &decoded)
		if len(decoded.Messages) != len(wire.Messages) {
			t.Fatalf("the SDK's request type lost messages: %d of %d", len(decoded.Messages), len(wire.Messages))
		}
		for i, m := range wire.Messages {
			if len(decoded.Messages[i].Content) != len(m.Content) {
				t.Fatalf("message %d: the SDK's request type kept %d of %d blocks\nsent %s\nkept %s", i, len(decoded.Messages[i].Content), len(m.Content), body, again)
			}
			for k, b := range m.Content {
				if !gen.SameJSON(gen.Without(decoded.Messages[i].Content[k], "cache_control"), gen.Without(b, "zz_future_member")) {
					t.Fatalf("message %d block %d: the SDK's request type changed %s into %s", i, k, b, decoded.Messages[i].Content[k])
				}
			}
		}
		// The response record.
		last := s.Events()
		var d struct {
			Response map[string]json.RawMessage `json:"response"`
		}
		for _, e := range last {
			if e.Type == "assistant/message" { // the reply's last message holds its record
				_ = json.Unmarshal(e.Data, &d)
			}
		}
		if string(d.Response["id"]) != `"msg_rt"` || beta && (d.Response["appliedEdits"] == nil || d.Response["iterations"] == nil) {
			t.Fatalf("the response record %v", d.Response)
		}
	})
	t.Logf("blocks round-tripped by kind: %v", counts)
	for _, k := range []string{"thinking", "redacted_thinking", "compaction", "server_tool_use", "web_search_tool_result", "text", "tool_use", "placeholder"} {
		if counts[k] == 0 {
			t.Errorf("no %s drawn", k)
		}
	}
}

// events splits a response into the stream the API sends for it, from the
// documented event shapes: each block started empty (a tool's input as
// {}), its text, thinking, signature, input JSON and compaction content
// in deltas cut at random places, then stopped.
func events(t *rapid.T, raw []byte) [][]byte {
	var resp map[string]json.RawMessage
	_ = json.Unmarshal(raw, &resp)
	var content []map[string]any
	_ = json.Unmarshal(resp["content"], &content)
	cut := func(s, label string) []string {
		if s == "" {
			return nil
		}
		n := rapid.IntRange(1, 3).Draw(t, label)
		var out []string
		r := []rune(s)
		for i := 0; i < n && len(r) > 0; i++ {
			k := len(r)
			if i < n-1 {
				k = rapid.IntRange(0, len(r)).Draw(t, label+"_at")
			}
			out = append(out, string(r[:k]))
			r = r[k:]
		}
		if len(r) > 0 {
			out = append(out, string(r))
		}
		return out
	}
	start := map[string]any{}
	for k, v := range resp {
		if k != "content" && k != "stop_reason" {
			start[k] = v
		}
	}
	start["content"] = []any{}
	start["stop_reason"] = nil
	out := [][]byte{gen.JSON(map[string]any{"type": "message_start", "message": start})}
	delta := func(i int, d map[string]any) {
		out = append(out, gen.JSON(map[string]any{"type": "content_block_delta", "index": i, "delta": d}))
	}
	for i, b := range content {
		first := map[string]any{}
		for k, v := range b {
			first[k] = v
		}
		var deltas []map[string]any
		switch b["type"] {
		case "text":
			first["text"] = ""
			for _, p := range cut(b["text"].(string), "text") {
				deltas = append(deltas, map[string]any{"type": "text_delta", "text": p})
			}
			if cs, ok := b["citations"].([]any); ok {
				first["citations"] = []any{}
				for _, c := range cs {
					deltas = append(deltas, map[string]any{"type": "citations_delta", "citation": c})
				}
			}
		case "thinking":
			first["thinking"], first["signature"] = "", ""
			for _, p := range cut(b["thinking"].(string), "thinking") {
				deltas = append(deltas, map[string]any{"type": "thinking_delta", "thinking": p})
			}
			deltas = append(deltas, map[string]any{"type": "signature_delta", "signature": b["signature"]})
		case "tool_use", "server_tool_use":
			first["input"] = map[string]any{}
			for _, p := range cut(string(gen.JSON(b["input"])), "input") {
				deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": p})
			}
		case "compaction":
			first["content"], first["encrypted_content"] = nil, nil
			d := map[string]any{"type": "compaction_delta", "content": b["content"], "encrypted_content": b["encrypted_content"]}
			deltas = append(deltas, d)
		}
		out = append(out, gen.JSON(map[string]any{"type": "content_block_start", "index": i, "content_block": first}))
		for _, d := range deltas {
			delta(i, d)
		}
		out = append(out, gen.JSON(map[string]any{"type": "content_block_stop", "index": i}))
	}
	md := map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": resp["stop_reason"], "stop_sequence": nil}, "usage": resp["usage"]}
	if cm, ok := resp["context_management"]; ok {
		md["context_management"] = cm
	}
	return append(out, gen.JSON(md), []byte(`{"type":"message_stop"}`))
}

// TestStreamRoundTrip: a response streamed (its signatures in
// signature_delta, its tool input in input_json_delta, its compaction in
// a compaction_delta) and assembled by Stream decodes to the reply the
// whole response gives: the same blocks, every provider item the same
// JSON value, the same usage and response record.
func TestStreamRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		raw, _ := response(t)
		whole, err := surfaceanthropic.ReplyJSON(raw)
		if err != nil {
			t.Fatal(err)
		}
		var s surfaceanthropic.Stream
		for _, e := range events(t, raw) {
			var ev anthropic.MessageStreamEventUnion
			if err := json.Unmarshal(e, &ev); err != nil {
				t.Fatalf("the SDK's event type refuses %s: %v", e, err)
			}
			if err := s.AddEvent(ev); err != nil {
				t.Fatal(err)
			}
		}
		streamed, err := s.Reply()
		if err != nil {
			t.Fatal(err)
		}
		if len(streamed.Blocks) != len(whole.Blocks) {
			t.Fatalf("%d blocks streamed, %d whole", len(streamed.Blocks), len(whole.Blocks))
		}
		for i, w := range whole.Blocks {
			g := streamed.Blocks[i]
			if g.Type != w.Type || g.Text != w.Text || g.ID != w.ID || g.Arguments != w.Arguments || g.Compaction != w.Compaction || (g.Native == nil) != (w.Native == nil) {
				t.Fatalf("block %d streamed %+v, whole %+v", i, g, w)
			}
			if w.Native != nil && (!gen.SameJSON(g.Native.Item, w.Native.Item) || g.Native.Opaque != w.Native.Opaque) {
				t.Fatalf("block %d: streamed item %s, whole %s", i, g.Native.Item, w.Native.Item)
			}
		}
		if *streamed.Usage != *whole.Usage || !gen.SameJSON(streamed.Response, whole.Response) {
			t.Fatalf("usage %+v / %s, whole %+v / %s", streamed.Usage, streamed.Response, whole.Usage, whole.Response)
		}
	})
}
