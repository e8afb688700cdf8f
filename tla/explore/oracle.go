package explore

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/model"
)

// oracle answers the explorer's questions with model/, on real events:
// whether a candidate is accepted, the fold of a log, its repair
// closers, and whether a cut is balanced. Answers are cached by log,
// since the explorer asks about the same logs many times.
type oracle struct {
	derived map[string]*model.State // nil: the log is rejected
}

func newOracle() *oracle { return &oracle{derived: map[string]*model.State{}} }

func logKey(l []Event) string {
	var b strings.Builder
	for _, e := range l {
		b.WriteString(e.T + "/" + e.Op.Kind + "/" + strconv.FormatInt(e.Op.Start, 10) + "/" + strconv.FormatInt(e.Op.End, 10) + "/")
		for _, s := range e.Src {
			b.WriteString(strconv.FormatInt(s, 10) + ",")
		}
		b.WriteString("/" + strconv.Itoa(e.Call) + ";")
	}
	return b.String()
}

func (o *oracle) derive(l []Event) *model.State {
	k := logKey(l)
	if st, ok := o.derived[k]; ok {
		return st
	}
	st, err := model.Derive(concrete(l))
	if err != nil {
		st = nil
	}
	o.derived[k] = st
	return st
}

func (o *oracle) valid(l []Event) bool { return o.derive(l) != nil }

// accepts reports whether the model accepts e after l.
func (o *oracle) accepts(l []Event, e Event) bool {
	return o.valid(append(slices.Clone(l), e))
}

// fold is the model's surface of l; nil when the model rejects l.
func (o *oracle) fold(l []Event) []int64 {
	if st := o.derive(l); st != nil {
		return st.Surface
	}
	return nil
}

// balanced is the model's answer to COMP-4 for the cut before (after
// false) or after node seq.
func (o *oracle) balanced(l []Event, seq int64, after bool) bool {
	s, err := model.SeedSession(concrete(l), func() int64 { return int64(len(l)) })
	if err != nil {
		return false
	}
	b, _ := s.Balanced(seq, after)
	return b
}

// closers is the model's repair closers of l, abstracted back.
func (o *oracle) closers(l []Event) []Event {
	out := []Event{}
	for _, c := range model.Closers(concrete(l)) {
		switch c.Type {
		case event.TypeToolResult:
			var d struct{ CallID string }
			_ = json.Unmarshal(c.Data, &d)
			n, _ := strconv.Atoi(strings.TrimPrefix(d.CallID, "c"))
			out = append(out, ev("result", appendOp, slices.Clone(c.Sources), n))
		case event.TypeTurnEnd:
			out = append(out, ev("tend", noOp, nil, 0))
		case event.TypeStepEnd:
			out = append(out, ev("send", noOp, nil, 0))
		case event.TypeCompactEnd:
			out = append(out, ev("cend", noOp, nil, 0))
		default:
			out = append(out, ev("unexpected "+string(c.Type), noOp, nil, 0))
		}
	}
	return out
}

// concrete turns the abstract log into a real one.
func concrete(l []Event) []event.Event {
	out := make([]event.Event, len(l))
	for i, e := range l {
		ce := event.Event{Seq: int64(i), Time: int64(i)}
		var data string
		callID := `"c` + strconv.Itoa(e.Call) + `"`
		switch e.T {
		case "user":
			ce.Type, data = event.TypeUserMessage, `{"content":[{"type":"text","text":"u"}],"source":{"kind":"user"}}`
		case "summary":
			ce.Type, data = event.TypeUserMessage, `{"content":[{"type":"text","text":"summary"}],"source":{"kind":"plugin","plugin":"compact"}}`
		case "asst":
			ce.Type, data = event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[{"type":"text","text":"a"}]}`
			if e.Call != 0 {
				data = `{"turn":1,"step":1,"content":[{"type":"text","text":"a"},{"type":"tool-call","id":` + callID + `,"name":"x","arguments":"{}"}]}`
			}
		case "pcomp":
			ce.Type, data = event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[{"type":"provider-item","compaction":true,"text":"s","native":{"provider":"anthropic","model":"m","opaque":true,"item":{"type":"compaction","content":"s"}}}]}`
		case "result":
			ce.Type, data = event.TypeToolResult, `{"turn":1,"step":1,"callId":`+callID+`,"content":[],"isError":false}`
		case "call":
			ce.Type, data = event.TypeToolCall, `{"turn":1,"step":1,"callId":`+callID+`,"name":"x","arguments":"{}"}`
		case "tstart":
			ce.Type, data = event.TypeTurnStart, `{"turn":1,"trigger":{"kind":"message"}}`
		case "tend":
			ce.Type, data = event.TypeTurnEnd, `{"turn":1,"reason":{"kind":"completed"}}`
		case "sstart":
			ce.Type, data = event.TypeStepStart, `{"turn":1,"step":1}`
		case "send":
			ce.Type, data = event.TypeStepEnd, `{"turn":1,"step":1}`
		case "cstart":
			ce.Type, data = event.TypeCompactStart, `{"turn":1}`
		case "cend":
			ce.Type, data = event.TypeCompactEnd, `{"turn":1}`
		}
		ce.Data = json.RawMessage(data)
		switch e.Op.Kind {
		case "append":
			ce.Op = event.Append()
		case "replace":
			ce.Op = event.Replace(e.Op.Start, e.Op.End)
		}
		if len(e.Src) > 0 {
			ce.Sources = slices.Clone(e.Src)
		}
		out[i] = ce
	}
	return out
}
