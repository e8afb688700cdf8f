// Package bench measures the adapters against the derive of the messages
// they map.
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/providers/surfaceanthropic"
	"github.com/surfacelog/surface/impl/providers/surfacegemini"
	"github.com/surfacelog/surface/impl/providers/surfaceopenai"
	"github.com/surfacelog/surface/impl/session"
)

// history is a session of turns, each a prompt, an assistant message with
// two tool calls, their two results and an answer: 5 messages a turn.
func history(b *testing.B, turns int) *session.Session {
	s := session.New()
	text := func(t string) []json.RawMessage {
		return []json.RawMessage{json.RawMessage(`{"type":"text","text":"` + t + `"}`)}
	}
	for t := int64(1); t <= int64(turns); t++ {
		s.Append(context.Background(), event.TurnStartData{Turn: t, Trigger: json.RawMessage(`{"kind":"message"}`)})
		s.Append(context.Background(), event.UserMessageData{Content: text("compare the two files, please"), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())
		calls := []json.RawMessage{
			json.RawMessage(fmt.Sprintf(`{"type":"tool-call","id":"a%d","name":"read","arguments":"{\"path\":\"a.go\"}"}`, t)),
			json.RawMessage(fmt.Sprintf(`{"type":"tool-call","id":"b%d","name":"read","arguments":"{\"path\":\"b.go\"}"}`, t)),
		}
		s.Append(context.Background(), event.AssistantMessageData{Turn: t, Step: 1, Content: calls}, event.AppendIntent())
		for _, id := range []string{"a", "b"} {
			s.Append(context.Background(), event.ToolResultData{Turn: t, Step: 1, CallID: fmt.Sprintf("%s%d", id, t), Content: text("package main; func main() {}")}, event.AppendIntent())
		}
		s.Append(context.Background(), event.AssistantMessageData{Turn: t, Step: 2, Content: text("they are the same")}, event.AppendIntent())
		s.Append(context.Background(), event.TurnEndData{Turn: t, Reason: json.RawMessage(`{"kind":"completed"}`)})
	}
	return s
}

// BenchmarkAdapters: per message, mapping the messages of a 1,000-message
// session to each provider's request, against deriving those messages
// from the log (a seed of the log and its messages, copied out).
func BenchmarkAdapters(b *testing.B) {
	s := history(b, 200)
	msgs := s.Messages()
	n := float64(msgs.Len())
	events := s.Events()
	run := func(name string, f func() error) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := f(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/message")
		})
	}
	run("derive", func() error {
		d, err := session.Seed(events)
		if err == nil {
			_ = d.Messages().Slice()
		}
		return err
	})
	run("anthropic", func() error { _, err := surfaceanthropic.Messages(msgs); return err })
	run("openai-chat", func() error { _, err := surfaceopenai.ChatMessages(msgs); return err })
	run("openai-responses", func() error { _, err := surfaceopenai.ResponsesInput(msgs); return err })
	run("gemini", func() error { _, err := surfacegemini.Contents(msgs); return err })
}
