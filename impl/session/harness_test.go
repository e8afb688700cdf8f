package session_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

// TestHarnessQueries: what a harness asks of the session without walking
// the log. PendingCalls gives each waiting call's tool name and arguments
// as the model wrote them (an object, or the seed system's text form);
// TurnEnd finds the turn/end of a turn (the last one, should a loose log
// end a turn twice), is kept as the log grows, and is where a fork at the
// end of that turn cuts.
func TestHarnessQueries(t *testing.T) {
	ctx := context.Background()
	s := session.New()
	must := func(e event.Event, err error) event.Event {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	turn := func(n int64) event.Event {
		must(s.Append(ctx, event.TurnStartData{Turn: n, Trigger: json.RawMessage(`{"kind":"message"}`)}))
		must(s.Append(ctx, event.UserMessageData{Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"q"}`)}, Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent()))
		return must(s.Append(ctx, event.TurnEndData{Turn: n, Reason: json.RawMessage(`{"kind":"completed"}`)}))
	}
	if _, ok := s.TurnEnd(1); ok {
		t.Fatal("a turn/end in an empty log")
	}
	end1 := turn(1)
	if e, ok := s.TurnEnd(1); !ok || e.Seq != end1.Seq {
		t.Fatalf("TurnEnd(1) = %d, %v; want %d", e.Seq, ok, end1.Seq)
	}
	end2 := turn(2)
	again := turn(1) // a loose log may end turn 1 twice
	for n, want := range map[int64]int64{1: again.Seq, 2: end2.Seq} {
		if e, ok := s.TurnEnd(n); !ok || e.Seq != want || e.Type != event.TypeTurnEnd {
			t.Errorf("TurnEnd(%d) = %d %s, %v; want %d", n, e.Seq, e.Type, ok, want)
		}
	}
	if _, ok := s.TurnEnd(3); ok {
		t.Error("TurnEnd(3) of a log without turn 3")
	}
	e, _ := s.TurnEnd(2)
	child, err := s.Fork(e.Seq)
	if err != nil || child.Len() != int(end2.Seq)+1 || child.NextTurn() != 3 {
		t.Fatalf("fork at TurnEnd(2): %v, %d events", err, child.Len())
	}

	must(s.Append(ctx, event.TurnStartData{Turn: 4, Trigger: json.RawMessage(`{"kind":"message"}`)}))
	must(s.Append(ctx, event.AssistantMessageData{Turn: 4, Step: 1, Content: []json.RawMessage{
		json.RawMessage(`{"type":"tool-call","id":"a","name":"read","arguments":{"path":"a.go"}}`),
		json.RawMessage(`{"type":"tool-call","id":"b","name":"grep","arguments":"{\"q\":\"x\"}"}`),
		json.RawMessage(`{"type":"tool-call","id":"c","name":"ls"}`),
	}}, event.AppendIntent()))
	want := []struct{ id, name, args string }{{"a", "read", `{"path":"a.go"}`}, {"b", "grep", `{"q":"x"}`}, {"c", "ls", `{}`}}
	got := s.PendingCalls()
	if len(got) != len(want) {
		t.Fatalf("%d pending calls", len(got))
	}
	for i, w := range want {
		if got[i].ID != w.id || got[i].Name != w.name || got[i].ArgumentsText() != w.args {
			t.Errorf("pending call %d: %s %s %s, want %v", i, got[i].ID, got[i].Name, got[i].ArgumentsText(), w)
		}
	}
}
