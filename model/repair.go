package model

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/surfacelog/surface/impl/event"
)

// Closers returns the repair closers of a valid log (REP-1 to REP-6),
// computed plainly: the end of an open compaction first; then find the
// last turn/start; if a turn/end follows it there is nothing more to do;
// otherwise replay the open turn's events.
func Closers(log []event.Event, opts ...Option) []event.Event {
	st, err := Derive(log, opts...)
	if err != nil {
		panic("model.Closers: invalid log: " + err.Error())
	}
	var out []event.Event
	if len(log) == 0 {
		return nil
	}
	last := log[len(log)-1]
	next := func(t event.Type, data string, op event.SurfaceOp, sources []int64) {
		out = append(out, event.Event{Type: t, Seq: last.Seq + 1 + int64(len(out)), Time: last.Time, Data: json.RawMessage(data), Op: op, Sources: sources})
	}
	if c, ok := openCompaction(log); ok {
		next(c.endType, c.endData, event.SurfaceOp{}, nil)
	}
	start := -1
	for i, e := range log {
		switch e.Type {
		case event.TypeTurnStart:
			start = i
		case event.TypeTurnEnd:
			start = -1
		}
	}
	if start < 0 {
		return out
	}
	type pending struct {
		id      string
		step    json.RawMessage
		host    int64
		callSeq int64
		done    bool
	}
	var calls []pending
	var step json.RawMessage
	var turnStart struct{ Turn json.RawMessage }
	_ = json.Unmarshal(log[start].Data, &turnStart)
	find := func(id string) int {
		return slices.IndexFunc(calls, func(p pending) bool { return p.id == id })
	}
	for _, e := range log[start+1:] {
		var d struct {
			Step    json.RawMessage
			CallID  *string `json:"callId"`
			Content []map[string]json.RawMessage
		}
		_ = json.Unmarshal(e.Data, &d)
		switch e.Type {
		case event.TypeStepStart:
			step = d.Step
		case event.TypeStepEnd:
			step = nil
			calls = nil
		case event.TypeAssistantMessage:
			for _, b := range d.Content {
				var typ, id string
				if json.Unmarshal(b["type"], &typ) != nil || typ != "tool-call" || json.Unmarshal(b["id"], &id) != nil {
					continue
				}
				p := pending{id: id, step: d.Step, host: e.Seq, callSeq: -1}
				if i := find(id); i >= 0 {
					calls[i] = p
				} else {
					calls = append(calls, p)
				}
			}
		case event.TypeToolCall:
			if d.CallID != nil {
				if i := find(*d.CallID); i >= 0 && !calls[i].done {
					calls[i].callSeq = e.Seq
				}
			}
		case event.TypeToolResult:
			if d.CallID != nil {
				if i := find(*d.CallID); i >= 0 {
					calls[i].done = true
				}
			}
		}
	}
	turn := string(turnStart.Turn)
	for _, p := range calls {
		if p.done || !slices.Contains(st.Surface, p.host) {
			continue
		}
		var sources []int64
		if p.callSeq >= 0 {
			sources = []int64{p.callSeq}
		}
		id, _ := json.Marshal(p.id)
		next(event.TypeToolResult, fmt.Sprintf(`{"turn":%s,"step":%s,"callId":%s,"content":[{"type":"text","text":"Tool call interrupted by a crash; no result was recorded."}],"isError":true,"error":{"name":"InterruptedError","code":"interrupted"}}`, turn, p.step, id), event.Append(), sources)
	}
	if step != nil {
		next(event.TypeStepEnd, fmt.Sprintf(`{"turn":%s,"step":%s}`, turn, step), event.SurfaceOp{}, nil)
	}
	next(event.TypeTurnEnd, fmt.Sprintf(`{"turn":%s,"reason":{"kind":"interrupted"}}`, turn), event.SurfaceOp{}, nil)
	return out
}

// openEnd is the closer of an open compaction (REP-6).
type openEnd struct {
	endType event.Type
	endData string
}

// openCompaction finds the last compaction start of the log and reports
// whether no end of its vocabulary (for compaction/*, with its
// compactionId) follows it (COMP-2), with the end event that closes it.
func openCompaction(log []event.Event) (openEnd, bool) {
	last := -1
	for i, e := range log {
		if e.Type == event.TypeCompactStart || e.Type == event.TypeCompactionStart {
			last = i
		}
	}
	if last < 0 {
		return openEnd{}, false
	}
	var start map[string]json.RawMessage
	_ = json.Unmarshal(log[last].Data, &start)
	id := func(data []byte) string {
		var d struct {
			CompactionID string `json:"compactionId"`
		}
		_ = json.Unmarshal(data, &d)
		return d.CompactionID
	}
	for _, e := range log[last+1:] {
		if log[last].Type == event.TypeCompactStart && e.Type == event.TypeCompactEnd {
			return openEnd{}, false
		}
		if log[last].Type == event.TypeCompactionStart && e.Type == event.TypeCompactionEnd && id(e.Data) == id(log[last].Data) {
			return openEnd{}, false
		}
	}
	if log[last].Type == event.TypeCompactStart {
		return openEnd{event.TypeCompactEnd, fmt.Sprintf(`{"turn":%s,"error":"interrupted"}`, start["turn"])}, true
	}
	data := fmt.Sprintf(`{"compactionId":%s`, start["compactionId"])
	if cmd, ok := start["sourceCommandId"]; ok {
		data += fmt.Sprintf(`,"sourceCommandId":%s`, cmd)
	}
	return openEnd{event.TypeCompactionEnd, data + fmt.Sprintf(`,"turn":%s,"error":"interrupted"}`, start["turn"])}, true
}
