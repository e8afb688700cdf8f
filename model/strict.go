package model

import (
	"encoding/json"
	"slices"

	"github.com/surfacelog/surface/impl/event"
)

// strictRule is the first strict rule (STRICT-2 to STRICT-5) that
// candidate e breaks as the next event of log, or nil. It walks the whole
// log for the open turn and its calls, as REP-2 says.
func strictRule(log []event.Event, e event.Event) error {
	if event.IsSurface(e.Type) && e.Op.Kind != event.OpAppend {
		return nil
	}
	fail := func(code event.Code) error { return compErr(code, "strict") }
	var data struct {
		Turn      json.RawMessage `json:"turn"`
		CallID    *string         `json:"callId"`
		Arguments json.RawMessage `json:"arguments"`
		Content   []struct {
			Type      string          `json:"type"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"content"`
	}
	_ = json.Unmarshal(e.Data, &data)
	object := func(b []byte) bool {
		var m map[string]any
		return json.Unmarshal(b, &m) == nil && m != nil
	}
	switch e.Type {
	case event.TypeAssistantMessage:
		for _, b := range data.Content {
			var text string // the seed system's form: the model's raw JSON text
			if b.Type == "tool-call" && !object(b.Arguments) && (json.Unmarshal(b.Arguments, &text) != nil || !object([]byte(text))) {
				return fail(event.CodeStrictArgumentsNotObject)
			}
		}
	case event.TypeToolCall:
		var text string
		if json.Unmarshal(data.Arguments, &text) != nil || !object([]byte(text)) {
			return fail(event.CodeStrictArgumentsNotObject)
		}
	}
	// The open turn and its calls, walking the log (REP-2).
	var turn json.RawMessage
	var registered, answered []string
	for _, x := range log {
		var d struct {
			Turn    json.RawMessage `json:"turn"`
			CallID  string          `json:"callId"`
			Content []struct {
				Type string          `json:"type"`
				ID   json.RawMessage `json:"id"`
			} `json:"content"`
		}
		_ = json.Unmarshal(x.Data, &d)
		switch x.Type {
		case event.TypeTurnStart:
			turn, registered, answered = d.Turn, nil, nil
		case event.TypeTurnEnd:
			turn, registered, answered = nil, nil, nil
		case event.TypeStepEnd:
			registered, answered = nil, nil
		case event.TypeAssistantMessage:
			for _, b := range d.Content {
				var id string
				if b.Type == "tool-call" && json.Unmarshal(b.ID, &id) == nil {
					registered = append(registered, id)
					answered = slices.DeleteFunc(answered, func(a string) bool { return a == id })
				}
			}
		case event.TypeToolResult:
			if slices.Contains(registered, d.CallID) && !slices.Contains(answered, d.CallID) {
				answered = append(answered, d.CallID)
			}
		}
	}
	number := func(b []byte) (float64, bool) {
		var f float64
		return f, json.Unmarshal(b, &f) == nil
	}
	switch e.Type {
	case event.TypeTurnStart:
		if turn != nil {
			return fail(event.CodeStrictTurnOpen)
		}
	case event.TypeTurnEnd, event.TypeStepStart, event.TypeStepEnd:
		if turn == nil {
			return fail(event.CodeStrictNoTurn)
		}
	case event.TypeSteeringMessage:
		a, okA := number(data.Turn)
		b, okB := number(turn)
		if turn == nil || !okA || !okB || a != b {
			return fail(event.CodeStrictNoTurn)
		}
	}
	if e.Type == event.TypeToolResult {
		id := ""
		if data.CallID != nil {
			id = *data.CallID
		}
		switch {
		case turn == nil || !slices.Contains(registered, id):
			return fail(event.CodeStrictCallUnknown)
		case slices.Contains(answered, id):
			return fail(event.CodeStrictCallAnswered)
		}
	}
	switch e.Type {
	case event.TypeUserMessage, event.TypeContextMessage, event.TypeSteeringMessage:
		pending := 0
		for _, id := range registered {
			if !slices.Contains(answered, id) {
				pending++
			}
		}
		if turn != nil && pending > 0 {
			return fail(event.CodeStrictCallsPending)
		}
	}
	return nil
}
