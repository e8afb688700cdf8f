package session

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/observe"
	"github.com/surfacelog/surface/impl/repair"
	"github.com/surfacelog/surface/impl/surface"
	"github.com/surfacelog/surface/impl/view"
)

// Option configures a Session.
type Option func(*config)

type config struct {
	clock        func() int64
	writeAhead   func(context.Context, []event.Event) error
	trace        *tracer
	seedProgress func(done, total int)
	vocabulary   *event.Vocabulary
	estimate     func(message.Message) int
	strict       bool
	observer     observe.Observer
	checkpoints  *checkpointing
}

// WithObserver makes the session report every append, batch and repair
// to o (package observe: log/slog, OpenTelemetry); persist.Resume and
// persist.Fork pass it to the store (its writes and syncs) and report the
// resume or fork, and impl/compaction reports compactions and prunes
// through it. Without it (the default) nothing is measured and the
// append path allocates nothing more.
func WithObserver(o observe.Observer) Option {
	return func(c *config) { c.observer = o }
}

// WithTokenEstimator sets how Tokens counts a message that has no
// provider-reported usage (default message.EstimateTokens: a quarter of
// its content's bytes). An assistant message that recorded usage counts
// its outputTokens.
func WithTokenEstimator(estimate func(message.Message) int) Option {
	return func(c *config) { c.estimate = estimate }
}

// WithVocabulary makes the session know the log-only event types that v
// registers besides the catalog (SURF-3). Without it a session knows the
// catalog; an event of any other type is kept only when it is marked
// ignorable.
func WithVocabulary(v *event.Vocabulary) Option {
	return func(c *config) { c.vocabulary = v }
}

// WithSeedProgress makes Seed report its progress: fn is called with the
// number of events checked so far and the total, every 65,536 events and
// once at the end. A validator uses it to show a progress bar.
func WithSeedProgress(fn func(done, total int)) Option {
	return func(c *config) { c.seedProgress = fn }
}

// WithWriteAhead makes every append call write with the accepted events
// before they enter the log: one event for an Append, all of them at once
// for an AppendBatch or a Repair (so a store can make a batch durable with
// one sync or one transaction). write must not keep the slice. ctx is the
// append's own (the ctx given to Append, AppendEvent or AppendBatch).
//
// Appends are serialised around write (the next append waits for it), but
// readers are not: Messages, Surface, Events, Len, Position, Provenance and
// the bookkeeping queries go on while write runs, and see the log without
// the events until they are in. When write fails the append fails with its
// error and the session does not change: this is how impl/persist makes an
// event durable before it is acknowledged (STORE-6). Seed does not call it
// (the seeded events come from the store).
func WithWriteAhead(write func(ctx context.Context, events []event.Event) error) Option {
	return func(c *config) { c.writeAhead = write }
}

// WithClock sets the source of event times (epoch milliseconds). The
// default is the wall clock.
func WithClock(clock func() int64) Option {
	return func(c *config) { c.clock = clock }
}

func newConfig(opts []Option) config {
	c := config{clock: wallMillis}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// Session is an event-sourced session log with its surface.
type Session struct {
	// wmu serialises writers (appends, batches, repair) from validation
	// to commit, store I/O included. mu guards the log and the derived
	// state; a writer holds it only while it validates and while it
	// commits, never across the store's write, so readers never wait
	// for I/O.
	wmu  sync.Mutex
	mu   sync.Mutex
	cfg  config
	opts []Option
	// log holds the events from seq base on. base is 0 except in a session
	// resumed from a checkpoint (Restore), whose earlier events stay in the
	// store until something needs them (whole).
	log  []event.Event
	base int
	// lazy is what Restore was given, while base > 0: how to read the
	// events before base, and the state to fold the log on from.
	lazy *restored
	// broken is set when the events before base could not be read back: the
	// session refuses appends from then on.
	broken error
	// cpAt is the number of events the last checkpoint covered, and
	// checkpoints are on when cfg.checkpoints is set (WithCheckpoints).
	cpAt int
	mgr  *surface.Manager
	// view is kept in step with the surface: the Manager reports every
	// change it folds (append or replace), and the view applies it in
	// O(log n), deriving each node's message once.
	view view.Builder
	// snap is the view as of snapAt log events: Messages and Surface hand
	// it out until the log grows.
	snap   view.Snapshot
	snapAt int
	// ledger is the bookkeeping of the log (open turn and step, pending
	// calls, open compaction), folded up to ledgerAt events.
	ledger   repair.State
	ledgerAt int
	// turnEnds maps a turn number to the seq of its last turn/end, folded
	// up to turnEndsAt events (TurnEnd).
	turnEnds   map[int64]int64
	turnEndsAt int
	// strictLedger is strict mode's (STRICT-4 to STRICT-7), folded from
	// the log only in strict mode.
	strictLedger strictState
	// repairing is set while Repair appends its closers, which strict
	// mode always accepts.
	repairing bool
	// held are steering messages waiting for a balanced cut
	// (SteerWhenBalanced); dropped counts those whose turn ended first.
	held    []held
	dropped int
	// batching is set while AppendBatch appends its drafts, which nothing
	// may come between.
	batching bool
	// ahead is set while a batch's store write is in flight: the surface
	// manager and the view have folded the batch, the log and the snapshot
	// readers get have not (see commitRun).
	ahead bool
	// one holds the single event an append writes ahead, so the write
	// allocates no slice.
	one [1]event.Event
	// wrote is how long the last write-ahead took, measured only with an
	// observer.
	wrote time.Duration
}

// ObserverOf returns the observer that opts give a session
// (WithObserver), or nil. A store's Resume uses it to observe the resume
// itself.
func ObserverOf(opts ...Option) observe.Observer {
	var c config
	for _, o := range opts {
		o(&c)
	}
	return c.observer
}

// Observer returns the observer the session was given (WithObserver), or
// nil.
func (s *Session) Observer() observe.Observer { return s.cfg.observer }

// New returns an empty session.
func New(opts ...Option) *Session {
	s := &Session{cfg: newConfig(opts), opts: opts, mgr: surface.New()}
	s.mgr.Observe(s.observe)
	return s
}

// observe applies one folded surface change to the view. The Manager
// calls it from Sync, with s.mu held.
func (s *Session) observe(c surface.Change) {
	e := s.entry(&s.log[c.Seq-int64(s.base)], c.Label)
	if c.Replace {
		s.view.Replace(c.From, c.To, e)
	} else {
		s.view.Append(e)
	}
}

// entry is the view's entry for surface node ev with order label label:
// its message and its tokens.
func (s *Session) entry(ev *event.Event, label int64) view.Entry {
	m, tokens, ok := message.Metered(ev, s.cfg.estimate)
	if !ok {
		m = message.Message{Seq: ev.Seq} // a node that gives no message (SURF-20)
	}
	return view.Entry{Label: label, Msg: m, Tokens: tokens}
}

// Seed returns a session whose log is events, checked event by event with
// every rule, exactly as if each were appended (SURF-18). The first bad
// event rejects the whole seed; its error carries the event's index.
// Seed copies what it keeps; events is not retained.
func Seed(events []event.Event, opts ...Option) (*Session, error) {
	s := New(opts...)
	s.log = make([]event.Event, 0, withHeadroom(len(events)))
	s.mgr.Grow(withHeadroom(len(events)))
	for i := range events {
		e := events[i]
		if e.Sources != nil {
			e.Sources = slices.Clone(e.Sources)
		}
		if err := s.mgr.ValidateIn(s.log, &e, s.cfg.vocabulary); err != nil {
			err.Index = i
			return nil, err
		}
		if err := s.strictLoad(&e, i); err != nil {
			return nil, err
		}
		s.log = append(s.log, e)
		if s.cfg.trace != nil {
			s.traceEvent(&s.log[len(s.log)-1])
		}
		if s.cfg.seedProgress != nil && (i+1)%65536 == 0 {
			s.cfg.seedProgress(i+1, len(events))
		}
	}
	if s.cfg.seedProgress != nil {
		s.cfg.seedProgress(len(events), len(events))
	}
	if err := s.finishSeed(); err != nil {
		return nil, err
	}
	return s, nil
}

// strictLoad checks the loaded event e, the i-th, against the strict rules
// when the session is in strict mode (STRICT-8): a seed, a resume or a
// fork in strict mode loads only a log strict mode would have written.
func (s *Session) strictLoad(e *event.Event, i int) *event.Error {
	if !s.cfg.strict {
		return nil
	}
	s.foldLedger()
	s.strictLedger.fold(s.log)
	if err := strictCheck(&s.ledger, &s.strictLedger, s.log, s.mgr, e); err != nil {
		err.Index = i
		err.Detail = "the loaded log breaks a strict rule: " + err.Detail
		return err
	}
	return nil
}

// finishSeed folds the last seeded event into the surface, so that a
// seeded session has no work pending for its first call, and traces the
// seed.
func (s *Session) finishSeed() error {
	if err := s.mgr.Sync(s.log); err != nil {
		return err
	}
	if s.cfg.trace != nil {
		s.cfg.trace.write(TraceLine{Action: "seed", Surface: s.surfaceNow()})
	}
	return nil
}

// withHeadroom is the capacity of a seeded log of n events: room to grow
// by an eighth, so the first appends after a seed or a resume do not copy
// the whole log.
func withHeadroom(n int) int { return n + n/8 + 64 }

// push appends an accepted event to the log. A full log doubles its room:
// append grows a large slice by a quarter, which copies a long session's
// whole log (and clears the new room) every few thousand appends, four
// times per event on the average; doubling copies each event once, for
// room that is touched only as the log grows into it.
func (s *Session) push(e event.Event) {
	if len(s.log) == cap(s.log) {
		s.log = append(make([]event.Event, 0, 2*len(s.log)+64), s.log...)
	}
	s.log = append(s.log, e)
}

// SeedJSON is Seed over the wire form of the events (one JSON object per
// element), decoded with an event.Decoder: one scan per event. A line
// that is not an event at all rejects the seed at its index, after any
// earlier event that breaks a rule (SURF-18).
func SeedJSON(lines []json.RawMessage, opts ...Option) (*Session, error) {
	var d event.Decoder
	for _, l := range lines {
		if err := d.Decode(l); err != nil {
			// In log order (SURF-18): an earlier event that breaks a rule
			// is reported before a later line that is not an event.
			if _, serr := SeedLog(d.Log(), opts...); serr != nil {
				return nil, serr
			}
			return nil, err
		}
	}
	return SeedLog(d.Log(), opts...)
}

// SeedLog is Seed over a decoded log: every rule is checked, in order, as
// in Seed, but data that the Decoder checked while decoding is not scanned
// again, and the session takes the log's events without copying them (the
// Log must not be used afterwards). This is how a store resumes a session
// in one scan per event (impl/persist).
func SeedLog(l *event.Log, opts ...Option) (*Session, error) {
	s := New(opts...)
	if err := s.load(l); err != nil {
		return nil, err
	}
	return s, nil
}

// load checks the events of l as the next events of the log, each with
// every rule (SeedLog; Restore, after a checkpoint), and takes them
// without copying.
func (s *Session) load(l *event.Log) error {
	events := l.Events()
	s.log = events[:0]
	s.mgr.Grow(max(cap(events), withHeadroom(len(events))))
	var i int
	check := func(e *event.Event, want int64) *event.Error { return l.Check(s.cfg.vocabulary, i, want) }
	for i = range events {
		e := &events[i]
		if err := s.mgr.ValidateWith(s.log, e, check); err != nil {
			err.Index = i
			return err
		}
		if err := s.strictLoad(e, i); err != nil {
			return err
		}
		s.log = s.log[:i+1]
		if s.cfg.trace != nil {
			s.traceEvent(e)
		}
		if s.cfg.seedProgress != nil && (i+1)%65536 == 0 {
			s.cfg.seedProgress(i+1, len(events))
		}
	}
	if s.cfg.seedProgress != nil {
		s.cfg.seedProgress(len(events), len(events))
	}
	if cap(s.log) < len(s.log)+len(s.log)/16 {
		// Room to grow, so the first appends do not copy the log.
		s.log = append(make([]event.Event, 0, withHeadroom(len(s.log))), s.log...)
	}
	return s.finishSeed()
}

// Append appends one event. Its type is the type data names: a catalog
// type's struct (event.TurnStartData, event.UserMessageData, ...) or an
// event.Raw carrying any type and its data as JSON text or a Go value.
// intent is the surface marker and sources: give exactly one for a
// surface-eligible type (event.AppendIntent(), event.ReplaceIntent(...))
// and none for any other; the zero Intent counts as none. Both are checked
// here, at run time (surface.op_missing, surface.op_forbidden, SURF-6,
// SURF-7), with every other rule.
//
// When ctx ends before the append is acknowledged, the append fails with
// persist.cancelled (wrapping ctx.Err()) and the event is not in the log.
// An append waiting for another one to finish is not interrupted by ctx;
// its own write is (how promptly depends on the store: see impl/persist).
//
// The returned event is the one in the log, with its seq, time and compact
// data. On error nothing changes and the error is an *event.Error.
func (s *Session) Append(ctx context.Context, data event.Data, intent ...event.Intent) (event.Event, error) {
	var start time.Time
	if s.cfg.observer != nil {
		start = time.Now()
	}
	var t event.Type
	payload := any(data)
	switch d := data.(type) {
	case nil:
		err := event.Errorf(event.CodeDataInvalid, -1, "Append was given no data (a nil event.Data)")
		s.observeAppend(ctx, start, "", -1, 0, 0, err)
		return event.Event{}, err
	case event.Raw:
		t, payload = d.Type, d.Data
	case *event.Raw:
		if d == nil {
			err := event.Errorf(event.CodeDataInvalid, -1, "Append was given a nil *event.Raw")
			s.observeAppend(ctx, start, "", -1, 0, 0, err)
			return event.Event{}, err
		}
		t, payload = d.Type, d.Data
	default:
		t = data.EventType()
	}
	if err := s.checkIntents(ctx, start, t, intent); err != nil {
		return event.Event{}, err
	}
	raw, jerr := event.MarshalData(payload)
	if jerr != nil {
		s.observeAppend(ctx, start, t, -1, 0, 0, jerr)
		return event.Event{}, jerr
	}
	return s.appendOne(ctx, start, newEvent(t, raw, intent))
}

// AppendRaw appends an event of type t whose data is the JSON text data:
// it is Append(ctx, event.Raw{Type: t, Data: json.RawMessage(data)},
// intent...), for data already encoded (a provider's stream relayed as it
// comes), without the two allocations that boxing data twice costs. data is
// checked and compacted into the log's own buffer; the session does not
// keep it. ctx, intent and errors are as in Append.
func (s *Session) AppendRaw(ctx context.Context, t event.Type, data json.RawMessage, intent ...event.Intent) (event.Event, error) {
	var start time.Time
	if s.cfg.observer != nil {
		start = time.Now()
	}
	if err := s.checkIntents(ctx, start, t, intent); err != nil {
		return event.Event{}, err
	}
	return s.appendOne(ctx, start, newEvent(t, data, intent))
}

// checkIntents refuses more than one intent (and reports the refusal to
// the observer).
func (s *Session) checkIntents(ctx context.Context, start time.Time, t event.Type, intent []event.Intent) error {
	if len(intent) <= 1 {
		return nil
	}
	err := event.Errorf(event.CodeOpInvalid, -1, "Append takes at most one intent; it was given %d", len(intent))
	s.observeAppend(ctx, start, t, -1, 0, 0, err)
	return err
}

// newEvent is the event to append of type t with data and the intent
// given, if any (its sources copied), awaiting its seq and time.
func newEvent(t event.Type, data []byte, intent []event.Intent) event.Event {
	e := event.Event{Type: t, Seq: -1, Data: data}
	if len(intent) == 1 {
		e.Op = intent[0].Op
		if intent[0].Sources != nil {
			e.Sources = slices.Clone(intent[0].Sources)
		}
	}
	return e
}

// AppendEvent appends a complete event, with its own seq and time, checked
// like any append: its seq must be the log's length (SURF-2). Use it to
// replay or copy events; Append is for new ones. ctx is as in Append.
func (s *Session) AppendEvent(ctx context.Context, e event.Event) (event.Event, error) {
	var start time.Time
	if s.cfg.observer != nil {
		start = time.Now()
	}
	if e.Sources != nil {
		e.Sources = slices.Clone(e.Sources)
	}
	if e.Seq == -1 {
		e.Seq = math.MinInt64 // keep a given -1: appendOne gives a seq to -1 only
	}
	return s.appendOne(ctx, start, e)
}

// appendOne appends e under the session's locks and reports it to the
// observer after releasing them. A Seq of -1 gives e the next seq and the
// clock's time (math.MinInt64 stands for a given -1).
func (s *Session) appendOne(ctx context.Context, start time.Time, e event.Event) (event.Event, error) {
	var wait, wrote time.Duration
	stored, err := func() (event.Event, error) {
		s.wmu.Lock()
		defer s.wmu.Unlock()
		if s.cfg.observer != nil {
			wait = time.Since(start)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		switch e.Seq {
		case -1:
			e.Seq, e.Time = int64(s.n()), s.cfg.clock()
		case math.MinInt64:
			e.Seq = -1
		}
		s.wrote = 0
		stored, err := s.commit(ctx, e)
		wrote = s.wrote
		return stored, err
	}()
	if s.cfg.observer != nil {
		s.observeAppend(ctx, start, e.Type, e.Seq, wait, wrote, err, s.replaced(stored, err))
	}
	return stored, err
}

// replacedAt is where a replace changed the surface (observe.Append).
type replacedAt struct {
	ok  bool
	pos int
	seq int64
}

// replaced is where the stored events changed the surface: the first
// position a replace among them took, or nothing.
func (s *Session) replaced(stored event.Event, err error, more ...event.Event) replacedAt {
	var r replacedAt
	if err != nil {
		return r
	}
	for _, e := range append([]event.Event{stored}, more...) {
		if e.Op.Kind != event.OpReplace {
			continue
		}
		if pos, on := s.Position(e.Seq); on && (!r.ok || pos < r.pos) {
			r = replacedAt{ok: true, pos: pos, seq: e.Op.Start}
		}
	}
	return r
}

// observeAppend reports an append of one event to the observer, if any.
func (s *Session) observeAppend(ctx context.Context, start time.Time, t event.Type, seq int64, wait, wrote time.Duration, err error, r ...replacedAt) {
	if s.cfg.observer == nil {
		return
	}
	n := 1
	if err != nil {
		n = 0
	}
	rec := observe.Append{Timing: observe.Since(start), Type: t, Seq: seq, Events: n, LockWait: wait, Write: wrote, Err: err}
	if len(r) > 0 && r[0].ok {
		rec.Replaced, rec.ReplacedAt, rec.ReplacedSeq = true, r[0].pos, r[0].seq
	}
	s.cfg.observer.Append(ctx, rec)
}

// Cancelled returns the persist.cancelled error of a context that has
// ended, or nil while ctx is live. Stores use it for a write their
// context cut short.
func Cancelled(ctx context.Context, seq int64) error {
	if ctx.Err() == nil {
		return nil
	}
	return &event.Error{Code: event.CodePersistCancelled, Index: -1, Seq: seq, Detail: "the append's context ended before the event was acknowledged: " + context.Cause(ctx).Error(), Cause: context.Cause(ctx)}
}

// commit is commitOnly, then the release of held steering messages that
// the new event balanced (SteerWhenBalanced).
func (s *Session) commit(ctx context.Context, e event.Event) (event.Event, error) {
	stored, err := s.commitOnly(ctx, e)
	if err == nil && len(s.held) > 0 && !s.repairing && !s.batching {
		s.releaseHeld(ctx)
	}
	return stored, err
}

// commitOnly validates e, writes it ahead, and appends it. The caller holds
// s.wmu and s.mu; commit releases s.mu while the store writes (readers go
// on meanwhile: no writer can change the log, and the candidate is not in
// it yet) and holds it again when it returns.
func (s *Session) commitOnly(ctx context.Context, e event.Event) (event.Event, error) {
	if err := Cancelled(ctx, e.Seq); err != nil {
		return event.Event{}, err
	}
	if s.broken != nil {
		return event.Event{}, s.broken
	}
	// Validate compacts e.Data into a new buffer, so the log never keeps
	// the caller's bytes.
	if err := s.mgr.ValidateIn(s.log, &e, s.cfg.vocabulary); err != nil {
		return event.Event{}, err
	}
	if s.cfg.strict && !s.repairing {
		s.foldLedger()
		s.strictLedger.fold(s.log)
		if err := strictCheck(&s.ledger, &s.strictLedger, s.log, s.mgr, &e); err != nil {
			return event.Event{}, err
		}
	}
	if s.cfg.writeAhead != nil {
		s.one[0] = e
		s.mu.Unlock()
		var began time.Time
		if s.cfg.observer != nil {
			began = time.Now()
		}
		err := s.cfg.writeAhead(ctx, s.one[:])
		if s.cfg.observer != nil {
			s.wrote += time.Since(began)
		}
		s.mu.Lock()
		s.one[0] = event.Event{}
		if err != nil {
			return event.Event{}, err
		}
	}
	s.push(e)
	if s.cfg.trace != nil {
		s.traceEvent(&e)
	}
	s.checkpointAfter(s.log[len(s.log)-1:])
	return e, nil
}

// commitRun appends run as one write: it validates the events in order as
// if each were appended, writes the accepted ones ahead in one call (one
// sync, one transaction), and appends them. It returns the appended events
// and the first rejection; a failed write appends none. The caller holds
// s.wmu and s.mu.
//
// The surface manager folds an event when the next one is validated, so
// the manager and the view run ahead of the log while the batch is
// written: readers keep the snapshot taken before the batch (refresh does
// nothing while s.ahead is set), and a failed write rebuilds the surface
// from the log, which is the only O(n) path and only on a store failure.
func (s *Session) commitRun(ctx context.Context, run []event.Event) ([]event.Event, error) {
	if len(run) == 0 {
		return nil, nil
	}
	if err := Cancelled(ctx, int64(s.n())); err != nil {
		return nil, err
	}
	if s.broken != nil {
		return nil, s.broken
	}
	s.refresh()
	n0 := len(s.log)
	strict := s.cfg.strict && !s.repairing
	var published repair.State
	publishedAt := 0
	if strict {
		s.foldLedger()
		published, publishedAt = s.ledger.Clone(), s.ledgerAt
	}
	var rejected error
	var surfaces [][]int64
	for i := range run {
		e := run[i]
		e.Seq = int64(s.n())
		if err := s.mgr.ValidateIn(s.log, &e, s.cfg.vocabulary); err != nil {
			rejected = err
			break
		}
		if strict {
			s.foldLedger()
			s.strictLedger.fold(s.log)
			if err := strictCheck(&s.ledger, &s.strictLedger, s.log, s.mgr, &e); err != nil {
				rejected = err
				break
			}
		}
		s.push(e)
		if s.cfg.trace != nil {
			// Trace each event with the surface just after it, once the
			// batch is written.
			if err := s.mgr.Sync(s.log); err == nil {
				surfaces = append(surfaces, s.surfaceNow())
			}
		}
	}
	if len(s.log) == n0 {
		return nil, rejected
	}
	if s.cfg.writeAhead != nil {
		written := s.log
		s.log = s.log[:n0]
		folded, foldedAt := s.ledger, s.ledgerAt
		if strict {
			s.ledger, s.ledgerAt = published, publishedAt
		}
		s.ahead = true
		s.mu.Unlock()
		var began time.Time
		if s.cfg.observer != nil {
			began = time.Now()
		}
		err := s.cfg.writeAhead(ctx, written[n0:])
		if s.cfg.observer != nil {
			s.wrote += time.Since(began)
		}
		s.mu.Lock()
		s.ahead = false
		if err != nil {
			s.rebuild()
			s.strictLedger.reset() // it had folded what was not written
			return nil, err
		}
		s.log = written
		if strict {
			s.ledger, s.ledgerAt = folded, foldedAt
		}
	}
	out := s.log[n0:len(s.log):len(s.log)]
	if s.cfg.trace != nil {
		for i := range out {
			s.cfg.trace.event(&out[i], surfaces[i])
		}
	}
	s.checkpointAfter(out)
	return out, rejected
}

// rebuild folds the log into a new surface and view, after a batch the
// manager had folded ahead of the log was not written. Caller holds s.mu.
func (s *Session) rebuild() {
	if s.base > 0 {
		s.restoreState() // the checkpoint's state, then the events after it
	} else {
		s.mgr = surface.New()
		s.mgr.Observe(s.observe)
		s.view = view.Builder{}
	}
	if err := s.mgr.Sync(s.log); err != nil {
		panic("session: log holds an event the surface rejects: " + err.Error()) // unreachable: every event was validated
	}
	s.snap, s.snapAt = s.view.Snapshot(), s.n()
}

// Repair appends the closers of an open last turn (REP-1 to REP-5) and
// returns them; a balanced log gets none. The closers are written ahead
// in one call (one sync); ctx is as in Append.
func (s *Session) Repair(ctx context.Context) ([]event.Event, error) {
	var start time.Time
	if s.cfg.observer != nil {
		start = time.Now()
	}
	out, err := s.repair(ctx)
	if s.cfg.observer != nil {
		s.cfg.observer.Repair(ctx, observe.Repair{Timing: observe.Since(start), Closers: len(out), Err: err})
	}
	return out, err
}

func (s *Session) repair(ctx context.Context) ([]event.Event, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.mgr.Sync(s.log); err != nil {
		return nil, err
	}
	s.foldLedger()
	closers := s.ledger.Closers(func(seq int64) bool { return s.mgr.Node(seq) != nil })
	s.repairing = true
	defer func() { s.repairing = false }()
	out, err := s.commitRun(ctx, closers)
	if err != nil {
		return slices.Clone(out), err
	}
	if s.cfg.trace != nil {
		s.cfg.trace.write(TraceLine{Action: "repair", Closers: len(out), Surface: s.surfaceNow()})
	}
	return slices.Clone(out), nil
}

// Err is the error that makes the session refuse every append from now
// on, or nil. It is set only in a session resumed from a checkpoint
// (Restore) when the events the checkpoint covers cannot be read back, or
// are not those events (persist.corrupt): then Events, Tx.Events and
// TurnEnd, which cannot return it, hold zero events in their places.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.broken
}

// Len is the number of events in the log.
func (s *Session) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n()
}

// Events returns the log. The slice and the events share memory with the
// session: read them, do not change them (Clone an event to change it).
// In a session resumed from a checkpoint (Restore) the first call reads
// the events the checkpoint covers back from the store; should that fail,
// zero events hold their places and Err says why.
func (s *Session) Events() []event.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.whole()
	return s.log[:len(s.log):len(s.log)]
}

// Surface returns the seqs of the surface nodes, head to tail, as an
// immutable view: later appends never change it. With no new events it
// costs O(1) and allocates nothing; Slice or AppendTo copy it out.
func (s *Session) Surface() view.Seqs {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh()
	return s.snap.Seqs()
}

// Messages returns the LLM messages derived from the surface (SURF-19), as
// an immutable view: later appends never change it. With no new events it
// costs O(1) and allocates nothing; after a replace of k nodes it costs
// O(k + log n) (the replace's own check walks the k nodes; the view does
// not). Slice or AppendTo copy it out.
func (s *Session) Messages() view.Messages {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh()
	return s.snap.Messages()
}

// Position returns the position of node seq on the surface (its index in
// Surface()), in O(log n); ok is false when seq is not on the surface.
func (s *Session) Position(seq int64) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Tx{s}.Position(seq)
}

// refresh folds new events into the surface (and with it the view) and
// takes a snapshot. Caller holds s.mu.
func (s *Session) refresh() {
	if s.ahead {
		return // a batch is being written: readers keep the snapshot from before it
	}
	if n := s.n(); s.snapAt == n && s.mgr.Processed() == n {
		return
	}
	if err := s.mgr.Sync(s.log); err != nil {
		panic("session: log holds an event the surface rejects: " + err.Error()) // unreachable: every event was validated
	}
	s.snap, s.snapAt = s.view.Snapshot(), s.n()
}

// foldLedger folds the events appended since the last call into the
// ledger. Caller holds s.mu.
func (s *Session) foldLedger() {
	if s.ledgerAt < s.n() {
		s.ledger.FoldAll(s.log[s.ledgerAt-s.base : s.n()-s.base])
		s.ledgerAt = s.n()
	}
}

// OpenTurn returns the number of the open turn (a turn/start with no
// turn/end after it), and whether one is open. O(new events).
func (s *Session) OpenTurn() (turn int64, open bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.foldLedger()
	return number(s.ledger.Turn())
}

// NextTurn returns the number the next turn/start should carry: one more
// than the largest turn number the log has started (1 for a new log).
func (s *Session) NextTurn() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.foldLedger()
	return s.ledger.MaxTurn() + 1
}

// TurnEnd returns the turn/end event of turn n (the last one, should the
// log end turn n twice), and whether there is one: the boundary a fork at
// the end of that turn takes (Fork, persist.Fork). O(new events).
func (s *Session) TurnEnd(n int64) (event.Event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seq, ok := s.turnEnd(n)
	if !ok && s.base > 0 {
		// Turn n may have ended before the checkpoint the session resumed
		// from: read those events back, and look again.
		s.whole()
		seq, ok = s.turnEnd(n)
	}
	if !ok {
		return event.Event{}, false
	}
	return s.log[seq-int64(s.base)], true
}

// turnEnd folds the new events into turnEnds and looks turn n up. Caller
// holds s.mu.
func (s *Session) turnEnd(n int64) (int64, bool) {
	if s.turnEnds == nil {
		s.turnEnds = map[int64]int64{}
		s.turnEndsAt = s.base
	}
	for ; s.turnEndsAt < s.n(); s.turnEndsAt++ {
		e := &s.log[s.turnEndsAt-s.base]
		if e.Type != event.TypeTurnEnd {
			continue
		}
		raw, _ := event.ObjectMember(e.Data, "turn")
		if turn, ok := number(raw); ok {
			s.turnEnds[turn] = e.Seq
		}
	}
	seq, ok := s.turnEnds[n]
	return seq, ok
}

// OpenStep returns the number of the open step of the open turn, and
// whether one is open.
func (s *Session) OpenStep() (step int64, open bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.foldLedger()
	if s.ledger.Turn() == nil {
		return 0, false // a step outside any turn is not open
	}
	return number(s.ledger.Step())
}

// PendingCall is a tool call of the open turn that has no result yet.
type PendingCall = repair.Call

// PendingCalls returns the tool calls of the open turn that have no
// tool/result yet, in the order the model made them (REP-2): what a
// harness still has to run or answer, and what repair would close after
// a crash. O(new events + pending calls).
func (s *Session) PendingCalls() []PendingCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.foldLedger()
	if s.ledger.Turn() == nil {
		return nil // calls made outside any turn are nobody's (REP-2)
	}
	return s.ledger.Pending()
}

// Tokens returns the token count of the messages (Messages().Tokens()):
// the sum over the surface of each message's provider-reported output
// tokens (assistant messages that recorded usage) or estimate
// (WithTokenEstimator). O(1) after O(new events): it is kept as the
// surface changes.
func (s *Session) Tokens() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh()
	return s.snap.Messages().Tokens()
}

// number reads a JSON integer the log wrote (a turn or step number).
func number(raw []byte) (int64, bool) {
	if raw == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		var f float64
		if json.Unmarshal(raw, &f) != nil {
			return 0, true
		}
		n = int64(f)
	}
	return n, true
}

// Provenance returns the seqs that the event at seq was built from,
// following sourceEventSeqs transitively, in ascending order, without seq
// itself (SURF-23).
func (s *Session) Provenance(seq int64) ([]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.whole(); err != nil {
		return nil, err
	}
	if seq < 0 || seq >= int64(len(s.log)) {
		return nil, event.Errorf(event.CodeProvenanceUnknownSeq, seq, "no event %d in a log of %d", seq, len(s.log))
	}
	seen := map[int64]bool{seq: true}
	stack := []int64{seq}
	out := []int64{}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, src := range s.log[x].Sources {
			if !seen[src] {
				seen[src] = true
				out = append(out, src)
				stack = append(stack, src)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// Fork returns a new session seeded with the events 0..boundary of this
// one (SURF-24). The boundary event must exist and be a turn/end. The new
// session has this session's options (strict mode, vocabulary, token
// estimator, observer, ...) except WithWriteAhead, WithTrace and WithCheckpoints, then opts,
// which add to or override them; this session is unchanged.
func (s *Session) Fork(boundary int64, opts ...Option) (*Session, error) {
	s.mu.Lock()
	if err := s.whole(); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	if boundary < 0 || boundary >= int64(len(s.log)) {
		n := len(s.log)
		s.mu.Unlock()
		return nil, event.Errorf(event.CodeForkBoundaryOutOfRange, boundary, "no event %d in a log of %d", boundary, n)
	}
	if s.log[boundary].Type != event.TypeTurnEnd {
		t := s.log[boundary].Type
		s.mu.Unlock()
		return nil, event.Errorf(event.CodeForkOpenTurn, boundary, "fork boundary is a %s, not a turn/end", t)
	}
	prefix := s.log[: boundary+1 : boundary+1]
	s.mu.Unlock()
	// The child does not inherit the parent's write-ahead or trace: it is a
	// new log.
	all := append(slices.Clone(s.opts), WithWriteAhead(nil), func(c *config) { c.trace, c.checkpoints = nil, nil })
	return Seed(prefix, append(all, opts...)...)
}
