package repair_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/repair"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/model"
)

// TestStateAgainstModel: a repair.State folded over random logs (appended
// through a loose session, so every log is one the library accepts) gives
// the model's closers event for event (type, seq, time, data, marker,
// sources), whatever the surface keeps; NumPending is len(Pending()); and
// MaxTurn is the largest turn number a turn/start named, with the rare
// values varied: turns out of order, repeated, fractional, at and past
// 2^53, calls re-registered, answered twice, made in an ended step,
// compactions of both vocabularies with look-alike ids, replaces that
// shadow a call's message.
func TestStateAgainstModel(t *testing.T) {
	turns := []string{"1", "2", "7", "3", "1.5", "9007199254740992", "9007199254740993", "1e3", "2"}
	ids := []string{"a", "b", "c"}
	var logs, events, results, maxTurns int
	defer func() {
		t.Logf("%d logs of %d events in all; their closers answered %d calls; %d had a turn number over 1", logs, events, results, maxTurns)
		if results == 0 || maxTurns == 0 {
			t.Error("the generator never made a closer answer a call, or never a turn over 1: it tests too little")
		}
	}()
	rapid.Check(t, func(rt *rapid.T) {
		s := session.New()
		// Most logs start in a turn, as an agent's do.
		if rapid.IntRange(0, 3).Draw(rt, "opened") > 0 {
			s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: json.RawMessage(`{"turn":1,"trigger":{"kind":"message"}}`)})
			s.Append(context.Background(), event.Raw{Type: event.TypeStepStart, Data: json.RawMessage(`{"turn":1,"step":1}`)})
		}
		ctx := context.Background()
		n := rapid.IntRange(0, 40).Draw(rt, "n")
		turn := "1"
		for i := 0; i < n; i++ {
			var typ event.Type
			var data string
			var intent *event.Intent
			switch rapid.IntRange(0, 17).Draw(rt, "kind") {
			case 0:
				next := rapid.SampledFrom(turns).Draw(rt, "turn")
				if _, err := s.Append(ctx, event.Raw{Type: event.TypeTurnStart, Data: json.RawMessage(`{"turn":` + next + `,"trigger":{"kind":"message"}}`)}); err == nil {
					turn = next
				}
				continue
			case 1:
				typ, data = event.TypeTurnEnd, `{"turn":`+turn+`,"reason":{"kind":"completed"}}`
			case 2:
				typ, data = event.TypeStepStart, `{"turn":`+turn+`,"step":`+rapid.SampledFrom([]string{"1", "1", "1", "2"}).Draw(rt, "step")+`}`
			case 3:
				typ, data = event.TypeStepEnd, `{"turn":`+turn+`,"step":1}`
			case 4, 5, 6, 7, 8:
				content := `{"type":"text","text":"t"}`
				for k := rapid.IntRange(0, 3).Draw(rt, "calls"); k > 0; k-- {
					content += `,{"type":"tool-call","id":"` + rapid.SampledFrom(ids).Draw(rt, "id") + `","name":"x","arguments":{"p":1}}`
				}
				typ, data = event.TypeAssistantMessage, `{"turn":`+turn+`,"step":1,"content":[`+content+`]}`
				intent = &event.Intent{Op: event.Append()}
			case 9, 10:
				typ, data = event.TypeToolCall, `{"turn":`+turn+`,"step":1,"callId":"`+rapid.SampledFrom(ids).Draw(rt, "id")+`","name":"x","arguments":"{}"}`
			case 11, 12:
				typ, data = event.TypeToolResult, `{"turn":`+turn+`,"step":1,"callId":"`+rapid.SampledFrom(ids).Draw(rt, "id")+`","content":[],"isError":`+rapid.SampledFrom([]string{"false", "true"}).Draw(rt, "err")+`}`
				intent = &event.Intent{Op: event.Append()}
			case 13:
				vocab := rapid.SampledFrom([]string{"compact", "compaction"}).Draw(rt, "vocab")
				end := rapid.Bool().Draw(rt, "end")
				id := rapid.SampledFrom([]string{"c1", "c2", `c\u0031`}).Draw(rt, "cid")
				typ = event.Type(vocab + map[bool]string{false: "/start", true: "/end"}[end])
				if vocab == "compact" {
					data = `{"turn":` + turn + `}`
				} else {
					data = `{"compactionId":"` + id + `","turn":` + turn + `}`
				}
			case 14:
				typ, data = event.TypeUserMessage, `{"content":[{"type":"text","text":"q"}],"source":{"kind":"user"}}`
				intent = &event.Intent{Op: event.Append()}
			default: // a replace of one surface node by a user message
				surf := s.Surface()
				if surf.Len() == 0 {
					continue
				}
				seq := surf.At(rapid.IntRange(0, surf.Len()-1).Draw(rt, "at"))
				typ, data = event.TypeUserMessage, `{"content":[{"type":"text","text":"r"}],"source":{"kind":"user"}}`
				intent = &event.Intent{Op: event.Replace(seq, seq), Sources: []int64{seq}}
			}
			s.Append(ctx, event.Raw{Type: typ, Data: json.RawMessage(data)}, intent.Value()) // a refused append leaves nothing
		}
		log := s.Events()
		var st repair.State
		maxTurn := int64(0)
		for i := range log {
			st.Fold(&log[i])
			if log[i].Type == event.TypeTurnStart {
				var d struct{ Turn json.Number }
				json.Unmarshal(log[i].Data, &d)
				if f, err := strconv.ParseFloat(string(d.Turn), 64); err == nil && f < math.Pow(2, 53) && int64(f) > maxTurn {
					maxTurn = int64(f)
				}
			}
		}
		onSurface := func(seq int64) bool { _, ok := s.Position(seq); return ok }
		got, want := st.Closers(onSurface), model.Closers(log)
		logs++
		events += len(log)
		for _, c := range got {
			if c.Type == event.TypeToolResult {
				results++
			}
		}
		if maxTurn > 1 {
			maxTurns++
		}
		if fmt.Sprint(describeAll(got)) != fmt.Sprint(describeAll(want)) {
			rt.Fatalf("closers\n got %v\nwant %v\nfor %s", describeAll(got), describeAll(want), logText(log))
		}
		if st.NumPending() != len(st.Pending()) {
			rt.Fatalf("NumPending %d, Pending %d", st.NumPending(), len(st.Pending()))
		}
		if st.MaxTurn() != maxTurn {
			rt.Fatalf("MaxTurn %d, want %d, for %s", st.MaxTurn(), maxTurn, logText(log))
		}
		// FoldAll, which skips the calls the log forgets, gives the same
		// State as Fold event by event: over the whole log, and in pieces
		// cut anywhere (a session folds what came since its last query),
		// some of them folded one event at a time.
		// (Equal as states: an empty list of calls is one, allocated or not.)
		same := func(a, b repair.State) bool {
			return cmp.Equal(a, b, cmp.Exporter(func(reflect.Type) bool { return true }), cmpopts.EquateEmpty())
		}
		var all repair.State
		all.FoldAll(log)
		if !same(all, st) {
			rt.Fatalf("FoldAll differs from Fold over %s", logText(log))
		}
		var pieces repair.State
		for from := 0; from < len(log); {
			to := from + rapid.IntRange(1, len(log)-from).Draw(rt, "piece")
			if rapid.Bool().Draw(rt, "oneByOne") {
				for i := from; i < to; i++ {
					pieces.Fold(&log[i])
				}
			} else {
				pieces.FoldAll(log[from:from]) // nothing
				pieces.FoldAll(log[from:to])
			}
			from = to
		}
		if !same(pieces, st) {
			rt.Fatalf("FoldAll in pieces differs from Fold over %s", logText(log))
		}
	})
}

// describeAll is each event's type, seq, time, data, marker and sources.
func describeAll(es []event.Event) []string {
	var out []string
	for _, e := range es {
		src := e.Sources
		if len(src) == 0 {
			src = nil
		}
		out = append(out, fmt.Sprintf("%s seq=%d time=%d data=%s op=%+v sources=%v", e.Type, e.Seq, e.Time, e.Data, e.Op, src))
	}
	return out
}

func logText(log []event.Event) string {
	var b []byte
	for _, e := range log {
		line, _ := e.AppendJSON(nil)
		b = append(append(b, line...), '\n')
	}
	return string(b)
}
