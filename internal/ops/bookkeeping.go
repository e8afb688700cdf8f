package ops

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/model"
)

// Bookkeeping compares the implementation's incremental bookkeeping
// queries (Tokens, OpenTurn, NextTurn, OpenStep, PendingCalls) with
// answers computed afresh from the model's state ms: the token sum of its
// messages, and what the model's own repair would close. It returns ""
// when they agree.
func (d *Impl) Bookkeeping(ms State) string {
	want := 0
	for _, m := range ms.Messages {
		want += message.Tokens(&ms.Events[m.Seq], m, nil)
	}
	if got := d.S.Tokens(); got != want {
		return fmt.Sprintf("Tokens() = %d, a rescan of the messages gives %d", got, want)
	}
	maxTurn := int64(0)
	for _, e := range ms.Events {
		if e.Type == event.TypeTurnStart {
			var t struct{ Turn float64 }
			if json.Unmarshal(e.Data, &t) == nil && t.Turn > float64(maxTurn) {
				maxTurn = int64(t.Turn)
			}
		}
	}
	if got := d.S.NextTurn(); got != maxTurn+1 {
		return fmt.Sprintf("NextTurn() = %d, want %d", got, maxTurn+1)
	}
	// The model's closers say what is open: the tool/results of the
	// pending calls still on the surface, a step/end, a turn/end.
	var results []string
	openStep, openTurn := "", ""
	for _, c := range model.Closers(ms.Events) {
		var d struct {
			CallID string
			Turn   json.RawMessage
			Step   json.RawMessage
		}
		_ = json.Unmarshal(c.Data, &d)
		switch c.Type {
		case event.TypeToolResult:
			results = append(results, d.CallID)
		case event.TypeStepEnd:
			openStep = string(d.Step)
		case event.TypeTurnEnd:
			openTurn = string(d.Turn)
		}
	}
	var pending []string
	for _, c := range d.S.PendingCalls() {
		if slices.Contains(ms.Surface, c.MessageSeq) {
			pending = append(pending, c.ID)
		}
	}
	if !slices.Equal(pending, results) {
		return fmt.Sprintf("PendingCalls() on the surface %q, the model's repair closes %q", pending, results)
	}
	if got := numberText(d.S.OpenStep()); got != normalNumber(openStep) {
		return fmt.Sprintf("OpenStep() = %q, the model's repair closes step %q", got, openStep)
	}
	if got := numberText(d.S.OpenTurn()); got != normalNumber(openTurn) {
		return fmt.Sprintf("OpenTurn() = %q, the model's repair closes turn %q", got, openTurn)
	}
	return ""
}

func numberText(n int64, ok bool) string {
	if !ok {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

func normalNumber(raw string) string {
	if raw == "" {
		return ""
	}
	var f float64
	if json.Unmarshal([]byte(raw), &f) != nil {
		return raw
	}
	return strconv.FormatInt(int64(f), 10)
}
