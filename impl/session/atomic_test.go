package session_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

// TestCallerMemoryIsNotKept: SURF-17. The log keeps copies of what the
// caller passed: changing the caller's sources slice or data bytes after
// an append, or the events after a seed, changes nothing in the session.
func TestCallerMemoryIsNotKept(t *testing.T) {
	s := session.New()
	data := []byte(`{"content":[],"source":{"kind":"user"}}`)
	sources := []int64{}
	for i := 0; i < 3; i++ {
		if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: json.RawMessage(data)}, event.Intent{Op: event.Append()}); err != nil {
			t.Fatal(err)
		}
	}
	sources = append(sources, 0, 1)
	e, err := s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: json.RawMessage(data)}, event.Intent{Op: event.Replace(0, 1), Sources: sources})
	if err != nil {
		t.Fatal(err)
	}
	sources[0], sources[1] = 99, 98
	copy(data, `{"XXXXXXX"`)
	got := s.Events()[e.Seq]
	if got.Sources[0] != 0 || got.Sources[1] != 1 || string(got.Data) != `{"content":[],"source":{"kind":"user"}}` {
		t.Fatalf("the log changed with the caller's memory: %v %s", got.Sources, got.Data)
	}
	events := s.Events()
	copied := make([]event.Event, len(events))
	for i := range events {
		copied[i] = events[i].Clone()
	}
	seeded, err := session.Seed(copied)
	if err != nil {
		t.Fatal(err)
	}
	copied[e.Seq].Sources[0] = 77
	copied[0].Data[2] = 'X'
	if s := seeded.Events(); s[e.Seq].Sources[0] != 0 || s[0].Data[2] != 'c' {
		t.Fatalf("the seeded log shares the caller's memory")
	}
}

// TestRejectedSeedReturnsNil: SURF-17, SURF-18. A rejected seed constructs
// no session, on every path.
func TestRejectedSeedReturnsNil(t *testing.T) {
	bad := []event.Event{{Type: event.TypeUserMessage, Seq: 0, Time: 1, Data: json.RawMessage(`{"content":[],"source":{"kind":"u"}}`)}}
	if s, err := session.Seed(bad); s != nil || err == nil {
		t.Errorf("Seed: %v %v", s, err)
	}
	if s, err := session.SeedJSON([]json.RawMessage{json.RawMessage(`{"type":"user/message","seq":0,"time":1,"data":{"content":[],"source":{"kind":"u"}}}`)}); s != nil || err == nil {
		t.Errorf("SeedJSON: %v %v", s, err)
	}
	var d event.Decoder
	d.Decode([]byte(`{"type":"todo/write","seq":1,"time":1,"data":{"todos":[]}}`))
	if s, err := session.SeedLog(d.Log()); s != nil || err == nil {
		t.Errorf("SeedLog: %v %v", s, err)
	}
}
