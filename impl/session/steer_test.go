package session_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

// TestSteerWhenBalanced: a steering message given while calls are
// pending is held and appended right after the result that answers the
// last of them, never between a call and its result; given when nothing
// is pending it is appended at once; a held message whose turn ends first
// is dropped. Strict mode accepts every message it appends (STRICT-5).
func TestSteerWhenBalanced(t *testing.T) {
	s := session.New(session.WithStrict())
	ap := event.AppendIntent()
	must := func(e event.Event, err error) event.Event {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	steer := raw(`{"turn":1,"content":[{"type":"text","text":"also check g.go"}],"source":{"kind":"user"}}`)
	must(s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: raw(`{"turn":1,"trigger":{"kind":"message"}}`)}))
	must(s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: raw(`{"content":[{"type":"text","text":"fix f.go"}],"source":{"kind":"user"}}`)}, ap))
	if _, now, err := s.SteerWhenBalanced(steer); err != nil || !now {
		t.Fatalf("nothing pending: appended now %v, %v", now, err)
	}
	must(s.Append(context.Background(), event.Raw{Type: event.TypeAssistantMessage, Data: raw(`{"turn":1,"step":1,"content":[{"type":"tool-call","id":"a","name":"read","arguments":{}},{"type":"tool-call","id":"b","name":"read","arguments":{}}]}`)}, ap))
	before := s.Len()
	if _, now, err := s.SteerWhenBalanced(steer); err != nil || now || s.Len() != before {
		t.Fatalf("calls pending: appended now %v, %v", now, err)
	}
	must(s.Append(context.Background(), event.Raw{Type: event.TypeToolResult, Data: raw(`{"turn":1,"step":1,"callId":"a","content":[],"isError":false}`)}, ap))
	if s.Len() != before+1 {
		t.Fatal("the steering message came before the last result")
	}
	last := must(s.Append(context.Background(), event.Raw{Type: event.TypeToolResult, Data: raw(`{"turn":1,"step":1,"callId":"b","content":[],"isError":false}`)}, ap))
	events := s.Events()
	if len(events) != int(last.Seq)+2 || events[last.Seq+1].Type != event.TypeSteeringMessage {
		t.Fatalf("the held message was not appended right after the last result: %v", events[len(events)-1].Type)
	}
	// Held, then the turn ends (a repair answers the call and ends it):
	// dropped, never appended after its turn.
	must(s.Append(context.Background(), event.Raw{Type: event.TypeAssistantMessage, Data: raw(`{"turn":1,"step":2,"content":[{"type":"tool-call","id":"c","name":"read","arguments":{}}]}`)}, ap))
	s.SteerWhenBalanced(steer)
	if _, err := s.Repair(context.Background()); err != nil {
		t.Fatal(err)
	}
	must(s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: raw(`{"turn":2,"trigger":{"kind":"message"}}`)}))
	if s.DroppedSteering() != 1 {
		t.Fatalf("dropped %d, want 1", s.DroppedSteering())
	}
	// A bad message is refused to its caller at once.
	if _, _, err := s.SteerWhenBalanced(raw(`{"turn":2}`)); err == nil {
		t.Fatal("a steering message without content was accepted")
	}
}
