package surfaceotel

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/observe"
)

// scope is the instrumentation scope of the meter and the tracer.
const scope = "github.com/surfacelog/surface"

// Option configures New.
type Option func(*config)

type config struct {
	tp          trace.TracerProvider
	mp          metric.MeterProvider
	appendSpans bool
}

// WithTracerProvider sets the tracer provider (default: the global one).
func WithTracerProvider(tp trace.TracerProvider) Option { return func(c *config) { c.tp = tp } }

// WithMeterProvider sets the meter provider (default: the global one).
func WithMeterProvider(mp metric.MeterProvider) Option { return func(c *config) { c.mp = mp } }

// WithAppendSpans makes every append and every store write a span too (off
// by default: a streamed turn has hundreds of appends; their metrics are
// always recorded).
func WithAppendSpans() Option { return func(c *config) { c.appendSpans = true } }

// Observer records the library's operations as OpenTelemetry metrics and
// spans. It implements observe.Observer; make one with New.
type Observer struct {
	tracer      trace.Tracer
	appendSpans bool

	appendCount, appendEvents, promptChanges   metric.Int64Counter
	appendDuration, appendLockWait             metric.Float64Histogram
	storeWrite, storeSync                      metric.Float64Histogram
	compactions                                metric.Int64Counter
	compactionNodes, tokensBefore, tokensAfter metric.Int64Histogram
	compactionLockWait                         metric.Float64Histogram
	prunes                                     metric.Int64Counter
	pruneSaved                                 metric.Int64Histogram
	repairs, repairClosers, resumes, forks     metric.Int64Counter
	resumeDuration, forkDuration               metric.Float64Histogram
	resumeEvents                               metric.Int64Histogram

	// attrs caches the attribute sets of appends by event type and
	// outcome, so an append records its metrics without allocating them.
	attrs sync.Map // attrKey -> appendAttrs
}

var _ observe.Observer = (*Observer)(nil)

type attrKey struct {
	t      event.Type
	failed bool
}

type appendAttrs struct {
	typeOutcome metric.MeasurementOption
	typeOnly    metric.MeasurementOption
}

// New returns an Observer recording through the providers opts give (the
// global ones by default).
func New(opts ...Option) (*Observer, error) {
	c := config{tp: otel.GetTracerProvider(), mp: otel.GetMeterProvider()}
	for _, o := range opts {
		o(&c)
	}
	m := c.mp.Meter(scope)
	o := &Observer{tracer: c.tp.Tracer(scope), appendSpans: c.appendSpans}
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		x, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return x
	}
	seconds := func(name, desc string) metric.Float64Histogram {
		x, err := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc))
		errs = append(errs, err)
		return x
	}
	ints := func(name, unit, desc string) metric.Int64Histogram {
		x, err := m.Int64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return x
	}
	o.appendCount = counter("surface.append.count", "{append}", "Appends and batches, by the type of their first event and outcome.")
	o.appendEvents = counter("surface.append.events", "{event}", "Events appended.")
	o.promptChanges = counter("surface.prompt.changes", "{append}", "Appends that replaced nodes on the surface (a compaction's, a prune's): the prompt changed before its tail, and a provider's prompt cache is lost from there.")
	o.appendDuration = seconds("surface.append.duration", "Time an append or batch took, its store write included.")
	o.appendLockWait = seconds("surface.append.lock_wait", "Time an append waited for the appends before it.")
	o.storeWrite = seconds("surface.store.write.duration", "Time a store's write of an append or batch took.")
	o.storeSync = seconds("surface.store.sync.duration", "Time a store took to force a write to stable storage (fsync, commit).")
	o.compactions = counter("surface.compaction.count", "{compaction}", "Compactions that ended, by outcome.")
	o.compactionNodes = ints("surface.compaction.nodes", "{node}", "Surface nodes a committed compaction replaced.")
	o.tokensBefore = ints("surface.compaction.tokens.before", "{token}", "The session's token count when a committed compaction began.")
	o.tokensAfter = ints("surface.compaction.tokens.after", "{token}", "The session's token count when a committed compaction ended.")
	o.compactionLockWait = seconds("surface.compaction.lock_wait", "Time Begin waited for another compaction call.")
	o.prunes = counter("surface.prune.count", "{prune}", "Tool-result prunes, by outcome.")
	o.pruneSaved = ints("surface.prune.tokens.saved", "{token}", "Tokens a prune took off the session.")
	o.repairs = counter("surface.repair.count", "{repair}", "Repairs, by outcome.")
	o.repairClosers = counter("surface.repair.closers", "{event}", "Events repairs appended.")
	o.resumes = counter("surface.resume.count", "{resume}", "Resumes, by store and outcome.")
	o.resumeDuration = seconds("surface.resume.duration", "Time a resume took (load, check, repair).")
	o.resumeEvents = ints("surface.resume.events", "{event}", "Events a resume loaded.")
	o.forks = counter("surface.fork.count", "{fork}", "Forks, by store and outcome.")
	o.forkDuration = seconds("surface.fork.duration", "Time a fork took.")
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return o, nil
}

func outcome(err error) attribute.KeyValue {
	if err != nil {
		return attribute.String("outcome", "error")
	}
	return attribute.String("outcome", "ok")
}

func (o *Observer) appendAttrs(t event.Type, failed bool) appendAttrs {
	k := attrKey{t, failed}
	if a, ok := o.attrs.Load(k); ok {
		return a.(appendAttrs)
	}
	res := "ok"
	if failed {
		res = "error"
	}
	a := appendAttrs{
		typeOutcome: metric.WithAttributeSet(attribute.NewSet(attribute.String("event.type", string(t)), attribute.String("outcome", res))),
		typeOnly:    metric.WithAttributeSet(attribute.NewSet(attribute.String("event.type", string(t)))),
	}
	o.attrs.Store(k, a)
	return a
}

// span records a finished operation as a span with its own times.
func (o *Observer) span(ctx context.Context, name string, t observe.Timing, err error, attrs ...attribute.KeyValue) {
	_, sp := o.tracer.Start(ctx, name, trace.WithTimestamp(t.Start), trace.WithAttributes(attrs...))
	if err != nil {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, err.Error())
		if c := event.CodeOf(err); c != "" {
			sp.SetAttributes(attribute.String("error.type", string(c)))
		}
	}
	sp.End(trace.WithTimestamp(t.Start.Add(t.Duration)))
}

// Append implements observe.Observer.
func (o *Observer) Append(ctx context.Context, r observe.Append) {
	a := o.appendAttrs(r.Type, r.Err != nil)
	o.appendCount.Add(ctx, 1, a.typeOutcome)
	if r.Events > 0 {
		o.appendEvents.Add(ctx, int64(r.Events), a.typeOnly)
	}
	o.appendDuration.Record(ctx, r.Duration.Seconds(), a.typeOutcome)
	o.appendLockWait.Record(ctx, r.LockWait.Seconds())
	if r.Replaced {
		o.promptChanges.Add(ctx, 1, a.typeOnly)
	}
	if o.appendSpans {
		o.span(ctx, "surface.append", r.Timing, r.Err, attribute.String("event.type", string(r.Type)), attribute.Int64("seq", r.Seq),
			attribute.Int("events", r.Events), attribute.Float64("lock_wait_s", r.LockWait.Seconds()), attribute.Float64("write_s", r.Write.Seconds()))
	}
}

// StoreWrite implements observe.Observer.
func (o *Observer) StoreWrite(ctx context.Context, r observe.StoreWrite) {
	store := attribute.String("store", r.Store)
	o.storeWrite.Record(ctx, r.Duration.Seconds(), metric.WithAttributes(store, attribute.Bool("synced", r.Synced)))
	if r.Synced && r.Err == nil {
		o.storeSync.Record(ctx, r.Sync.Seconds(), metric.WithAttributes(store))
	}
	if o.appendSpans {
		o.span(ctx, "surface.store.write", r.Timing, r.Err, store, attribute.Int64("seq", r.Seq), attribute.Int("events", r.Events),
			attribute.Bool("synced", r.Synced), attribute.Float64("sync_s", r.Sync.Seconds()))
	}
}

// Compaction implements observe.Observer.
func (o *Observer) Compaction(ctx context.Context, r observe.Compaction) {
	out := attribute.String("outcome", r.Outcome)
	o.compactions.Add(ctx, 1, metric.WithAttributes(out))
	o.compactionLockWait.Record(ctx, r.LockWait.Seconds())
	if r.Outcome == "committed" {
		o.compactionNodes.Record(ctx, int64(r.Nodes))
		o.tokensBefore.Record(ctx, int64(r.TokensBefore))
		o.tokensAfter.Record(ctx, int64(r.TokensAfter))
	}
	o.span(ctx, "surface.compaction", r.Timing, r.Err, out, attribute.Int64("start_seq", r.StartSeq), attribute.Int("nodes", r.Nodes),
		attribute.Int("tokens_before", r.TokensBefore), attribute.Int("tokens_after", r.TokensAfter))
}

// Prune implements observe.Observer.
func (o *Observer) Prune(ctx context.Context, r observe.Prune) {
	o.prunes.Add(ctx, 1, metric.WithAttributes(outcome(r.Err)))
	if r.Err == nil {
		o.pruneSaved.Record(ctx, int64(r.TokensBefore-r.TokensAfter))
	}
	o.span(ctx, "surface.prune", r.Timing, r.Err, attribute.Int64("seq", r.Seq), attribute.Int("tokens_before", r.TokensBefore), attribute.Int("tokens_after", r.TokensAfter))
}

// Repair implements observe.Observer.
func (o *Observer) Repair(ctx context.Context, r observe.Repair) {
	o.repairs.Add(ctx, 1, metric.WithAttributes(outcome(r.Err)))
	o.repairClosers.Add(ctx, int64(r.Closers))
	o.span(ctx, "surface.repair", r.Timing, r.Err, attribute.Int("closers", r.Closers))
}

// Resume implements observe.Observer.
func (o *Observer) Resume(ctx context.Context, r observe.Resume) {
	store := attribute.String("store", r.Store)
	o.resumes.Add(ctx, 1, metric.WithAttributes(store, outcome(r.Err)))
	o.resumeDuration.Record(ctx, r.Duration.Seconds(), metric.WithAttributes(store))
	o.resumeEvents.Record(ctx, int64(r.Events), metric.WithAttributes(store))
	o.span(ctx, "surface.resume", r.Timing, r.Err, store, attribute.Int("events", r.Events), attribute.Int64("torn_bytes", r.TornBytes), attribute.Int("closers", r.Closers))
}

// Fork implements observe.Observer.
func (o *Observer) Fork(ctx context.Context, r observe.Fork) {
	store := attribute.String("store", r.Store)
	o.forks.Add(ctx, 1, metric.WithAttributes(store, outcome(r.Err)))
	o.forkDuration.Record(ctx, r.Duration.Seconds(), metric.WithAttributes(store))
	o.span(ctx, "surface.fork", r.Timing, r.Err, store, attribute.Int64("boundary", r.Boundary), attribute.Int("events", r.Events))
}
