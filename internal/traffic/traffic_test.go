package traffic

import (
	"testing"

	"github.com/surfacelog/surface/impl/event"
)

// TestLogShape: a log of n events is the n events asked for plus the
// closers of its last turn, the same every time, and holds the traffic
// the benchmarks rely on: a compaction (a context/message replacing
// surface nodes) about every CompactEvery events, never two within
// CompactEvery of each other, and every kind of surface node.
func TestLogShape(t *testing.T) {
	const n = 5*CompactEvery + 500
	l, err := Log(n)
	if err != nil {
		t.Fatal(err)
	}
	if len(l) < n || len(l) > n+20 {
		t.Fatalf("Log(%d) holds %d events", n, len(l))
	}
	again, _ := Log(n)
	if &again[0] != &l[0] {
		t.Error("a second Log of the same size is built again, not shared")
	}
	var compactions []int64
	kinds := map[event.Type]int{}
	for _, e := range l {
		if e.Op.Kind != event.OpNone {
			kinds[e.Type]++
		}
		if e.Type == event.TypeContextMessage && e.Op.Kind == event.OpReplace {
			compactions = append(compactions, e.Seq)
		}
	}
	if len(compactions) < 4 || len(compactions) > 5 {
		t.Fatalf("%d compactions in %d events (one about every %d): at %v", len(compactions), n, CompactEvery, compactions)
	}
	for i := 1; i < len(compactions); i++ {
		if d := compactions[i] - compactions[i-1]; d < CompactEvery || d > CompactEvery+200 {
			t.Errorf("compactions %d events apart (at %d and %d)", d, compactions[i-1], compactions[i])
		}
	}
	for _, k := range []event.Type{event.TypeUserMessage, event.TypeAssistantMessage, event.TypeToolResult, event.TypeContextMessage} {
		if kinds[k] == 0 {
			t.Errorf("no %s in the traffic", k)
		}
	}
}
