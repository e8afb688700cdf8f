package gen

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/providers/convo"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/impl/view"
)

// Adapter is what the property checks need of an adapter.
type Adapter struct {
	// Request maps messages to the provider's request and checks it.
	Request func(view.Messages) (any, []convo.Violation, error)
	// Respond renders a reply as the provider's response JSON; Decode
	// decodes such a response with the adapter.
	Respond func(convo.Reply) []byte
	Decode  func([]byte) (convo.Reply, error)
	// Carries says which reply blocks the provider's response carries
	// back (a Chat response has one text and no reasoning).
	Carries func(convo.Reply) []convo.Block
}

// Counts are the blocks of a session's messages an adapter must keep.
type Counts struct{ Calls, Results, Texts int }

// CountsOf counts the tool calls, results and text blocks (not the
// reasoning) of msgs.
func CountsOf(msgs view.Messages) Counts {
	var c Counts
	for _, m := range msgs.All() {
		d, err := convo.DecodeMessage(m)
		if err != nil {
			continue
		}
		for _, b := range d.Blocks {
			switch b.Type {
			case convo.ToolCall:
				c.Calls++
			case convo.ToolResult:
				c.Results++
			case convo.Text:
				c.Texts++
			}
		}
	}
	return c
}

// CheckSessions: over random sessions, the adapter's request passes its
// validator.
func CheckSessions(t *rapid.T, a Adapter) {
	s := Session(t)
	_, v, err := a.Request(s.Messages())
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	if len(v) > 0 {
		t.Fatalf("%d violations, the first: %v", len(v), v[0])
	}
}

// CheckRoundTrip: a reply rendered as the provider's response, decoded
// by the adapter and appended, gives back its blocks, and the next
// request (once the calls are answered) carries them and passes the
// validator.
func CheckRoundTrip(t *rapid.T, a Adapter) {
	ctx := context.Background()
	s := session.New(session.WithStrict())
	if _, err := s.Append(ctx, event.TurnStartData{Turn: 1, Trigger: json.RawMessage(`{"kind":"message"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, event.UserMessageData{Content: []json.RawMessage{text("go")}, Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent()); err != nil {
		t.Fatal(err)
	}
	drawn := Reply(t, "rt")
	want := a.Carries(drawn)
	got, err := a.Decode(a.Respond(drawn))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if !slices.EqualFunc(got.Blocks, want, sameBlock) {
		t.Fatalf("decoded blocks %+v, want %+v", got.Blocks, want)
	}
	if got.Usage == nil || got.Usage.OutputTokens != drawn.Usage.OutputTokens {
		t.Fatalf("usage %+v, want output %d", got.Usage, drawn.Usage.OutputTokens)
	}
	out, err := got.Append(ctx, s, 1, 1)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	stored, _ := convo.DecodeMessage(s.Messages().At(s.Messages().Len() - 1))
	if !slices.EqualFunc(stored.Blocks, want, sameBlock) {
		t.Fatalf("stored blocks %+v, want %+v", stored.Blocks, want)
	}
	for _, c := range out[1:] {
		var d event.ToolCallData
		_ = json.Unmarshal(c.Data, &d)
		if _, err := s.Append(ctx, event.ToolResultData{Turn: 1, Step: 1, CallID: d.CallID, Content: []json.RawMessage{text("ok")}}, event.AppendIntent(c.Seq)); err != nil {
			t.Fatal(err)
		}
	}
	req, v, err := a.Request(s.Messages())
	if err != nil || len(v) > 0 {
		t.Fatalf("request: %v, violations %v", err, v)
	}
	wire, _ := json.Marshal(req)
	for _, b := range want {
		if b.Type == convo.ToolCall && !containsJSON(wire, b.ID) {
			t.Fatalf("the request lost call %q: %s", b.ID, wire)
		}
	}
}

func containsJSON(wire []byte, s string) bool {
	q, _ := json.Marshal(s)
	return slices.Contains(splitAll(wire), string(q))
}

// splitAll lists the JSON string literals of wire.
func splitAll(wire []byte) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			q, _ := json.Marshal(x)
			out = append(out, string(q))
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	var v any
	_ = json.Unmarshal(wire, &v)
	walk(v)
	return out
}

// sameBlock compares blocks, arguments as JSON values.
func sameBlock(a, b convo.Block) bool {
	if a.Type != b.Type || a.Text != b.Text || a.ID != b.ID || a.Name != b.Name {
		return false
	}
	if a.Type != convo.ToolCall {
		return true
	}
	var x, y any
	_ = json.Unmarshal([]byte(a.Arguments), &x)
	_ = json.Unmarshal([]byte(b.Arguments), &y)
	return fmt.Sprint(x) == fmt.Sprint(y)
}
