package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/model"
)

func clock() func() int64 {
	var now int64 = 1000
	return func() int64 { now++; return now }
}

const (
	user      = `{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}`
	assistant = `{"turn":1,"step":1,"content":[{"type":"text","text":"hello"}]}`
	turnStart = `{"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}`
	turnEnd   = `{"turn":1,"reason":{"kind":"completed"}}`
	chunk     = `{"turn":1,"step":1,"chunk":{"delta":"he"}}`
)

type appendCall struct {
	t      event.Type
	data   any
	intent *event.Intent
}

func ap(t event.Type, data string, intent *event.Intent) appendCall {
	return appendCall{t, json.RawMessage(data), intent}
}

func appendI(sources ...int64) *event.Intent {
	i := event.AppendIntent(sources...)
	if sources == nil {
		i.Sources = nil
	}
	return &i
}

func replaceI(start, end int64, sources ...int64) *event.Intent {
	i := event.ReplaceIntent(start, end, sources...)
	return &i
}

// base is a log with surface [1 2 4 5]: 0 turn/start, 1 user, 2 assistant,
// 3 chunk, 4 user, 5 user.
var base = []appendCall{
	ap(event.TypeTurnStart, turnStart, nil),
	ap(event.TypeUserMessage, user, appendI()),
	ap(event.TypeAssistantMessage, assistant, appendI()),
	ap(event.TypeAssistantChunk, chunk, nil),
	ap(event.TypeUserMessage, user, appendI()),
	ap(event.TypeUserMessage, user, appendI()),
}

// ruleCases lists, for every error code, an append that the base log
// rejects with it, and some that it accepts. Each names its rule.
var ruleCases = []struct {
	name   string
	rule   string
	call   appendCall
	code   event.Code
	prefix []appendCall // appended after base first
}{
	{name: "unknown type", rule: "SURF-3", call: ap("user/msg", user, appendI()), code: event.CodeUnknownType},
	{name: "legacy type", rule: "SURF-3", call: ap("request/header-delta", `{}`, nil), code: event.CodeUnknownType},
	{name: "malformed data", rule: "SURF-4", call: ap(event.TypeUserMessage, `{"content":[`, appendI()), code: event.CodeDataNotJSON},
	{name: "negative zero", rule: "SURF-4", call: ap(event.TypeTodoWrite, `{"todos":[-0.0]}`, nil), code: event.CodeDataNotJSON},
	{name: "duplicate key", rule: "SURF-4", call: ap(event.TypeTodoWrite, `{"todos":[],"todos":[]}`, nil), code: event.CodeDataNotJSON},
	{name: "unsafe integer", rule: "SURF-4", call: ap(event.TypeTodoWrite, `{"todos":[9007199254740992]}`, nil), code: event.CodeDataNotJSON},
	{name: "NaN", rule: "SURF-4", call: appendCall{event.TypeTodoWrite, map[string]any{"todos": []float64{math.NaN()}}, nil}, code: event.CodeDataNotJSON},
	{name: "channel", rule: "SURF-4", call: appendCall{event.TypeTodoWrite, make(chan int), nil}, code: event.CodeDataNotJSON},
	{name: "invalid UTF-8", rule: "SURF-4", call: ap(event.TypeTodoWrite, "{\"todos\":[\"\xc3\"]}", nil), code: event.CodeDataNotJSON},
	{name: "data not object", rule: "SURF-5", call: ap(event.TypeTodoWrite, `[]`, nil), code: event.CodeDataInvalid},
	{name: "missing field", rule: "SURF-5", call: ap(event.TypeUserMessage, `{"content":[]}`, appendI()), code: event.CodeDataInvalid},
	{name: "wrong kind", rule: "SURF-5", call: ap(event.TypeStepStart, `{"turn":"1","step":1}`, nil), code: event.CodeDataInvalid},
	{name: "bad block", rule: "SURF-5", call: ap(event.TypeUserMessage, `{"content":["text"],"source":{"kind":"u"}}`, appendI()), code: event.CodeDataInvalid},
	{name: "enum", rule: "SURF-5", call: ap(event.TypeRequestHeader, `{"header":{},"reason":"fallback"}`, nil), code: event.CodeDataInvalid},
	{name: "marker on chunk", rule: "SURF-6", call: ap(event.TypeAssistantChunk, chunk, appendI()), code: event.CodeOpForbidden},
	{name: "sources on tool/call", rule: "SURF-6", call: ap(event.TypeToolCall, `{"turn":1,"step":1,"callId":"c","name":"n","arguments":"{}"}`, &event.Intent{Sources: []int64{0}}), code: event.CodeSourcesForbidden},
	{name: "no marker", rule: "SURF-7", call: ap(event.TypeUserMessage, user, nil), code: event.CodeOpMissing},
	{name: "zero intent", rule: "SURF-7", call: ap(event.TypeUserMessage, user, &event.Intent{}), code: event.CodeOpMissing},
	{name: "op kind out of range", rule: "SURF-8", call: ap(event.TypeUserMessage, user, &event.Intent{Op: event.SurfaceOp{Kind: 42}}), code: event.CodeOpInvalid},
	{name: "negative endpoint", rule: "SURF-8", call: ap(event.TypeUserMessage, user, replaceI(-1, 2, 2)), code: event.CodeReplaceInvalid},
	{name: "empty sources", rule: "SURF-9", call: ap(event.TypeUserMessage, user, &event.Intent{Op: event.Append(), Sources: []int64{}}), code: event.CodeSourcesEmpty},
	{name: "negative source", rule: "SURF-9", call: ap(event.TypeUserMessage, user, appendI(-3)), code: event.CodeSourcesInvalid},
	{name: "duplicate source", rule: "SURF-9", call: ap(event.TypeUserMessage, user, appendI(1, 1)), code: event.CodeSourcesDuplicate},
	{name: "forward source", rule: "SURF-9", call: ap(event.TypeUserMessage, user, appendI(6)), code: event.CodeSourcesNotEarlier},
	{name: "start shadowed", rule: "SURF-12", call: ap(event.TypeUserMessage, user, replaceI(1, 7, 1, 2, 4, 5, 6)), code: event.CodeReplaceStartNotOnSurface,
		prefix: []appendCall{ap(event.TypeUserMessage, user, replaceI(1, 2, 1, 2))}},
	{name: "start not a surface event", rule: "SURF-12", call: ap(event.TypeUserMessage, user, replaceI(3, 4, 3, 4)), code: event.CodeReplaceStartNotOnSurface},
	{name: "end beyond log", rule: "SURF-12", call: ap(event.TypeUserMessage, user, replaceI(1, 99, 1)), code: event.CodeReplaceEndNotOnSurface},
	{name: "reversed", rule: "SURF-13", call: ap(event.TypeUserMessage, user, replaceI(4, 2, 2, 4)), code: event.CodeReplaceReversed},
	{name: "incomplete", rule: "SURF-14", call: ap(event.TypeUserMessage, user, replaceI(1, 4, 1, 4)), code: event.CodeReplaceSourcesIncomplete},
	{name: "absent sources cover nothing", rule: "SURF-14", call: ap(event.TypeUserMessage, user, &event.Intent{Op: event.Replace(1, 1)}), code: event.CodeReplaceSourcesIncomplete},
	// Accepted.
	{name: "append", rule: "SURF-10", call: ap(event.TypeUserMessage, user, appendI())},
	{name: "empty sources on assistant", rule: "SURF-9", call: ap(event.TypeAssistantMessage, assistant, &event.Intent{Op: event.Append(), Sources: []int64{}})},
	{name: "replace one", rule: "SURF-11", call: ap(event.TypeUserMessage, user, replaceI(2, 2, 2))},
	{name: "replace all, superset", rule: "SURF-14", call: ap(event.TypeUserMessage, user, replaceI(1, 5, 0, 1, 2, 3, 4, 5))},
	{name: "numerically reversed is fine", rule: "SURF-13", call: ap(event.TypeUserMessage, user, replaceI(6, 4, 6, 4)),
		prefix: []appendCall{ap(event.TypeUserMessage, user, replaceI(1, 2, 1, 2))}},
	{name: "nested", rule: "SURF-15", call: ap(event.TypeUserMessage, user, replaceI(6, 7, 6, 7)),
		prefix: []appendCall{ap(event.TypeUserMessage, user, replaceI(1, 2, 1, 2)), ap(event.TypeUserMessage, user, replaceI(4, 5, 4, 5))}},
}

func build(t *testing.T, calls []appendCall) (*session.Session, *model.Session) {
	t.Helper()
	s, m := session.New(session.WithClock(clock())), model.NewSession(clock())
	for i, c := range calls {
		if _, err := s.Append(context.Background(), event.Raw{Type: c.t, Data: c.data}, c.intent.Value()); err != nil {
			t.Fatalf("setup append %d: %v", i, err)
		}
		if _, err := m.Append(c.t, c.data, c.intent); err != nil {
			t.Fatalf("model setup append %d: %v", i, err)
		}
	}
	return s, m
}

// TestRules checks each case against the implementation and the model,
// and that a rejection changes nothing (SURF-17).
func TestRules(t *testing.T) {
	produced := map[event.Code]bool{}
	for _, tc := range ruleCases {
		t.Run(tc.rule+"/"+tc.name, func(t *testing.T) {
			s, m := build(t, append(slices.Clone(base), tc.prefix...))
			beforeEvents, beforeSurface, beforeMsgs := len(s.Events()), s.Surface().Slice(), s.Messages().Slice()
			_, err := s.Append(context.Background(), event.Raw{Type: tc.call.t, Data: tc.call.data}, tc.call.intent.Value())
			_, merr := m.Append(tc.call.t, tc.call.data, tc.call.intent)
			if got, want := event.CodeOf(err), tc.code; got != want {
				t.Fatalf("impl: code %q, want %q (err: %v)", got, want, err)
			}
			if got := event.CodeOf(merr); got != tc.code {
				t.Fatalf("model: code %q, want %q (err: %v)", got, tc.code, merr)
			}
			if tc.code == "" {
				if !slices.Equal(s.Surface().Slice(), m.Surface()) {
					t.Fatalf("surface %v, model %v", s.Surface(), m.Surface())
				}
				return
			}
			produced[tc.code] = true
			if !errors.Is(err, tc.code) {
				t.Fatalf("errors.Is(%v, %q) is false", err, tc.code)
			}
			var typed *event.Error
			if !errors.As(err, &typed) || typed.Code != tc.code {
				t.Fatalf("errors.As gives %#v", typed)
			}
			// SURF-17: nothing changed.
			if len(s.Events()) != beforeEvents || !slices.Equal(s.Surface().Slice(), beforeSurface) || s.Messages().Len() != len(beforeMsgs) {
				t.Fatalf("a rejected append changed the session")
			}
		})
	}
	t.Run("every append code produced", func(t *testing.T) {
		for _, c := range event.Codes() {
			if strings.HasPrefix(string(c), "persist.") || strings.HasPrefix(string(c), "vocabulary.") || strings.HasPrefix(string(c), "compaction.") || strings.HasPrefix(string(c), "strict.") ||
				strings.HasPrefix(string(c), "released.") || strings.HasPrefix(string(c), "convert.") || strings.HasPrefix(string(c), "import.") {
				continue // store errors: impl/persist; registration: TestVocabulary; compaction: impl/compaction; strict mode: TestStrictMode and the strict vectors; released files: impl/released; conversion: impl/convert; other harnesses' logs: impl/importer
			}
			switch c {
			case event.CodeInvalidEnvelope, event.CodeSeqNotContiguous, event.CodeForkBoundaryOutOfRange,
				event.CodeForkOpenTurn, event.CodeProvenanceUnknownSeq, event.CodeOpInvalid, event.CodeReplaceInvalid:
				// Produced by TestSeedRules, TestForkAndProvenance and the wire cases.
				continue
			}
			if !produced[c] {
				t.Errorf("no case produces %s", c)
			}
		}
	})
}

// TestSeedRules: a seed is checked exactly like appends (SURF-18) and
// names the index of the first bad event; wire-form envelopes (SURF-1)
// and markers (SURF-8) are decoded strictly.
func TestSeedRules(t *testing.T) {
	s, _ := build(t, base)
	good := s.Events()
	if _, err := session.Seed(good); err != nil {
		t.Fatalf("reseeding a valid log: %v", err)
	}
	gap := slices.Clone(good)
	gap[3].Seq = 4
	bad := []struct {
		name   string
		events []event.Event
		code   event.Code
		index  int
	}{
		{"seq gap SURF-2", gap, event.CodeSeqNotContiguous, 3},
		{"negative time SURF-1", []event.Event{{Type: event.TypeTodoWrite, Seq: 0, Time: -1, Data: json.RawMessage(`{"todos":[]}`)}}, event.CodeInvalidEnvelope, 0},
		{"no marker SURF-7", append(slices.Clone(good), event.Event{Type: event.TypeUserMessage, Seq: 6, Data: json.RawMessage(user)}), event.CodeOpMissing, 6},
		{"forward source SURF-9", append(slices.Clone(good), event.Event{Type: event.TypeUserMessage, Seq: 6, Data: json.RawMessage(user), Op: event.Append(), Sources: []int64{7}}), event.CodeSourcesNotEarlier, 6},
	}
	for _, tc := range bad {
		_, err := session.Seed(tc.events)
		var e *event.Error
		if !errors.As(err, &e) || e.Code != tc.code || e.Index != tc.index {
			t.Errorf("%s: got %v, want %s at index %d", tc.name, err, tc.code, tc.index)
		}
		if _, merr := model.SeedSession(tc.events, clock()); event.CodeOf(merr) != tc.code {
			t.Errorf("%s: model gives %v", tc.name, merr)
		}
	}
	wire := []struct {
		line string
		code event.Code
	}{
		{`{"type":"user/message","seq":0,"time":1,"data":{}}`, event.CodeDataInvalid},
		{`{"type":"user/message","seq":0,"time":1,"data":` + user + `,"surfaceOp":"prepend"}`, event.CodeOpInvalid},
		{`{"type":"user/message","seq":0,"time":1,"data":` + user + `,"surfaceOp":7}`, event.CodeOpInvalid},
		{`{"type":"user/message","seq":0,"time":1,"data":` + user + `,"surfaceOp":{"op":"replace","start":0,"end":0,"x":1}}`, event.CodeReplaceInvalid},
		{`{"type":"user/message","seq":0,"time":1,"data":` + user + `,"surfaceOp":{"op":"replace","start":0.5,"end":0}}`, event.CodeReplaceInvalid},
		{`{"type":"user/message","seq":0,"time":1,"data":` + user + `,"surfaceOp":"append","sourceEventSeqs":"0"}`, event.CodeSourcesInvalid},
		{`{"type":"user/message","seq":0,"time":1,"data":` + user + `,"surfaceOp":"append","extra":1}`, event.CodeInvalidEnvelope},
		{`{"type":"user/message","seq":"0","time":1,"data":` + user + `,"surfaceOp":"append"}`, event.CodeInvalidEnvelope},
		{`{"type":"user/message","type":"user/message","seq":0,"time":1,"data":` + user + `}`, event.CodeInvalidEnvelope},
		{`[]`, event.CodeInvalidEnvelope},
		{`{"type":"user/message","seq":1,"time":1,"data":` + user + `,"surfaceOp":"bogus"}`, event.CodeSeqNotContiguous},
	}
	for _, tc := range wire {
		_, err := session.SeedJSON([]json.RawMessage{json.RawMessage(tc.line)})
		if event.CodeOf(err) != tc.code {
			t.Errorf("%s: got %v, want %s", tc.line, err, tc.code)
		}
	}
}

// TestForkAndProvenance covers SURF-23 and SURF-24.
func TestForkAndProvenance(t *testing.T) {
	calls := append(slices.Clone(base),
		ap(event.TypeTurnEnd, turnEnd, nil),                                                              // 6
		ap(event.TypeUserMessage, user, replaceI(1, 2, 1, 2, 3)),                                         // 7
		ap(event.TypeAssistantMessage, assistant, replaceI(7, 4, 7, 4)),                                  // 8
		ap(event.TypeAssistantMessage, assistant, &event.Intent{Op: event.Append(), Sources: []int64{}}), // 9
	)
	s, m := build(t, calls)
	if got := s.Surface().Slice(); !slices.Equal(got, []int64{8, 5, 9}) {
		t.Fatalf("surface %v", got)
	}
	for seq := int64(-1); seq <= 10; seq++ {
		got, err := s.Provenance(seq)
		want, merr := m.Provenance(seq)
		if event.CodeOf(err) != event.CodeOf(merr) || !slices.Equal(got, want) {
			t.Fatalf("provenance(%d): %v %v, model %v %v", seq, got, err, want, merr)
		}
	}
	if got, _ := s.Provenance(8); !slices.Equal(got, []int64{1, 2, 3, 4, 7}) {
		t.Fatalf("provenance(8) = %v", got)
	}
	if _, err := s.Provenance(10); !errors.Is(err, event.CodeProvenanceUnknownSeq) {
		t.Fatalf("provenance(10): %v", err)
	}
	if _, err := s.Fork(5); !errors.Is(err, event.CodeForkOpenTurn) {
		t.Fatalf("fork(5): %v", err)
	}
	if _, err := s.Fork(10); !errors.Is(err, event.CodeForkBoundaryOutOfRange) {
		t.Fatalf("fork(10): %v", err)
	}
	child, err := s.Fork(6)
	if err != nil {
		t.Fatal(err)
	}
	if got := child.Surface().Slice(); !slices.Equal(got, []int64{1, 2, 4, 5}) {
		t.Fatalf("child surface %v", got)
	}
	if s.Len() != 10 {
		t.Fatalf("fork changed the parent")
	}
	// SURF-25: the child and a seed of the same prefix agree.
	seeded, err := session.Seed(s.Events()[:7])
	if err != nil || !slices.Equal(seeded.Surface().Slice(), child.Surface().Slice()) {
		t.Fatalf("seed of the prefix: %v %v", seeded.Surface(), err)
	}
}
