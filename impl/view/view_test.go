package view

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/message"
)

// entry makes an entry for seq with label; every third one gives no
// message.
func entry(seq, label int64) Entry {
	e := Entry{Label: label, Msg: message.Message{Seq: seq}}
	if seq%3 != 2 {
		e.Msg.Role = message.RoleUser
	}
	return e
}

// check compares a snapshot with the plain slice it must equal, through
// every accessor, and checks the rope's invariants.
func check(t *rapid.T, s Snapshot, want []Entry) {
	var seqs []int64
	var msgs []message.Message
	for _, e := range want {
		seqs = append(seqs, e.Msg.Seq)
		if e.hasMessage() {
			msgs = append(msgs, e.Msg)
		}
	}
	if got := s.Seqs().AppendTo(nil); !slices.Equal(got, seqs) {
		t.Fatalf("seqs %v, want %v", got, seqs)
	}
	if s.Seqs().Len() != len(seqs) || s.Messages().Len() != len(msgs) {
		t.Fatalf("lengths %d %d, want %d %d", s.Seqs().Len(), s.Messages().Len(), len(seqs), len(msgs))
	}
	for i := range seqs {
		if s.Seqs().At(i) != seqs[i] {
			t.Fatalf("Seqs.At(%d) = %d, want %d", i, s.Seqs().At(i), seqs[i])
		}
	}
	for i, m := range s.Messages().All() {
		if m.Seq != msgs[i].Seq || s.Messages().At(i).Seq != m.Seq {
			t.Fatalf("message %d: %d / %d, want %d", i, m.Seq, s.Messages().At(i).Seq, msgs[i].Seq)
		}
	}
	invariants(t, s.root)
	for i, e := range want {
		if p, ok := s.Position(e.Label); !ok || p != i {
			t.Fatalf("Position(%d) = %d %v, want %d", e.Label, p, ok, i)
		}
	}
	if _, ok := s.Position(-5); ok {
		t.Fatalf("Position of an absent label")
	}
	if len(seqs) > 0 {
		i := rapid.IntRange(0, len(seqs)-1).Draw(t, "from")
		j := rapid.IntRange(i, len(seqs)).Draw(t, "to")
		var got []int64
		s.Seqs().Range(i, j, func(seq int64, m message.Message) bool {
			if m.Seq != seq {
				t.Fatalf("Range gave message %d with seq %d", m.Seq, seq)
			}
			got = append(got, seq)
			return true
		})
		if !slices.Equal(got, seqs[i:j]) {
			t.Fatalf("Range(%d, %d) = %v, want %v", i, j, got, seqs[i:j])
		}
	}
}

func invariants(t *rapid.T, n *node) {
	if n == nil || n.entries != nil {
		if n != nil && (n.height != 1 || n.n != len(n.entries) || n.first != n.entries[0].Label) {
			t.Fatalf("bad leaf")
		}
		return
	}
	invariants(t, n.left)
	invariants(t, n.right)
	d := int(n.left.height) - int(n.right.height)
	if d < -1 || d > 1 || n.height != max(n.left.height, n.right.height)+1 {
		t.Fatalf("unbalanced: heights %d %d under %d", n.left.height, n.right.height, n.height)
	}
	if n.n != n.left.n+n.right.n || n.m != n.left.m+n.right.m || n.first != n.left.first || n.right.first <= n.left.first {
		t.Fatalf("bad counts or labels")
	}
}

// TestBuilderAgainstSlice: random appends and replaces (head, tail,
// middle, tail-only, spanning the tail) give the same view as a plain
// slice, and every snapshot taken on the way stays as it was.
func TestBuilderAgainstSlice(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var b Builder
		var model []Entry
		seq, label := int64(0), int64(0)
		type held struct {
			s    Snapshot
			want []Entry
		}
		var snaps []held
		for step := rapid.IntRange(1, 400).Draw(t, "steps"); step > 0; step-- {
			if len(model) > 0 && rapid.IntRange(0, 5).Draw(t, "op") == 0 {
				i := rapid.IntRange(0, len(model)-1).Draw(t, "i")
				j := rapid.IntRange(i, min(len(model)-1, i+rapid.IntRange(0, 150).Draw(t, "k"))).Draw(t, "j")
				e := entry(seq, model[i].Label)
				b.Replace(model[i].Label, model[j].Label, e)
				model = slices.Concat(model[:i:i], []Entry{e}, model[j+1:])
			} else {
				e := entry(seq, label)
				label++
				b.Append(e)
				model = append(model, e)
			}
			seq++
			if rapid.IntRange(0, 9).Draw(t, "snap") == 0 {
				snaps = append(snaps, held{b.Snapshot(), slices.Clone(model)})
			}
		}
		check(t, b.Snapshot(), model)
		for _, h := range snaps {
			check(t, h.s, h.want)
		}
	})
}

// TestReplaceIsLogarithmic: the nodes a replace allocates do not grow with
// the view's length (a million entries vs a thousand).
func TestReplaceIsLogarithmic(t *testing.T) {
	for _, n := range []int{1000, 1_000_000} {
		var b Builder
		for i := 0; i < n; i++ {
			b.Append(entry(int64(i), int64(i)))
		}
		for _, at := range []int64{0, int64(n / 2), int64(n - 70)} {
			allocs := testing.AllocsPerRun(10, func() {
				b.Replace(at, at+99, entry(int64(n), at))
				b.Snapshot().Messages().Len()
			})
			t.Logf("n=%d at %d: %v allocs", n, at, allocs)
			if allocs > 90 {
				t.Errorf("n=%d: a replace at %d allocated %v times", n, at, allocs)
			}
		}
	}
}
