package session_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

// TestDefaultClockIsTheWallClock: with no WithClock, an appended event's
// time is the wall clock in milliseconds when it was appended, as
// time.Now gives it (the default clock reads the wall clock by its own
// call where that is cheaper): never before the instant before the
// append, never after the instant after it, across millisecond and
// second boundaries.
func TestDefaultClockIsTheWallClock(t *testing.T) {
	s := session.New()
	ctx := context.Background()
	for i := 0; i < 3000; i++ {
		if i%100 == 0 {
			time.Sleep(time.Duration(i%7) * time.Millisecond / 3)
		}
		before := time.Now().UnixMilli()
		e, err := s.Append(ctx, event.TodoWriteData{Todos: []json.RawMessage{}})
		after := time.Now().UnixMilli()
		if err != nil {
			t.Fatal(err)
		}
		if e.Time < before || e.Time > after {
			t.Fatalf("append %d: time %d, outside the wall clock's [%d, %d]", i, e.Time, before, after)
		}
	}
}
