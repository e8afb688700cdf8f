package surface_test

import (
	"encoding/json"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/surface"
	"github.com/surfacelog/surface/model"
)

// TestManagerAgainstModel: the Manager, fed random candidate events,
// accepts exactly what the model accepts (with the same error code), and
// after each accepted one its surface (head to tail and tail to head),
// Len, Node for every seq from -1 to past the log's end (the first and
// last seqs included), Generation (the replaces folded) and its labels
// agree with the model's full rescan. The candidates vary what the rules
// look at: appends, replaces of one node or many, at the head, the tail
// or nowhere, reversed, with sources exact, missing one, naming later
// events, over already shadowed nodes; events that are no node, with and
// without a marker; more than 16 sources (the coverage check's second
// way).
func TestManagerAgainstModel(t *testing.T) {
	user := json.RawMessage(`{"content":[],"source":{"kind":"user"}}`)
	var accepted, replaces, refused int
	defer func() {
		t.Logf("%d events accepted (%d replaces), %d refused alike", accepted, replaces, refused)
		if replaces == 0 || refused == 0 {
			t.Error("the candidates never made a replace, or were never refused")
		}
	}()
	rapid.Check(t, func(rt *rapid.T) {
		m := surface.New()
		var log []event.Event
		gen := int64(0)
		for i, n := 0, rapid.IntRange(1, 60).Draw(rt, "n"); i < n; i++ {
			seq := int64(len(log))
			e := event.Event{Seq: seq, Type: event.TypeUserMessage, Data: user}
			st, _ := model.Derive(log)
			surf := st.Surface
			pick := func(label string) int64 { // a seq on the surface, or any seq
				if len(surf) > 0 && rapid.IntRange(0, 4).Draw(rt, label+"on") > 0 {
					return surf[rapid.IntRange(0, len(surf)-1).Draw(rt, label)]
				}
				return rapid.Int64Range(-1, seq+1).Draw(rt, label+"any")
			}
			switch rapid.IntRange(0, 6).Draw(rt, "kind") {
			case 0, 1:
				e.Op = event.Append()
			case 2:
				e.Type, e.Data = event.TypeTodoWrite, json.RawMessage(`{"todos":[]}`)
				if rapid.IntRange(0, 3).Draw(rt, "marked") == 0 {
					e.Op = event.Append()
				}
			case 3:
				// no marker on a node
			default:
				start, end := pick("start"), pick("end")
				if rapid.IntRange(0, 2).Draw(rt, "whole") == 0 && len(surf) > 0 {
					start, end = surf[0], surf[len(surf)-1] // the whole surface: many sources
				}
				e.Op = event.Replace(start, end)
				i0, i1 := slices.Index(surf, start), slices.Index(surf, end)
				if i0 >= 0 && i1 >= i0 {
					e.Sources = slices.Clone(surf[i0 : i1+1])
				}
				switch rapid.IntRange(0, 5).Draw(rt, "sources") {
				case 0:
					if len(e.Sources) > 0 {
						e.Sources = e.Sources[1:] // one missing
					}
				case 1:
					e.Sources = append(e.Sources, seq) // itself
				case 2:
					e.Sources = append(e.Sources, 0) // an extra, maybe shadowed, event
				}
				slices.Sort(e.Sources)
				e.Sources = slices.Compact(e.Sources)
			}
			errImpl := m.Validate(log, &e)
			_, errModel := model.Derive(append(slices.Clone(log), e))
			var codeModel event.Code
			if ee, ok := errModel.(*event.Error); ok && ee != nil {
				codeModel = ee.Code
			} else if errModel != nil {
				rt.Fatalf("model error %v", errModel)
			}
			var codeImpl event.Code
			if errImpl != nil {
				codeImpl = errImpl.Code
			}
			if codeImpl != codeModel {
				rt.Fatalf("event %+v: manager says %q, model %q", e, codeImpl, codeModel)
			}
			if errImpl != nil {
				refused++
				continue
			}
			log = append(log, e)
			if err := m.Sync(log); err != nil {
				rt.Fatalf("sync: %v", err)
			}
			accepted++
			if e.Op.Kind == event.OpReplace {
				gen++
				replaces++
			}
			want, _ := model.Derive(log)
			var fwd, back []int64
			last := int64(-1 << 62)
			for n := m.Head(); n != nil; n = n.Next() {
				fwd = append(fwd, n.Seq())
				if n.Label() <= last {
					rt.Fatalf("labels do not increase at %d", n.Seq())
				}
				last = n.Label()
			}
			for n := m.Tail(); n != nil; n = n.Prev() {
				back = append(back, n.Seq())
			}
			slices.Reverse(back)
			if !slices.Equal(fwd, want.Surface) || !slices.Equal(back, want.Surface) || m.Len() != len(want.Surface) {
				rt.Fatalf("surface %v / %v (len %d), model %v", fwd, back, m.Len(), want.Surface)
			}
			for s := int64(-1); s <= int64(len(log))+1; s++ {
				if on := slices.Contains(want.Surface, s); (m.Node(s) != nil) != on {
					rt.Fatalf("Node(%d) %v, on the model's surface: %v", s, m.Node(s) != nil, on)
				}
			}
			if m.Generation() != gen {
				rt.Fatalf("Generation %d after %d replaces", m.Generation(), gen)
			}
		}
	})
}
