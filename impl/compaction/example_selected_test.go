package compaction_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"

	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

// The one call an agent makes when its context grows too large: fold
// whole turns until the rest fits a budget, never the open turn. The
// summary replaces them framed as the seed system frames it (about 100
// tokens of preamble and tags: COMP-11), and only if that is smaller.
func ExampleCompactSelected() {
	s := session.New()
	text := func(t string) []json.RawMessage {
		return []json.RawMessage{json.RawMessage(`{"type":"text","text":"` + t + `"}`)}
	}
	user := json.RawMessage(`{"kind":"user"}`)
	var prompt event.Event
	for turn := int64(1); turn <= 3; turn++ {
		s.Append(context.Background(), event.TurnStartData{Turn: turn, Trigger: json.RawMessage(`{"kind":"message"}`)})
		prompt, _ = s.Append(context.Background(), event.UserMessageData{Content: text(fmt.Sprintf("question %d", turn)), Source: user}, event.AppendIntent())
		s.Append(context.Background(), event.AssistantMessageData{Turn: turn, Step: 1, Content: text(strings.Repeat("long answer ", 80))}, event.AppendIntent())
		if turn < 3 {
			s.Append(context.Background(), event.TurnEndData{Turn: turn, Reason: json.RawMessage(`{"kind":"completed"}`)})
		}
	}
	summarize := func(ctx context.Context, op *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
		return text(fmt.Sprintf("%d earlier messages, summarised", len(op.Messages))), compaction.Meta{Provider: "local", Model: "fake"}, nil
	}
	fmt.Println("tokens before:", s.Tokens())
	res, err := compaction.CompactSelected(context.Background(), s, compaction.TargetTokens(400, nil), summarize, nil)
	if err != nil {
		log.Fatal(err)
	}
	_, kept := s.Position(prompt.Seq)
	fmt.Println("folded:", res.Selection.Folded, "nodes; over budget:", res.Selection.OverBudget, "; open turn's prompt kept:", kept)
	fmt.Println("tokens after:", s.Tokens())
	// Output:
	// tokens before: 777
	// folded: 4 nodes; over budget: false ; open turn's prompt kept: true
	// tokens after: 369
}
