package seedsummary_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/compaction/seedsummary"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

// A compaction with the seed system's summariser over a model that
// streams its reply (here a recorded one; in a harness, a provider
// adapter's stream turned into chunks).
func ExampleSummarizer() {
	s := session.New()
	text := func(t string) []json.RawMessage {
		return []json.RawMessage{json.RawMessage(`{"type":"text","text":"` + t + `"}`)}
	}
	long := strings.Repeat("the parser and its tests; ", 30)
	s.Append(context.Background(), event.TurnStartData{Turn: 1, Trigger: json.RawMessage(`{"kind":"message"}`)})
	q, _ := s.Append(context.Background(), event.UserMessageData{Content: text("What is in f.go? " + long), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())
	a, _ := s.Append(context.Background(), event.AssistantMessageData{Turn: 1, Step: 1, Content: text("It holds " + long)}, event.AppendIntent())

	model := func(ctx context.Context, req seedsummary.Request, yield func(seedsummary.Chunk) error) error {
		var prompt struct{ Text string }
		_ = json.Unmarshal(req.Messages[0].Content[0], &prompt)
		fmt.Printf("asked %s/%s, max %d tokens; the prompt begins %q\n", req.Provider, req.Model, req.MaxTokens, prompt.Text[:50])
		for _, c := range []string{
			`{"type":"text-delta","index":0,"text":"## Primary Request and Intent\n"}`,
			`{"type":"text-delta","index":0,"text":"- what f.go holds"}`,
			`{"type":"finish","reason":{"kind":"stop"}}`,
		} {
			if err := yield(seedsummary.Chunk(c)); err != nil {
				return err
			}
		}
		return nil
	}
	sum := seedsummary.Summarizer(model, seedsummary.Config{Provider: "deepseek", Model: "deepseek-chat"})
	r, err := compaction.Compact(context.Background(), s, q.Seq, a.Seq, sum)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("summary record:", string(s.Events()[r.SummarySeq].Data)[:87])
	// Output:
	// asked deepseek/deepseek-chat, max 8192 tokens; the prompt begins "Summarize this conversation history:\n\nUser: What i"
	// summary record: {"summary":[{"type":"text","text":"## Primary Request and Intent\n- what f.go holds"}],
}
