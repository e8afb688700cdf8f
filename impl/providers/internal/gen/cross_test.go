package gen_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/providers/convo"
	"github.com/surfacelog/surface/impl/providers/surfaceanthropic"
	"github.com/surfacelog/surface/impl/providers/surfacegemini"
	"github.com/surfacelog/surface/impl/providers/surfaceopenai"
	"github.com/surfacelog/surface/impl/session"
)

// TestReplayTargets: PROV-2. A session whose turns were answered by
// Anthropic (signed thinking), OpenAI (encrypted reasoning, a message
// item) and Gemini (a signed call) sends each provider its own items as
// they came, and only its own: the others get the portable part (text,
// calls) or nothing (reasoning); a model of another family gets no opaque
// item of its provider, a look-alike family (a dated snapshot) gets them;
// every request passes its validator.
func TestReplayTargets(t *testing.T) {
	ctx := context.Background()
	s := session.New(session.WithStrict())
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	turn := func(n int64, r convo.Reply) {
		must(s.Append(ctx, event.TurnStartData{Turn: n, Trigger: json.RawMessage(`{"kind":"message"}`)}))
		must(s.Append(ctx, event.UserMessageData{Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"q"}`)}, Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent()))
		out, err := r.Append(ctx, s, n, 1)
		must(out, err)
		for _, c := range out[1:] {
			var d event.ToolCallData
			_ = json.Unmarshal(c.Data, &d)
			must(s.Append(ctx, event.ToolResultData{Turn: n, Step: 1, CallID: d.CallID, Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"ok"}`)}}, event.AppendIntent(c.Seq)))
		}
		must(s.Append(ctx, event.TurnEndData{Turn: n, Reason: json.RawMessage(`{"kind":"completed"}`)}))
	}
	a, err := surfaceanthropic.ReplyJSON([]byte(`{"id":"msg_1","model":"claude-opus-4-5-20251101","stop_reason":"tool_use","content":[{"type":"thinking","thinking":"A-THOUGHT","signature":"A-SIG"},{"type":"text","text":"A-TEXT"},{"type":"tool_use","id":"toolu_1","name":"read","input":{}}],"usage":{"input_tokens":1,"output_tokens":1}}`))
	must(a, err)
	turn(1, a)
	o, err := surfaceopenai.ResponsesReplyJSON([]byte(`{"id":"resp_1","model":"gpt-5.1","status":"completed","output":[{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"O-THOUGHT"}],"encrypted_content":"O-ENC"},{"type":"message","id":"msg_o","role":"assistant","status":"completed","phase":"final_answer","content":[{"type":"output_text","text":"O-TEXT","annotations":[]}]},{"type":"function_call","id":"fc_1","call_id":"call_o","name":"read","arguments":"{}","status":"completed"}],"usage":{"input_tokens":1,"output_tokens":1}}`))
	must(o, err)
	turn(2, o)
	g, err := surfacegemini.ReplyJSON([]byte(`{"modelVersion":"gemini-3-pro-preview","candidates":[{"content":{"role":"model","parts":[{"text":"G-TEXT"},{"functionCall":{"name":"read","args":{}},"thoughtSignature":"Ry1TSUc="}]}}]}`))
	must(g, err)
	turn(3, g)

	aBody := func(model string) string {
		p, err := surfaceanthropic.Messages(s.Messages(), surfaceanthropic.ForModel(model))
		must(p, err)
		if v := surfaceanthropic.Validate(p); len(v) > 0 {
			t.Fatalf("anthropic %s: %v", model, v)
		}
		b, _ := json.Marshal(p)
		return string(b)
	}
	oBody := func(model string) string {
		p, err := surfaceopenai.ResponsesInput(s.Messages(), surfaceopenai.ForModel(model))
		must(p, err)
		if v := surfaceopenai.ValidateResponses(p); len(v) > 0 {
			t.Fatalf("openai %s: %v", model, v)
		}
		b, _ := json.Marshal(p)
		return string(b)
	}
	gBody := func(model string) string {
		p, err := surfacegemini.Contents(s.Messages(), surfacegemini.ForModel(model))
		must(p, err)
		if v := surfacegemini.Validate(p); len(v) > 0 {
			t.Fatalf("gemini %s: %v", model, v)
		}
		b, _ := json.Marshal(p)
		return string(b)
	}
	chat, err := surfaceopenai.ChatMessages(s.Messages(), surfaceopenai.WithDialect(surfaceopenai.DeepSeekChat))
	must(chat, err)
	cb, _ := json.Marshal(chat)
	for _, c := range []struct {
		name, body  string
		has, hasNot []string
	}{
		{"anthropic, the same family", aBody("claude-opus-4-5"), []string{"A-SIG", "A-THOUGHT", "O-TEXT", "G-TEXT", "call_o"}, []string{"O-ENC", "O-THOUGHT", "rs_1", "Ry1TSUc", "fc_1"}},
		{"anthropic, a dated snapshot of it", aBody("claude-opus-4-5-20251101"), []string{"A-SIG"}, nil},
		{"anthropic, another family", aBody("claude-sonnet-4-5"), []string{"A-TEXT", "toolu_1"}, []string{"A-SIG", "A-THOUGHT"}},
		{"openai", oBody("gpt-5.1"), []string{"O-ENC", "rs_1", "fc_1", "final_answer", "A-TEXT", "G-TEXT"}, []string{"A-SIG", "A-THOUGHT", "Ry1TSUc"}},
		{"openai, another family", oBody("gpt-4.1"), []string{"O-TEXT", "fc_1", "msg_o"}, []string{"O-ENC", "rs_1"}},
		{"gemini", gBody("gemini-3-pro"), []string{"Ry1TSUc", "A-TEXT", "O-TEXT"}, []string{"A-SIG", "O-ENC", "A-THOUGHT", "O-THOUGHT"}},
		{"deepseek", string(cb), []string{"A-THOUGHT", "O-THOUGHT", "A-TEXT", "O-TEXT", "G-TEXT"}, []string{"A-SIG", "O-ENC", "Ry1TSUc"}},
	} {
		for _, h := range c.has {
			if !strings.Contains(c.body, h) {
				t.Errorf("%s: %s missing from %s", c.name, h, c.body)
			}
		}
		for _, h := range c.hasNot {
			if strings.Contains(c.body, h) {
				t.Errorf("%s: %s sent: %s", c.name, h, c.body)
			}
		}
	}
	_ = anthropic.MessageParam{}
}
