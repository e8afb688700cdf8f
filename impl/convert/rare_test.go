package convert_test

import (
	"errors"
	"testing"

	"github.com/surfacelog/surface/impl/convert"
	"github.com/surfacelog/surface/impl/event"
)

// These tests vary the values no generated session happens to carry, each
// beside its look-alike: every turn/end reason both ways, a reason that
// is one member away from a convertible one, a tool result with and
// without isError, a source's kind first, last and absent, a message id
// that is this seq's legacy id beside another seq's, and a conversion
// refused at the first event beside one refused at the last.

// TestTurnEndReasonsFromReleased: a released reason comes back to this
// library's form only when it is exactly what ToReleased writes; one
// member more and it passes unchanged.
func TestTurnEndReasonsFromReleased(t *testing.T) {
	cases := []struct{ reason, want string }{
		{`{"kind":"aborted","reason":{"kind":"legacy"}}`, `{"kind":"aborted"}`},
		{`{"kind":"aborted","reason":{"kind":"legacy","at":2}}`, `{"kind":"aborted","reason":{"kind":"legacy","at":2}}`},
		{`{"kind":"aborted","reason":{"kind":"disposed"}}`, `{"kind":"disposed"}`},
		{`{"kind":"aborted","reason":{"kind":"disposed","by":"x"}}`, `{"kind":"aborted","reason":{"kind":"disposed","by":"x"}}`},
		{`{"kind":"aborted","reason":{"kind":"user"}}`, `{"kind":"aborted","reason":{"kind":"user"}}`},
		{`{"kind":"disposed","reason":{"kind":"legacy"}}`, `{"kind":"disposed","reason":{"kind":"legacy"}}`},
		{`{"kind":"error","error":{"message":"m","code":"C"}}`, `{"kind":"error","message":"m","code":"C"}`},
		{`{"kind":"error","message":"m"}`, `{"kind":"error","message":"m"}`},
		{`{"kind":"completed"}`, `{"kind":"completed"}`},
	}
	for _, c := range cases {
		rel := []event.Event{
			ev(0, event.TypeTurnStart, `{"turn":1}`, event.SurfaceOp{}),
			ev(1, event.TypeTurnEnd, `{"turn":1,"reason":`+c.reason+`}`, event.SurfaceOp{}),
		}
		out, err := convert.FromReleased("s1", rel)
		if err != nil {
			t.Errorf("%s: %v", c.reason, err)
			continue
		}
		if got, want := string(out[1].Data), `{"turn":1,"reason":`+c.want+`}`; got != want {
			t.Errorf("%s:\n got %s\nwant %s", c.reason, got, want)
		}
	}
}

// TestTurnEndReasonsRoundTrip: each reason of this library that has a
// released form comes back byte for byte; an error without a code comes
// back with the code the released form needs.
func TestTurnEndReasonsRoundTrip(t *testing.T) {
	cases := []struct{ reason, back string }{
		{`{"kind":"completed"}`, `{"kind":"completed"}`},
		{`{"kind":"aborted"}`, `{"kind":"aborted"}`},
		{`{"kind":"disposed"}`, `{"kind":"disposed"}`},
		{`{"kind":"error","message":"boom","code":"E1"}`, `{"kind":"error","message":"boom","code":"E1"}`},
		{`{"kind":"error","message":"boom"}`, `{"kind":"error","message":"boom","code":"UNKNOWN"}`},
	}
	for _, c := range cases {
		in := []event.Event{
			ev(0, event.TypeTurnStart, turn1, event.SurfaceOp{}),
			ev(1, event.TypeTurnEnd, `{"turn":1,"reason":`+c.reason+`}`, event.SurfaceOp{}),
		}
		rel, err := convert.ToReleased("s1", in, convert.Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.reason, err)
		}
		out, err := convert.FromReleased("s1", rel)
		if err != nil {
			t.Fatalf("%s back: %v", c.reason, err)
		}
		if got, want := string(out[1].Data), `{"turn":1,"reason":`+c.back+`}`; got != want {
			t.Errorf("%s:\n got %s\nwant %s", c.reason, got, want)
		}
	}
}

// TestToolResultErrorFlag: a released tool-result block without isError
// is not an error; with isError true it is, and false stays false.
func TestToolResultErrorFlag(t *testing.T) {
	for block, want := range map[string]string{
		`{"type":"tool-result","toolCallId":"a","content":[]}`:                 `false`,
		`{"type":"tool-result","toolCallId":"a","content":[],"isError":true}`:  `true`,
		`{"type":"tool-result","toolCallId":"a","content":[],"isError":false}`: `false`,
	} {
		rel := []event.Event{
			ev(0, event.TypeTurnStart, `{"turn":1}`, event.SurfaceOp{}),
			ev(1, event.TypeUserMessage, `{"content":[],"source":{"kind":"user"},"id":"u","role":"user"}`, event.Append()),
			ev(2, event.TypeAssistantMessage, `{"turn":1,"step":1,"message":{"id":"m","role":"assistant","content":[{"type":"tool-call","id":"a","name":"read","arguments":{}}],"source":{"provider":"p","model":"m","kind":"model"}}}`, event.Append()),
			ev(3, event.TypeToolCall, `{"turn":1,"step":1,"callId":"a","name":"read","arguments":"{}"}`, event.SurfaceOp{}),
			ev(4, event.TypeToolResult, `{"turn":1,"step":1,"message":{"id":"r","role":"user","content":[`+block+`],"source":{"kind":"tool","callId":"a"}}}`, event.Append(), 3),
		}
		out, err := convert.FromReleased("s1", rel)
		if err != nil {
			t.Fatalf("%s: %v", block, err)
		}
		if got, want := string(out[4].Data), `{"turn":1,"step":1,"callId":"a","content":[],"isError":`+want+`,"messageId":"r"}`; got != want {
			t.Errorf("%s:\n got %s\nwant %s", block, got, want)
		}
	}
}

// TestSourceKindPlacesAndLegacyIDs: a released assistant source's kind
// is dropped when it is last (where ToReleased writes it) and kept in its
// place otherwise, so each comes back to the same bytes; a message id
// equal to this seq's legacy id is left out, another seq's is kept.
func TestSourceKindPlacesAndLegacyIDs(t *testing.T) {
	cases := []struct{ source, id, want string }{
		{`{"provider":"p","model":"m","kind":"model"}`, `"m1"`, `"provenance":{"provider":"p","model":"m"},"messageId":"m1"`},
		{`{"kind":"model","provider":"p","model":"m"}`, `"m1"`, `"provenance":{"kind":"model","provider":"p","model":"m"},"messageId":"m1"`},
		{`{"provider":"p","model":"m"}`, `"m1"`, `"provenance":{"provider":"p","model":"m"},"messageId":"m1"`},
		{`{}`, `"m1"`, `"provenance":{},"messageId":"m1"`},
		{`{"provider":"p","model":"m","kind":"model"}`, `"` + convert.LegacyID("s1", 1) + `"`, `"provenance":{"provider":"p","model":"m"}`},
		{`{"provider":"p","model":"m","kind":"model"}`, `"` + convert.LegacyID("s1", 2) + `"`, `"provenance":{"provider":"p","model":"m"},"messageId":"` + convert.LegacyID("s1", 2) + `"`},
		{`{"provider":"p","model":"m","kind":"model"}`, `"` + convert.LegacyID("s2", 1) + `"`, `"provenance":{"provider":"p","model":"m"},"messageId":"` + convert.LegacyID("s2", 1) + `"`},
	}
	for _, c := range cases {
		rel := []event.Event{
			ev(0, event.TypeTurnStart, `{"turn":1}`, event.SurfaceOp{}),
			ev(1, event.TypeAssistantMessage, `{"turn":1,"step":1,"message":{"id":`+c.id+`,"role":"assistant","content":[],"source":`+c.source+`}}`, event.Append()),
		}
		out, err := convert.FromReleased("s1", rel)
		if err != nil {
			t.Fatalf("%s %s: %v", c.source, c.id, err)
		}
		if got, want := string(out[1].Data), `{"turn":1,"step":1,"content":[],`+c.want+`}`; got != want {
			t.Errorf("%s %s:\n got %s\nwant %s", c.source, c.id, got, want)
		}
	}
}

// TestRefusalNamesTheEvent: a converted log that breaks this library's
// seed rules is refused naming the event that breaks them, at the first
// event as at the last.
func TestRefusalNamesTheEvent(t *testing.T) {
	user := `{"content":[],"source":{"kind":"user"},"id":"u","role":"user"}`
	for _, rel := range [][]event.Event{
		{ev(0, event.TypeUserMessage, user, event.SurfaceOp{})},
		{ev(0, event.TypeTurnStart, `{"turn":1}`, event.SurfaceOp{}), ev(1, event.TypeUserMessage, user, event.Append()), ev(2, event.TypeUserMessage, user, event.Replace(1, 1))},
	} {
		last := int64(len(rel) - 1)
		_, err := convert.FromReleased("s1", rel)
		var ee *event.Error
		if !errors.Is(err, event.CodeConvertNotConvertible) || !errors.As(err, &ee) || ee.Seq != last {
			t.Errorf("refusal at %d: %v", last, err)
		}
	}
}
