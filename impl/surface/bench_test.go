package surface

import (
	"runtime"
	"testing"

	"github.com/surfacelog/surface/impl/event"
)

// BenchmarkMemoryPerNode reports the heap the Manager keeps per surface
// node (list node, order label, seq index), without the log itself.
func BenchmarkMemoryPerNode(b *testing.B) {
	const n = 100_000
	log := make([]event.Event, 0, n)
	for i := 0; i < n; i++ {
		e := event.Event{Type: event.TypeUserMessage, Seq: int64(i), Data: userData, Op: event.Append()}
		log = append(log, e)
	}
	b.ReportAllocs()
	var perNode float64
	for i := 0; i < b.N; i++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		m := New()
		if err := m.Sync(log); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perNode = float64(after.HeapAlloc-before.HeapAlloc) / n
		runtime.KeepAlive(m)
	}
	b.ReportMetric(perNode, "B/node")
}
