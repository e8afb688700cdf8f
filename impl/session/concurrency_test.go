package session_test

import (
	"context"
	"encoding/json"
	"errors"
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
				_, _ = s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: json.RawMessage(user)}, appendI().Value())
				if surf := s.Surface(); surf.Len() >= 2 && i%7 == 0 {
					// May lose a race with another replace: then it is rejected, never torn.
					a, b := surf.At(0), surf.At(1)
					_, _ = s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: json.RawMessage(user)}, replaceI(a, b, a, b).Value())
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

// TestOneAppend (SURF-28): every catalog type has its data struct, which
// names the type; Append of that struct appends an event of that type,
// with one intent for a surface-eligible type and none for any other; a
// missing intent, an intent where none belongs, two intents and no data at
// all are refused with their codes, and nothing is appended.
func TestOneAppend(t *testing.T) {
	ctx := context.Background()
	for _, ty := range event.Types() {
		spec, _ := event.Lookup(ty)
		d := event.NewData(ty)
		if d == nil || d.EventType() != ty {
			t.Fatalf("%s: NewData gives %T", ty, d)
		}
		// The zero struct, filled from an example of the type's data.
		if err := json.Unmarshal(exampleData(t, spec), d); err != nil {
			t.Fatalf("%s: %v", ty, err)
		}
		s := session.New()
		var intents []event.Intent
		if spec.Surface {
			intents = append(intents, event.AppendIntent())
		}
		e, err := s.Append(ctx, d, intents...)
		if err != nil || e.Type != ty {
			t.Fatalf("%s: appended %s, %v", ty, e.Type, err)
		}
		wrong := event.CodeOpMissing
		if !spec.Surface {
			intents, wrong = []event.Intent{event.AppendIntent()}, event.CodeOpForbidden
		} else {
			intents = nil
		}
		if _, err := s.Append(ctx, d, intents...); !errors.Is(err, wrong) {
			t.Errorf("%s with the wrong intents: %v, want %s", ty, err, wrong)
		}
		if _, err := s.Append(ctx, d, event.AppendIntent(), event.AppendIntent()); !errors.Is(err, event.CodeOpInvalid) {
			t.Errorf("%s with two intents: %v", ty, err)
		}
		if s.Len() != 1 {
			t.Errorf("%s: refused appends changed the log: %d events", ty, s.Len())
		}
	}
	s := session.New()
	if _, err := s.Append(ctx, nil); !errors.Is(err, event.CodeDataInvalid) {
		t.Errorf("no data: %v", err)
	}
	var raw *event.Raw
	if _, err := s.Append(ctx, raw); !errors.Is(err, event.CodeDataInvalid) {
		t.Errorf("a nil *event.Raw: %v", err)
	}
	if _, err := s.Append(ctx, &event.Raw{Type: event.TypeTodoWrite, Data: map[string]any{"todos": []any{}}}); err != nil {
		t.Errorf("a *event.Raw with a Go value: %v", err)
	}
	if s.Len() != 1 {
		t.Errorf("%d events", s.Len())
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

// exampleData is valid data of spec's type: what ops.GenData makes with
// every choice its first.
func exampleData(t *testing.T, spec *event.TypeSpec) []byte {
	t.Helper()
	b, err := json.Marshal(ops.GenData(firstChoice{}, spec))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type firstChoice struct{}

func (firstChoice) Intn(int, string) int { return 0 }
