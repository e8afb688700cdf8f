package surfacegemini_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/providers/surfaceanthropic"
	"github.com/surfacelog/surface/impl/providers/surfacegemini"
	"github.com/surfacelog/surface/impl/providers/surfaceopenai"
	"github.com/surfacelog/surface/impl/session"
)

// TestIDLessCalls: a Gemini turn of two steps whose replies name no call
// ids (two calls, then one of the same tool) gets ids unique in the
// session, the same after a resume; strict mode takes the turn, and the
// request passes every validator (no duplicate_call).
func TestIDLessCalls(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	st, err := persist.OpenJSONL(ctx, path, persist.Header{ID: "g"})
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := persist.Resume(ctx, st, session.WithStrict())
	if err != nil {
		t.Fatal(err)
	}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Append(ctx, event.TurnStartData{Turn: 1, Trigger: json.RawMessage(`{"kind":"message"}`)}))
	must(s.Append(ctx, event.UserMessageData{Content: event.Text("weather in Paris and Rome?"), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent()))
	replies := []string{
		`{"modelVersion":"gemini-3-pro","candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"weather","args":{"city":"Paris"}}},{"functionCall":{"name":"weather","args":{"city":"Rome"}}}]},"finishReason":"STOP"}]}`,
		`{"modelVersion":"gemini-3-pro","candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"weather","args":{"city":"Oslo"}}}]},"finishReason":"STOP"}]}`,
	}
	var ids []string
	for step, raw := range replies {
		n := int64(step + 1)
		must(s.Append(ctx, event.StepStartData{Turn: 1, Step: n}))
		reply, err := surfacegemini.ReplyJSON([]byte(raw))
		must(reply, err)
		must(reply.Append(ctx, s.Session, 1, n))
		for _, c := range s.PendingCalls() {
			ids = append(ids, c.ID)
			must(s.Append(ctx, event.ToolResultData{Turn: 1, Step: n, CallID: c.ID, Content: event.Text("18°C")}, event.AppendIntent(c.CallSeq)))
		}
		must(s.Append(ctx, event.StepEndData{Turn: 1, Step: n}))
	}
	must(s.Append(ctx, event.TurnEndData{Turn: 1, Reason: json.RawMessage(`{"kind":"completed"}`)}))
	if len(ids) != 3 || ids[0] == ids[1] || ids[0] == ids[2] || ids[1] == ids[2] {
		t.Fatalf("call ids %v", ids)
	}
	before := s.Events()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st, _ = persist.OpenJSONL(ctx, path, persist.Header{ID: "g"})
	r, _, err := persist.Resume(ctx, st, session.WithStrict())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	after := r.Events()
	for i := range before {
		if string(before[i].Data) != string(after[i].Data) {
			t.Fatalf("event %d changed across a resume", i)
		}
	}
	g, _ := surfacegemini.Contents(r.Messages())
	a, _ := surfaceanthropic.Messages(r.Messages())
	c, _ := surfaceopenai.ChatMessages(r.Messages())
	in, _ := surfaceopenai.ResponsesInput(r.Messages())
	if v := append(append(append(surfacegemini.Validate(g), surfaceanthropic.Validate(a)...), surfaceopenai.ValidateChat(c)...), surfaceopenai.ValidateResponses(in)...); len(v) > 0 {
		t.Fatalf("violations: %v", v)
	}
}
