package message_test

import (
	"fmt"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
)

// FromEvent derives the message of a surface node; Tokens counts it: the
// output tokens the provider reported, when the reply recorded them.
func ExampleFromEvent() {
	reply := &event.Event{Seq: 7, Type: event.TypeAssistantMessage,
		Data: []byte(`{"content":[{"type":"text","text":"Done."}],"usage":{"inputTokens":900,"outputTokens":3}}`)}
	m, ok := message.FromEvent(reply)
	fmt.Println(ok, m.Seq, m.Role, len(m.Content), message.Tokens(reply, m, nil))
	// Output: true 7 assistant 1 3
}

// Metered gives the message and its tokens in one reading of the data:
// here the estimate (COMP-5), as the user's message records no usage.
func ExampleMetered() {
	prompt := &event.Event{Seq: 1, Type: event.TypeUserMessage,
		Data: []byte(`{"content":[{"type":"text","text":"Please fix the failing test."}],"source":{"kind":"user"}}`)}
	m, tokens, ok := message.Metered(prompt, nil)
	fmt.Println(ok, m.Role, string(m.Content[0]), tokens)
	// Output: true user {"type":"text","text":"Please fix the failing test."} 15
}
