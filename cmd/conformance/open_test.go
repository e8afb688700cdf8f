package main

import (
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/repair"
)

// TestWhatIsOpen: validate names what a repair would close (REP-6): a
// turn closed while its compaction stayed open is "a compaction open",
// not "last turn open".
func TestWhatIsOpen(t *testing.T) {
	ev := func(seq int64, typ event.Type, data string) event.Event {
		return event.Event{Type: typ, Seq: seq, Data: []byte(data)}
	}
	start := ev(0, event.TypeTurnStart, `{"turn":1,"trigger":{"kind":"message"}}`)
	compact := ev(1, event.TypeCompactStart, `{"turn":1}`)
	end := ev(2, event.TypeTurnEnd, `{"turn":1,"reason":{"kind":"completed"}}`)
	cases := []struct {
		log  []event.Event
		want string
	}{
		{[]event.Event{start}, "last turn open"},
		{[]event.Event{start, compact}, "last turn and a compaction open"},
		{[]event.Event{start, compact, end}, "a compaction open"},
	}
	for _, c := range cases {
		closers := repair.Closers(c.log, func(int64) bool { return true })
		if got := whatIsOpen(closers); got != c.want {
			t.Errorf("%d events: %q, want %q (closers %v)", len(c.log), got, c.want, closers)
		}
	}
}
