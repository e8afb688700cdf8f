package surfacegemini_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/providers/surfacegemini"
	"github.com/surfacelog/surface/impl/session"
)

func text(t string) []json.RawMessage {
	b, _ := json.Marshal(t)
	return []json.RawMessage{json.RawMessage(`{"type":"text","text":` + string(b) + `}`)}
}

// Gemini's function response names its function: the adapter carries the
// call's name to its result.
func ExampleContents() {
	ctx := context.Background()
	s := session.New()
	s.Append(ctx, event.TurnStartData{Turn: 1, Trigger: json.RawMessage(`{"kind":"message"}`)})
	s.Append(ctx, event.UserMessageData{Content: text("Weather in Paris?"), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())
	call := json.RawMessage(`{"type":"tool-call","id":"c1","name":"weather","arguments":"{\"city\":\"Paris\"}"}`)
	s.Append(ctx, event.AssistantMessageData{Turn: 1, Step: 1, Content: []json.RawMessage{call}}, event.AppendIntent())
	s.Append(ctx, event.ToolResultData{Turn: 1, Step: 1, CallID: "c1", Content: text("18°C")}, event.AppendIntent())

	contents, err := surfacegemini.Contents(s.Messages())
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range contents {
		b, _ := json.Marshal(c)
		fmt.Println(string(b))
	}
	fmt.Println(len(surfacegemini.Validate(contents)), "violations")
	// Output:
	// {"parts":[{"text":"Weather in Paris?"}],"role":"user"}
	// {"parts":[{"functionCall":{"id":"c1","args":{"city":"Paris"},"name":"weather"}}],"role":"model"}
	// {"parts":[{"functionResponse":{"id":"c1","name":"weather","response":{"output":"18°C"}}}],"role":"user"}
	// 0 violations
}
