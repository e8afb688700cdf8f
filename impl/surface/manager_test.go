package surface

import (
	"encoding/json"
	"testing"

	"github.com/surfacelog/surface/impl/event"
)

var userData = json.RawMessage(`{"content":[],"source":{"kind":"user"}}`)

func appendNodes(t testing.TB, m *Manager, log []event.Event, n int) []event.Event {
	for i := 0; i < n; i++ {
		e := event.Event{Type: event.TypeUserMessage, Seq: int64(len(log)), Data: userData, Op: event.Append()}
		if err := m.Validate(log, &e); err != nil {
			t.Fatal(err)
		}
		log = append(log, e)
	}
	if err := m.Sync(log); err != nil {
		t.Fatal(err)
	}
	return log
}

// TestReplaceCostIsRange proves SURF-26 for replace: the nodes visited by
// a replace of k nodes do not depend on the surface's length, and a
// rejected reversed range visits nothing (SURF-13 is one comparison).
func TestReplaceCostIsRange(t *testing.T) {
	for _, size := range []int{100, 10000} {
		for _, k := range []int{1, 10, 50} {
			m := New()
			log := appendNodes(t, m, nil, size)
			start := int64(size / 3)
			end := start + int64(k) - 1
			sources := make([]int64, 0, k)
			for s := start; s <= end; s++ {
				sources = append(sources, s)
			}
			m.walked = 0
			e := event.Event{Type: event.TypeUserMessage, Seq: int64(len(log)), Data: userData, Op: event.Replace(start, end), Sources: sources}
			if err := m.Validate(log, &e); err != nil {
				t.Fatal(err)
			}
			log = append(log, e)
			if err := m.Sync(log); err != nil {
				t.Fatal(err)
			}
			if m.walked != 2*k {
				t.Errorf("size %d, k %d: replace visited %d nodes, want %d", size, k, m.walked, 2*k)
			}
			if m.Len() != size-k+1 {
				t.Errorf("length %d", m.Len())
			}
			m.walked = 0
			rev := event.Event{Type: event.TypeUserMessage, Seq: int64(len(log)), Data: userData, Op: event.Replace(end+1, 0), Sources: []int64{0, end + 1}}
			if err := m.Validate(log, &rev); err == nil || err.Code != event.CodeReplaceReversed || m.walked != 0 {
				t.Errorf("reversed: %v after %d visits", err, m.walked)
			}
		}
	}
}

// TestLabelsIncrease checks the order-label invariant behind SURF-13 after
// nested replaces: labels strictly increase from head to tail, and prev
// and next links agree (SURF-15).
func TestLabelsIncrease(t *testing.T) {
	m := New()
	log := appendNodes(t, m, nil, 20)
	for _, r := range [][2]int64{{3, 7}, {20, 10}, {0, 21}, {22, 19}} {
		var sources []int64
		for n := m.Node(r[0]); n != nil; n = n.next {
			sources = append(sources, n.seq)
			if n.seq == r[1] {
				break
			}
		}
		e := event.Event{Type: event.TypeUserMessage, Seq: int64(len(log)), Data: userData, Op: event.Replace(r[0], r[1]), Sources: sources}
		if err := m.Validate(log, &e); err != nil {
			t.Fatalf("replace %v: %v", r, err)
		}
		log = append(log, e)
		if err := m.Sync(log); err != nil {
			t.Fatal(err)
		}
		count := 0
		var prev *Node
		for n := m.Head(); n != nil; n = n.next {
			if n.prev != prev || (prev != nil && prev.label >= n.label) || m.Node(n.seq) != n {
				t.Fatalf("broken list at %d", n.seq)
			}
			prev, count = n, count+1
		}
		if prev != m.Tail() || count != m.Len() {
			t.Fatalf("tail or length wrong")
		}
	}
}

// TestGrowKeepsTheIndexInPlace: after Grow(n), folding n events never
// moves the seq index (a resume of a long log does not copy it as it
// grows), and Grow of what is already there, of 0 or of a negative
// count changes nothing; the surface is the same as without Grow.
func TestGrowKeepsTheIndexInPlace(t *testing.T) {
	const n = 3000
	grown, plain := New(), New()
	grown.Grow(n)
	before := cap(grown.bySeq)
	if before < n {
		t.Fatalf("Grow(%d) left room for %d", n, before)
	}
	var log, log2 []event.Event
	log = appendNodes(t, grown, log, n)
	log2 = appendNodes(t, plain, log2, n)
	if cap(grown.bySeq) != before {
		t.Fatalf("the index was copied while %d events were folded after Grow(%d): cap %d -> %d", n, n, before, cap(grown.bySeq))
	}
	for _, k := range []int{0, -5, 1} {
		c, room := cap(grown.bySeq), cap(grown.bySeq)-len(grown.bySeq)
		grown.Grow(k)
		if k <= room && cap(grown.bySeq) != c {
			t.Fatalf("Grow(%d) with room for it reallocated the index", k)
		}
	}
	grown.Grow(10 * n)
	if cap(grown.bySeq)-len(grown.bySeq) < 10*n {
		t.Fatalf("Grow(%d) on a full index left room for %d", 10*n, cap(grown.bySeq)-len(grown.bySeq))
	}
	for seq := int64(0); seq < n; seq++ {
		if (grown.Node(seq) == nil) != (plain.Node(seq) == nil) {
			t.Fatalf("seq %d: on the surface %v with Grow, %v without", seq, grown.Node(seq) != nil, plain.Node(seq) != nil)
		}
	}
	if grown.Len() != plain.Len() {
		t.Fatalf("surface of %d nodes with Grow, %d without", grown.Len(), plain.Len())
	}
}
