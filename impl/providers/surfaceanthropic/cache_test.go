package surfaceanthropic_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/providers/surfaceanthropic"
	"github.com/surfacelog/surface/impl/session"
)

// TestWithCache: the breakpoints go after the stable head and after the
// last message, never on a thinking block, at most two in the messages;
// the body passes the validator; the look-alikes (no stable head, a stable
// head that is the last message, a last message ending in thinking) each
// place what they should.
func TestWithCache(t *testing.T) {
	ctx := context.Background()
	s := session.New(session.WithStrict())
	s.Append(ctx, event.ContextMessageData{Content: event.Text("project notes"), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())
	s.Append(ctx, event.TurnStartData{Turn: 1, Trigger: json.RawMessage(`{"kind":"message"}`)})
	s.Append(ctx, event.UserMessageData{Content: event.Text("fix the bug"), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())
	a, _ := s.Append(ctx, event.AssistantMessageData{Turn: 1, Step: 1, Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"reading"}`), json.RawMessage(`{"type":"tool-call","id":"t1","name":"read","arguments":"{}"}`)}}, event.AppendIntent())
	s.Append(ctx, event.ToolResultData{Turn: 1, Step: 1, CallID: "t1", Content: event.Text("package x")}, event.AppendIntent(a.Seq))
	count := func(params any) (int, string) {
		raw, _ := json.Marshal(params)
		return strings.Count(string(raw), `"cache_control"`), string(raw)
	}
	stable, ok := compaction.StableHead(s, compaction.PinContext|compaction.PinFirstPrompt)
	if !ok {
		t.Fatal("no stable head")
	}
	for _, c := range []struct {
		name   string
		stable int64
		want   int
	}{
		{"stable head and tail", stable, 2},
		{"no stable head", -1, 1},
		{"the stable head is the tail", a.Seq + 1, 1},
	} {
		params, err := surfaceanthropic.Messages(s.Messages(), surfaceanthropic.WithCache(c.stable))
		if err != nil {
			t.Fatal(err)
		}
		if n, raw := count(params); n != c.want {
			t.Errorf("%s: %d breakpoints, want %d: %s", c.name, n, c.want, raw)
		}
		if v := surfaceanthropic.Validate(params); len(v) > 0 {
			t.Errorf("%s: %v", c.name, v)
		}
		raw, _ := json.Marshal(params[len(params)-1])
		var last struct{ Content []json.RawMessage }
		json.Unmarshal(raw, &last)
		if b := last.Content[len(last.Content)-1]; !strings.Contains(string(b), "cache_control") {
			t.Errorf("%s: the last block has no breakpoint: %s", c.name, b)
		}
	}
	if params, _ := surfaceanthropic.Messages(s.Messages()); func() bool { n, _ := count(params); return n != 0 }() {
		t.Error("breakpoints without WithCache")
	}
	// A reply ending in an item sent as it came (a server tool's result):
	// the breakpoint goes on the block before it.
	s.Append(ctx, event.AssistantMessageData{Turn: 1, Step: 2, Content: []json.RawMessage{
		json.RawMessage(`{"type":"reasoning","text":"t","native":{"provider":"anthropic","model":"claude-opus-4-5","opaque":true,"item":{"type":"thinking","thinking":"t","signature":"sig"}}}`),
		json.RawMessage(`{"type":"text","text":"done"}`),
		json.RawMessage(`{"type":"provider-item","native":{"provider":"anthropic","model":"claude-opus-4-5","item":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}}}`)}}, event.AppendIntent())
	params, err := surfaceanthropic.Messages(s.Messages(), surfaceanthropic.ForModel("claude-opus-4-5"), surfaceanthropic.WithCache(stable))
	if err != nil {
		t.Fatal(err)
	}
	if v := surfaceanthropic.Validate(params); len(v) > 0 {
		t.Errorf("native last: %v", v)
	}
	if n, raw := count(params); n != 2 || !strings.Contains(raw, `"text":"done","cache_control"`) {
		t.Errorf("native last: %d breakpoints: %s", n, raw)
	}
}
