package surfaceanthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/providers/surfaceanthropic"
	"github.com/surfacelog/surface/impl/session"
)

func text(t string) []json.RawMessage {
	b, _ := json.Marshal(t)
	return []json.RawMessage{json.RawMessage(`{"type":"text","text":` + string(b) + `}`)}
}

// From a session to the Messages API: the tool result and the steering
// message typed after it are two user messages in the session; the
// request has one, the result first.
func ExampleMessages() {
	ctx := context.Background()
	s := session.New()
	s.Append(ctx, event.TurnStartData{Turn: 1, Trigger: json.RawMessage(`{"kind":"message"}`)})
	s.Append(ctx, event.UserMessageData{Content: text("Read a.go"), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())
	call := json.RawMessage(`{"type":"tool-call","id":"toolu_1","name":"read","arguments":"{\"path\":\"a.go\"}"}`)
	s.Append(ctx, event.AssistantMessageData{Turn: 1, Step: 1, Content: []json.RawMessage{call}}, event.AppendIntent())
	s.Append(ctx, event.ToolResultData{Turn: 1, Step: 1, CallID: "toolu_1", Content: text("package a")}, event.AppendIntent())
	s.Append(ctx, event.SteeringMessageData{Turn: 1, Content: text("and b.go"), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())

	params, err := surfaceanthropic.Messages(s.Messages())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(s.Messages().Slice()), "session messages,", len(params), "request messages,", len(surfaceanthropic.Validate(params)), "violations")
	last, _ := json.Marshal(params[2])
	fmt.Println(string(last))
	// Then send it: client.Messages.New(ctx, anthropic.MessageNewParams{Model: ..., MaxTokens: ..., Messages: params}).

	// Output:
	// 4 session messages, 3 request messages, 0 violations
	// {"content":[{"tool_use_id":"toolu_1","is_error":false,"content":[{"text":"package a","type":"text"}],"type":"tool_result"},{"text":"\u003csteering source=\"user\"\u003e","type":"text"},{"text":"and b.go","type":"text"},{"text":"\u003c/steering\u003e","type":"text"}],"role":"user"}
}

// From a response to the session: Reply decodes it, Append records the
// assistant message and a tool/call per call, with the usage and the
// provenance; then the harness runs the calls and appends the results.
func ExampleReply() {
	ctx := context.Background()
	s := session.New(session.WithStrict())
	s.Append(ctx, event.TurnStartData{Turn: 1, Trigger: json.RawMessage(`{"kind":"message"}`)})
	s.Append(ctx, event.UserMessageData{Content: text("Read a.go"), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())

	var resp anthropic.Message // what client.Messages.New returned
	json.Unmarshal([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","stop_reason":"tool_use",
		"content":[{"type":"text","text":"Reading it."},{"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"a.go"}}],
		"usage":{"input_tokens":12,"output_tokens":9}}`), &resp)
	reply, err := surfaceanthropic.Reply(&resp)
	if err != nil {
		log.Fatal(err)
	}
	events, err := reply.Append(ctx, s, 1, 1)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range events {
		fmt.Println(e.Seq, e.Type, string(e.Data))
	}
	for _, c := range s.PendingCalls() {
		s.Append(ctx, event.ToolResultData{Turn: 1, Step: 1, CallID: c.ID, Content: text("package a")}, event.AppendIntent(c.CallSeq))
	}
	fmt.Println("pending:", len(s.PendingCalls()), "tokens:", s.Tokens())
	// Output:
	// 2 assistant/message {"turn":1,"step":1,"content":[{"type":"text","text":"Reading it."},{"type":"tool-call","id":"toolu_1","name":"read","arguments":"{\"path\":\"a.go\"}"}],"provenance":{"provider":"anthropic","model":"claude-sonnet-4-5"},"usage":{"inputTokens":12,"outputTokens":9},"response":{"id":"msg_1"}}
	// 3 tool/call {"turn":1,"step":1,"callId":"toolu_1","name":"read","arguments":"{\"path\":\"a.go\"}"}
	// pending: 0 tokens: 35
}

// A thinking model's tool loop: the reply's thinking block, with its
// signature, is kept in the log (PROV-1) and goes back, as it came and
// first in its message, in the request that carries the tool's result;
// a request to another model family would leave it out (ForModel).
func ExampleReply_thinking() {
	ctx := context.Background()
	s := session.New(session.WithStrict())
	s.Append(ctx, event.TurnStartData{Turn: 1, Trigger: json.RawMessage(`{"kind":"message"}`)})
	s.Append(ctx, event.UserMessageData{Content: text("What does a.go export?"), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())

	var resp anthropic.Message // client.Messages.New with Thinking enabled
	json.Unmarshal([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5-20251101","stop_reason":"tool_use",
		"content":[{"type":"thinking","thinking":"Read a.go first.","signature":"EqQBCkYIBxgCKkD"},{"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"a.go"}}],
		"usage":{"input_tokens":40,"output_tokens":25}}`), &resp)
	reply, err := surfaceanthropic.Reply(&resp)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := reply.Append(ctx, s, 1, 1); err != nil {
		log.Fatal(err)
	}
	for _, c := range s.PendingCalls() {
		s.Append(ctx, event.ToolResultData{Turn: 1, Step: 1, CallID: c.ID, Content: text("package a; func F()")}, event.AppendIntent(c.CallSeq))
	}

	params, err := surfaceanthropic.Messages(s.Messages(), surfaceanthropic.ForModel("claude-opus-4-5"))
	if err != nil {
		log.Fatal(err)
	}
	assistant, _ := json.Marshal(params[1])
	fmt.Println(string(assistant))
	other, _ := surfaceanthropic.Messages(s.Messages(), surfaceanthropic.ForModel("claude-sonnet-4-5"))
	fmt.Println("to another family:", len(other[1].OfAssistant.Content), "block")
	// Output:
	// {"content":[{"type":"thinking","thinking":"Read a.go first.","signature":"EqQBCkYIBxgCKkD"},{"id":"toolu_1","input":{"path":"a.go"},"name":"read","type":"tool_use"}],"role":"assistant"}
	// to another family: 1 block
}
