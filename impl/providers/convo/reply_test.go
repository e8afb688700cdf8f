package convo_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/providers/convo"
	"github.com/surfacelog/surface/impl/session"
)

// TestAppendWithChunks: the streamed chunks a reply was assembled from
// become its message's sources (WithChunks), in a plain reply and in one
// that holds a provider's compaction item (the appended message after the
// replacing one takes them); a chunk that is not in the log is refused
// and nothing is appended.
func TestAppendWithChunks(t *testing.T) {
	ctx := context.Background()
	for _, compacted := range []bool{false, true} {
		s := session.New(session.WithStrict())
		must := func(e event.Event, err error) event.Event {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
			return e
		}
		must(s.Append(ctx, event.TurnStartData{Turn: 1, Trigger: json.RawMessage(`{"kind":"message"}`)}))
		must(s.Append(ctx, event.UserMessageData{Content: event.Text("go"), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent()))
		var chunks []int64
		for range 3 {
			chunks = append(chunks, must(s.Append(ctx, event.AssistantChunkData{Turn: 1, Step: 1, Chunk: json.RawMessage(`{"type":"text-delta","text":"a"}`)})).Seq)
		}
		r := convo.Reply{Provider: "anthropic", Model: "claude-sonnet-4-5", Blocks: []convo.Block{
			{Type: convo.Text, Text: "aaa"},
			{Type: convo.ToolCall, ID: "toolu_1", Name: "read", Arguments: `{}`},
		}}
		if compacted {
			r.Blocks = append([]convo.Block{{Type: convo.ProviderItem, Compaction: true, Text: "summary", Native: &convo.Native{Provider: "anthropic", Model: "claude-sonnet-4-5", Item: json.RawMessage(`{"type":"compaction","content":"summary"}`)}}}, r.Blocks...)
		}
		if _, err := r.Append(ctx, s, 1, 1, convo.WithChunks(99)); err == nil {
			t.Fatal("a chunk that is not in the log was taken")
		}
		n := s.Len()
		out, err := r.Append(ctx, s, 1, 1, convo.WithChunks(chunks...))
		if err != nil {
			t.Fatalf("compacted=%v: %v", compacted, err)
		}
		if s.Len() != n+len(out) {
			t.Fatal("the refused append left events behind")
		}
		var msgs []event.Event
		for _, e := range out {
			if e.Type == event.TypeAssistantMessage {
				msgs = append(msgs, e)
			}
		}
		want := map[bool]int{false: 1, true: 2}[compacted]
		if len(msgs) != want {
			t.Fatalf("compacted=%v: %d messages", compacted, len(msgs))
		}
		last := msgs[len(msgs)-1]
		if !slices.Equal(last.Sources, chunks) || last.Op.Kind != event.OpAppend {
			t.Fatalf("compacted=%v: the message's sources %v (%v), want the chunks %v", compacted, last.Sources, last.Op, chunks)
		}
	}
}
