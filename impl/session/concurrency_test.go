package session_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/internal/ops"
	"github.com/surfacelog/surface/model"
)

// TestConcurrentUse (SURF-27): appends, replaces and queries from several
// goroutines; run under -race. Afterwards the log must derive, in the
// model, to exactly the surface and messages the session reports.
func TestConcurrentUse(t *testing.T) {
	s := session.New()
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				_, _ = s.Append(event.TypeUserMessage, json.RawMessage(user), appendI())
				if surf := s.Surface(); surf.Len() >= 2 && i%7 == 0 {
					// May lose a race with another replace: then it is rejected, never torn.
					a, b := surf.At(0), surf.At(1)
					_, _ = s.Append(event.TypeUserMessage, json.RawMessage(user), replaceI(a, b, a, b))
				}
				_ = s.Messages()
				_, _ = s.Provenance(int64(i))
			}
		}()
	}
	wg.Wait()
	st, err := model.Derive(s.Events())
	if err != nil {
		t.Fatal(err)
	}
	got := ops.StateOf(s)
	if want := (ops.State{Events: st.Log, Surface: st.Surface, Messages: st.Messages}); !ops.EqualState(want, got) {
		t.Fatalf("concurrent session differs from the model:\n%s", ops.Diff(want, got))
	}
}

// TestTypedHelpers (SURF-28): the generated helper of every surface-eligible
// type takes an event.Intent and the helper of every other type takes none,
// so a missing marker is a compile error; the untyped Append checks at run
// time (see TestRules, SURF-7).
func TestTypedHelpers(t *testing.T) {
	st := reflect.TypeOf(&session.Session{})
	intent := reflect.TypeOf(event.Intent{})
	for _, ty := range event.Types() {
		spec, _ := event.Lookup(ty)
		name := "Append"
		for _, part := range strings.FieldsFunc(string(ty), func(r rune) bool { return r == '/' || r == '-' }) {
			name += strings.ToUpper(part[:1]) + part[1:]
		}
		m, ok := st.MethodByName(name)
		if !ok {
			t.Errorf("no helper %s for %s", name, ty)
			continue
		}
		takesIntent := m.Type.NumIn() == 3 && m.Type.In(2) == intent
		if takesIntent != spec.Surface {
			t.Errorf("%s: takes intent %v, surface-eligible %v", name, takesIntent, spec.Surface)
		}
	}
}

// TestQueriesWithoutNewEventsAllocateNothing (SURF-26): with no new
// events, Messages and Surface allocate nothing and return the same view.
func TestQueriesWithoutNewEventsAllocateNothing(t *testing.T) {
	s, _ := build(t, base)
	first := s.Messages()
	allocs := testing.AllocsPerRun(100, func() {
		_ = s.Messages()
		_ = s.Surface()
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per query with no new events", allocs)
	}
	if again := s.Messages(); again.Len() != first.Len() || again.At(0).Seq != first.At(0).Seq {
		t.Fatalf("Messages changed with no new events")
	}
}
