package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/observe"
	"github.com/surfacelog/surface/impl/session"
)

// TestObserver: every append, batch and repair is reported once, with
// its type, seq, number of events, the time its store write took and its
// error; rejections are reported too.
func TestObserver(t *testing.T) {
	var rec observe.Recorder
	slow := func(context.Context, []event.Event) error { time.Sleep(2 * time.Millisecond); return nil }
	s := session.New(session.WithObserver(&rec), session.WithWriteAhead(slow))
	if s.Observer() != &rec || session.ObserverOf(session.WithObserver(&rec)) != &rec || session.ObserverOf() != nil {
		t.Fatal("Observer, ObserverOf")
	}
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: json.RawMessage(turnOne)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: json.RawMessage(userData)}); err == nil {
		t.Fatal("an append without its marker was accepted")
	}
	if _, err := s.AppendEvent(context.Background(), event.Event{Type: event.TypeUserMessage, Seq: 9, Data: json.RawMessage(userData), Op: event.Append()}); !errors.Is(err, event.CodeSeqNotContiguous) {
		t.Fatal(err)
	}
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: json.RawMessage(userData)}, event.Intent{Op: event.Append()}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendBatch(context.Background(), replaceAndEnd); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Repair(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		ty     event.Type
		seq    int64
		events int
		failed bool
		wrote  bool
	}{
		{event.TypeTurnStart, 0, 1, false, true},
		{event.TypeUserMessage, 1, 0, true, false},
		{event.TypeUserMessage, 9, 0, true, false},
		{event.TypeUserMessage, 1, 1, false, true},
		{event.TypeUserMessage, 2, 2, false, true},
	}
	if len(rec.Appends) != len(want) {
		t.Fatalf("%d append records, want %d: %+v", len(rec.Appends), len(want), rec.Appends)
	}
	for i, w := range want {
		a := rec.Appends[i]
		if a.Type != w.ty || a.Seq != w.seq || a.Events != w.events || (a.Err != nil) != w.failed || (a.Write >= 2*time.Millisecond) != w.wrote || a.Duration < a.Write || a.Start.IsZero() {
			t.Errorf("record %d: %+v, want %+v", i, a, w)
		}
	}
	if len(rec.Repairs) != 1 || rec.Repairs[0].Closers != 0 || rec.Repairs[0].Err != nil {
		t.Fatalf("repair records: %+v", rec.Repairs)
	}
}

// TestObserverOffAllocatesNothing: the append path allocates exactly as
// much with observability off as with a no-op observer on: the records
// themselves cost nothing, and off costs a nil check.
func TestObserverOffAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own: allocation counts are measured without it (CI runs this test without -race too)")
	}
	measure := func(opts ...session.Option) float64 {
		s := session.New(append(opts, session.WithWriteAhead(func(context.Context, []event.Event) error { return nil }))...)
		data := json.RawMessage(`{"turn":1,"step":1,"chunk":{"type":"text-delta","text":"a"}}`)
		return testing.AllocsPerRun(200, func() {
			if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeAssistantChunk, Data: data}); err != nil {
				t.Fatal(err)
			}
		})
	}
	off, on := measure(), measure(session.WithObserver(observe.Base{}))
	t.Logf("allocations per append: %.1f off, %.1f with a no-op observer", off, on)
	if on != off {
		t.Fatalf("an observer adds %.1f allocations per append", on-off)
	}
}

// BenchmarkAppendObserved: the append path with observability off, with
// a no-op observer, with log/slog at info (append records are debug: not
// written) and at debug (every append written, to io.Discard). The
// OpenTelemetry observer's figure is in impl/otel.
func BenchmarkAppendObserved(b *testing.B) {
	cases := []struct {
		name string
		obs  observe.Observer
	}{
		{"off", nil},
		{"noop", observe.Base{}},
		{"slog-info", observe.Logger(slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo})))},
		{"slog-debug", observe.Logger(slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelDebug})))},
	}
	data := json.RawMessage(`{"turn":1,"step":1,"chunk":{"type":"text-delta","text":"a"}}`)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var opts []session.Option
			if c.obs != nil {
				opts = append(opts, session.WithObserver(c.obs))
			}
			s := session.New(append(opts, session.WithWriteAhead(func(context.Context, []event.Event) error { return nil }))...)
			for b.Loop() {
				if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeAssistantChunk, Data: data}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
