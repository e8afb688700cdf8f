package ops

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/surfacelog/surface/impl/event"
)

// GenStrictStep returns a step of harness-like traffic aimed at the strict
// rules (STRICT-2 to STRICT-7): turn and step events, prompts, steering,
// assistant messages making calls and tool calls and results, with turn
// numbers near the open one and call ids from a pool of four (so ids are
// reused, results answer known, answered and unknown calls), and replaces
// of surface ranges by a summary, a result or a message making calls
// (balanced or not). Every event is valid by the surface's rules, so what
// decides its fate is strict mode.
func GenStrictStep(t Chooser, st State) Step {
	turn := openTurn(st.Events)
	if turn == 0 && t.Intn(4, "openOne") > 0 {
		return Step{Kind: KindAppend, Type: event.TypeTurnStart, Data: json.RawMessage(fmt.Sprintf(`{"turn":%d,"trigger":{"kind":"message"}}`, maxTurn(st.Events)+1))}
	}
	if turn == 0 || t.Intn(8, "otherTurn") == 0 {
		turn = between(t, 1, maxTurn(st.Events)+1, "turn")
	}
	id := func(label string) string { return pick(t, []string{"a", "b", "c", "d"}, label) }
	step := between(t, 1, 2, "step")
	surface := func(ty event.Type, data string) Step {
		return Step{Kind: KindAppend, Type: ty, Data: json.RawMessage(data), Intent: &event.Intent{Op: event.Append()}}
	}
	bare := func(ty event.Type, data string) Step {
		return Step{Kind: KindAppend, Type: ty, Data: json.RawMessage(data)}
	}
	calls := func() string {
		var b []string
		for n := t.Intn(3, "calls"); n >= 0; n-- {
			args := pick(t, []string{`{}`, `{"p":1}`, `"{\"p\":1}"`, `"[1]"`, `5`}, "args")
			b = append(b, fmt.Sprintf(`{"type":"tool-call","id":%q,"name":"read","arguments":%s}`, id("id"), args))
		}
		return fmt.Sprintf(`{"turn":%d,"step":%d,"content":[%s]}`, turn, step, strings.Join(b, ","))
	}
	result := func() string {
		return fmt.Sprintf(`{"turn":%d,"step":%d,"callId":%q,"content":[{"type":"text","text":"r"}],"isError":false}`, turn, step, id("result"))
	}
	user := `{"content":[{"type":"text","text":"q"}],"source":{"kind":"user"}}`
	var s Step
	switch t.Intn(12, "what") {
	case 0:
		s = bare(event.TypeTurnStart, fmt.Sprintf(`{"turn":%d,"trigger":{"kind":"message"}}`, turn))
	case 1:
		s = bare(event.TypeTurnEnd, fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, turn))
	case 2:
		s = bare(pick(t, []event.Type{event.TypeStepStart, event.TypeStepEnd}, "stepEvent"), fmt.Sprintf(`{"turn":%d,"step":%d}`, turn, step))
	case 3:
		s = surface(event.TypeUserMessage, user)
	case 4:
		s = surface(pick(t, []event.Type{event.TypeSteeringMessage, event.TypeContextMessage}, "other"), fmt.Sprintf(`{"turn":%d,"content":[{"type":"text","text":"s"}],"source":{"kind":"user"}}`, turn))
		if s.Type == event.TypeContextMessage {
			s.Data = json.RawMessage(`{"content":[{"type":"text","text":"c"}],"source":{"kind":"plugin"}}`)
		}
	case 5, 6:
		s = surface(event.TypeAssistantMessage, calls())
	case 7:
		s = bare(event.TypeToolCall, fmt.Sprintf(`{"turn":%d,"step":%d,"callId":%q,"name":"read","arguments":%s}`, turn, step, id("id"), pick(t, []string{`"{}"`, `"[1]"`}, "args")))
	case 8, 9:
		s = surface(event.TypeToolResult, result())
	default:
		if len(st.Surface) == 0 {
			return surface(event.TypeUserMessage, user)
		}
		i := t.Intn(len(st.Surface), "i")
		j := i + t.Intn(min(len(st.Surface)-i, 4), "j")
		ty, data := event.TypeUserMessage, user
		switch t.Intn(3, "node") {
		case 1:
			ty, data = event.TypeToolResult, result()
		case 2:
			ty, data = event.TypeAssistantMessage, calls()
		}
		s = surface(ty, data)
		s.Intent = &event.Intent{Op: event.Replace(st.Surface[i], st.Surface[j]), Sources: append([]int64(nil), st.Surface[i:j+1]...)}
	}
	return s
}

// openTurn is the number of the open turn of log, 0 when none is.
func openTurn(log []event.Event) int64 {
	var turn int64
	for _, e := range log {
		switch e.Type {
		case event.TypeTurnStart:
			var d struct{ Turn int64 }
			_ = json.Unmarshal(e.Data, &d)
			turn = d.Turn
		case event.TypeTurnEnd:
			turn = 0
		}
	}
	return turn
}

// maxTurn is the largest turn number a turn/start of log carries.
func maxTurn(log []event.Event) int64 {
	var n int64
	for _, e := range log {
		if e.Type == event.TypeTurnStart {
			var d struct{ Turn int64 }
			_ = json.Unmarshal(e.Data, &d)
			n = max(n, d.Turn)
		}
	}
	return n
}
