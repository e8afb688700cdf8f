package bench

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/providers/surfaceanthropic"
	"github.com/surfacelog/surface/impl/providers/surfacegemini"
	"github.com/surfacelog/surface/impl/providers/surfaceopenai"
	"github.com/surfacelog/surface/impl/session"
)

// TestPrefixStable: for each adapter, the request built after a step is
// appended begins, byte for byte, with every message of the request built
// before it but the last (which a later block may join): what implicit
// caching (OpenAI, Gemini) and a moving breakpoint (Anthropic) need. A
// prune, the look-alike, changes a message before the tail.
func TestPrefixStable(t *testing.T) {
	ctx := context.Background()
	s := session.New(session.WithStrict())
	s.Append(ctx, event.ContextMessageData{Content: event.Text("notes"), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())
	s.Append(ctx, event.TurnStartData{Turn: 1, Trigger: json.RawMessage(`{"kind":"message"}`)})
	s.Append(ctx, event.UserMessageData{Content: event.Text("go"), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())
	var firstResult int64
	build := map[string]func() []json.RawMessage{
		"anthropic": func() []json.RawMessage {
			p, err := surfaceanthropic.Messages(s.Messages())
			return elems(t, p, err)
		},
		"openai": func() []json.RawMessage {
			p, err := surfaceopenai.ResponsesInput(s.Messages())
			return elems(t, p, err)
		},
		"gemini": func() []json.RawMessage {
			p, err := surfacegemini.Contents(s.Messages())
			return elems(t, p, err)
		},
	}
	prev := map[string][]json.RawMessage{}
	for step := int64(1); step <= 4; step++ {
		id := "c" + string(rune('0'+step))
		a, _ := s.Append(ctx, event.AssistantMessageData{Turn: 1, Step: step, Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"step"}`), json.RawMessage(`{"type":"tool-call","id":"` + id + `","name":"read","arguments":"{}"}`)}}, event.AppendIntent())
		r, _ := s.Append(ctx, event.ToolResultData{Turn: 1, Step: step, CallID: id, Content: event.Text(strings.Repeat("x", 400))}, event.AppendIntent(a.Seq))
		if step == 1 {
			firstResult = r.Seq
		}
		for name, b := range build {
			cur := b()
			if p := prev[name]; p != nil && !isPrefix(p[:len(p)-1], cur) {
				t.Errorf("%s, step %d: the earlier request is not a prefix", name, step)
			}
			prev[name] = cur
		}
	}
	// The look-alike: a prune rewrites the first result.
	s.Append(ctx, event.ToolResultData{Turn: 1, Step: 1, CallID: "c1", Content: event.Text("[pruned]")}, event.ReplaceIntent(firstResult, firstResult, firstResult))
	for name, b := range build {
		if p := prev[name]; isPrefix(p[:len(p)-1], b()) {
			t.Errorf("%s: a prune left the prefix whole", name)
		}
	}
}

func elems(t *testing.T, v any, err error) []json.RawMessage {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out []json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func isPrefix(a, b []json.RawMessage) bool {
	if len(a) > len(b) {
		return false
	}
	for i := range a {
		if string(a[i]) != string(b[i]) {
			return false
		}
	}
	return true
}

// TestCacheKey: one session's requests carry one prompt_cache_key, on
// both OpenAI APIs; another session's differs; the key shows no id.
func TestCacheKey(t *testing.T) {
	var r1, r2 responses.ResponseNewParams
	surfaceopenai.SetCacheKey(&r1, "session-a")
	surfaceopenai.SetCacheKey(&r2, "session-a")
	var c openai.ChatCompletionNewParams
	surfaceopenai.SetChatCacheKey(&c, "session-a")
	j := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	key := `"prompt_cache_key":"` + surfaceopenai.CacheKey("session-a") + `"`
	for _, body := range []string{j(r1), j(r2), j(c)} {
		if !strings.Contains(body, key) {
			t.Errorf("no %s in %s", key, body)
		}
	}
	if surfaceopenai.CacheKey("session-a") == surfaceopenai.CacheKey("session-b") || strings.Contains(key, "session-a") {
		t.Errorf("key %s", key)
	}
}
