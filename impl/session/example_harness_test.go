package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

// The bookkeeping a harness asks the session instead of keeping it: the
// next turn number, the open turn and step, the calls still waiting for a
// result, the token count.
func ExampleSession_PendingCalls() {
	ctx := context.Background()
	s := session.New(session.WithClock(fixedClock()))
	n := s.NextTurn()
	s.Append(ctx, event.TurnStartData{Turn: n, Trigger: json.RawMessage(`{"kind":"message"}`)})
	s.Append(ctx, event.UserMessageData{Content: text("Read a.go and b.go"), Source: userSource}, event.AppendIntent())
	s.Append(ctx, event.StepStartData{Turn: n, Step: 1})
	calls := []json.RawMessage{
		json.RawMessage(`{"type":"tool-call","id":"a","name":"read","arguments":{"path":"a.go"}}`),
		json.RawMessage(`{"type":"tool-call","id":"b","name":"read","arguments":{"path":"b.go"}}`),
	}
	s.Append(ctx, event.AssistantMessageData{Turn: n, Step: 1, Content: calls}, event.AppendIntent())
	s.Append(ctx, event.ToolResultData{Turn: n, Step: 1, CallID: "a", Content: text("package a")}, event.AppendIntent())

	turn, _ := s.OpenTurn()
	step, _ := s.OpenStep()
	fmt.Println("turn", turn, "step", step, "next turn", s.NextTurn())
	for _, c := range s.PendingCalls() {
		fmt.Println("still waiting for", c.ID, "made by event", c.MessageSeq)
	}
	fmt.Println("tokens:", s.Tokens())
	// Output:
	// turn 1 step 1 next turn 2
	// still waiting for b made by event 3
	// tokens: 50
}

// Strict mode refuses at append what providers refuse: here a prompt
// between a tool call and its result. SteerWhenBalanced holds a steering
// message until the calls are answered instead.
func ExampleWithStrict() {
	ctx := context.Background()
	s := session.New(session.WithClock(fixedClock()), session.WithStrict())
	s.Append(ctx, event.TurnStartData{Turn: 1, Trigger: json.RawMessage(`{"kind":"message"}`)})
	s.Append(ctx, event.UserMessageData{Content: text("Run the tests"), Source: userSource}, event.AppendIntent())
	s.Append(ctx, event.AssistantMessageData{Turn: 1, Step: 1, Content: []json.RawMessage{json.RawMessage(`{"type":"tool-call","id":"t","name":"test","arguments":{}}`)}}, event.AppendIntent())

	_, err := s.Append(ctx, event.UserMessageData{Content: text("and lint"), Source: userSource}, event.AppendIntent())
	fmt.Println(errors.Is(err, event.CodeStrictCallsPending))

	_, now, _ := s.SteerWhenBalanced(event.SteeringMessageData{Turn: 1, Content: text("and lint"), Source: userSource})
	fmt.Println("appended now:", now)
	s.Append(ctx, event.ToolResultData{Turn: 1, Step: 1, CallID: "t", Content: text("ok")}, event.AppendIntent())
	last := s.Events()[s.Len()-1]
	fmt.Println("after the result:", last.Type)
	// Output:
	// true
	// appended now: false
	// after the result: steering/message
}
