package surfaceanthropic_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/providers/convo"
	"github.com/surfacelog/surface/impl/providers/internal/gen"
	"github.com/surfacelog/surface/impl/providers/surfaceanthropic"
	"github.com/surfacelog/surface/impl/view"
)

var adapter = gen.Adapter{
	Request: func(msgs view.Messages) (any, []convo.Violation, error) {
		p, err := surfaceanthropic.Messages(msgs)
		return p, surfaceanthropic.Validate(p), err
	},
	Respond: func(r convo.Reply) []byte {
		var content []map[string]any
		for _, b := range r.Blocks {
			switch b.Type {
			case convo.Text:
				content = append(content, map[string]any{"type": "text", "text": b.Text})
			case convo.Reasoning:
				content = append(content, map[string]any{"type": "thinking", "thinking": b.Text, "signature": "sig"})
			case convo.ToolCall:
				content = append(content, map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": json.RawMessage(b.Arguments)})
			}
		}
		out, _ := json.Marshal(map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": content,
			"stop_reason": "end_turn", "usage": map[string]any{"input_tokens": r.Usage.InputTokens, "output_tokens": r.Usage.OutputTokens}})
		return out
	},
	Decode: func(b []byte) (convo.Reply, error) {
		var m anthropic.Message
		if err := json.Unmarshal(b, &m); err != nil {
			return convo.Reply{}, err
		}
		return surfaceanthropic.Reply(&m)
	},
	Carries: func(r convo.Reply) []convo.Block { return r.Blocks },
}

// TestRequestsPassValidate: over random agent sessions (tool traffic in
// any order, steering, prunes, compactions, crash and repair), the
// request passes Validate, and it keeps every text, call and result.
func TestRequestsPassValidate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		gen.CheckSessions(t, adapter)
	})
	rapid.Check(t, func(t *rapid.T) {
		s := gen.Session(t)
		p, err := surfaceanthropic.Messages(s.Messages())
		if err != nil {
			t.Fatal(err)
		}
		want := gen.CountsOf(s.Messages())
		var got gen.Counts
		for _, m := range p {
			blocks := m.OfUser
			var content []anthropic.ContentBlockParamUnion
			if blocks != nil {
				content = blocks.Content
			} else {
				content = m.OfAssistant.Content
			}
			for _, b := range content {
				switch {
				case b.OfToolUse != nil:
					got.Calls++
				case b.OfToolResult != nil:
					got.Results++
				case b.OfText != nil:
					got.Texts++
				}
			}
		}
		if got != want {
			t.Fatalf("the request has %+v, the messages %+v", got, want)
		}
	})
}

// TestRoundTrip: response -> events -> request keeps the content.
func TestRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { gen.CheckRoundTrip(t, adapter) })
}

// TestValidateCatches: each rule, broken on purpose.
func TestValidateCatches(t *testing.T) {
	user := func(b ...anthropic.ContentBlockParamUnion) anthropic.MessageParam {
		return anthropic.NewUserMessage(b...)
	}
	asst := func(b ...anthropic.ContentBlockParamUnion) anthropic.MessageParam {
		return anthropic.NewAssistantMessage(b...)
	}
	txt := anthropic.NewTextBlock
	use := func(id string) anthropic.ContentBlockParamUnion {
		return anthropic.NewToolUseBlock(id, json.RawMessage(`{}`), "read")
	}
	res := func(id string) anthropic.ContentBlockParamUnion { return anthropic.NewToolResultBlock(id, "ok", false) }
	cases := []struct {
		name string
		msgs []anthropic.MessageParam
		rule string
	}{
		{"ok", []anthropic.MessageParam{user(txt("q")), asst(use("a")), user(res("a"), txt("more")), asst(txt("done"))}, ""},
		{"assistant first", []anthropic.MessageParam{asst(txt("hi"))}, "first_user"},
		{"two users", []anthropic.MessageParam{user(txt("q")), user(txt("q2"))}, "alternation"},
		{"empty", []anthropic.MessageParam{user()}, "empty_content"},
		{"result after text", []anthropic.MessageParam{user(txt("q")), asst(use("a")), user(txt("x"), res("a"))}, "results_first"},
		{"unanswered", []anthropic.MessageParam{user(txt("q")), asst(use("a")), user(txt("x"))}, "call_without_result"},
		{"unanswered at the end", []anthropic.MessageParam{user(txt("q")), asst(use("a"))}, "call_without_result"},
		{"stray result", []anthropic.MessageParam{user(txt("q")), asst(use("a")), user(res("a"), res("b"))}, "result_without_call"},
		{"late result", []anthropic.MessageParam{user(txt("q")), asst(use("a")), user(res("a")), asst(txt("k")), user(res("a"))}, "result_without_call"},
		{"answered twice", []anthropic.MessageParam{user(txt("q")), asst(use("a")), user(res("a"), res("a"))}, "duplicate_result"},
		{"id twice", []anthropic.MessageParam{user(txt("q")), asst(use("a")), user(res("a")), asst(use("a")), user(res("a"))}, "duplicate_call"},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		v := surfaceanthropic.Validate(c.msgs)
		found := false
		for _, x := range v {
			found = found || x.Rule == c.rule
		}
		if c.rule == "" && len(v) > 0 || c.rule != "" && !found {
			t.Errorf("%s: violations %v, want %q", c.name, v, c.rule)
		}
		covered[c.rule] = found
	}
	// The wire JSON, with what the SDK's types cannot hold or would not
	// write; look-alikes side by side.
	q := `{"role":"user","content":[{"type":"text","text":"q"}]}`
	wire := []struct{ name, msgs, rule string }{
		{"a system role", `[{"role":"system","content":[{"type":"text","text":"q"}]}]`, "roles"},
		{"an empty text", `[` + q + `,{"role":"assistant","content":[{"type":"text","text":""}]}]`, "empty_text"},
		{"a text of one space", `[` + q + `,{"role":"assistant","content":[{"type":"text","text":" "}]}]`, ""},
		{"a block of a type the API lacks", `[` + q + `,{"role":"assistant","content":[{"type":"video","url":"x"}]}]`, "unknown_block"},
		{"a tool id with a dot", `[` + q + `,{"role":"assistant","content":[{"type":"tool_use","id":"call.1","name":"read","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"call.1","content":"ok"}]}]`, "tool_id"},
		{"a tool id with a dash", `[` + q + `,{"role":"assistant","content":[{"type":"tool_use","id":"call-1_A","name":"read","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"call-1_A","content":"ok"}]}]`, ""},
		{"a tool input that is a list", `[` + q + `,{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"read","input":[1]}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"ok"}]}]`, "tool_input"},
		{"a tool input that is a string", `[` + q + `,{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"read","input":"{}"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"ok"}]}]`, "tool_input"},
		{"thinking after text", `[` + q + `,{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"thinking","thinking":"t","signature":"s"}]}]`, "thinking_first"},
		{"thinking first", `[` + q + `,{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"text","text":"a"}]}]`, ""},
		{"compaction after text", `[` + q + `,{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"compaction","content":"summary"}]}]`, "compaction_first"},
		{"compaction first", `[` + q + `,{"role":"assistant","content":[{"type":"compaction","content":"summary"},{"type":"text","text":"a"}]}]`, ""},
		{"five breakpoints", `[{"role":"user","content":[` + strings.Repeat(`{"type":"text","text":"q","cache_control":{"type":"ephemeral"}},`, 4) + `{"type":"text","text":"q","cache_control":{"type":"ephemeral"}}]}]`, "cache_breakpoints"},
		{"four breakpoints", `[{"role":"user","content":[` + strings.Repeat(`{"type":"text","text":"q","cache_control":{"type":"ephemeral"}},`, 3) + `{"type":"text","text":"q","cache_control":{"type":"ephemeral"}}]}]`, ""},
		{"a null cache_control is none", `[{"role":"user","content":[` + strings.Repeat(`{"type":"text","text":"q","cache_control":null},`, 5) + `{"type":"text","text":"q"}]}]`, ""},
		{"a breakpoint on thinking", `[` + q + `,{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s","cache_control":{"type":"ephemeral"}},{"type":"text","text":"a"}]}]`, "cache_on_thinking"},
		{"a breakpoint on the text after it", `[` + q + `,{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]}]`, ""},
	}
	for _, c := range wire {
		v := surfaceanthropic.ValidateJSON([]byte(c.msgs))
		found := false
		for _, x := range v {
			found = found || x.Rule == c.rule
		}
		if c.rule == "" && len(v) > 0 || c.rule != "" && !found {
			t.Errorf("%s: violations %v, want %q", c.name, v, c.rule)
		}
		covered[c.rule] = covered[c.rule] || found
	}
	for _, r := range surfaceanthropic.Rules {
		if !covered[r] {
			t.Errorf("no case breaks rule %s", r)
		}
	}
}
