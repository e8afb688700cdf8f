package convert_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/convert"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/released"
	"github.com/surfacelog/surface/impl/session"
)

func ev(seq int64, t event.Type, data string, op event.SurfaceOp, sources ...int64) event.Event {
	return event.Event{Type: t, Seq: seq, Time: 100 + seq, Data: raw(data), Op: op, Sources: sources}
}

const (
	turn1  = `{"turn":1,"trigger":{"kind":"message"}}`
	prompt = `{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}`
	result = `{"turn":1,"step":1,"callId":"a","content":[{"type":"text","text":"long"}],"isError":false}`
)

// TestToReleasedShapes pins the released form of each converted type:
// key orders, the legacy message id, a rewrite keeping its message's id,
// the compaction id shared by a bracket and written into the checkpoint's
// source, and the turn/end reasons (B5).
func TestToReleasedShapes(t *testing.T) {
	in := []event.Event{
		ev(0, event.TypeTurnStart, turn1, event.SurfaceOp{}),
		ev(1, event.TypeUserMessage, prompt, event.Append()),
		ev(2, event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[{"type":"tool-call","id":"a","name":"read","arguments":{}}],"provenance":{"provider":"p","model":"m"},"usage":{"outputTokens":2}}`, event.Append()),
		ev(3, event.TypeToolCall, `{"turn":1,"step":1,"callId":"a","name":"read","arguments":"{}"}`, event.SurfaceOp{}),
		ev(4, event.TypeToolResult, result, event.Append(), 3),
		ev(5, event.TypeToolResult, `{"turn":1,"step":1,"callId":"a","content":[{"type":"text","text":"short"}],"isError":false}`, event.Replace(4, 4), 4),
		ev(6, event.TypeCompactStart, `{"turn":1}`, event.SurfaceOp{}),
		ev(7, event.TypeCompactSummary, `{"summary":[{"type":"text","text":"s"}],"shadowedRange":{"start":1,"end":1},"shadowedSeqs":[1],"shadowedTokenCount":9,"provider":"p","model":"m"}`, event.SurfaceOp{}),
		ev(8, event.TypeUserMessage, `{"content":[{"type":"text","text":"s"}],"source":{"kind":"plugin","plugin":"compact"}}`, event.Replace(1, 1), 6, 7, 1),
		ev(9, event.TypeCompactEnd, `{"turn":1}`, event.SurfaceOp{}),
		ev(10, event.TypeTurnEnd, `{"turn":1,"reason":{"kind":"error","step":1,"message":"boom"}}`, event.SurfaceOp{}),
	}
	out, err := convert.ToReleased("s1", in, convert.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"turn":1}`,
		`{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"},"id":"legacy-message:s1:1","role":"user"}`,
		`{"turn":1,"step":1,"usage":{"outputTokens":2},"message":{"id":"legacy-message:s1:2","role":"assistant","content":[{"type":"tool-call","id":"a","name":"read","arguments":{}}],"source":{"provider":"p","model":"m","kind":"model"}}}`,
		`{"turn":1,"step":1,"callId":"a","name":"read","arguments":"{}"}`,
		`{"turn":1,"step":1,"message":{"id":"legacy-message:s1:4","role":"user","content":[{"type":"tool-result","toolCallId":"a","content":[{"type":"text","text":"long"}],"isError":false}],"source":{"kind":"tool","callId":"a"}}}`,
		`{"turn":1,"step":1,"message":{"id":"legacy-message:s1:4","role":"user","content":[{"type":"tool-result","toolCallId":"a","content":[{"type":"text","text":"short"}],"isError":false}],"source":{"kind":"tool","callId":"a"}}}`,
		`{"compactionId":"c6","turn":1}`,
		`{"compactionId":"c6","summary":[{"type":"text","text":"s"}],"shadowedRange":{"start":1,"end":1},"shadowedSeqs":[1],"shadowedTokenCount":9,"provider":"p","model":"m"}`,
		`{"content":[{"type":"text","text":"s"}],"source":{"kind":"plugin","plugin":"compact","compactionId":"c6"},"id":"legacy-message:s1:8","role":"user"}`,
		`{"compactionId":"c6","turn":1}`,
		`{"turn":1,"reason":{"kind":"error","error":{"message":"boom","code":"UNKNOWN"}}}`,
	}
	types := []event.Type{"turn/start", "user/message", "assistant/message", "tool/call", "tool/result", "tool/result", "compaction/start", "compaction/summary", "user/message", "compaction/end", "turn/end"}
	for i, e := range out {
		if string(e.Data) != want[i] || e.Type != types[i] || e.Seq != int64(i) {
			t.Errorf("event %d: %s %s\nwant %s %s", i, e.Type, e.Data, types[i], want[i])
		}
	}
	// The reasons of turn/end, both ways.
	for _, c := range []struct{ ours, theirs string }{
		{`{"kind":"aborted"}`, `{"kind":"aborted","reason":{"kind":"legacy"}}`},
		{`{"kind":"disposed"}`, `{"kind":"aborted","reason":{"kind":"disposed"}}`},
		{`{"kind":"error","message":"x","code":"C"}`, `{"kind":"error","error":{"message":"x","code":"C"}}`},
		{`{"kind":"completed"}`, `{"kind":"completed"}`},
		{`{"kind":"interrupted"}`, `{"kind":"interrupted"}`},
	} {
		log := []event.Event{ev(0, event.TypeTurnStart, turn1, event.SurfaceOp{}), ev(1, event.TypeTurnEnd, `{"turn":1,"reason":`+c.ours+`}`, event.SurfaceOp{})}
		rel, err := convert.ToReleased("s1", log, convert.Options{})
		if err != nil || string(rel[1].Data) != `{"turn":1,"reason":`+c.theirs+`}` {
			t.Errorf("%s: %v %s", c.ours, err, rel[1].Data)
			continue
		}
		back, err := convert.FromReleased("s1", rel)
		if err != nil || string(back[1].Data) != `{"turn":1,"reason":`+c.ours+`}` || string(back[0].Data) != `{"turn":1,"trigger":{"kind":"unrecorded"}}` {
			t.Errorf("%s back: %v %s %s", c.theirs, err, back[0].Data, back[1].Data)
		}
	}
}

// TestRefusals (REL-6): what has no place on the other side is refused
// with convert.not_convertible naming the event, whose seq the error
// carries; nothing is returned.
func TestRefusals(t *testing.T) {
	head := []event.Event{ev(0, event.TypeTurnStart, turn1, event.SurfaceOp{}), ev(1, event.TypeUserMessage, prompt, event.Append())}
	cases := []struct {
		name string
		e    event.Event
		opts convert.Options
		says string
	}{
		{"context meta", ev(2, event.TypeContextMessage, `{"content":[],"source":{"kind":"memory"},"meta":{"k":1}}`, event.Append()), convert.Options{}, "meta"},
		{"rejected turn", ev(2, event.TypeTurnEnd, `{"turn":1,"reason":{"kind":"rejected"}}`, event.SurfaceOp{}), convert.Options{}, "rejected"},
		{"no provenance", ev(2, event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[]}`, event.Append()), convert.Options{Provider: "p"}, "provenance"},
		{"extra member", ev(2, event.TypeUserMessage, `{"content":[],"source":{"kind":"user"},"tag":1}`, event.Append()), convert.Options{}, `"tag"`},
		{"summary outside a bracket", ev(2, event.TypeCompactSummary, `{"summary":[],"shadowedRange":{"start":1,"end":1},"shadowedSeqs":[1],"shadowedTokenCount":1,"provider":"p","model":"m"}`, event.SurfaceOp{}), convert.Options{}, "compact/start"},
		// REL-4: the released rules refuse a replace by a tool/result of a user/message.
		{"tool/result over a prompt", ev(2, event.TypeToolResult, result, event.Replace(1, 1), 1), convert.Options{}, "target a current tool/result"},
	}
	for _, c := range cases {
		_, err := convert.ToReleased("s1", append(append([]event.Event(nil), head...), c.e), c.opts)
		var ee *event.Error
		if !errors.Is(err, event.CodeConvertNotConvertible) || !errors.As(err, &ee) || ee.Seq != 2 || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// The other way: members the released message has and ours has no
	// place for.
	rel := []event.Event{
		ev(0, event.TypeTurnStart, `{"turn":1}`, event.SurfaceOp{}),
		ev(1, event.TypeAssistantMessage, `{"turn":1,"step":1,"message":{"id":"x","role":"assistant","content":[],"source":{"kind":"model","provider":"p","model":"m"},"name":"n"}}`, event.Append()),
	}
	if _, err := convert.FromReleased("s1", rel); !errors.Is(err, event.CodeConvertNotConvertible) || !strings.Contains(err.Error(), "at 1") {
		t.Errorf("message member: %v", err)
	}
}

// TestHeaders: the header maps both ways; a released header's
// delegation fields are refused unless dropped on request.
func TestHeaders(t *testing.T) {
	seed := int64(3)
	h := convert.HeaderToReleased(persist.Header{ID: "s1", CreatedAt: 5, Cwd: "/w", ParentSession: "p", SeedLength: &seed})
	if h.ID != "s1" || h.CreatedAt != 5 || *h.Cwd != "/w" || *h.ParentSession != "p" || *h.SeedLength != 3 || h.DelegationDepth != 0 {
		t.Fatalf("%+v", h)
	}
	back, err := convert.HeaderFromReleased(h, convert.Options{})
	if err != nil || back.ID != "s1" || back.Cwd != "/w" || back.ParentSession != "p" || *back.SeedLength != 3 {
		t.Fatalf("%+v %v", back, err)
	}
	h.DelegationDepth = 1
	var ee *event.Error
	if _, err := convert.HeaderFromReleased(h, convert.Options{}); !errors.Is(err, event.CodeConvertNotConvertible) || !errors.As(err, &ee) || ee.Seq != -1 {
		t.Fatalf("delegationDepth 1: %v (a header's refusal names no event)", err)
	}
	if _, err := convert.HeaderFromReleased(h, convert.Options{DropHeaderExtras: true}); err != nil {
		t.Fatal(err)
	}
}

// TestFromReleasedKeepsUnknownTypes: a released type this library does
// not know (session/end-seed among them) comes over marked ignorable,
// kept and skipped by the seed rules.
func TestFromReleasedKeepsUnknownTypes(t *testing.T) {
	rel := []event.Event{ev(0, released.TypeEndSeed, `{}`, event.SurfaceOp{}), ev(1, "llm/retry", `{"retryId":"r"}`, event.SurfaceOp{})}
	out, err := convert.FromReleased("s1", rel)
	if err != nil || !out[0].Ignorable || !out[1].Ignorable {
		t.Fatalf("%v %+v", err, out)
	}
	if _, err := session.Seed(out); err != nil {
		t.Fatal(err)
	}
}
