package released

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/event"
)

const (
	rTurn   = `{"type":"turn/start","seq":0,"time":-5,"data":{"turn":1}}`
	rUser   = `{"type":"user/message","seq":1,"time":1,"data":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"},"role":"user","id":"u1"},"surfaceOp":"append"}`
	rAsst   = `{"type":"assistant/message","seq":2,"time":2,"data":{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"tool-call","id":"c1","name":"read","arguments":{}}],"source":{"kind":"model","provider":"p","model":"m"}}},"sourceEventSeqs":[],"surfaceOp":"append"}`
	rCall   = `{"type":"tool/call","seq":3,"time":3,"data":{"turn":1,"step":1,"callId":"c1","name":"read","arguments":"{}"}}`
	rResult = `{"type":"tool/result","seq":4,"time":4,"data":{"turn":1,"step":1,"message":{"id":"r1","role":"user","content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"long text"}],"isError":false}],"source":{"kind":"tool","callId":"c1"}},"meta":{"ms":1}},"sourceEventSeqs":[3],"surfaceOp":"append"}`
	rPrune  = `{"type":"tool/result","seq":5,"time":5,"data":{"turn":1,"step":1,"message":{"id":"r1","role":"user","content":[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"short"}],"isError":false}],"source":{"kind":"tool","callId":"c1"}},"meta":{"ms":1}},"surfaceOp":{"op":"replace","start":4,"end":4},"sourceEventSeqs":[4]}`
	rEmpty  = `{"type":"assistant/message","seq":6,"time":6,"data":{"turn":1,"step":2,"message":{"id":"a2","role":"assistant","content":[],"source":{"kind":"model","provider":"p","model":"m"}}},"surfaceOp":"append"}`
	rSeed   = `{"type":"session/end-seed","seq":7,"time":7,"data":{}}`
	rNote   = `{"type":"plugin/note","seq":8,"time":8,"data":{"n":1},"ignorable":true}`
)

func logOf(lines ...string) *Log {
	l := &Log{}
	for _, s := range lines {
		l.Events = append(l.Events, json.RawMessage(s))
	}
	return l
}

// TestCheckDerives (REL-5): a released log with a pruned tool result, an
// empty assistant message, session/end-seed and an ignorable unknown type
// derives the identified messages; time may be negative.
func TestCheckDerives(t *testing.T) {
	s, err := Check(logOf(rTurn, rUser, rAsst, rCall, rResult, rPrune, rEmpty, rSeed, rNote))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Surface; len(got) != 4 || got[0] != 1 || got[1] != 2 || got[2] != 5 || got[3] != 6 {
		t.Fatalf("surface %v", got)
	}
	if len(s.Messages) != 3 || !strings.Contains(string(s.Messages[0]), `"id":"u1"`) || !strings.Contains(string(s.Messages[2]), `"short"`) || !strings.Contains(string(s.Messages[1]), `"id":"a1"`) {
		t.Fatalf("messages %s", s.Messages)
	}
	if s.Events[0].Time != -5 {
		t.Fatalf("time %d", s.Events[0].Time)
	}
}

// TestCheckRefuses: REL-2 (types), REL-3 (identified messages), REL-4 (a
// replace by a tool/result), each with its code and the seq of the event.
func TestCheckRefuses(t *testing.T) {
	head := []string{rTurn, rUser, rAsst, rCall, rResult}
	replace := func(data string, start, end int) string {
		return `{"type":"tool/result","seq":5,"time":5,"data":` + data + `,"surfaceOp":{"op":"replace","start":` + itoa(start) + `,"end":` + itoa(end) + `},"sourceEventSeqs":` + sources(start, end) + `}`
	}
	resultData := func(id, callID, text string) string {
		return `{"turn":1,"step":1,"message":{"id":"` + id + `","role":"user","content":[{"type":"tool-result","toolCallId":"` + callID + `","content":[{"type":"text","text":"` + text + `"}],"isError":false}],"source":{"kind":"tool","callId":"` + callID + `"}},"meta":{"ms":1}}`
	}
	at5 := func(typ, data, extra string) string {
		return `{"type":"` + typ + `","seq":5,"time":5,"data":` + data + extra + `}`
	}
	cases := []struct {
		name string
		line string
		code event.Code
		says string
	}{
		{"unknown type", at5("context/message", `{"content":[],"source":{"kind":"x"}}`, `,"surfaceOp":"append"`), event.CodeUnknownType, "not marked ignorable"},
		{"retired type even if ignorable", at5("mode/set", `{}`, `,"ignorable":true`), event.CodeReleasedTypeRefused, "mode/set"},
		{"fallback header", at5("request/header", `{"header":{},"reason":"fallback"}`, ``), event.CodeReleasedTypeRefused, "fallback"},
		{"b736 user message", at5("user/message", `{"content":[],"source":{"kind":"user"}}`, `,"surfaceOp":"append"`), event.CodeReleasedMessageInvalid, "lacks an identified message"},
		{"b736 assistant message", at5("assistant/message", `{"turn":1,"step":1,"content":[]}`, `,"surfaceOp":"append"`), event.CodeReleasedMessageInvalid, "lacks an identified message"},
		{"wrong role", at5("user/message", `{"id":"x","role":"assistant","content":[],"source":{"kind":"user"}}`, `,"surfaceOp":"append"`), event.CodeReleasedMessageInvalid, `role "user"`},
		{"no model", at5("assistant/message", `{"turn":1,"step":1,"message":{"id":"x","role":"assistant","content":[],"source":{"kind":"model","provider":"p"}}}`, `,"surfaceOp":"append"`), event.CodeReleasedMessageInvalid, "model source"},
		{"two call ids", at5("tool/result", resultData("r2", "c1", "t")[:0]+`{"turn":1,"step":1,"message":{"id":"r2","role":"user","content":[{"type":"tool-result","toolCallId":"c2","content":[],"isError":false}],"source":{"kind":"tool","callId":"c1"}}}`, `,"surfaceOp":"append"`), event.CodeReleasedMessageInvalid, "mismatched tool call ids"},
		{"marker on a log type", at5("todo/write", `{"todos":[]}`, `,"surfaceOp":"append"`), event.CodeOpForbidden, ""},
		{"replace of two nodes", replace(resultData("r1", "c1", "x"), 2, 4), event.CodeReleasedToolResultReplace, "exactly one current node"},
		{"replace of a user message", replace(resultData("r1", "c1", "x"), 1, 1), event.CodeReleasedToolResultReplace, "target a current tool/result"},
		{"replace changing the id", replace(resultData("r9", "c1", "x"), 4, 4), event.CodeReleasedToolResultReplace, "only content"},
		{"replace range first", replace(resultData("r1", "c1", "x"), 3, 3), event.CodeReplaceStartNotOnSurface, ""},
	}
	for _, c := range cases {
		_, err := Check(logOf(append(append([]string(nil), head...), c.line)...))
		var ee *event.Error
		if !errors.Is(err, c.code) || !errors.As(err, &ee) || ee.Seq != 5 || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want %s naming 5 and saying %q", c.name, err, c.code, c.says)
		}
	}
	// The same replace with only the content changed is accepted.
	if _, err := Check(logOf(append(append([]string(nil), head...), replace(resultData("r1", "c1", "x"), 4, 4))...)); err != nil {
		t.Fatal(err)
	}
}

func sources(start, end int) string {
	if start == end {
		return "[" + itoa(start) + "]"
	}
	return "[" + itoa(start) + "," + itoa(end) + "]"
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestUnknownPackedKind: a row of a packed kind the reader does not know
// is no packed row (the three tags are a closed set): it reads as an
// ordinary line and the released rules refuse it (an envelope without seq,
// with seq0), naming it.
func TestUnknownPackedKind(t *testing.T) {
	file := []byte(`{"type":"session","version":0,"id":"s1","createdAt":1,"delegationDepth":0}` + "\n" + rTurn + "\n" +
		`{"type":"image-chunks","seq0":1,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["a","b","c"]}}` + "\n")
	l, err := Read(file)
	if err != nil {
		t.Fatal(err)
	}
	var ee *event.Error
	if _, err := Check(l); !errors.Is(err, event.CodeInvalidEnvelope) || !errors.As(err, &ee) || ee.Seq != 1 {
		t.Fatalf("%v", err)
	}
}
