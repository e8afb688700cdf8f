package session

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/repair"
	"github.com/surfacelog/surface/impl/surface"
)

// WithStrict puts the session in strict mode (spec/README.md, STRICT-1
// to STRICT-8): an append that would make a history providers refuse is
// rejected, with its own code and the event's seq, after every other
// rule: tool-call arguments that are not a JSON object
// (strict.arguments_not_object); a turn/start inside an open turn
// (strict.turn_open); a turn/end, step/*, assistant message, chunk, tool
// call or result outside a turn, or steering for a turn that is not open
// (strict.no_turn); one of those carrying another turn's number
// (strict.wrong_turn); a call id the session used before
// (strict.call_reused); a tool/result for a call never made
// (strict.call_unknown) or already answered (strict.call_answered); a
// user, context or steering message, a step/end or a turn/end while calls
// wait for results, in any turn or step (strict.calls_pending); a replace
// that parts a call from its result (strict.replace_unbalanced). A seed,
// a resume or a fork of a strict session checks every loaded event the
// same way and names the first that breaks a rule (STRICT-8); repair's
// closers are always accepted. Forks keep strict mode.
func WithStrict() Option { return func(c *config) { c.strict = true } }

// strictState is what strict mode needs beyond the ledger of REP-2: every
// tool call the session ever registered and whether it is answered, over
// all turns and steps (STRICT-4, STRICT-5, STRICT-6), with the node that
// made it and the node that answered it (STRICT-7). It is folded from the
// log like the ledger, and only in strict mode.
type strictState struct {
	at      int                    // log events folded
	calls   map[string]*strictCall // by id, every call registered
	pending int                    // registered and unanswered
}

type strictCall struct {
	msg      int64 // seq of the assistant/message that registered it
	answered bool
	result   int64 // seq of the tool/result that answered it, -1 while none
}

func (st *strictState) fold(log []event.Event) {
	if st.calls == nil {
		st.calls = map[string]*strictCall{}
	}
	for ; st.at < len(log); st.at++ {
		e := &log[st.at]
		switch e.Type {
		case event.TypeAssistantMessage:
			for _, id := range event.ToolCallIDs(e.Data) {
				if c, seen := st.calls[id]; seen {
					// A replacing node remaking a pending call (STRICT-7),
					// or a reused id (a log strict mode did not write).
					if c.answered {
						st.pending++
					}
					*c = strictCall{msg: e.Seq, result: -1}
					continue
				}
				st.calls[id] = &strictCall{msg: e.Seq, result: -1}
				st.pending++
			}
		case event.TypeToolResult:
			if c := st.calls[event.StringMember(e.Data, "callId")]; c != nil {
				if !c.answered {
					c.answered = true
					st.pending--
				}
				c.result = e.Seq // a prune's rewrite answers it from here on
			}
		}
	}
}

// reset forgets what was folded (the log was cut back: a failed write).
func (st *strictState) reset() { *st = strictState{} }

// strictCheck applies the strict rules to candidate e, given the ledger
// of the log before it (STRICT-2 to STRICT-7).
func strictCheck(st *repair.State, ss *strictState, log []event.Event, mgr *surface.Manager, e *event.Event) *event.Error {
	fail := func(code event.Code, format string, args ...any) *event.Error {
		return event.Errorf(code, e.Seq, "strict mode: "+format, args...)
	}
	if event.IsSurface(e.Type) && e.Op.Kind == event.OpReplace {
		// STRICT-1: a replace is checked by STRICT-7 only.
		if why := unbalancedReplace(ss, log, mgr, e); why != "" {
			return fail(event.CodeStrictReplaceUnbalanced, "%s", why)
		}
		return nil
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
	case event.TypeTurnEnd, event.TypeStepStart, event.TypeStepEnd, event.TypeAssistantMessage, event.TypeAssistantChunk, event.TypeToolCall, event.TypeToolResult:
		if turn == nil {
			return fail(event.CodeStrictNoTurn, "a %s outside any turn", e.Type)
		}
	case event.TypeSteeringMessage:
		got, _ := event.ObjectMember(e.Data, "turn")
		if turn == nil || !sameNumber(got, turn) {
			return fail(event.CodeStrictNoTurn, "steering for turn %s, and the open turn is %s", got, orNone(turn))
		}
	}
	switch e.Type {
	case event.TypeTurnEnd, event.TypeStepStart, event.TypeStepEnd, event.TypeAssistantMessage, event.TypeAssistantChunk, event.TypeToolCall, event.TypeToolResult:
		if got, ok := event.ObjectMember(e.Data, "turn"); ok && turn != nil && !sameNumber(got, turn) {
			return fail(event.CodeStrictWrongTurn, "a %s of turn %s, and the open turn is %s", e.Type, got, turn)
		}
	}
	// STRICT-6
	if e.Type == event.TypeAssistantMessage {
		seen := map[string]bool{}
		for _, id := range event.ToolCallIDs(e.Data) {
			if ss.calls[id] != nil || seen[id] {
				return fail(event.CodeStrictCallReused, "call id %q was used before in this session", id)
			}
			seen[id] = true
		}
	}
	// STRICT-4
	if e.Type == event.TypeToolResult {
		id := event.StringMember(e.Data, "callId")
		c := ss.calls[id]
		switch {
		case c == nil:
			return fail(event.CodeStrictCallUnknown, "no call %q was made", id)
		case c.answered:
			return fail(event.CodeStrictCallAnswered, "call %q was already answered", id)
		}
	}
	// STRICT-5
	switch e.Type {
	case event.TypeUserMessage, event.TypeContextMessage, event.TypeSteeringMessage, event.TypeTurnEnd, event.TypeStepEnd:
		if ss.pending > 0 {
			return fail(event.CodeStrictCallsPending, "%d tool calls have no result yet", ss.pending)
		}
	}
	return nil
}

// unbalancedReplace says why the replace e would leave the surface with a
// tool call and its result apart (STRICT-7), or "" when it would not. The
// replacing node makes only pending calls whose message the range holds,
// each once. The calls it looks at are those the range holds (their
// registering message or their current result) and the one the node
// answers; after the replace, a call answered before (or by the node) must
// have both its call and its result on the surface, the call first, or
// neither, and a pending call must still have its call there. It walks
// the range: O(range).
func unbalancedReplace(ss *strictState, log []event.Event, mgr *surface.Manager, e *event.Event) string {
	first, last := mgr.Node(e.Op.Start), mgr.Node(e.Op.End)
	if first == nil || last == nil || first.Label() > last.Label() {
		return "" // SURF-12 and SURF-13 refuse it first
	}
	type touch struct{ callIn, resultIn, nodeCall, nodeResult bool }
	var ids []string
	touched := map[string]*touch{}
	get := func(id string) *touch {
		t := touched[id]
		if t == nil {
			t = &touch{}
			touched[id] = t
			ids = append(ids, id)
		}
		return t
	}
	for n := first; ; n = n.Next() {
		node := &log[n.Seq()]
		switch node.Type {
		case event.TypeAssistantMessage:
			for _, id := range event.ToolCallIDs(node.Data) {
				if c := ss.calls[id]; c != nil && c.msg == node.Seq {
					get(id).callIn = true
				}
			}
		case event.TypeToolResult:
			id := event.StringMember(node.Data, "callId")
			if c := ss.calls[id]; c != nil && c.answered && c.result == node.Seq {
				get(id).resultIn = true
			}
		}
		if n == last {
			break
		}
	}
	switch e.Type {
	case event.TypeAssistantMessage:
		for _, id := range event.ToolCallIDs(e.Data) {
			t := get(id)
			switch {
			case t.nodeCall:
				return fmt.Sprintf("the replacing node makes call %q twice", id)
			case !t.callIn:
				return fmt.Sprintf("the replacing node makes call %q, whose message the range does not hold", id)
			case ss.calls[id].answered:
				// Repair would take the remade call for a pending one
				// (REP-2) and answer it again.
				return fmt.Sprintf("the replacing node makes call %q, which is answered: only a pending call is remade", id)
			}
			t.nodeCall = true
		}
	case event.TypeToolResult:
		get(event.StringMember(e.Data, "callId")).nodeResult = true
	}
	for _, id := range ids {
		t := touched[id]
		c := ss.calls[id]
		var callAt, resultAt int64
		callThere := c != nil && mgr.Node(c.msg) != nil
		resultThere := c != nil && c.answered && mgr.Node(c.result) != nil
		if callThere {
			callAt = mgr.Node(c.msg).Label()
		}
		if resultThere {
			resultAt = mgr.Node(c.result).Label()
		}
		callAfter := (callThere && !t.callIn) || t.nodeCall
		resultAfter := (resultThere && !t.resultIn) || t.nodeResult
		switch {
		case t.nodeResult && resultThere && !t.resultIn:
			return fmt.Sprintf("the replacing node answers call %q, whose result stays on the surface at %d", id, c.result)
		case c != nil && !c.answered && !t.nodeResult && !callAfter:
			return fmt.Sprintf("the range folds call %q, which has no result yet", id)
		case (c != nil && c.answered || t.nodeResult) && callAfter && !resultAfter:
			return fmt.Sprintf("the range folds the result of call %q and leaves the call", id)
		case (c != nil && c.answered || t.nodeResult) && !callAfter && resultAfter:
			return fmt.Sprintf("the range folds call %q and leaves its result", id)
		}
		if callAfter && resultAfter {
			if t.nodeCall {
				callAt = first.Label()
			}
			if t.nodeResult {
				resultAt = first.Label()
			}
			if callAt >= resultAt {
				return fmt.Sprintf("the result of call %q would come before the call", id)
			}
		}
	}
	return ""
}

// toolCallWithoutObjectArguments returns the id of the first tool-call
// block of an assistant message's content whose arguments are not a JSON
// object (nor a string holding one). It reads the raw data: the log's data
// is valid, compact JSON.
func toolCallWithoutObjectArguments(data []byte) (string, bool) {
	content, _ := event.ObjectMember(data, "content")
	for _, b := range event.ArrayElements(content) {
		if t, _ := event.ObjectMember(b, "type"); string(t) != `"tool-call"` {
			continue
		}
		args, _ := event.ObjectMember(b, "arguments")
		if !isJSONObject(args) && !holdsJSONObject(args) {
			id, _ := event.ObjectMember(b, "id")
			return string(id), true
		}
	}
	return "", false
}

// holdsJSONObject reports whether b is a JSON string whose text is a JSON
// object: how the seed system's tool-call blocks keep the arguments the
// model produced (STRICT-2).
func holdsJSONObject(b []byte) bool {
	if len(b) < 2 || b[0] != '"' {
		return false
	}
	var text string
	return json.Unmarshal(b, &text) == nil && isJSONObject([]byte(text)) && json.Valid([]byte(text))
}

// isJSONObject reports whether b, JSON text, is an object (its first
// byte, past any whitespace, opens one). A value taken from the log's data
// is valid JSON; holdsJSONObject checks the text a string holds.
func isJSONObject(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c == '{'
	}
	return false
}

// sameNumber reports whether two JSON numbers have the same value.
func sameNumber(a, b []byte) bool {
	if len(a) > 0 && string(a) == string(b) {
		return a[0] == '-' || (a[0] >= '0' && a[0] <= '9')
	}
	x, errA := strconv.ParseFloat(string(a), 64)
	y, errB := strconv.ParseFloat(string(b), 64)
	return errA == nil && errB == nil && x == y
}

func orNone(turn []byte) string {
	if turn == nil {
		return "none"
	}
	return string(turn)
}
