package persist_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/session"
)

func text(t string) []json.RawMessage {
	b, _ := json.Marshal(t)
	return []json.RawMessage{json.RawMessage(`{"type":"text","text":` + string(b) + `}`)}
}

// A durable session: open (or create) a JSONL file, resume it, append. A
// process that dies mid-turn leaves the turn open; the next Resume
// repairs it (a result for the call that never got one, and the end of
// the turn, both marked interrupted) and the agent goes on.
func Example() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "session.jsonl")
	ctx := context.Background()

	st, err := persist.OpenJSONL(ctx, path, persist.Header{ID: "demo"})
	if err != nil {
		log.Fatal(err)
	}
	s, _, err := persist.Resume(ctx, st, session.WithStrict())
	if err != nil {
		log.Fatal(err)
	}
	s.Append(ctx, event.TurnStartData{Turn: s.NextTurn(), Trigger: json.RawMessage(`{"kind":"message"}`)})
	s.Append(ctx, event.UserMessageData{Content: text("Read a.go"), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())
	call := json.RawMessage(`{"type":"tool-call","id":"c1","name":"read","arguments":"{\"path\":\"a.go\"}"}`)
	s.Append(ctx, event.AssistantMessageData{Turn: 1, Step: 1, Content: []json.RawMessage{call}}, event.AppendIntent())
	// The process dies here: the call has no result, the turn no end.
	s.Close(ctx)

	st, err = persist.OpenJSONL(ctx, path, persist.Header{ID: "demo"})
	if err != nil {
		log.Fatal(err)
	}
	s, report, err := persist.Resume(ctx, st, session.WithStrict())
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close(ctx)
	fmt.Println("loaded", report.Events, "events; repair appended:")
	for _, e := range report.Closers {
		fmt.Println(" ", e.Type, string(e.Data))
	}
	fmt.Println("next turn:", s.NextTurn())
	// Output:
	// loaded 3 events; repair appended:
	//   tool/result {"turn":1,"step":1,"callId":"c1","content":[{"type":"text","text":"Tool call interrupted by a crash; no result was recorded."}],"isError":true,"error":{"name":"InterruptedError","code":"interrupted"}}
	//   turn/end {"turn":1,"reason":{"kind":"interrupted"}}
	// next turn: 2
}

// Fork a stored session at the end of a turn into a new file: the child
// holds the parent's events up to the boundary and goes on by itself.
func ExampleFork() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	st, _ := persist.OpenJSONL(ctx, filepath.Join(dir, "parent.jsonl"), persist.Header{ID: "parent"})
	parent, _, _ := persist.Resume(ctx, st)
	defer parent.Close(ctx)
	parent.Append(ctx, event.TurnStartData{Turn: 1, Trigger: json.RawMessage(`{"kind":"message"}`)})
	parent.Append(ctx, event.UserMessageData{Content: text("hi"), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())
	end, _ := parent.Append(ctx, event.TurnEndData{Turn: 1, Reason: json.RawMessage(`{"kind":"completed"}`)})

	dst, err := persist.OpenJSONL(ctx, filepath.Join(dir, "child.jsonl"), persist.Header{ID: "child", ParentSession: "parent"})
	if err != nil {
		log.Fatal(err)
	}
	child, err := persist.Fork(ctx, parent, end.Seq, dst)
	if err != nil {
		log.Fatal(err)
	}
	defer child.Close(ctx)
	fmt.Println("child:", child.Len(), "events, next turn", child.NextTurn(), "; header:", *child.Store.Header().SeedLength, "inherited")
	// Output:
	// child: 3 events, next turn 2 ; header: 3 inherited
}

// A store that keeps a checkpoint beside the log (STORE-18): the next
// resume reads the checkpoint, the surface's own events and what came
// after it, not every event; the log's old events are read back only when
// something asks for them (Events, Provenance, Fork).
func ExampleWithCheckpoints() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	path := filepath.Join(dir, "s.jsonl")
	st, _ := persist.OpenJSONL(ctx, path, persist.Header{ID: "s"}, persist.WithCheckpoints(1000))
	s, _, _ := persist.Resume(ctx, st)
	for turn := int64(1); turn <= 3; turn++ {
		s.Append(ctx, event.TurnStartData{Turn: turn, Trigger: json.RawMessage(`{"kind":"message"}`)})
		s.Append(ctx, event.UserMessageData{Content: text(fmt.Sprint("question ", turn)), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())
		s.Append(ctx, event.TurnEndData{Turn: turn, Reason: json.RawMessage(`{"kind":"completed"}`)})
	}
	s.Close(ctx) // writes a checkpoint of the whole log

	st, err := persist.OpenJSONL(ctx, path, persist.Header{ID: "s"}, persist.WithCheckpoints(1000))
	if err != nil {
		log.Fatal(err)
	}
	s, report, err := persist.Resume(ctx, st)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close(ctx)
	fmt.Println("events:", s.Len(), "; from the checkpoint:", report.CheckpointEvents, "; messages:", s.Messages().Len(), "; next turn:", s.NextTurn())
	fmt.Println("events not read yet:", s.Restored())
	fmt.Println("all events:", len(s.Events()), "; not read yet:", s.Restored())
	// Output:
	// events: 9 ; from the checkpoint: 9 ; messages: 3 ; next turn: 4
	// events not read yet: 9
	// all events: 9 ; not read yet: 0
}

// A PostgreSQL store shared by writers on many machines: one writer per
// session (a second gets persist.locked), and a deadline on every call.
func ExampleOpenPostgres() {
	ctx, cancel := context.WithTimeout(context.Background(), 10e9)
	defer cancel()
	st, err := persist.OpenPostgres(ctx, os.Getenv("DATABASE_URL"), persist.Header{ID: "session-42"})
	if err != nil {
		log.Fatal(err)
	}
	s, _, err := persist.Resume(ctx, st)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close(ctx)
	// An append with its own deadline: persist.cancelled when it passes,
	// and nothing stored.
	actx, acancel := context.WithTimeout(ctx, 2e9)
	defer acancel()
	s.Append(actx, event.TurnStartData{Turn: s.NextTurn(), Trigger: json.RawMessage(`{"kind":"message"}`)})
}
