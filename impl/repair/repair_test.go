package repair_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/model"
)

type ev struct {
	t      event.Type
	data   string
	intent *event.Intent
}

func ap(sources ...int64) *event.Intent { return &event.Intent{Op: event.Append(), Sources: sources} }

var (
	start   = ev{event.TypeTurnStart, `{"turn":7,"trigger":{"kind":"message"}}`, nil}
	end     = ev{event.TypeTurnEnd, `{"turn":7,"reason":{"kind":"completed"}}`, nil}
	step    = ev{event.TypeStepStart, `{"turn":7,"step":2}`, nil}
	stepEnd = ev{event.TypeStepEnd, `{"turn":7,"step":2}`, nil}
)

func asst(ids ...string) ev {
	var b []string
	for _, id := range ids {
		b = append(b, `{"type":"tool-call","id":"`+id+`","name":"x","arguments":"{}"}`)
	}
	return ev{event.TypeAssistantMessage, `{"turn":7,"step":2,"content":[{"type":"text","text":"t"}` + strings.Repeat(",", min(len(b), 1)) + strings.Join(b, ",") + `]}`, ap()}
}

var (
	compactStart = ev{event.TypeCompactStart, `{"turn":7}`, nil}
	compactEnd   = ev{event.TypeCompactEnd, `{"turn":7}`, nil}
)

func cstart(id string) ev {
	return ev{event.TypeCompactionStart, `{"compactionId":"` + id + `","turn":7}`, nil}
}

func cend(id string) ev {
	return ev{event.TypeCompactionEnd, `{"compactionId":"` + id + `","turn":7}`, nil}
}

func call(id string) ev {
	return ev{event.TypeToolCall, `{"turn":7,"step":2,"callId":"` + id + `","name":"x","arguments":"{}"}`, nil}
}

func result(id string) ev {
	return ev{event.TypeToolResult, `{"turn":7,"step":2,"callId":"` + id + `","content":[],"isError":false}`, ap()}
}

// TestClosers covers REP-1 (when), REP-2 (pending calls), REP-3 (closers)
// and REP-5 (idempotent), each case checked against the model too.
func TestClosers(t *testing.T) {
	cases := []struct {
		name string
		log  []ev
		want string // closer types and, for tool results, callId and sources
	}{
		{"empty log (REP-1)", nil, ""},
		{"balanced (REP-1)", []ev{start, end}, ""},
		{"open turn only", []ev{start}, "turn/end"},
		{"open step", []ev{start, step}, "step/end turn/end"},
		{"orphan with its tool/call (REP-3)", []ev{start, step, asst("a"), call("a")}, "tool/result:a:[3] step/end turn/end"},
		{"orphan without tool/call: no sources", []ev{start, step, asst("a")}, "tool/result:a:[] step/end turn/end"},
		{"answered call is not pending (REP-2)", []ev{start, step, asst("a", "b"), call("a"), call("b"), result("a")}, "tool/result:b:[4] step/end turn/end"},
		{"registration order, not call order", []ev{start, step, asst("b", "a"), call("a"), call("b")}, "tool/result:b:[4] tool/result:a:[3] step/end turn/end"},
		{"step/end clears calls (REP-2)", []ev{start, step, asst("a"), stepEnd}, "turn/end"},
		{"earlier turns are closed", []ev{start, step, asst("a"), end, start}, "turn/end"},
		{"re-registration forgets the tool/call", []ev{start, step, asst("a"), call("a"), asst("a")}, "tool/result:a:[] step/end turn/end"},
		{"tool/call of an unknown id is ignored", []ev{start, step, call("z")}, "step/end turn/end"},
		// REP-6 with look-alike ends: an end closes its own start only.
		{"compaction/end of another compactionId leaves it open", []ev{start, cstart("c1"), cend("c2")}, "compaction/end turn/end"},
		{"compaction/end of the same compactionId, escaped, closes it", []ev{start, cstart("c1"), cend(`c\u0031`)}, "turn/end"},
		{"compaction/end of the same compactionId closes it", []ev{start, cstart("c1"), cend("c1")}, "turn/end"},
		{"compact/end does not close a compaction/start", []ev{start, cstart("c1"), compactEnd}, "compaction/end turn/end"},
		{"compaction/end does not close a compact/start", []ev{start, compactStart, cend("c1")}, "compact/end turn/end"},
		{"compact/end closes a compact/start", []ev{start, compactStart, compactEnd}, "turn/end"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := session.New()
			for _, e := range tc.log {
				if _, err := s.Append(context.Background(), event.Raw{Type: e.t, Data: json.RawMessage(e.data)}, e.intent.Value()); err != nil {
					t.Fatal(err)
				}
			}
			before := s.Events()
			closers, err := s.Repair(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := describe(closers); got != tc.want {
				t.Fatalf("closers %q, want %q", got, tc.want)
			}
			if got, want := describe(model.Closers(before)), tc.want; got != want {
				t.Fatalf("model closers %q, want %q", got, want)
			}
			for _, c := range closers {
				if c.Time != before[len(before)-1].Time {
					t.Fatalf("closer time %d", c.Time)
				}
				if c.Type == event.TypeTurnEnd && string(c.Data) != `{"turn":7,"reason":{"kind":"interrupted"}}` {
					t.Fatalf("turn/end data %s", c.Data)
				}
			}
			again, err := s.Repair(context.Background())
			if err != nil || len(again) != 0 {
				t.Fatalf("second repair (REP-5): %v %v", again, err)
			}
		})
	}
}

func describe(es []event.Event) string {
	var parts []string
	for _, e := range es {
		p := string(e.Type)
		if e.Type == event.TypeToolResult {
			var d struct{ CallID string }
			json.Unmarshal(e.Data, &d)
			b, _ := json.Marshal(e.Sources)
			if e.Sources == nil {
				b = []byte("[]")
			}
			p += ":" + d.CallID + ":" + string(b)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}
