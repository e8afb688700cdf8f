package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

func fixedClock() func() int64 { return func() int64 { return 1767225600000 } }

func text(s string) []json.RawMessage {
	b, _ := json.Marshal(struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{"text", s})
	return []json.RawMessage{b}
}

var userSource = json.RawMessage(`{"kind":"user"}`)

// A turn: one Append for every event, the data's type naming the event's;
// a surface-eligible type takes its marker (event.AppendIntent()).
func Example() {
	ctx := context.Background()
	s := session.New(session.WithClock(fixedClock()))
	s.Append(ctx, event.TurnStartData{Turn: 1, Trigger: json.RawMessage(`{"kind":"message","source":{"kind":"user"}}`)})
	s.Append(ctx, event.UserMessageData{Content: text("What is 2+2?"), Source: userSource}, event.AppendIntent())
	c, _ := s.Append(ctx, event.AssistantChunkData{Turn: 1, Step: 1, Chunk: json.RawMessage(`{"delta":"4"}`)})
	s.Append(ctx, event.AssistantMessageData{Turn: 1, Step: 1, Content: text("4")}, event.AppendIntent(c.Seq))
	s.Append(ctx, event.TurnEndData{Turn: 1, Reason: json.RawMessage(`{"kind":"completed"}`)})

	fmt.Println("surface:", s.Surface())
	for _, m := range s.Messages().All() {
		fmt.Printf("%d %s %s\n", m.Seq, m.Role, m.Content[0])
	}
	// Output:
	// surface: [1 3]
	// 1 user {"type":"text","text":"What is 2+2?"}
	// 3 assistant {"type":"text","text":"4"}
}

// Compaction: one summary node replaces a range of the surface; its
// sourceEventSeqs must cover every node it shadows. The shadowed events
// stay in the log.
func ExampleSession_Append_replace() {
	ctx := context.Background()
	s := session.New(session.WithClock(fixedClock()))
	for _, q := range []string{"a", "b", "c"} {
		s.Append(ctx, event.UserMessageData{Content: text(q), Source: userSource}, event.AppendIntent())
	}
	summary := event.ContextMessageData{Content: text("summary of a, b"), Source: json.RawMessage(`{"kind":"compaction"}`)}

	_, err := s.Append(ctx, summary, event.ReplaceIntent(0, 1, 0))
	fmt.Println(event.CodeOf(err), errors.Is(err, event.CodeReplaceSourcesIncomplete))

	e, _ := s.Append(ctx, summary, event.ReplaceIntent(0, 1, 0, 1))
	fmt.Println("surface:", s.Surface(), "log length:", s.Len())
	for _, b := range s.Messages().At(0).Content {
		fmt.Println(string(b))
	}
	p, _ := s.Provenance(e.Seq)
	fmt.Println("provenance:", p)
	// Output:
	// replace.sources_incomplete true
	// surface: [3 2] log length: 4
	// {"type":"text","text":"<context source=\"compaction\">"}
	// {"type":"text","text":"summary of a, b"}
	// {"type":"text","text":"</context>"}
	// provenance: [0 1]
}

// The untyped Append still checks the marker at run time.
func ExampleSession_Append_untyped() {
	ctx := context.Background()
	s := session.New()
	_, err := s.Append(ctx, event.Raw{Type: event.TypeUserMessage, Data: json.RawMessage(`{"content":[],"source":{"kind":"user"}}`)})
	fmt.Println(event.CodeOf(err))
	_, err = s.Append(ctx, event.Raw{Type: event.TypeAssistantChunk, Data: map[string]any{"turn": 1, "step": 1, "chunk": "x"}}, event.Intent{Op: event.Append()})
	fmt.Println(event.CodeOf(err))
	// Output:
	// surface.op_missing
	// surface.op_forbidden
}

// Data already in JSON form (a provider's stream, relayed as it comes)
// goes in with AppendRaw: checked and compacted as Append checks an
// event.Raw, and the session keeps its own copy, so the buffer can be
// reused at once.
func ExampleSession_AppendRaw() {
	ctx := context.Background()
	s := session.New(session.WithClock(fixedClock()))
	buf := []byte(`{"turn": 1, "trigger": {"kind": "message"}}`)
	e, err := s.AppendRaw(ctx, event.TypeTurnStart, buf)
	fmt.Println(string(e.Data), err)
	copy(buf, "XXXX")
	fmt.Println(string(s.Events()[0].Data))
	_, err = s.AppendRaw(ctx, event.TypeUserMessage, []byte(`{"content":[],"source":{"kind":"user"}}`))
	fmt.Println(event.CodeOf(err))
	// Output:
	// {"turn":1,"trigger":{"kind":"message"}} <nil>
	// {"turn":1,"trigger":{"kind":"message"}}
	// surface.op_missing
}

// Tool results become one tool-result block of a user message.
func ExampleSession_Messages() {
	ctx := context.Background()
	s := session.New(session.WithClock(fixedClock()))
	s.Append(ctx, event.AssistantMessageData{Turn: 1, Step: 1,
		Content: []json.RawMessage{json.RawMessage(`{"type":"tool-call","id":"c1","name":"ls","arguments":{}}`)}}, event.AppendIntent())
	call, _ := s.Append(ctx, event.ToolCallData{Turn: 1, Step: 1, CallID: "c1", Name: "ls", Arguments: "{}"})
	s.Append(ctx, event.ToolResultData{Turn: 1, Step: 1, CallID: "c1", Content: text("a.txt"), IsError: false}, event.AppendIntent(call.Seq))
	for _, m := range s.Messages().All() {
		fmt.Println(m.Role, string(m.Content[0]))
	}
	// Output:
	// assistant {"type":"tool-call","id":"c1","name":"ls","arguments":{}}
	// user {"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"a.txt"}],"isError":false}
}

// Fork starts a new session from a prefix of the log that ends on a
// turn/end.
func ExampleSession_Fork() {
	ctx := context.Background()
	s := session.New(session.WithClock(fixedClock()))
	s.Append(ctx, event.TurnStartData{Turn: 1, Trigger: json.RawMessage(`{"kind":"message"}`)})
	s.Append(ctx, event.UserMessageData{Content: text("hi"), Source: userSource}, event.AppendIntent())
	end, _ := s.Append(ctx, event.TurnEndData{Turn: 1, Reason: json.RawMessage(`{"kind":"completed"}`)})
	s.Append(ctx, event.UserMessageData{Content: text("more"), Source: userSource}, event.AppendIntent())

	child, _ := s.Fork(end.Seq)
	fmt.Println(child.Surface(), s.Surface())
	_, err := s.Fork(1)
	fmt.Println(event.CodeOf(err))
	// Output:
	// [1] [1 3]
	// fork.open_turn
}

// Seed rebuilds a session from stored events and checks every rule.
func ExampleSeed() {
	lines := []json.RawMessage{
		json.RawMessage(`{"type":"user/message","seq":0,"time":5,"data":{"content":[],"source":{"kind":"user"}},"surfaceOp":"append"}`),
		json.RawMessage(`{"type":"user/message","seq":1,"time":6,"data":{"content":[],"source":{"kind":"user"}}}`),
	}
	_, err := session.SeedJSON(lines)
	fmt.Println(err)
	// Output:
	// surface.op_missing: seed event 1: user/message is surface-eligible and needs a surfaceOp marker
}
