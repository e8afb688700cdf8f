package surfaceopenai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/providers/surfaceopenai"
	"github.com/surfacelog/surface/impl/session"
)

func text(t string) []json.RawMessage {
	b, _ := json.Marshal(t)
	return []json.RawMessage{json.RawMessage(`{"type":"text","text":` + string(b) + `}`)}
}

// A steering message typed while a tool ran sits between the call and its
// result in the session; Chat Completions wants the tool message right
// after the assistant's tool_calls, so the request moves it first. The
// result failed (a repair's closer): Chat has no error flag, so its text
// says so.
func ExampleChatMessages() {
	ctx := context.Background()
	s := session.New()
	s.Append(ctx, event.TurnStartData{Turn: 1, Trigger: json.RawMessage(`{"kind":"message"}`)})
	s.Append(ctx, event.UserMessageData{Content: text("Run the tests"), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())
	call := json.RawMessage(`{"type":"tool-call","id":"call_1","name":"test","arguments":"{}"}`)
	s.Append(ctx, event.AssistantMessageData{Turn: 1, Step: 1, Content: []json.RawMessage{call}}, event.AppendIntent())
	s.Append(ctx, event.SteeringMessageData{Turn: 1, Content: text("only unit tests"), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())
	s.Append(ctx, event.ToolResultData{Turn: 1, Step: 1, CallID: "call_1", Content: text("timed out"), IsError: true}, event.AppendIntent())

	msgs, err := surfaceopenai.ChatMessages(s.Messages())
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		b, _ := json.Marshal(m)
		fmt.Println(string(b))
	}
	fmt.Println(len(surfaceopenai.ValidateChat(msgs)), "violations")
	// Output:
	// {"content":[{"text":"Run the tests","type":"text"}],"role":"user"}
	// {"tool_calls":[{"id":"call_1","function":{"arguments":"{}","name":"test"},"type":"function"}],"role":"assistant"}
	// {"content":"[error] timed out","tool_call_id":"call_1","role":"tool"}
	// {"content":[{"text":"\u003csteering source=\"user\"\u003e","type":"text"},{"text":"only unit tests","type":"text"},{"text":"\u003c/steering\u003e","type":"text"}],"role":"user"}
	// 0 violations
}
