package model

import (
	"encoding/json"
	"slices"

	"github.com/surfacelog/surface/impl/event"
)

// strictRule is the first strict rule (STRICT-2 to STRICT-7) that
// candidate e breaks as the next event of log, or nil. It walks the whole
// log for the open turn and the session's calls, and derives the surface
// before and after e for a replace.
func strictRule(log []event.Event, e event.Event, opts ...Option) error {
	fail := func(code event.Code) error { return event.Errorf(code, e.Seq, "strict") }
	led := ledgerOf(log)
	if event.IsSurface(e.Type) && e.Op.Kind == event.OpReplace {
		if !balancedReplace(log, e, led, opts) {
			return fail(event.CodeStrictReplaceUnbalanced)
		}
		return nil
	}
	d := dataOf(e)
	// STRICT-2
	object := func(b []byte) bool {
		var m map[string]any
		return json.Unmarshal(b, &m) == nil && m != nil
	}
	holdsObject := func(b []byte) bool {
		var text string
		return json.Unmarshal(b, &text) == nil && object([]byte(text))
	}
	switch e.Type {
	case event.TypeAssistantMessage:
		for _, b := range d.Content {
			if b.Type == "tool-call" && !object(b.Arguments) && !holdsObject(b.Arguments) {
				return fail(event.CodeStrictArgumentsNotObject)
			}
		}
	case event.TypeToolCall:
		if !holdsObject(d.Arguments) {
			return fail(event.CodeStrictArgumentsNotObject)
		}
	}
	// STRICT-3
	same := func(a, b json.RawMessage) bool {
		var x, y float64
		return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && x == y
	}
	inTurn := map[event.Type]bool{
		event.TypeTurnEnd: true, event.TypeStepStart: true, event.TypeStepEnd: true,
		event.TypeAssistantMessage: true, event.TypeAssistantChunk: true,
		event.TypeToolCall: true, event.TypeToolResult: true,
	}
	switch {
	case e.Type == event.TypeTurnStart && led.turn != nil:
		return fail(event.CodeStrictTurnOpen)
	case inTurn[e.Type] && led.turn == nil:
		return fail(event.CodeStrictNoTurn)
	case e.Type == event.TypeSteeringMessage && (led.turn == nil || !same(d.Turn, led.turn)):
		return fail(event.CodeStrictNoTurn)
	case inTurn[e.Type] && d.Turn != nil && !same(d.Turn, led.turn):
		return fail(event.CodeStrictWrongTurn)
	}
	// STRICT-6
	if e.Type == event.TypeAssistantMessage {
		ids := callIDs(d)
		for i, id := range ids {
			if _, known := led.answered[id]; known || slices.Contains(ids[:i], id) {
				return fail(event.CodeStrictCallReused)
			}
		}
	}
	// STRICT-4
	if e.Type == event.TypeToolResult {
		id := ""
		if d.CallID != nil {
			id = *d.CallID
		}
		answered, known := led.answered[id]
		switch {
		case !known:
			return fail(event.CodeStrictCallUnknown)
		case answered:
			return fail(event.CodeStrictCallAnswered)
		}
	}
	// STRICT-5
	switch e.Type {
	case event.TypeUserMessage, event.TypeContextMessage, event.TypeSteeringMessage, event.TypeTurnEnd, event.TypeStepEnd:
		for _, answered := range led.answered {
			if !answered {
				return fail(event.CodeStrictCallsPending)
			}
		}
	}
	return nil
}

// strictData is what the strict rules read of an event's data.
type strictData struct {
	Turn      json.RawMessage `json:"turn"`
	CallID    *string         `json:"callId"`
	Arguments json.RawMessage `json:"arguments"`
	Content   []struct {
		Type      string          `json:"type"`
		ID        json.RawMessage `json:"id"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"content"`
}

func dataOf(e event.Event) strictData {
	var d strictData
	_ = json.Unmarshal(e.Data, &d)
	return d
}

// callIDs are the string ids of the tool-call blocks of d, in order.
func callIDs(d strictData) []string {
	var ids []string
	for _, b := range d.Content {
		var id string
		if b.Type == "tool-call" && json.Unmarshal(b.ID, &id) == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// strictLedger is the open turn and every call the session registered,
// with whether it is answered.
type strictLedger struct {
	turn     json.RawMessage
	answered map[string]bool
}

// ledgerOf walks log: a turn is open from its turn/start to its turn/end;
// an assistant message registers its calls as pending (an id used again
// starts over; a replacing message remakes only pending calls); any
// tool/result answers a known call.
func ledgerOf(log []event.Event) strictLedger {
	l := strictLedger{answered: map[string]bool{}}
	for _, x := range log {
		d := dataOf(x)
		switch x.Type {
		case event.TypeTurnStart:
			l.turn = d.Turn
		case event.TypeTurnEnd:
			l.turn = nil
		case event.TypeAssistantMessage:
			for _, id := range callIDs(d) {
				l.answered[id] = false // a replace remakes only pending calls
			}
		case event.TypeToolResult:
			if d.CallID != nil {
				if _, known := l.answered[*d.CallID]; known {
					l.answered[*d.CallID] = true
				}
			}
		}
	}
	return l
}

// balancedReplace is STRICT-7, read on the surfaces before and after the
// replace e: e makes only pending calls a message in the range makes,
// each once;
// for every call the range holds (a message making it or a result for it)
// or e makes or answers, the surface after holds at most one block making
// it and one result for it; a call answered (before, or by e) has both or
// neither, the call first; a call still pending has its call.
func balancedReplace(log []event.Event, e event.Event, led strictLedger, opts []Option) bool {
	before, err := Derive(log, opts...)
	if err != nil {
		return true
	}
	after, err := Derive(append(slices.Clone(log), e), opts...)
	if err != nil {
		return true
	}
	from, to := slices.Index(before.Surface, e.Op.Start), slices.Index(before.Surface, e.Op.End)
	if from < 0 || to < from {
		return true
	}
	touched := map[string]bool{}
	mentions := func(x event.Event) (calls []string, result string, isResult bool) {
		d := dataOf(x)
		switch x.Type {
		case event.TypeAssistantMessage:
			return callIDs(d), "", false
		case event.TypeToolResult:
			if d.CallID != nil {
				return nil, *d.CallID, true
			}
		}
		return nil, "", false
	}
	for _, seq := range append(slices.Clone(before.Surface[from:to+1]), e.Seq) {
		x := e
		if seq != e.Seq {
			x = log[seq]
		}
		calls, result, isResult := mentions(x)
		for _, id := range calls {
			touched[id] = true
		}
		if isResult {
			touched[result] = true
		}
	}
	// The replacing node remakes only pending calls whose message the
	// range holds, each once.
	var inRange []string
	for _, seq := range before.Surface[from : to+1] {
		calls, _, _ := mentions(log[seq])
		inRange = append(inRange, calls...)
	}
	made, byE, eAnswers := mentions(e)
	for i, id := range made {
		if !slices.Contains(inRange, id) || slices.Contains(made[:i], id) || led.answered[id] {
			return false
		}
	}
	for id := range touched {
		callAt, resultAt := []int{}, []int{}
		for i, seq := range after.Surface {
			calls, result, isResult := mentions(after.Log[seq])
			if slices.Contains(calls, id) {
				callAt = append(callAt, i)
			}
			if isResult && result == id {
				resultAt = append(resultAt, i)
			}
		}
		answered := led.answered[id] || (eAnswers && byE == id)
		switch {
		case len(callAt) > 1 || len(resultAt) > 1:
			return false
		case answered && len(callAt) != len(resultAt):
			return false
		case answered && len(callAt) == 1 && callAt[0] > resultAt[0]:
			return false
		case !answered && len(callAt) == 0 && len(resultAt) == 0:
			if _, known := led.answered[id]; known {
				return false // a pending call folded
			}
		}
	}
	return true
}
