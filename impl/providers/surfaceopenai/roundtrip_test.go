package surfaceopenai_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/providers/internal/gen"
	"github.com/surfacelog/surface/impl/providers/surfaceopenai"
)

// responsesOutput draws a Responses API response as the API documents
// it: reasoning items (summaries of zero to two parts, encrypted content
// or not), assistant message items (a phase or not, one or two output_text
// parts), function calls (in parallel), a compaction item, a web search
// call; some items with a member the API may add tomorrow.
func responsesOutput(t *rapid.T) []byte {
	var output []map[string]any
	id := func(prefix, label string) string { return prefix + rapid.StringMatching(`[a-f0-9]{8}`).Draw(t, label) }
	if rapid.IntRange(0, 4).Draw(t, "compaction") == 0 {
		c := map[string]any{"type": "compaction", "id": id("cmp_", "cid"), "encrypted_content": gen.Opaque(t, "cenc")}
		gen.Extra(t, c, "cextra")
		output = append(output, c)
	}
	for i := range rapid.IntRange(0, 2).Draw(t, "reasoning") {
		var summary []any
		for range rapid.IntRange(0, 2).Draw(t, "summaries") {
			summary = append(summary, map[string]any{"type": "summary_text", "text": gen.Text(t, "sum")})
		}
		if summary == nil {
			summary = []any{}
		}
		r := map[string]any{"type": "reasoning", "id": id(fmt.Sprint("rs_", i), "rid"), "summary": summary}
		if rapid.IntRange(0, 3).Draw(t, "enc") > 0 {
			r["encrypted_content"] = gen.Opaque(t, "renc")
		}
		gen.Extra(t, r, "rextra")
		output = append(output, r)
	}
	if rapid.IntRange(0, 3).Draw(t, "search") == 0 {
		output = append(output, map[string]any{"type": "web_search_call", "id": id("ws_", "wid"), "status": "completed", "action": map[string]any{"type": "search", "query": "q"}})
	}
	if rapid.Bool().Draw(t, "message") {
		var parts []any
		for range rapid.IntRange(1, 2).Draw(t, "parts") {
			parts = append(parts, map[string]any{"type": "output_text", "text": "answer " + gen.Text(t, "say"), "annotations": []any{}})
		}
		m := map[string]any{"type": "message", "id": id("msg_", "mid"), "role": "assistant", "status": "completed", "content": parts}
		if p := rapid.SampledFrom([]string{"", "commentary", "final_answer"}).Draw(t, "phase"); p != "" {
			m["phase"] = p
		}
		gen.Extra(t, m, "mextra")
		output = append(output, m)
	}
	for i := range rapid.IntRange(0, 3).Draw(t, "calls") {
		output = append(output, map[string]any{"type": "function_call", "id": id("fc_", "fid"), "call_id": fmt.Sprintf("call_%d%s", i, rapid.StringMatching(`[a-zA-Z0-9]{6}`).Draw(t, "cid")),
			"name": "read", "arguments": fmt.Sprintf(`{"path":"a.go","n":%d}`, i), "status": "completed"})
	}
	if !slices.ContainsFunc(output, func(o map[string]any) bool { return o["type"] == "message" || o["type"] == "function_call" }) {
		output = append(output, map[string]any{"type": "message", "id": "msg_last", "role": "assistant", "status": "completed", "content": []any{map[string]any{"type": "output_text", "text": "done", "annotations": []any{}}}})
	}
	resp := map[string]any{"id": "resp_rt", "object": "response", "created_at": 1, "model": "gpt-5.1-2025-11-13", "status": "completed", "output": output,
		"usage": map[string]any{"input_tokens": 20, "output_tokens": rapid.IntRange(1, 50).Draw(t, "out"), "input_tokens_details": map[string]any{"cached_tokens": 4}, "output_tokens_details": map[string]any{"reasoning_tokens": 3}, "total_tokens": 30}}
	if rapid.IntRange(0, 5).Draw(t, "conversation") == 0 {
		resp["conversation"] = map[string]any{"id": "conv_rt"}
	}
	return gen.JSON(resp)
}

// knownLosses are the members of an output item sent back that the SDK's
// own request type has no field for, by item type: what it drops when a
// harness decodes and re-encodes the body (the body as sent keeps them).
var knownLosses = map[string][]string{
	"message": {"id", "status", "zz_future_member"},
}

// TestProviderItemsRoundTrip: PROV-1, PROV-2, PROV-6. A Responses API
// response of every kind decoded by the SDK's response type, through
// ResponsesReply, appended, stored in a JSONL file, resumed, and mapped to
// the next request: every output item is in the input, in its place, as
// it came (value for value, future members included), each input item has
// a type, and the input passes ValidateResponses; the SDK's own request
// type decodes the body and keeps every item: reasoning with its id,
// summary and encrypted content, messages with their phase, function
// calls with their ids, compaction, web search; it loses only what it has
// no field for (an output message's id and status, future members). The
// response's id and conversation are kept in the message's record.
func TestProviderItemsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	counts := map[string]int{}
	rapid.Check(t, func(t *rapid.T) {
		raw := responsesOutput(t)
		var resp responses.Response
		if err := json.Unmarshal(raw, &resp); err != nil {
			t.Fatal(err)
		}
		r, err := surfaceopenai.ResponsesReply(&resp)
		if err != nil {
			t.Fatalf("reply: %v", err)
		}
		s := gen.Through(t, dir, r)
		defer s.Close(t.Context())
		input, err := surfaceopenai.ResponsesInput(s.Messages(), surfaceopenai.ForModel("gpt-5.1"))
		if err != nil {
			t.Fatalf("request: %v", err)
		}
		if v := surfaceopenai.ValidateResponses(input); len(v) > 0 {
			t.Fatalf("the input breaks the API's rules: %v", v)
		}
		body := gen.JSON(map[string]any{"model": "gpt-5.1", "input": input})
		var wire struct {
			Input []json.RawMessage `json:"input"`
		}
		_ = json.Unmarshal(body, &wire)
		var original struct {
			Output []json.RawMessage `json:"output"`
		}
		_ = json.Unmarshal(raw, &original)
		// The output items, in order, after the prompt ("go"), or from the
		// start when the reply holds a compaction (PROV-3: it replaced the
		// prompt too).
		at := slices.IndexFunc(wire.Input, func(it json.RawMessage) bool { return gen.SameJSON(it, original.Output[0]) })
		if at < 0 || at+len(original.Output) > len(wire.Input) {
			t.Fatalf("the input does not hold the reply: %s", body)
		}
		if compacted := strings.Contains(string(raw), `"type":"compaction"`); compacted != (at == 0) {
			t.Fatalf("the reply is at %d of the input (compaction: %v): %s", at, compacted, body)
		}
		for i, it := range original.Output {
			got := wire.Input[at+i]
			if !gen.SameJSON(got, it) {
				t.Fatalf("item %d sent back as %s, it came as %s", i, got, it)
			}
			var k struct{ Type string }
			_ = json.Unmarshal(it, &k)
			counts[k.Type]++
		}
		var p responses.ResponseNewParams
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatal(err)
		}
		var decoded struct {
			Input []json.RawMessage `json:"input"`
		}
		_ = json.Unmarshal(gen.JSON(p), &decoded)
		if len(decoded.Input) != len(wire.Input) {
			t.Fatalf("the SDK's request type kept %d of %d items:\n%s", len(decoded.Input), len(wire.Input), body)
		}
		for i, it := range wire.Input {
			var k struct{ Type string }
			_ = json.Unmarshal(it, &k)
			want := gen.Without(it, append(knownLosses[k.Type], "zz_future_member")...)
			if k.Type == "message" && !strings.Contains(string(it), `"output_text"`) {
				want = it // an input message the adapter wrote: nothing to lose
			}
			if !gen.SameJSON(decoded.Input[i], want) {
				t.Fatalf("item %d: the SDK's request type changed %s into %s", i, it, decoded.Input[i])
			}
		}
		var d struct {
			Response map[string]string `json:"response"`
		}
		for _, e := range s.Events() {
			if e.Type == "assistant/message" { // the reply's last message holds its record
				_ = json.Unmarshal(e.Data, &d)
			}
		}
		if d.Response["id"] != "resp_rt" || (resp.Conversation.ID != "") != (d.Response["conversation"] == "conv_rt") {
			t.Fatalf("the response record %v", d.Response)
		}
	})
	t.Logf("items round-tripped by type: %v", counts)
	for _, k := range []string{"reasoning", "message", "function_call", "compaction", "web_search_call"} {
		if counts[k] == 0 {
			t.Errorf("no %s drawn", k)
		}
	}
}

// streamEvents is the stream the API sends for a response: created, for
// each item added (a reasoning item's encrypted content not yet complete)
// and done, then completed.
func streamEvents(t *rapid.T, raw []byte) [][]byte {
	var resp map[string]any
	_ = json.Unmarshal(raw, &resp)
	created := map[string]any{}
	for k, v := range resp {
		created[k] = v
	}
	created["output"], created["status"] = []any{}, "in_progress"
	out := [][]byte{gen.JSON(map[string]any{"type": "response.created", "sequence_number": 0, "response": created})}
	for i, it := range resp["output"].([]any) {
		item := it.(map[string]any)
		added := map[string]any{}
		for k, v := range item {
			added[k] = v
		}
		if _, ok := added["encrypted_content"]; ok {
			added["encrypted_content"] = "partial"
		}
		out = append(out, gen.JSON(map[string]any{"type": "response.output_item.added", "output_index": i, "item": added, "sequence_number": 1}),
			gen.JSON(map[string]any{"type": "response.output_item.done", "output_index": i, "item": item, "sequence_number": 2}))
	}
	completed := resp
	if rapid.Bool().Draw(t, "bareCompleted") {
		completed = map[string]any{}
		for k, v := range resp {
			completed[k] = v
		}
		completed["output"] = []any{} // the items are known from their done events
	}
	return append(out, gen.JSON(map[string]any{"type": "response.completed", "response": completed, "sequence_number": 3}))
}

// TestResponsesStream: a streamed response assembled by ResponsesStream
// decodes to the reply the whole response gives: the done items (not the
// added ones, whose encrypted content is incomplete), the usage, the
// response record.
func TestResponsesStream(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		raw := responsesOutput(t)
		whole, err := surfaceopenai.ResponsesReplyJSON(raw)
		if err != nil {
			t.Fatal(err)
		}
		var st surfaceopenai.ResponsesStream
		for _, e := range streamEvents(t, raw) {
			var ev responses.ResponseStreamEventUnion
			if err := json.Unmarshal(e, &ev); err != nil {
				t.Fatal(err)
			}
			if err := st.AddEvent(ev); err != nil {
				t.Fatal(err)
			}
		}
		streamed, err := st.Reply()
		if err != nil {
			t.Fatal(err)
		}
		if len(streamed.Blocks) != len(whole.Blocks) {
			t.Fatalf("%d blocks streamed, %d whole", len(streamed.Blocks), len(whole.Blocks))
		}
		for i, w := range whole.Blocks {
			g := streamed.Blocks[i]
			if g.Type != w.Type || g.Text != w.Text || (w.Native != nil) && !gen.SameJSON(g.Native.Item, w.Native.Item) {
				t.Fatalf("block %d streamed %+v, whole %+v", i, g, w)
			}
		}
		if *streamed.Usage != *whole.Usage || !gen.SameJSON(streamed.Response, whole.Response) {
			t.Fatalf("usage or record differ")
		}
	})
}

// chatResponse draws a Chat Completions response of DeepSeek's thinking
// mode: reasoning_content (sometimes empty or absent), content (sometimes
// null, as with tool calls, or empty), parallel tool calls.
func chatResponse(t *rapid.T) []byte {
	msg := map[string]any{"role": "assistant"}
	switch rapid.IntRange(0, 3).Draw(t, "content") {
	case 0:
		msg["content"] = nil
	case 1:
		msg["content"] = ""
	default:
		msg["content"] = "answer " + gen.Text(t, "say")
	}
	switch rapid.IntRange(0, 3).Draw(t, "rc") {
	case 0:
	case 1:
		msg["reasoning_content"] = ""
	default:
		msg["reasoning_content"] = "think " + gen.Text(t, "thought")
	}
	var calls []any
	for i := range rapid.IntRange(0, 3).Draw(t, "calls") {
		calls = append(calls, map[string]any{"id": fmt.Sprintf("call_%d_%s", i, rapid.StringMatching(`[a-z0-9]{5}`).Draw(t, "cid")), "type": "function",
			"function": map[string]any{"name": "read", "arguments": fmt.Sprintf(`{"n":%d}`, i)}})
	}
	if calls != nil {
		msg["tool_calls"] = calls
	}
	if calls == nil && (msg["reasoning_content"] == nil || msg["reasoning_content"] == "") && (msg["content"] == nil || msg["content"] == "") {
		msg["content"] = "done"
	}
	return gen.JSON(map[string]any{"id": "chatcmpl-rt", "object": "chat.completion", "created": 1, "model": "deepseek-reasoner",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "tool_calls"}},
		"usage":   map[string]any{"prompt_tokens": 30, "completion_tokens": 9, "total_tokens": 39, "prompt_cache_hit_tokens": 6}})
}

// TestDeepSeekRoundTrip: in the DeepSeek dialect a thinking reply's
// reasoning_content comes back on its assistant turn, whole, tool calls or
// not; a turn with no text sends "" (never null), a reasoning-only turn is
// sent; the body passes ValidateChat in that dialect. The SDK's request
// type has no field for reasoning_content, so a harness must send the
// params as built (SetExtraFields): decoding drops it, and only it.
func TestDeepSeekRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		raw := chatResponse(t)
		var resp openai.ChatCompletion
		if err := json.Unmarshal(raw, &resp); err != nil {
			t.Fatal(err)
		}
		r, err := surfaceopenai.ChatReply(&resp, surfaceopenai.WithDialect(surfaceopenai.DeepSeekChat))
		if err != nil {
			t.Fatal(err)
		}
		if r.Provider != "deepseek" {
			t.Fatalf("provider %q", r.Provider)
		}
		s := gen.Through(t, dir, r)
		defer s.Close(t.Context())
		msgs, err := surfaceopenai.ChatMessages(s.Messages(), surfaceopenai.WithDialect(surfaceopenai.DeepSeekChat))
		if err != nil {
			t.Fatal(err)
		}
		if v := surfaceopenai.ValidateChat(msgs, surfaceopenai.WithDialect(surfaceopenai.DeepSeekChat)); len(v) > 0 {
			t.Fatalf("violations %v", v)
		}
		body := gen.JSON(map[string]any{"model": "deepseek-reasoner", "messages": msgs})
		var wire struct {
			Messages []map[string]json.RawMessage `json:"messages"`
		}
		_ = json.Unmarshal(body, &wire)
		var orig struct {
			Choices []struct {
				Message struct {
					Content          *string           `json:"content"`
					ReasoningContent *string           `json:"reasoning_content"`
					ToolCalls        []json.RawMessage `json:"tool_calls"`
				} `json:"message"`
			} `json:"choices"`
		}
		_ = json.Unmarshal(raw, &orig)
		om := orig.Choices[0].Message
		var a map[string]json.RawMessage
		for _, m := range wire.Messages {
			if string(m["role"]) == `"assistant"` {
				a = m
				break
			}
		}
		if a == nil {
			t.Fatalf("no assistant turn sent: %s", body)
		}
		var content string
		if json.Unmarshal(a["content"], &content) != nil {
			t.Fatalf("content %s is not a string", a["content"])
		}
		want := ""
		if om.Content != nil {
			want = *om.Content
		}
		if content != want {
			t.Fatalf("content %q, the reply's %q", content, want)
		}
		var rc string
		_ = json.Unmarshal(a["reasoning_content"], &rc)
		wantRC := ""
		if om.ReasoningContent != nil {
			wantRC = *om.ReasoningContent
		}
		if rc != wantRC || (wantRC == "") != (a["reasoning_content"] == nil) {
			t.Fatalf("reasoning_content %s, the reply's %q", a["reasoning_content"], wantRC)
		}
		var calls []json.RawMessage
		_ = json.Unmarshal(a["tool_calls"], &calls)
		if len(calls) != len(om.ToolCalls) {
			t.Fatalf("%d tool calls sent, %d came", len(calls), len(om.ToolCalls))
		}
		for i := range calls {
			if !gen.SameJSON(calls[i], om.ToolCalls[i]) {
				t.Fatalf("tool call %s sent as %s", om.ToolCalls[i], calls[i])
			}
		}
		var p openai.ChatCompletionNewParams
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatal(err)
		}
		var decoded struct {
			Messages []map[string]json.RawMessage `json:"messages"`
		}
		_ = json.Unmarshal(gen.JSON(p), &decoded)
		for i, m := range wire.Messages {
			want := gen.JSON(m)
			if string(m["role"]) == `"assistant"` {
				want = gen.Without(want, "reasoning_content")
			}
			if !gen.SameJSON(gen.JSON(decoded.Messages[i]), want) {
				t.Fatalf("message %d: the SDK's request type changed %s into %s", i, want, gen.JSON(decoded.Messages[i]))
			}
		}
	})
}

// TestChatStream: a DeepSeek reply streamed (reasoning_content, content
// and tool call deltas) and assembled by ChatStream decodes to the reply
// the whole response gives.
func TestChatStream(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		raw := chatResponse(t)
		whole, err := surfaceopenai.ChatReplyJSON(raw, surfaceopenai.WithDialect(surfaceopenai.DeepSeekChat))
		if err != nil {
			t.Fatal(err)
		}
		var resp map[string]any
		_ = json.Unmarshal(raw, &resp)
		msg := resp["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
		var chunks [][]byte
		chunk := func(delta map[string]any, finish any) {
			chunks = append(chunks, gen.JSON(map[string]any{"id": "chatcmpl-rt", "object": "chat.completion.chunk", "model": "deepseek-reasoner",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}))
		}
		for _, k := range []string{"reasoning_content", "content"} {
			if s, ok := msg[k].(string); ok {
				r := []rune(s)
				for _, part := range []string{string(r[:len(r)/2]), string(r[len(r)/2:])} {
					chunk(map[string]any{k: part}, nil)
				}
			}
		}
		if calls, ok := msg["tool_calls"].([]any); ok {
			for i, c := range calls {
				f := c.(map[string]any)["function"].(map[string]any)
				args := f["arguments"].(string)
				chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.(map[string]any)["id"], "type": "function", "function": map[string]any{"name": f["name"], "arguments": args[:2]}}}}, nil)
				chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": args[2:]}}}}, nil)
			}
		}
		chunk(map[string]any{}, "tool_calls")
		chunks = append(chunks, gen.JSON(map[string]any{"id": "chatcmpl-rt", "object": "chat.completion.chunk", "model": "deepseek-reasoner", "choices": []any{}, "usage": resp["usage"]}))
		var st surfaceopenai.ChatStream
		for _, c := range chunks {
			var sc openai.ChatCompletionChunk
			if err := json.Unmarshal(c, &sc); err != nil {
				t.Fatal(err)
			}
			if err := st.AddChunk(sc); err != nil {
				t.Fatal(err)
			}
		}
		streamed, err := st.Reply(surfaceopenai.WithDialect(surfaceopenai.DeepSeekChat))
		if err != nil {
			t.Fatal(err)
		}
		if !gen.Equal(streamed.Blocks, whole.Blocks) || *streamed.Usage != *whole.Usage {
			t.Fatalf("streamed %+v, whole %+v", streamed, whole)
		}
	})
}
