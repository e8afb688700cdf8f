package compaction_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/internal/ops"
)

// TestModelEdges runs the library and the model side by side (ops.Pair)
// on cases the random machines reach rarely: KeepTokens at every budget
// from 0 past the whole surface (a budget equal to a tail's tokens
// included), and a commit after the compaction was ended behind the
// operation's back, by a compact/end appended directly (the operation's
// start at seq 1, where a "none open" of -1 and a start seq must not be
// confused).
func TestModelEdges(t *testing.T) {
	step := func(p *ops.Pair, s ops.Step) {
		t.Helper()
		if d := p.Step(s); d != "" {
			t.Fatal(d)
		}
	}
	user := func(text string) ops.Step {
		return ops.Step{Kind: ops.KindAppend, Type: event.TypeUserMessage, Data: json.RawMessage(`{"content":[{"type":"text","text":"` + text + `"}],"source":{"kind":"user"}}`), Intent: &event.Intent{Op: event.Append()}}
	}
	p := ops.NewPair()
	for _, w := range []int{12, 4, 16, 4, 20, 8} {
		step(p, user(strings.Repeat("q", w)))
	}
	for budget := 0; budget <= 40; budget++ {
		step(p, ops.Step{Kind: ops.KindSelect, KeepLast: -1, KeepTokens: budget})
	}
	for keep := 0; keep <= 7; keep++ {
		step(p, ops.Step{Kind: ops.KindSelect, KeepLast: keep})
	}

	p = ops.NewPair()
	step(p, user(strings.Repeat("long enough to fold ", 20)))
	step(p, ops.Step{Kind: ops.KindBegin, Start: 0, End: 0, V2: true}) // compaction/*: no turn needed
	evs := p.Impl.State().Events
	if len(evs) != 2 || evs[1].Type != event.TypeCompactionStart {
		t.Fatalf("%d events after the begin (codes %v), want its start at seq 1", len(evs), p.Codes)
	}
	id := event.StringMember(evs[1].Data, "compactionId")
	turn, _ := event.ObjectMember(evs[1].Data, "turn")
	step(p, ops.Step{Kind: ops.KindAppend, Type: event.TypeCompactionEnd, Data: json.RawMessage(`{"compactionId":"` + id + `","turn":` + string(turn) + `,"error":"ended elsewhere"}`)})
	step(p, ops.Step{Kind: ops.KindCommit, Blocks: []json.RawMessage{json.RawMessage(`{"type":"text","text":"s"}`)}, Provider: "p", Model: "m"})
	if p.Codes[string(event.CodeCompactionFinished)] == 0 {
		t.Errorf("the commit after the end was not refused as finished: %v", p.Codes)
	}
}
