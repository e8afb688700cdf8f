package repair

import (
	"encoding/json"
	"errors"

	"github.com/surfacelog/surface/impl/event"
)

// stateJSON is the form of a State in a checkpoint (spec/README.md,
// STORE-18): everything Fold has learnt, so that folding goes on from it
// exactly as from the events it was folded from.
type stateJSON struct {
	Turn    json.RawMessage `json:"turn,omitempty"`
	Step    json.RawMessage `json:"step,omitempty"`
	MaxTurn int64           `json:"maxTurn"`
	Open    *bracketJSON    `json:"open,omitempty"`
	Calls   []callJSON      `json:"calls,omitempty"`
	Last    *lastJSON       `json:"last,omitempty"`
}

type bracketJSON struct {
	Type event.Type      `json:"type"`
	Data json.RawMessage `json:"data"`
}

type callJSON struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	Step       json.RawMessage `json:"step,omitempty"`
	MessageSeq int64           `json:"messageSeq"`
	CallSeq    int64           `json:"callSeq"`
	Open       bool            `json:"open"`
}

type lastJSON struct {
	Seq  int64 `json:"seq"`
	Time int64 `json:"time"`
}

// MarshalJSON writes what st has folded, for a checkpoint. A State read
// back with UnmarshalJSON folds on and answers every query exactly as st.
func (st *State) MarshalJSON() ([]byte, error) {
	out := stateJSON{Turn: st.turn, Step: st.step, MaxTurn: st.maxTurn}
	if st.open != nil {
		out.Open = &bracketJSON{Type: st.open.typ, Data: st.open.data}
	}
	for _, c := range st.calls {
		out.Calls = append(out.Calls, callJSON{ID: c.id, Name: c.name, Arguments: c.args, Step: c.step, MessageSeq: c.host, CallSeq: c.callSeq, Open: c.open})
	}
	if st.folded {
		out.Last = &lastJSON{Seq: st.lastSeq, Time: st.lastTime}
	}
	return json.Marshal(out)
}

// errState is the error of a State that cannot be read back.
var errState = errors.New("repair: not a folded state")

// UnmarshalJSON reads a State that MarshalJSON wrote. It refuses what no
// fold could have left (a repeated call id, an open compaction of another
// type, a JSON null where a number is kept), leaving st as it was.
func (st *State) UnmarshalJSON(b []byte) error {
	var in stateJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	out := State{turn: raw(in.Turn), step: raw(in.Step), maxTurn: in.MaxTurn, byID: map[string]*call{}}
	if in.Open != nil {
		if in.Open.Type != event.TypeCompactStart && in.Open.Type != event.TypeCompactionStart {
			return errState
		}
		out.open = &bracket{typ: in.Open.Type, data: raw(in.Open.Data)}
	}
	for _, c := range in.Calls {
		if _, dup := out.byID[c.ID]; dup {
			return errState
		}
		cc := &call{id: c.ID, name: c.Name, args: raw(c.Arguments), step: raw(c.Step), host: c.MessageSeq, callSeq: c.CallSeq, open: c.Open}
		out.byID[c.ID] = cc
		out.calls = append(out.calls, cc)
		if c.Open {
			out.npending++
		}
	}
	if in.Last != nil {
		out.folded, out.lastSeq, out.lastTime = true, in.Last.Seq, in.Last.Time
	}
	if (in.Turn != nil && out.turn == nil) || (in.Step != nil && out.step == nil) {
		return errState
	}
	*st = out
	return nil
}

// raw is b, or nil for an absent or null member.
func raw(b json.RawMessage) json.RawMessage {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	return b
}
