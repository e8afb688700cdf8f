package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/internal/ops"
)

// TestStrictMode: STRICT-1 to STRICT-7, each code provoked in a strict
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
	calls := func(turn string, ids ...string) string {
		var b []string
		for _, id := range ids {
			b = append(b, `{"type":"tool-call","id":"`+id+`","name":"read","arguments":{}}`)
		}
		return `{"turn":` + turn + `,"step":1,"content":[` + strings.Join(b, ",") + `]}`
	}
	result := func(turn, id string) string {
		return `{"turn":` + turn + `,"step":1,"callId":"` + id + `","content":[],"isError":false}`
	}
	steps := []step{
		{event.TypeTurnEnd, `{"turn":1,"reason":{"kind":"completed"}}`, nil, event.CodeStrictNoTurn},                                                                         // STRICT-3
		{event.TypeStepStart, `{"turn":1,"step":1}`, nil, event.CodeStrictNoTurn},                                                                                            // STRICT-3
		{event.TypeToolResult, result("1", "a"), ap, event.CodeStrictNoTurn},                                                                                                 // STRICT-3: outside a turn
		{event.TypeAssistantMessage, calls("1", "q"), ap, event.CodeStrictNoTurn},                                                                                            // STRICT-3: outside a turn
		{event.TypeTurnStart, `{"turn":1,"trigger":{"kind":"message"}}`, nil, ""},                                                                                            //
		{event.TypeTurnStart, `{"turn":2,"trigger":{"kind":"message"}}`, nil, event.CodeStrictTurnOpen},                                                                      // STRICT-3
		{event.TypeUserMessage, user, ap, ""},                                                                                                                                //
		{event.TypeStepStart, `{"turn":2,"step":1}`, nil, event.CodeStrictWrongTurn},                                                                                         // STRICT-3: another turn's number
		{event.TypeStepStart, `{"turn":1,"step":1}`, nil, ""},                                                                                                                //
		{event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[{"type":"tool-call","id":"a","name":"read","arguments":"[]"}]}`, ap, event.CodeStrictArgumentsNotObject}, // STRICT-2
		{event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[{"type":"tool-call","id":"a","name":"read","arguments":5}]}`, ap, event.CodeStrictArgumentsNotObject},    // STRICT-2
		{event.TypeToolCall, `{"turn":1,"step":1,"callId":"a","name":"read","arguments":"not json"}`, nil, event.CodeStrictArgumentsNotObject},                               // STRICT-2
		{event.TypeAssistantMessage, calls("2", "s"), ap, event.CodeStrictWrongTurn},                                                                                         // STRICT-3
		{event.TypeAssistantMessage, calls("1", "s", "s"), ap, event.CodeStrictCallReused},                                                                                   // STRICT-6: one id twice
		{event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[{"type":"tool-call","id":"s","name":"read","arguments":"{\"path\":\"f\"}"}]}`, ap, ""},                   // STRICT-2: the seed system's form
		{event.TypeToolResult, result("1", "s"), ap, ""},                                                                                                                     //
		{event.TypeAssistantMessage, calls("1", "a", "b"), ap, ""},                                                                                                           //
		{event.TypeUserMessage, user, ap, event.CodeStrictCallsPending},                                                                                                      // STRICT-5
		{event.TypeSteeringMessage, `{"turn":1,"content":[],"source":{"kind":"user"}}`, ap, event.CodeStrictCallsPending},                                                    // STRICT-5
		{event.TypeTurnEnd, `{"turn":1,"reason":{"kind":"completed"}}`, nil, event.CodeStrictCallsPending},                                                                   // STRICT-5: a turn ended with a call unanswered
		{event.TypeToolResult, result("1", "z"), ap, event.CodeStrictCallUnknown},                                                                                            // STRICT-4
		{event.TypeToolResult, result("2", "a"), ap, event.CodeStrictWrongTurn},                                                                                              // STRICT-3
		{event.TypeToolResult, result("1", "a"), ap, ""},                                                                                                                     //
		{event.TypeToolResult, result("1", "a"), ap, event.CodeStrictCallAnswered},                                                                                           // STRICT-4: not call_unknown
		{event.TypeStepEnd, `{"turn":1,"step":1}`, nil, event.CodeStrictCallsPending},                                                                                        // STRICT-5: a step ended with b pending
		{event.TypeToolResult, result("1", "b"), ap, ""},                                                                                                                     //
		{event.TypeStepEnd, `{"turn":1,"step":1}`, nil, ""},                                                                                                                  //
		{event.TypeToolResult, result("1", "s"), ap, event.CodeStrictCallAnswered},                                                                                           // STRICT-4: answered in an earlier step
		{event.TypeSteeringMessage, `{"turn":7,"content":[],"source":{"kind":"user"}}`, ap, event.CodeStrictNoTurn},                                                          // STRICT-3
		{event.TypeSteeringMessage, `{"turn":1,"content":[],"source":{"kind":"user"}}`, ap, ""},                                                                              //
		{event.TypeTurnEnd, `{"turn":1,"reason":{"kind":"completed"}}`, nil, ""},                                                                                             //
		{event.TypeTurnStart, `{"turn":2,"trigger":{"kind":"message"}}`, nil, ""},                                                                                            //
		{event.TypeAssistantMessage, calls("2", "a"), ap, event.CodeStrictCallReused},                                                                                        // STRICT-6: an id of an earlier turn
		{event.TypeAssistantMessage, calls("2", "c"), ap, ""},                                                                                                                //
	}
	strict, loose := session.New(session.WithStrict()), session.New()
	for i, st := range steps {
		_, err := strict.Append(context.Background(), event.Raw{Type: st.ty, Data: json.RawMessage(st.data)}, st.intent.Value())
		if st.code == "" && err != nil || st.code != "" && !errors.Is(err, st.code) {
			t.Fatalf("step %d %s: %v, want %q", i, st.ty, err, st.code)
		}
		if _, err := loose.Append(context.Background(), event.Raw{Type: st.ty, Data: json.RawMessage(st.data)}, st.intent.Value()); err != nil {
			t.Fatalf("step %d %s without strict mode: %v", i, st.ty, err)
		}
	}
	// STRICT-8: a seed in strict mode checks what it loads, and names
	// the first event that breaks a rule; the strict session's own log
	// loads, and so does that log with repair's closers.
	_, err := session.Seed(loose.Events(), session.WithStrict())
	var ee *event.Error
	if !errors.As(err, &ee) || ee.Code != event.CodeStrictNoTurn || ee.Index != 0 {
		t.Fatalf("seeding a strict session with a loose log: %v", err)
	}
	child, err := session.Seed(strict.Events(), session.WithStrict())
	if err != nil {
		t.Fatalf("seeding a strict session with a strict log: %v", err)
	}
	if _, err := child.Append(context.Background(), event.Raw{Type: event.TypeAssistantMessage, Data: json.RawMessage(calls("2", "d"))}, ap.Value()); err != nil {
		t.Fatal(err)
	}
	if _, err := child.Repair(context.Background()); err != nil {
		t.Fatalf("repair in strict mode: %v", err)
	}
	if _, err := session.Seed(child.Events(), session.WithStrict()); err != nil {
		t.Fatalf("a repaired strict log does not load in strict mode: %v", err)
	}
}

// TestStrictReplace: STRICT-7, with look-alikes side by side. A replace
// that folds a call and leaves its result, folds a result and leaves its
// call, or folds a call still pending is refused; the same range extended
// to hold both, a prune (a result rewriting a result of the same call),
// and a replacement that makes the folded call itself are accepted; a
// result rewriting the result of another call is refused.
func TestStrictReplace(t *testing.T) {
	ap := &event.Intent{Op: event.Append()}
	build := func(strict bool) (*session.Session, map[string]int64) {
		var opts []session.Option
		if strict {
			opts = append(opts, session.WithStrict())
		}
		s := session.New(opts...)
		seqs := map[string]int64{}
		add := func(name string, ty event.Type, data string, intent *event.Intent) {
			e, err := s.Append(context.Background(), event.Raw{Type: ty, Data: json.RawMessage(data)}, intent.Value())
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			seqs[name] = e.Seq
		}
		add("tstart", event.TypeTurnStart, `{"turn":1,"trigger":{"kind":"message"}}`, nil)
		add("prompt", event.TypeUserMessage, `{"content":[{"type":"text","text":"q"}],"source":{"kind":"user"}}`, ap)
		add("ab", event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[{"type":"tool-call","id":"a","name":"r","arguments":{}},{"type":"tool-call","id":"b","name":"r","arguments":{}}]}`, ap)
		add("ra", event.TypeToolResult, `{"turn":1,"step":1,"callId":"a","content":[{"type":"text","text":"A"}],"isError":false}`, ap)
		add("rb", event.TypeToolResult, `{"turn":1,"step":1,"callId":"b","content":[{"type":"text","text":"B"}],"isError":false}`, ap)
		add("c", event.TypeAssistantMessage, `{"turn":1,"step":2,"content":[{"type":"tool-call","id":"c","name":"r","arguments":{}}]}`, ap)
		return s, seqs
	}
	summary := `{"content":[{"type":"text","text":"summary"}],"source":{"kind":"plugin"}}`
	rep := func(start, end int64, src ...int64) *event.Intent {
		return &event.Intent{Op: event.Replace(start, end), Sources: src}
	}
	cases := []struct {
		name string
		ty   event.Type
		data string
		from func(m map[string]int64) *event.Intent
		ok   bool
	}{
		{"the call, its results left", event.TypeUserMessage, summary, func(m map[string]int64) *event.Intent { return rep(m["ab"], m["ab"], m["ab"]) }, false},
		{"one result, its call left", event.TypeUserMessage, summary, func(m map[string]int64) *event.Intent { return rep(m["ra"], m["ra"], m["ra"]) }, false},
		{"the call and one of its results", event.TypeUserMessage, summary, func(m map[string]int64) *event.Intent { return rep(m["ab"], m["ra"], m["ab"], m["ra"]) }, false},
		{"the call and both results", event.TypeUserMessage, summary, func(m map[string]int64) *event.Intent {
			return rep(m["prompt"], m["rb"], m["prompt"], m["ab"], m["ra"], m["rb"])
		}, true},
		{"a pending call", event.TypeUserMessage, summary, func(m map[string]int64) *event.Intent { return rep(m["c"], m["c"], m["c"]) }, false},
		{"a prune of a result", event.TypeToolResult, `{"turn":1,"step":1,"callId":"a","content":[{"type":"text","text":"[pruned]"}],"isError":false}`, func(m map[string]int64) *event.Intent { return rep(m["ra"], m["ra"], m["ra"]) }, true},
		{"a result rewriting another call's result", event.TypeToolResult, `{"turn":1,"step":1,"callId":"b","content":[],"isError":false}`, func(m map[string]int64) *event.Intent { return rep(m["ra"], m["ra"], m["ra"]) }, false},
		{"a result for a made call, before it", event.TypeToolResult, `{"turn":1,"step":1,"callId":"c","content":[],"isError":false}`, func(m map[string]int64) *event.Intent { return rep(m["prompt"], m["prompt"], m["prompt"]) }, false},
		{"a second result for an answered call", event.TypeToolResult, `{"turn":1,"step":1,"callId":"a","content":[],"isError":false}`, func(m map[string]int64) *event.Intent { return rep(m["prompt"], m["prompt"], m["prompt"]) }, false},
		{"a second message making a call", event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[{"type":"tool-call","id":"a","name":"r","arguments":{}}]}`, func(m map[string]int64) *event.Intent { return rep(m["prompt"], m["prompt"], m["prompt"]) }, false},
		{"a result for a call never made", event.TypeToolResult, `{"turn":1,"step":1,"callId":"zz","content":[],"isError":false}`, func(m map[string]int64) *event.Intent { return rep(m["prompt"], m["prompt"], m["prompt"]) }, false},
		{"the calls remade, their results folded", event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[{"type":"tool-call","id":"a","name":"r","arguments":{}},{"type":"tool-call","id":"b","name":"r","arguments":{}}]}`, func(m map[string]int64) *event.Intent { return rep(m["ab"], m["rb"], m["ab"], m["ra"], m["rb"]) }, false},
		{"answered calls remade, their results kept", event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[{"type":"tool-call","id":"a","name":"r","arguments":{}},{"type":"tool-call","id":"b","name":"r","arguments":{}}]}`, func(m map[string]int64) *event.Intent { return rep(m["ab"], m["ab"], m["ab"]) }, false},
		{"one result for two folded", event.TypeToolResult, `{"turn":1,"step":1,"callId":"a","content":[],"isError":false}`, func(m map[string]int64) *event.Intent { return rep(m["ra"], m["rb"], m["ra"], m["rb"]) }, false},
		{"a new call in place of the prompt", event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[{"type":"tool-call","id":"n","name":"r","arguments":{}}]}`, func(m map[string]int64) *event.Intent { return rep(m["prompt"], m["prompt"], m["prompt"]) }, false},
		{"a replacement making the pending call itself", event.TypeAssistantMessage, `{"turn":1,"step":2,"content":[{"type":"tool-call","id":"c","name":"r","arguments":{"x":1}}]}`, func(m map[string]int64) *event.Intent { return rep(m["c"], m["c"], m["c"]) }, true},
	}
	for _, c := range cases {
		s, seqs := build(true)
		_, err := s.Append(context.Background(), event.Raw{Type: c.ty, Data: json.RawMessage(c.data)}, c.from(seqs).Value())
		if c.ok && err != nil || !c.ok && !errors.Is(err, event.CodeStrictReplaceUnbalanced) {
			t.Errorf("%s: %v", c.name, err)
		}
		loose, seqs := build(false)
		if _, err := loose.Append(context.Background(), event.Raw{Type: c.ty, Data: json.RawMessage(c.data)}, c.from(seqs).Value()); err != nil {
			t.Errorf("%s without strict mode: %v", c.name, err)
		}
	}
}

// TestStrictFork: a fork of a strict session is strict, with its
// parent's other options (the token estimator, the vocabulary).
func TestStrictFork(t *testing.T) {
	voc, err := event.NewVocabulary(event.TypeSpec{Type: "app/note"})
	if err != nil {
		t.Fatal(err)
	}
	est := func(m message.Message) int { return 1000 }
	s := session.New(session.WithStrict(), session.WithVocabulary(voc), session.WithTokenEstimator(est))
	s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: json.RawMessage(`{"turn":1,"trigger":{"kind":"message"}}`)})
	s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: json.RawMessage(`{"content":[{"type":"text","text":"q"}],"source":{"kind":"user"}}`)}, event.Intent{Op: event.Append()})
	end, err := s.Append(context.Background(), event.Raw{Type: event.TypeTurnEnd, Data: json.RawMessage(`{"turn":1,"reason":{"kind":"completed"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	child, err := s.Fork(end.Seq)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := child.Append(context.Background(), event.Raw{Type: event.TypeStepStart, Data: json.RawMessage(`{"turn":1,"step":1}`)}); !errors.Is(err, event.CodeStrictNoTurn) {
		t.Fatalf("the child is not strict: %v", err)
	}
	if _, err := child.Append(context.Background(), event.Raw{Type: "app/note", Data: json.RawMessage(`{}`)}); err != nil {
		t.Fatalf("the child does not know the parent's registered type: %v", err)
	}
	if child.Tokens() != 1000 {
		t.Fatalf("the child's tokens %d: not the parent's estimator", child.Tokens())
	}
}

// TestStrictStateMachine drives harness-like traffic aimed at the strict
// rules (ops.GenStrictStep: ids from a small pool, turn numbers near the
// open one, balanced and unbalanced replaces), seeds of the log (intact or
// broken), forks and repairs through a strict session and the model in
// strict mode, comparing every outcome and the state. Then the log is cut
// at a random point, as a crash would: the prefix loads in strict mode,
// repair's closers are accepted, and the repaired log loads in strict mode
// again (STRICT-8). Every strict code must come up in a default-sized run.
func TestStrictStateMachine(t *testing.T) {
	produced := map[string]int{}
	checks := 0
	rapid.Check(t, func(t *rapid.T) {
		p := ops.NewStrictPair()
		checks++
		defer func() {
			for c, n := range p.Codes {
				produced[c] += n
			}
		}()
		step := func(s ops.Step) {
			if d := p.Step(s); d != "" {
				t.Fatal(d)
			}
		}
		state := p.ModelState
		traffic := func(t *rapid.T) { step(ops.GenStrictStep(ops.Rapid{T: t}, state())) }
		t.Repeat(map[string]func(*rapid.T){
			"traffic":  traffic,
			"traffic2": traffic,
			"traffic3": traffic,
			"traffic4": traffic,
			"traffic5": traffic,
			"traffic6": traffic,
			"seed":     func(t *rapid.T) { step(ops.GenSeed(ops.Rapid{T: t}, state())) },
			"fork":     func(t *rapid.T) { step(ops.GenFork(ops.Rapid{T: t}, state())) },
			"repair":   func(t *rapid.T) { step(ops.Step{Kind: ops.KindRepair}) },
			"": func(t *rapid.T) {
				log := state().Events
				cut := rapid.IntRange(0, len(log)).Draw(t, "cut")
				s, err := session.Seed(log[:cut], session.WithStrict())
				if err != nil {
					t.Fatalf("a prefix of a strict log does not load in strict mode: %v", err)
				}
				if _, err := s.Repair(context.Background()); err != nil {
					t.Fatal(err)
				}
				if _, err := session.Seed(s.Events(), session.WithStrict()); err != nil {
					var b strings.Builder
					for _, e := range s.Events() {
						j, _ := e.MarshalJSON()
						b.Write(append(j, '\n'))
					}
					t.Fatalf("repair's closers break a strict rule: %v\n%s", err, b.String())
				}
			},
		})
	})
	if checks >= 500 {
		for _, c := range event.Codes() {
			if strings.HasPrefix(string(c), "strict.") && produced[string(c)] == 0 {
				t.Errorf("no step produced %s", c)
			}
		}
	}
	t.Logf("outcomes over %d checks: %v", checks, produced)
}
