package session

import (
	"encoding/json"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/repair"
)

// WithStrict puts the session in strict mode (spec/README.md, STRICT-1
// to STRICT-5): an append that would make a history providers refuse is
// rejected, with its own code, after every other rule: tool-call
// arguments that are not a JSON object, a turn/start inside an open
// turn, a turn/end or step/* outside one, steering for a turn that is not
// open, a tool/result for a call never made or already answered, and a
// user, context or steering message while calls are pending. Seeds and
// resumes load any valid log; repair's closers are always accepted.
func WithStrict() Option { return func(c *config) { c.strict = true } }

// strictCheck applies the strict rules to candidate e, given the ledger
// of the log before it (STRICT-2 to STRICT-5).
func strictCheck(st *repair.State, e *event.Event) *event.Error {
	if event.IsSurface(e.Type) && e.Op.Kind != event.OpAppend {
		return nil // STRICT-1: a replace is not checked
	}
	fail := func(code event.Code, format string, args ...any) *event.Error {
		return event.Errorf(code, e.Seq, "strict mode: "+format, args...)
	}
	// STRICT-2
	switch e.Type {
	case event.TypeAssistantMessage:
		if id, ok := toolCallWithoutObjectArguments(e.Data); ok {
			return fail(event.CodeStrictArgumentsNotObject, "the arguments of tool call %s are not a JSON object", id)
		}
	case event.TypeToolCall:
		args, _ := event.ObjectMember(e.Data, "arguments")
		if !holdsJSONObject(args) {
			return fail(event.CodeStrictArgumentsNotObject, "the arguments of tool/call %q are not the text of a JSON object", event.StringMember(e.Data, "callId"))
		}
	}
	// STRICT-3
	turn := st.Turn()
	switch e.Type {
	case event.TypeTurnStart:
		if turn != nil {
			return fail(event.CodeStrictTurnOpen, "turn %s is still open", turn)
		}
	case event.TypeTurnEnd, event.TypeStepStart, event.TypeStepEnd:
		if turn == nil {
			return fail(event.CodeStrictNoTurn, "a %s outside any turn", e.Type)
		}
	case event.TypeSteeringMessage:
		got, _ := event.ObjectMember(e.Data, "turn")
		if turn == nil || !sameNumber(got, turn) {
			return fail(event.CodeStrictNoTurn, "steering for turn %s, and the open turn is %s", got, orNone(turn))
		}
	}
	// STRICT-4
	if e.Type == event.TypeToolResult {
		id := event.StringMember(e.Data, "callId")
		registered, pending := st.CallStatus(id)
		switch {
		case turn == nil || !registered:
			return fail(event.CodeStrictCallUnknown, "no call %q was made in the open turn", id)
		case !pending:
			return fail(event.CodeStrictCallAnswered, "call %q was already answered", id)
		}
	}
	// STRICT-5
	switch e.Type {
	case event.TypeUserMessage, event.TypeContextMessage, event.TypeSteeringMessage:
		if turn != nil && st.NumPending() > 0 {
			return fail(event.CodeStrictCallsPending, "%d tool calls of the open turn have no result yet", st.NumPending())
		}
	}
	return nil
}

// toolCallWithoutObjectArguments returns the id of the first tool-call
// block of an assistant message's content whose arguments are not a JSON
// object.
func toolCallWithoutObjectArguments(data []byte) (string, bool) {
	var d struct {
		Content []struct {
			Type      string          `json:"type"`
			ID        json.RawMessage `json:"id"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"content"`
	}
	if json.Unmarshal(data, &d) != nil {
		return "", false
	}
	for _, b := range d.Content {
		if b.Type == "tool-call" && !isJSONObject(b.Arguments) && !holdsJSONObject(b.Arguments) {
			return string(b.ID), true
		}
	}
	return "", false
}

// holdsJSONObject reports whether b is a JSON string whose text is a JSON
// object: how the seed system's tool-call blocks keep the arguments the
// model produced (STRICT-2).
func holdsJSONObject(b []byte) bool {
	var text string
	return json.Unmarshal(b, &text) == nil && isJSONObject([]byte(text))
}

// isJSONObject reports whether b is the text of a JSON object.
func isJSONObject(b []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m != nil
}

// sameNumber reports whether two JSON numbers have the same value.
func sameNumber(a, b []byte) bool {
	var x, y float64
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && x == y
}

func orNone(turn []byte) string {
	if turn == nil {
		return "none"
	}
	return string(turn)
}
