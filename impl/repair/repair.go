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

// Closers returns the events that close an open compaction and the open
// last turn of log, in order, with seqs continuing the log and the last
// event's time (REP-3, REP-6). onSurface reports whether a seq is on the
// current surface; a pending call whose registering message is not gets no
// tool/result (REP-4). A log with neither gets none (REP-1). log must be a
// valid log.
func Closers(log []event.Event, onSurface func(seq int64) bool) []event.Event {
	var (
		open     *bracket        // the last compaction start with no end after it
		turn     json.RawMessage // open turn's number, nil when no turn is open
		step     json.RawMessage // open step's number, nil when none
		calls    []*call
		byID     = map[string]*call{}
		clearAll = func() {
			calls = calls[:0]
			clear(byID)
		}
	)
	for i := range log {
		e := &log[i]
		switch e.Type {
		case event.TypeTurnStart:
			turn, _ = event.ObjectMember(e.Data, "turn")
			step = nil
			clearAll()
		case event.TypeTurnEnd:
			turn, step = nil, nil
			clearAll()
		case event.TypeStepStart:
			step, _ = event.ObjectMember(e.Data, "step")
		case event.TypeStepEnd:
			step = nil
			clearAll()
		case event.TypeAssistantMessage:
			msgStep, _ := event.ObjectMember(e.Data, "step")
			for _, id := range event.ToolCallIDs(e.Data) {
				if c, seen := byID[id]; seen {
					// Re-registration keeps the position, forgets the rest.
					*c = call{id: id, step: msgStep, host: e.Seq, callSeq: -1, open: true}
					continue
				}
				c := &call{id: id, step: msgStep, host: e.Seq, callSeq: -1, open: true}
				byID[id] = c
				calls = append(calls, c)
			}
		case event.TypeToolCall:
			if c := byID[event.StringMember(e.Data, "callId")]; c != nil && c.open {
				c.callSeq = e.Seq
			}
		case event.TypeToolResult:
			if c := byID[event.StringMember(e.Data, "callId")]; c != nil {
				c.open = false
			}
		case event.TypeCompactStart, event.TypeCompactionStart:
			open = &bracket{typ: e.Type, data: e.Data}
		case event.TypeCompactEnd:
			if open != nil && open.typ == event.TypeCompactStart {
				open = nil
			}
		case event.TypeCompactionEnd:
			if open != nil && open.typ == event.TypeCompactionStart && event.StringMember(open.data, "compactionId") == event.StringMember(e.Data, "compactionId") {
				open = nil
			}
		}
	}
	if (turn == nil && open == nil) || len(log) == 0 {
		return nil
	}
	last := log[len(log)-1]
	seq, time := last.Seq+1, last.Time
	var out []event.Event
	add := func(t event.Type, data string, op event.SurfaceOp, sources []int64) {
		out = append(out, event.Event{Type: t, Seq: seq, Time: time, Data: json.RawMessage(data), Op: op, Sources: sources})
		seq++
	}
	if open != nil {
		add(EndOf(open.typ, open.data))
	}
	if turn == nil {
		return out
	}
	for _, c := range calls {
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
	if step != nil {
		add(event.TypeStepEnd, `{"turn":`+string(turn)+`,"step":`+string(step)+`}`, event.SurfaceOp{}, nil)
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
