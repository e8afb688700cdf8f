package surfaceotel_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	otelcodes "go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/impl/surfaceotel"
)

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// setup returns an observer recording into a manual metric reader and a
// span recorder.
func setup(t testing.TB, opts ...surfaceotel.Option) (*surfaceotel.Observer, *sdkmetric.ManualReader, *tracetest.SpanRecorder) {
	reader := sdkmetric.NewManualReader()
	spans := tracetest.NewSpanRecorder()
	opts = append(opts, surfaceotel.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))),
		surfaceotel.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))))
	o, err := surfaceotel.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return o, reader, spans
}

// metrics collects the reader's metrics by name.
func metrics(t *testing.T, reader *sdkmetric.ManualReader) map[string]metricdata.Aggregation {
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

func sum(a metricdata.Aggregation) int64 {
	var n int64
	switch d := a.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			n += p.Value
		}
	case metricdata.Histogram[int64]:
		for _, p := range d.DataPoints {
			n += p.Sum
		}
	}
	return n
}

func count(a metricdata.Aggregation) uint64 {
	var n uint64
	switch d := a.(type) {
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			n += p.Count
		}
	case metricdata.Histogram[int64]:
		for _, p := range d.DataPoints {
			n += p.Count
		}
	}
	return n
}

// TestMetricsAndSpans: a durable session's resume, appends, a batch, a
// compaction, a prune, a failed compaction and a fork, seen through the
// OpenTelemetry SDK: every count, every sum of tokens and events, the
// sync latencies of the synced writes, and a span per operation with its
// outcome.
func TestMetricsAndSpans(t *testing.T) {
	obs, reader, spans := setup(t)
	ctx := context.Background()
	dir := t.TempDir()
	st, err := persist.OpenJSONL(ctx, filepath.Join(dir, "s.jsonl"), persist.Header{ID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := persist.Resume(ctx, st, session.WithObserver(obs))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	must := func(_ event.Event, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	ap := &event.Intent{Op: event.Append()}
	must(s.Append(ctx, event.Raw{Type: event.TypeTurnStart, Data: raw(`{"turn":1,"trigger":{"kind":"message"}}`)}))
	must(s.Append(ctx, event.Raw{Type: event.TypeUserMessage, Data: raw(`{"content":[{"type":"text","text":"read a"}],"source":{"kind":"user"}}`)}, ap.Value()))
	must(s.Append(ctx, event.Raw{Type: event.TypeAssistantMessage, Data: raw(`{"turn":1,"step":1,"content":[{"type":"tool-call","id":"a","name":"read","arguments":{}}]}`)}, ap.Value()))
	must(s.Append(ctx, event.Raw{Type: event.TypeToolResult, Data: raw(`{"turn":1,"step":1,"callId":"a","content":[{"type":"text","text":"` + string(make([]byte, 0)) + `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}],"isError":false}`)}, ap.Value()))
	if _, err := s.AppendBatch(ctx, func(session.Tx) ([]session.Draft, error) {
		return []session.Draft{
			{Type: event.TypeAssistantMessage, Data: raw(`{"turn":1,"step":2,"content":[{"type":"text","text":"done"}]}`), Intent: ap},
			{Type: event.TypeTurnEnd, Data: raw(`{"turn":1,"reason":{"kind":"completed"}}`)},
		}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := compaction.PruneToolResult(s.Session, 3, []json.RawMessage{raw(`{"type":"text","text":"pruned"}`)}); err != nil {
		t.Fatal(err)
	}
	summary := func(context.Context, *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
		return []json.RawMessage{raw(`{"type":"text","text":"s"}`)}, compaction.Meta{Provider: "p", Model: "m"}, nil
	}
	res, err := compaction.Compact(ctx, s.Session, 1, 4, summary, compaction.WithVocabulary(compaction.CompactionEvents), compaction.WithoutFraming(), compaction.WithoutSizeCheck())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := compaction.Begin(ctx, s.Session, 999, 999); err == nil {
		t.Fatal("Begin on no node")
	}
	seed := int64(6)
	child, err := persist.OpenJSONL(ctx, filepath.Join(dir, "child.jsonl"), persist.Header{ID: "c", ParentSession: "s", SeedLength: &seed})
	if err != nil {
		t.Fatal(err)
	}
	c, err := persist.Fork(ctx, s, 5, child)
	if err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)

	m := metrics(t, reader)
	// Appends: 4 single, the batch, the prune's batch, begin's and
	// commit's batches, the failed begin (counted as an error).
	checks := []struct {
		name string
		got  int64
		want int64
	}{
		{"surface.append.events", sum(m["surface.append.events"]), int64(s.Len())},
		{"surface.compaction.count", sum(m["surface.compaction.count"]), 2},
		{"surface.compaction.nodes", sum(m["surface.compaction.nodes"]), int64(len(res.Shadowed))},
		{"surface.prune.count", sum(m["surface.prune.count"]), 1},
		{"surface.resume.count", sum(m["surface.resume.count"]), 1},
		{"surface.repair.count", sum(m["surface.repair.count"]), 1},
		{"surface.fork.count", sum(m["surface.fork.count"]), 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if before, after := sum(m["surface.compaction.tokens.before"]), sum(m["surface.compaction.tokens.after"]); before <= after || after == 0 {
		t.Errorf("compaction tokens before %d, after %d", before, after)
	}
	if saved := sum(m["surface.prune.tokens.saved"]); saved <= 0 {
		t.Errorf("prune saved %d tokens", saved)
	}
	// Every write of the parent's store synced (SyncEveryAppend): one
	// sync latency per write, none per event of a batch.
	writes, syncs := count(m["surface.store.write.duration"]), count(m["surface.store.sync.duration"])
	if writes == 0 || syncs != writes {
		t.Errorf("%d store writes, %d sync latencies", writes, syncs)
	}
	byName := map[string]int{}
	for _, sp := range spans.Ended() {
		byName[sp.Name()]++
		if sp.Name() == "surface.compaction" && sp.Status().Code == otelcodes.Error && len(sp.Events()) == 0 {
			t.Errorf("a failed compaction's span records no error")
		}
		if sp.EndTime().Before(sp.StartTime()) {
			t.Errorf("%s ends before it starts", sp.Name())
		}
	}
	for name, want := range map[string]int{"surface.compaction": 2, "surface.prune": 1, "surface.resume": 1, "surface.repair": 1, "surface.fork": 1, "surface.append": 0} {
		if byName[name] != want {
			t.Errorf("%d %s spans, want %d (%v)", byName[name], name, want, byName)
		}
	}
}

// TestAppendSpans: WithAppendSpans makes every append and store write a
// span.
func TestAppendSpans(t *testing.T) {
	obs, _, spans := setup(t, surfaceotel.WithAppendSpans())
	s := session.New(session.WithObserver(obs))
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: raw(`{"turn":1,"trigger":{"kind":"message"}}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: raw(`{"turn":1}`)}); err == nil {
		t.Fatal("accepted")
	}
	ended := spans.Ended()
	if len(ended) != 2 || ended[0].Name() != "surface.append" || ended[1].Status().Code != otelcodes.Error {
		t.Fatalf("spans: %d", len(ended))
	}
}

// BenchmarkAppendOTel: the append path with the OpenTelemetry observer on
// (SDK meter provider with a manual reader, metrics only) against off.
func BenchmarkAppendOTel(b *testing.B) {
	data := raw(`{"turn":1,"step":1,"chunk":{"type":"text-delta","text":"a"}}`)
	obs, _, _ := setup(b)
	for _, on := range []bool{false, true} {
		name := "off"
		var opts []session.Option
		if on {
			name = "otel"
			opts = append(opts, session.WithObserver(obs))
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			s := session.New(opts...)
			for b.Loop() {
				if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeAssistantChunk, Data: data}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
