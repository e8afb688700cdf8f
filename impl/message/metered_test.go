package message

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/event"
)

// TestMeteredIsFromEventAndTokens: FromEvent, and Metered, which reads a
// node's data once for its message and its tokens, give what reading a
// member at a time gives (refFromEvent, then Tokens). The data are made here, not
// by the library: every surface type and a type that is not one, each
// member present or absent, in any order, its name sometimes escaped,
// look-alike names beside the real ones (usage in a block, "contents",
// "Usage"), every form of usage the meter reads or refuses, provenance,
// raw and tagged envelopes, with the default estimate and another.
func TestMeteredIsFromEventAndTokens(t *testing.T) {
	types := []event.Type{event.TypeUserMessage, event.TypeAssistantMessage, event.TypeToolResult,
		event.TypeContextMessage, event.TypeSteeringMessage, event.TypeToolCall}
	contents := []string{`[]`, `[{"type":"text","text":"hi"}]`,
		`[{"type":"text","text":"a \"usage\" word"},{"type":"tool-call","id":"c1","name":"read","arguments":"{\"p\":1}"}]`,
		`[{"type":"reasoning","text":"think","usage":{"outputTokens":9}}]`,
		`[{"type":"provider-item","native":{"opaque":true},"text":"é"}]`, `"not an array"`}
	usages := []string{`{"outputTokens":12}`, `{"output_tokens":"7"}`, `{"completion_tokens":3,"outputTokens":-1}`,
		`{"input":1200,"output":40}`, `{"outputTokens":1.5}`, `{"outputTokens":"x"}`, `[]`, `null`, `{}`,
		`{"outp\u0075tTokens":5}`, `{"outputTokens":99999999999999999999}`}
	others := map[string][]string{
		"provenance": {`{"provider":"p","model":"m"}`, `null`},
		"callId":     {`"call-1"`, `"c\"2"`},
		"isError":    {`true`, `false`, `null`},
		"envelope":   {`"raw"`, `"r\u0061w"`, `"tagged"`, `1`},
		"source":     {`{"kind":"user"}`, `{"kind":"comp\u0061ction"}`, `{"kind":"\ud800"}`, `{}`, `"user"`},
		"contents":   {`[{"type":"text","text":"look-alike"}]`},
		"Usage":      {`{"outputTokens":1}`},
		"turn":       {`1`, `-0.5e3`},
	}
	escape := func(name string) string { // the same name, its first letter escaped
		return fmt.Sprintf(`"\u%04x%s"`, name[0], name[1:])
	}
	estimates := map[string]func(Message) int{"default": nil, "blocks": func(m Message) int { return 100*len(m.Content) + len(m.Provenance) }}
	rapid.Check(t, func(rt *rapid.T) {
		var members []string
		add := func(name, value string) {
			key := `"` + name + `"`
			if rapid.IntRange(0, 5).Draw(rt, "escapeName") == 0 {
				key = escape(name)
			}
			members = append(members, key+":"+value)
		}
		if rapid.IntRange(0, 5).Draw(rt, "content") > 0 {
			add("content", rapid.SampledFrom(contents).Draw(rt, "contentValue"))
		}
		if rapid.Bool().Draw(rt, "usage") {
			add("usage", rapid.SampledFrom(usages).Draw(rt, "usageValue"))
		}
		for _, name := range []string{"provenance", "callId", "isError", "envelope", "source", "contents", "Usage", "turn"} {
			if rapid.Bool().Draw(rt, name) {
				add(name, rapid.SampledFrom(others[name]).Draw(rt, name+"Value"))
			}
		}
		order := rapid.Permutation(members).Draw(rt, "order")
		e := &event.Event{Seq: int64(rapid.IntRange(0, 100).Draw(rt, "seq")), Type: rapid.SampledFrom(types).Draw(rt, "type"),
			Data: []byte("{" + strings.Join(order, ",") + "}")}
		name := rapid.SampledFrom([]string{"default", "blocks"}).Draw(rt, "estimate")
		estimate := estimates[name]

		wantMsg, wantOK := refFromEvent(e)
		if m, ok := FromEvent(e); ok != wantOK || !cmp.Equal(m, wantMsg) {
			rt.Fatalf("FromEvent(%s %s) = %+v %v, want %+v %v", e.Type, e.Data, m, ok, wantMsg, wantOK)
		}
		wantTokens := 0
		if wantOK {
			wantTokens = Tokens(e, wantMsg, estimate)
		}
		gotMsg, gotTokens, gotOK := Metered(e, estimate)
		if gotOK != wantOK || gotTokens != wantTokens {
			rt.Fatalf("Metered(%s %s, %s) = %v %d, FromEvent and Tokens %v %d", e.Type, e.Data, name, gotOK, gotTokens, wantOK, wantTokens)
		}
		if d := cmp.Diff(wantMsg, gotMsg); d != "" {
			rt.Fatalf("Metered(%s %s): message differs from FromEvent's (-want +got):\n%s", e.Type, e.Data, d)
		}
	})
}

// refFromEvent is FromEvent as it read the data before Metered: each
// member by its own walk (event.ObjectMember).
func refFromEvent(e *event.Event) (m Message, ok bool) {
	member := func(data []byte, name string) []byte {
		v, _ := event.ObjectMember(data, name)
		return v
	}
	blocks := func(data []byte) []json.RawMessage {
		els := event.ArrayElements(member(data, "content"))
		out := make([]json.RawMessage, len(els))
		for i, b := range els {
			out[i] = b
		}
		return out
	}
	tag := func(tag string, data []byte) []json.RawMessage {
		kind := member(member(data, "source"), "kind")
		out := []json.RawMessage{textBlock("<" + tag + " source=" + Restringify(kind) + ">")}
		out = append(out, blocks(data)...)
		return append(out, textBlock("</"+tag+">"))
	}
	m.Seq = e.Seq
	switch e.Type {
	case event.TypeUserMessage:
		m.Role, m.Content = RoleUser, blocks(e.Data)
	case event.TypeAssistantMessage:
		m.Role, m.Content = RoleAssistant, blocks(e.Data)
		if len(m.Content) == 0 {
			return Message{}, false
		}
		if p, ok := event.ObjectMember(e.Data, "provenance"); ok {
			m.Provenance = json.RawMessage(p)
		}
	case event.TypeToolResult:
		block := `{"type":"tool-result","toolCallId":` + string(member(e.Data, "callId")) + `,"content":` +
			string(member(e.Data, "content")) + `,"isError":` + string(member(e.Data, "isError")) + `}`
		m.Role, m.Content = RoleUser, []json.RawMessage{json.RawMessage(block)}
	case event.TypeContextMessage:
		m.Role = RoleUser
		if env, ok := event.ObjectMember(e.Data, "envelope"); ok && isRaw(env) {
			m.Content = blocks(e.Data)
		} else {
			m.Content = tag("context", e.Data)
		}
	case event.TypeSteeringMessage:
		m.Role, m.Content = RoleUser, tag("steering", e.Data)
	default:
		return Message{}, false
	}
	return m, true
}
