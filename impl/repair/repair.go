// Package repair computes the closers that a log left open by a crash
// needs (spec/README.md, REP-1 to REP-6): the end of an open compaction
// (its lock), a tool/result for every call still pending in the open turn,
// a step/end for an open step, and an interrupted turn/end.
package repair

import (
	"encoding/json"
	"strconv"

	"github.com/surfacelog/surface/impl/event"
)

// InterruptedText is the text of a synthetic tool/result (REP-3).
const InterruptedText = "Tool call interrupted by a crash; no result was recorded."

type call struct {
	id      string
	name    string          // the tool-call block's name
	args    json.RawMessage // and its arguments, as stored
	step    json.RawMessage // the step of the registering assistant/message
	host    int64           // seq of the registering assistant/message
	callSeq int64           // seq of the tool/call, or -1
	open    bool
}

// bracket is an open compaction: its start event (REP-6, COMP-2).
type bracket struct {
	typ  event.Type // compact/start or compaction/start
	data []byte
}

// Interrupted is the error of the end event that closes a compaction a
// crash left open (REP-6).
const Interrupted = "interrupted"

// State is what repair needs to know about a log, folded one event at a
// time (REP-2): the open turn and step, the calls registered in the open
// turn and whether each is answered, and the open compaction. A session
// keeps one up to date, so its bookkeeping queries and its repair cost
// O(new events), not a walk of the log. The zero State is an empty log's.
type State struct {
	open     *bracket        // the last compaction start with no end after it
	turn     json.RawMessage // open turn's number, nil when no turn is open
	step     json.RawMessage // open step's number, nil when none
	maxTurn  int64           // the largest turn number a turn/start named
	calls    []*call
	byID     map[string]*call
	folded   bool  // whether any event was folded
	lastSeq  int64 // the last event folded: its seq
	lastTime int64 // and its time
	npending int
}

func (st *State) clearCalls() {
	st.calls = st.calls[:0]
	clear(st.byID)
	st.npending = 0
}

// Fold folds the next event of the log into st. e must stay valid (it is
// the log's own event).
func (st *State) Fold(e *event.Event) {
	if st.byID == nil {
		st.byID = map[string]*call{}
	}
	st.folded, st.lastSeq, st.lastTime = true, e.Seq, e.Time
	switch e.Type {
	case event.TypeTurnStart:
		st.turn, _ = event.ObjectMember(e.Data, "turn")
		if n, err := strconv.ParseFloat(string(st.turn), 64); err == nil && n > float64(st.maxTurn) && n < 1<<53 {
			st.maxTurn = int64(n)
		}
		st.step = nil
		st.clearCalls()
	case event.TypeTurnEnd:
		st.turn, st.step = nil, nil
		st.clearCalls()
	case event.TypeStepStart:
		st.step, _ = event.ObjectMember(e.Data, "step")
	case event.TypeStepEnd:
		st.step = nil
		st.clearCalls()
	case event.TypeAssistantMessage:
		msgStep, _ := event.ObjectMember(e.Data, "step")
		for _, b := range event.ToolCalls(e.Data) {
			id := b.ID
			if c, seen := st.byID[id]; seen {
				// Re-registration keeps the position, forgets the rest.
				if !c.open {
					st.npending++
				}
				*c = call{id: id, name: b.Name, args: b.Arguments, step: msgStep, host: e.Seq, callSeq: -1, open: true}
				continue
			}
			c := &call{id: id, name: b.Name, args: b.Arguments, step: msgStep, host: e.Seq, callSeq: -1, open: true}
			st.byID[id] = c
			st.calls = append(st.calls, c)
			st.npending++
		}
	case event.TypeToolCall:
		if c := st.byID[event.StringMember(e.Data, "callId")]; c != nil && c.open {
			c.callSeq = e.Seq
		}
	case event.TypeToolResult:
		if c := st.byID[event.StringMember(e.Data, "callId")]; c != nil && c.open {
			c.open = false
			st.npending--
		}
	case event.TypeCompactStart, event.TypeCompactionStart:
		st.open = &bracket{typ: e.Type, data: e.Data}
	case event.TypeCompactEnd:
		if st.open != nil && st.open.typ == event.TypeCompactStart {
			st.open = nil
		}
	case event.TypeCompactionEnd:
		if st.open != nil && st.open.typ == event.TypeCompactionStart && event.StringMember(st.open.data, "compactionId") == event.StringMember(e.Data, "compactionId") {
			st.open = nil
		}
	}
}

// FoldAll folds events into st, in order: the State that Fold on each
// would give, but the calls of the events before the last one that
// forgets them (a turn/start, turn/end or step/end) are not read, as they
// would be forgotten there. A resume folds a whole log this way: the tool
// calls of every turn but the last are skipped, not parsed.
func (st *State) FoldAll(events []event.Event) {
	forget := -1 // the last event that forgets the calls
	for i := len(events) - 1; i >= 0 && forget < 0; i-- {
		switch events[i].Type {
		case event.TypeTurnStart, event.TypeTurnEnd, event.TypeStepEnd:
			forget = i
		}
	}
	for i := range events {
		e := &events[i]
		if i < forget {
			switch e.Type {
			case event.TypeAssistantMessage, event.TypeToolCall, event.TypeToolResult:
				// Only their calls would change st: forgotten at forget.
				if st.byID == nil {
					st.byID = map[string]*call{}
				}
				st.folded, st.lastSeq, st.lastTime = true, e.Seq, e.Time
				continue
			}
		}
		st.Fold(e)
	}
}

// Clone returns a copy of st that folds on independently of it, in
// O(calls of the open turn).
func (st *State) Clone() State {
	out := *st
	out.calls = make([]*call, len(st.calls))
	out.byID = make(map[string]*call, len(st.byID))
	for i, c := range st.calls {
		cc := *c
		out.calls[i] = &cc
		out.byID[c.id] = &cc
	}
	return out
}

// Turn is the open turn's number as the log wrote it (JSON), or nil.
func (st *State) Turn() json.RawMessage { return st.turn }

// Step is the open step's number as the log wrote it (JSON), or nil.
func (st *State) Step() json.RawMessage { return st.step }

// MaxTurn is the largest turn number a turn/start of the log named (0
// when none did).
func (st *State) MaxTurn() int64 { return st.maxTurn }

// Call is a tool call of the open turn that has no result yet.
type Call struct {
	// ID is the call id (the tool-call block's id, the tool/result's
	// callId).
	ID string
	// MessageSeq is the seq of the assistant/message that made the call;
	// CallSeq that of its tool/call event, or -1 when none was appended.
	MessageSeq, CallSeq int64
	// Step is the step of that message, as the log wrote it (JSON).
	Step json.RawMessage
	// Name is the tool the model called, and Arguments the arguments it
	// gave, as the tool-call block holds them: a JSON object, or a string
	// holding one's text (the seed system's form; ArgumentsText gives the
	// text either way).
	Name      string
	Arguments json.RawMessage
}

// ArgumentsText is the JSON text of the call's arguments: the string's
// content when they are a string, else their JSON; "{}" when absent.
func (c Call) ArgumentsText() string {
	var s string
	if json.Unmarshal(c.Arguments, &s) == nil {
		return s
	}
	if len(c.Arguments) == 0 {
		return "{}"
	}
	return string(c.Arguments)
}

// Pending returns the calls of the open turn that have no result yet, in
// the order they were made (REP-2).
func (st *State) Pending() []Call {
	out := make([]Call, 0, st.npending)
	for _, c := range st.calls {
		if c.open {
			out = append(out, Call{ID: c.id, MessageSeq: c.host, CallSeq: c.callSeq, Step: c.step, Name: c.name, Arguments: c.args})
		}
	}
	return out
}

// CallStatus reports whether the open turn registered call id, and
// whether it is still pending (registered and not answered).
func (st *State) CallStatus(id string) (registered, pending bool) {
	c := st.byID[id]
	if c == nil {
		return false, false
	}
	return true, c.open
}

// NumPending is len(Pending()), in O(1).
func (st *State) NumPending() int { return st.npending }

// CompactionOpen reports whether a compaction is open (COMP-2).
func (st *State) CompactionOpen() bool { return st.open != nil }

// Closers returns the events that close an open compaction and the open
// last turn of log, in order, with seqs continuing the log and the last
// event's time (REP-3, REP-6). onSurface reports whether a seq is on the
// current surface; a pending call whose registering message is not gets no
// tool/result (REP-4). A log with neither gets none (REP-1). log must be a
// valid log.
func Closers(log []event.Event, onSurface func(seq int64) bool) []event.Event {
	var st State
	st.FoldAll(log)
	return st.Closers(onSurface)
}

// Closers returns the closers of the log folded into st (see Closers).
func (st *State) Closers(onSurface func(seq int64) bool) []event.Event {
	if (st.turn == nil && st.open == nil) || !st.folded {
		return nil
	}
	seq, time := st.lastSeq+1, st.lastTime
	turn := st.turn
	var out []event.Event
	add := func(t event.Type, data string, op event.SurfaceOp, sources []int64) {
		out = append(out, event.Event{Type: t, Seq: seq, Time: time, Data: json.RawMessage(data), Op: op, Sources: sources})
		seq++
	}
	if st.open != nil {
		add(EndOf(st.open.typ, st.open.data))
	}
	if turn == nil {
		return out
	}
	for _, c := range st.calls {
		if !c.open || !onSurface(c.host) {
			continue
		}
		var sources []int64
		if c.callSeq >= 0 {
			sources = []int64{c.callSeq}
		}
		id, _ := json.Marshal(c.id)
		add(event.TypeToolResult, `{"turn":`+string(turn)+`,"step":`+string(c.step)+`,"callId":`+string(id)+
			`,"content":[{"type":"text","text":`+strconv.Quote(InterruptedText)+`}],"isError":true,"error":{"name":"InterruptedError","code":"interrupted"}}`,
			event.Append(), sources)
	}
	if st.step != nil {
		add(event.TypeStepEnd, `{"turn":`+string(turn)+`,"step":`+string(st.step)+`}`, event.SurfaceOp{}, nil)
	}
	add(event.TypeTurnEnd, `{"turn":`+string(turn)+`,"reason":{"kind":"interrupted"}}`, event.SurfaceOp{}, nil)
	return out
}

// EndOf returns the type and data of the end event that closes the
// compaction whose start event has type start and data startData, with
// error "interrupted" (REP-6): compact/end {turn, error} for compact/start;
// compaction/end {compactionId, sourceCommandId?, turn, error} for
// compaction/start, the members copied from the start.
func EndOf(start event.Type, startData []byte) (event.Type, string, event.SurfaceOp, []int64) {
	turn, _ := event.ObjectMember(startData, "turn")
	errText := `,"error":"` + Interrupted + `"}`
	if start == event.TypeCompactStart {
		return event.TypeCompactEnd, `{"turn":` + string(turn) + errText, event.SurfaceOp{}, nil
	}
	id, _ := event.ObjectMember(startData, "compactionId")
	data := `{"compactionId":` + string(id)
	if cmd, ok := event.ObjectMember(startData, "sourceCommandId"); ok {
		data += `,"sourceCommandId":` + string(cmd)
	}
	return event.TypeCompactionEnd, data + `,"turn":` + string(turn) + errText, event.SurfaceOp{}, nil
}
