package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/internal/traffic"
)

// TestAppendRawIsAppendOfRaw: AppendRaw(ctx, t, data, intent...) does
// what Append(ctx, event.Raw{Type: t, Data: data}, intent...) does, in
// lockstep on two sessions, for every event of a realistic log and for
// look-alikes of each that are refused or stored differently: data with
// whitespace to compact, cut short, null, absent, of an unknown type; a
// marker missing, added, doubled. Same event or same error (code and
// text), and in the end the same log and messages.
func TestAppendRawIsAppendOfRaw(t *testing.T) {
	ctx := context.Background()
	log, err := traffic.Log(600)
	if err != nil {
		t.Fatal(err)
	}
	viaRaw := session.New(session.WithClock(fixedClock()))
	viaAppendRaw := session.New(session.WithClock(fixedClock()))
	refused := map[string]int{}
	for i, e := range log {
		intents := []event.Intent(nil)
		if e.Op.Kind != event.OpNone {
			intents = []event.Intent{{Op: e.Op, Sources: e.Sources}}
		}
		data := append(json.RawMessage(nil), e.Data...)
		typ := e.Type
		switch i % 9 {
		case 1: // whitespace the log does not keep
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, data, " ", "\t"); err != nil {
				t.Fatal(err)
			}
			data = append(append(json.RawMessage(" \n"), pretty.Bytes()...), '\r')
		case 2: // cut short
			data = data[:len(data)-1]
		case 3: // null, then absent
			data = json.RawMessage("null")
			if i%2 == 0 {
				data = nil
			}
		case 4: // a type nobody registered
			typ = "x/custom"
		case 5: // the marker missing, or given where none belongs
			if intents != nil {
				intents = nil
			} else {
				intents = []event.Intent{event.AppendIntent()}
			}
		case 6: // two markers
			intents = append(intents, event.AppendIntent(), event.AppendIntent())
		}
		a, errA := viaRaw.Append(ctx, event.Raw{Type: typ, Data: data}, intents...)
		b, errB := viaAppendRaw.AppendRaw(ctx, typ, data, intents...)
		if (errA == nil) != (errB == nil) || (errA != nil && (event.CodeOf(errA) != event.CodeOf(errB) || errA.Error() != errB.Error())) {
			t.Fatalf("event %d (%s, variant %d): Append gave %v, AppendRaw %v", i, typ, i%9, errA, errB)
		}
		if errA != nil {
			refused[string(event.CodeOf(errA))]++
			continue
		}
		if diff := cmp.Diff(a, b); diff != "" {
			t.Fatalf("event %d: the stored events differ (-Append +AppendRaw):\n%s", i, diff)
		}
		// The log keeps its own bytes: the caller may reuse its buffer.
		for k := range data {
			data[k] = 'x'
		}
		if got := viaAppendRaw.Events()[viaAppendRaw.Len()-1].Data; !bytes.Equal(got, a.Data) {
			t.Fatalf("event %d: the log changed with the caller's buffer: %s", i, got)
		}
	}
	if diff := cmp.Diff(viaRaw.Events(), viaAppendRaw.Events()); diff != "" {
		t.Fatalf("logs differ (-Append +AppendRaw):\n%s", diff)
	}
	if diff := cmp.Diff(viaRaw.Messages().Slice(), viaAppendRaw.Messages().Slice()); diff != "" {
		t.Fatalf("messages differ (-Append +AppendRaw):\n%s", diff)
	}
	// The look-alikes were refused for their several reasons, and most of
	// the log went in.
	for _, code := range []event.Code{event.CodeDataNotJSON, event.CodeOpMissing, event.CodeOpInvalid} {
		if refused[string(code)] == 0 {
			t.Errorf("no variant was refused with %s (refusals: %v)", code, refused)
		}
	}
	if viaRaw.Len() < len(log)/3 {
		t.Errorf("only %d of %d events were appended", viaRaw.Len(), len(log))
	}
}

// TestAppendRawAllocatesLess: AppendRaw spares the two boxings that
// Append of an event.Raw costs (the JSON text into Raw.Data, the Raw into
// event.Data), allocation for allocation.
func TestAppendRawAllocatesLess(t *testing.T) {
	ctx := context.Background()
	s := session.New()
	data := json.RawMessage(`{"todos":[{"content":"a","status":"pending"}]}`)
	raw := testing.AllocsPerRun(200, func() {
		if _, err := s.Append(ctx, event.Raw{Type: event.TypeTodoWrite, Data: data}); err != nil {
			t.Fatal(err)
		}
	})
	direct := testing.AllocsPerRun(200, func() {
		if _, err := s.AppendRaw(ctx, event.TypeTodoWrite, data); err != nil {
			t.Fatal(err)
		}
	})
	if raw-direct < 2 {
		t.Errorf("AppendRaw allocates %v times an append, Append of a Raw %v", direct, raw)
	}
}
