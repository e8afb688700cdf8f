package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

// One turn of an agent, step by step: the prompt, a step whose reply is
// streamed as chunks and then recorded as one assistant message with two
// tool calls, the calls run in goroutines whose results are appended as
// they finish (in any order), a second step that answers, and the end of
// the turn. Messages is what the model is sent at each step.
func ExampleSession_agentLoop() {
	ctx := context.Background()
	s := session.New(session.WithStrict())
	turn := s.NextTurn()
	s.Append(ctx, event.TurnStartData{Turn: turn, Trigger: json.RawMessage(`{"kind":"message"}`)})
	s.Append(ctx, event.UserMessageData{Content: text("Compare a.go and b.go"), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())

	// Step 1: the model streams, then calls two tools.
	s.Append(ctx, event.StepStartData{Turn: turn, Step: 1})
	var chunks []int64
	for _, delta := range []string{"Reading ", "both."} {
		c, _ := s.Append(ctx, event.AssistantChunkData{Turn: turn, Step: 1, Chunk: json.RawMessage(`{"type":"text-delta","text":` + quote(delta) + `}`)})
		chunks = append(chunks, c.Seq)
	}
	reply := []json.RawMessage{
		json.RawMessage(`{"type":"text","text":"Reading both."}`),
		json.RawMessage(`{"type":"tool-call","id":"a","name":"read","arguments":"{\"path\":\"a.go\"}"}`),
		json.RawMessage(`{"type":"tool-call","id":"b","name":"read","arguments":"{\"path\":\"b.go\"}"}`),
	}
	// The chunks are the message's sources: they stay in the log, the
	// message is what the model sees.
	s.Append(ctx, event.AssistantMessageData{Turn: turn, Step: 1, Content: reply}, event.AppendIntent(chunks...))
	callSeq := map[string]int64{}
	for _, id := range []string{"a", "b"} {
		c, _ := s.Append(ctx, event.ToolCallData{Turn: turn, Step: 1, CallID: id, Name: "read", Arguments: `{"path":"` + id + `.go"}`})
		callSeq[id] = c.Seq
	}
	// Run the tools concurrently; a Session is safe for that.
	var wg sync.WaitGroup
	for _, c := range s.PendingCalls() {
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			s.Append(ctx, event.ToolResultData{Turn: turn, Step: 1, CallID: id, Content: text("package " + id)}, event.AppendIntent(callSeq[id]))
		}(c.ID)
	}
	wg.Wait()
	s.Append(ctx, event.StepEndData{Turn: turn, Step: 1})
	fmt.Println("pending after step 1:", len(s.PendingCalls()), "messages:", s.Messages().Len())

	// Step 2: the model answers; the turn ends.
	s.Append(ctx, event.StepStartData{Turn: turn, Step: 2})
	s.Append(ctx, event.AssistantMessageData{Turn: turn, Step: 2, Content: text("They differ in their package name.")}, event.AppendIntent())
	s.Append(ctx, event.StepEndData{Turn: turn, Step: 2})
	s.Append(ctx, event.TurnEndData{Turn: turn, Reason: json.RawMessage(`{"kind":"completed"}`)})
	_, open := s.OpenTurn()
	fmt.Println("events:", s.Len(), "messages:", s.Messages().Len(), "turn open:", open, "next turn:", s.NextTurn())
	// Output:
	// pending after step 1: 0 messages: 4
	// events: 15 messages: 5 turn open: false next turn: 2
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
