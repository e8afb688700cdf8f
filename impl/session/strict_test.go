package session_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

// TestStrictMode: STRICT-1 to STRICT-5, each code provoked in a strict
// session and the same append accepted in a session without strict mode.
// The conformance vectors (strict.*) hold the same against the model.
func TestStrictMode(t *testing.T) {
	type step struct {
		ty     event.Type
		data   string
		intent *event.Intent
		code   event.Code // in strict mode; "" accepted
	}
	ap := &event.Intent{Op: event.Append()}
	user := `{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}`
	calls := `{"turn":1,"step":1,"content":[{"type":"tool-call","id":"a","name":"read","arguments":{}},{"type":"tool-call","id":"b","name":"read","arguments":{}}]}`
	result := func(id string) string {
		return `{"turn":1,"step":1,"callId":"` + id + `","content":[],"isError":false}`
	}
	steps := []step{
		{event.TypeTurnEnd, `{"turn":1,"reason":{"kind":"completed"}}`, nil, event.CodeStrictNoTurn},                                                                         // STRICT-3
		{event.TypeStepStart, `{"turn":1,"step":1}`, nil, event.CodeStrictNoTurn},                                                                                            // STRICT-3
		{event.TypeToolResult, result("a"), ap, event.CodeStrictCallUnknown},                                                                                                 // STRICT-4, outside a turn
		{event.TypeTurnStart, `{"turn":1,"trigger":{"kind":"message"}}`, nil, ""},                                                                                            //
		{event.TypeTurnStart, `{"turn":2,"trigger":{"kind":"message"}}`, nil, event.CodeStrictTurnOpen},                                                                      // STRICT-3
		{event.TypeUserMessage, user, ap, ""},                                                                                                                                //
		{event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[{"type":"tool-call","id":"a","name":"read","arguments":"[]"}]}`, ap, event.CodeStrictArgumentsNotObject}, // STRICT-2
		{event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[{"type":"tool-call","id":"a","name":"read","arguments":5}]}`, ap, event.CodeStrictArgumentsNotObject},    // STRICT-2
		{event.TypeToolCall, `{"turn":1,"step":1,"callId":"a","name":"read","arguments":"not json"}`, nil, event.CodeStrictArgumentsNotObject},                               // STRICT-2
		{event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[{"type":"tool-call","id":"a","name":"read","arguments":"{\"path\":\"f\"}"}]}`, ap, ""},                   // STRICT-2: the seed system's form
		{event.TypeAssistantMessage, calls, ap, ""},                                                                                                                          //
		{event.TypeUserMessage, user, ap, event.CodeStrictCallsPending},                                                                                                      // STRICT-5
		{event.TypeSteeringMessage, `{"turn":1,"content":[],"source":{"kind":"user"}}`, ap, event.CodeStrictCallsPending},                                                    // STRICT-5
		{event.TypeToolResult, result("z"), ap, event.CodeStrictCallUnknown},                                                                                                 // STRICT-4
		{event.TypeToolResult, result("a"), ap, ""},                                                                                                                          //
		{event.TypeToolResult, result("a"), ap, event.CodeStrictCallAnswered},                                                                                                // STRICT-4
		{event.TypeToolResult, result("b"), ap, ""},                                                                                                                          //
		{event.TypeSteeringMessage, `{"turn":7,"content":[],"source":{"kind":"user"}}`, ap, event.CodeStrictNoTurn},                                                          // STRICT-3
		{event.TypeSteeringMessage, `{"turn":1,"content":[],"source":{"kind":"user"}}`, ap, ""},                                                                              //
	}
	strict, loose := session.New(session.WithStrict()), session.New()
	for i, st := range steps {
		_, err := strict.Append(st.ty, json.RawMessage(st.data), st.intent)
		if st.code == "" && err != nil || st.code != "" && !errors.Is(err, st.code) {
			t.Fatalf("step %d %s: %v, want %q", i, st.ty, err, st.code)
		}
		if _, err := loose.Append(st.ty, json.RawMessage(st.data), st.intent); err != nil {
			t.Fatalf("step %d %s without strict mode: %v", i, st.ty, err)
		}
	}
	// STRICT-1: a seed loads what strict appends refuse, and a fork keeps
	// strict mode; repair's closers are accepted.
	child, err := session.Seed(loose.Events(), session.WithStrict())
	if err != nil {
		t.Fatalf("seeding a strict session with a loose log: %v", err)
	}
	if _, err := child.Append(event.TypeTurnStart, json.RawMessage(`{"turn":2,"trigger":{"kind":"message"}}`), nil); !errors.Is(err, event.CodeStrictTurnOpen) {
		t.Fatalf("a seeded strict session: %v", err)
	}
	if _, err := child.Repair(); err != nil {
		t.Fatalf("repair in strict mode: %v", err)
	}
}

// BenchmarkStrictAppend: the cost of strict mode per append, beside the
// same traffic without it (a turn: prompt, a call, its tool/call and
// result, an answer).
func BenchmarkStrictAppend(b *testing.B) {
	for _, mode := range []string{"loose", "strict"} {
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			var opts []session.Option
			if mode == "strict" {
				opts = append(opts, session.WithStrict())
			}
			s := session.New(opts...)
			ap := &event.Intent{Op: event.Append()}
			turn := 0
			b.ResetTimer()
			for i := 0; i < b.N; i += 7 {
				turn++
				tn := json.RawMessage(`{"turn":` + itoa(turn) + `,"trigger":{"kind":"message"}}`)
				s.Append(event.TypeTurnStart, tn, nil)
				s.Append(event.TypeUserMessage, json.RawMessage(`{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}`), ap)
				s.Append(event.TypeStepStart, json.RawMessage(`{"turn":`+itoa(turn)+`,"step":1}`), nil)
				s.Append(event.TypeAssistantMessage, json.RawMessage(`{"turn":`+itoa(turn)+`,"step":1,"content":[{"type":"tool-call","id":"c`+itoa(turn)+`","name":"read","arguments":{"p":1}}]}`), ap)
				c, _ := s.Append(event.TypeToolCall, json.RawMessage(`{"turn":`+itoa(turn)+`,"step":1,"callId":"c`+itoa(turn)+`","name":"read","arguments":"{\"p\":1}"}`), nil)
				if _, err := s.Append(event.TypeToolResult, json.RawMessage(`{"turn":`+itoa(turn)+`,"step":1,"callId":"c`+itoa(turn)+`","content":[],"isError":false}`), &event.Intent{Op: event.Append(), Sources: []int64{c.Seq}}); err != nil {
					b.Fatal(err)
				}
				if _, err := s.Append(event.TypeTurnEnd, json.RawMessage(`{"turn":`+itoa(turn)+`,"reason":{"kind":"completed"}}`), nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func itoa(n int) string { return string(json.Number(jsonInt(n))) }

func jsonInt(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// BenchmarkTokens: the token count query after each append, against a
// rescan of the messages, at 10k surface nodes.
func BenchmarkTokens(b *testing.B) {
	s := session.New()
	ap := &event.Intent{Op: event.Append()}
	for range 10_000 {
		s.Append(event.TypeUserMessage, json.RawMessage(`{"content":[{"type":"text","text":"some words here"}],"source":{"kind":"user"}}`), ap)
	}
	b.Run("Tokens", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.Append(event.TypeTodoWrite, json.RawMessage(`{"todos":[]}`), nil)
			_ = s.Tokens()
		}
	})
	b.Run("rescan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.Append(event.TypeTodoWrite, json.RawMessage(`{"todos":[]}`), nil)
			n := 0
			for _, m := range s.Messages().All() {
				for _, c := range m.Content {
					n += len(c)
				}
			}
			_ = n
		}
	})
}
