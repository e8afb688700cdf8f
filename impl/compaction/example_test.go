package compaction_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

// The library snippet of the README: a turn with a tool call, then a
// compaction that folds it into a summary. TestReadmeSnippet keeps the
// README's copy identical to this function's body.
func Example() {
	s := session.New()
	text := func(t string) []json.RawMessage {
		return []json.RawMessage{json.RawMessage(`{"type":"text","text":"` + t + `"}`)}
	}
	must := func(e event.Event, err error) event.Event {
		if err != nil {
			log.Fatal(err)
		}
		return e
	}
	must(s.Append(context.Background(), event.TurnStartData{Turn: 1, Trigger: json.RawMessage(`{"kind":"message"}`)}))
	q := must(s.Append(context.Background(), event.UserMessageData{Content: text("What is in f.go?"), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent()))
	call := json.RawMessage(`{"type":"tool-call","id":"c1","name":"read","arguments":{"path":"f.go"}}`)
	must(s.Append(context.Background(), event.AssistantMessageData{Turn: 1, Step: 1, Content: []json.RawMessage{call}}, event.AppendIntent()))
	tc := must(s.Append(context.Background(), event.ToolCallData{Turn: 1, Step: 1, CallID: "c1", Name: "read", Arguments: `{"path":"f.go"}`}))
	file := strings.Repeat("// F returns the answer.\\nfunc F() int { return 41 }\\n", 20)
	res := must(s.Append(context.Background(), event.ToolResultData{Turn: 1, Step: 1, CallID: "c1", Content: text(file), IsError: false}, event.AppendIntent(tc.Seq)))
	must(s.Append(context.Background(), event.AssistantMessageData{Turn: 1, Step: 2, Content: text("F returns 41.")}, event.AppendIntent()))

	// Fold the first four nodes (prompt, call, result, answer) into a summary:
	// one user message, the summary framed as the seed system frames it.
	summarise := func(ctx context.Context, op *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
		return text(fmt.Sprintf("Summary of %d messages: f.go defines F, which returns 41.", len(op.Messages))), compaction.Meta{Provider: "local", Model: "fake"}, nil
	}
	last := s.Surface().At(s.Surface().Len() - 1)
	r, err := compaction.Compact(context.Background(), s, q.Seq, last, summarise)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range s.Messages().All() {
		fmt.Println(m.Seq, m.Role, len(m.Content), "blocks; the summary:", string(m.Content[1]))
	}
	fmt.Println("shadowed:", r.Shadowed, r.TokenCount, "tokens; result kept in the log:", s.Events()[res.Seq].Type)
	// Output:
	// 8 user 3 blocks; the summary: {"type":"text","text":"Summary of 4 messages: f.go defines F, which returns 41."}
	// shadowed: [1 2 4 5] 309 tokens; result kept in the log: tool/result
}

// A compaction in two phases: Begin takes the lock and hands out the
// shadowed messages; Commit (or Abort) ends it.
func ExampleBegin() {
	ctx := context.Background()
	s := session.New()
	s.Append(ctx, event.TurnStartData{Turn: 1, Trigger: json.RawMessage(`{"kind":"message"}`)})
	for _, q := range []string{"a", "b", "c"} {
		if _, err := s.Append(ctx, event.UserMessageData{Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"` + q + `"}`)}, Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent()); err != nil {
			log.Fatal(err)
		}
	}
	op, err := compaction.Begin(ctx, s, 1, 2)
	if err != nil {
		log.Fatal(err)
	}
	_, err = compaction.Begin(ctx, s, 3, 3)
	fmt.Println("second begin:", event.CodeOf(err))
	fmt.Println("to summarise:", len(op.Messages), "messages,", op.TokenCount, "tokens")
	// Two short messages: the seed system's framing alone (about 100
	// tokens) is larger than they are, so commit the summary as it is.
	plain := []compaction.Option{compaction.WithoutFraming(), compaction.WithoutSizeCheck()}
	if _, err := op.Commit(ctx, []json.RawMessage{json.RawMessage(`{"type":"text","text":"a and b"}`)}, compaction.Meta{Provider: "p", Model: "m"}, plain...); err != nil {
		log.Fatal(err)
	}
	fmt.Println("surface:", s.Surface())
	// Output:
	// second begin: compaction.locked
	// to summarise: 2 messages, 18 tokens
	// surface: [6 3]
}

// Pruning replaces a tool result's content, keeping its call id.
func ExamplePruneToolResult() {
	ctx := context.Background()
	s := session.New()
	s.Append(ctx, event.AssistantMessageData{Turn: 1, Step: 1, Content: []json.RawMessage{json.RawMessage(`{"type":"tool-call","id":"c1","name":"ls","arguments":{}}`)}}, event.AppendIntent())
	call, _ := s.Append(ctx, event.ToolCallData{Turn: 1, Step: 1, CallID: "c1", Name: "ls", Arguments: "{}"})
	res, err := s.Append(ctx, event.ToolResultData{Turn: 1, Step: 1, CallID: "c1", Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"` + strings.Repeat("file\\n", 1000) + `"}`)}}, event.AppendIntent(call.Seq))
	if err != nil {
		log.Fatal(err)
	}
	p, err := compaction.PruneToolResult(s, res.Seq, []json.RawMessage{json.RawMessage(`{"type":"text","text":"[1000 files, pruned]"}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("pruned", p.TokenCount, "tokens")
	fmt.Println(string(s.Messages().At(1).Content[0]))
	// Output:
	// pruned 1262 tokens
	// {"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"[1000 files, pruned]"}],"isError":false}
}

// TestReadmeSnippet: the README's library snippet is the body of Example,
// so it compiles and runs with no ignored error.
func TestReadmeSnippet(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	body := string(src)
	body = body[strings.Index(body, "func Example() {\n")+len("func Example() {\n"):]
	body = body[:strings.Index(body, "\t// Output:")]
	var snippet []string
	for _, line := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
		snippet = append(snippet, strings.TrimPrefix(line, "\t"))
	}
	want := "```go\n" + strings.Join(snippet, "\n") + "\n```"
	if !strings.Contains(string(readme), want) {
		t.Errorf("README.md does not hold the body of Example as its library snippet; it should read:\n%s", want)
	}
}
