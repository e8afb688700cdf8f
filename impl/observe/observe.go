package observe

import (
	"context"
	"time"

	"github.com/surfacelog/surface/impl/event"
)

// Observer receives a record of each operation the library finished.
// Methods are called synchronously, after the operation and outside the
// session's locks, from the goroutine that ran it; they must not block
// and must not call back into the session. Embed Base to implement only
// some of them.
type Observer interface {
	// Append: an append, a batch (AppendBatch) or a repair's closers
	// went through the session.
	Append(ctx context.Context, r Append)
	// StoreWrite: a store wrote (and perhaps synced) events.
	StoreWrite(ctx context.Context, r StoreWrite)
	// Compaction: a compaction ended: committed, aborted or failed.
	Compaction(ctx context.Context, r Compaction)
	// Prune: a tool result was pruned, or a prune was refused.
	Prune(ctx context.Context, r Prune)
	// Repair: a repair closed an open turn (or found nothing to close).
	Repair(ctx context.Context, r Repair)
	// Resume: a store was loaded into a session.
	Resume(ctx context.Context, r Resume)
	// Fork: a session was forked into a store.
	Fork(ctx context.Context, r Fork)
}

// Base implements every method of Observer as a no-op; embed it.
type Base struct{}

func (Base) Append(context.Context, Append)         {}
func (Base) StoreWrite(context.Context, StoreWrite) {}
func (Base) Compaction(context.Context, Compaction) {}
func (Base) Prune(context.Context, Prune)           {}
func (Base) Repair(context.Context, Repair)         {}
func (Base) Resume(context.Context, Resume)         {}
func (Base) Fork(context.Context, Fork)             {}

// Timing is when an operation started and how long it took.
type Timing struct {
	Start    time.Time
	Duration time.Duration
}

// Append records one append (Events 1) or one batch of events.
type Append struct {
	Timing
	// Type is the type of the (first) event; Seq its seq, or the seq it
	// would have had when the append failed.
	Type event.Type
	Seq  int64
	// Events is the number of events appended (0 when it failed).
	Events int
	// LockWait is how long the append waited for the appends before it
	// (the session's writer lock).
	LockWait time.Duration
	// Write is how long the store's write took (0 without a store).
	Write time.Duration
	// Err is the error the append returned, or nil.
	Err error
	// Replaced says the append replaced nodes that were on the surface (a
	// replace: a compaction's, a prune's): every request built after it
	// differs from those built before from surface position ReplacedAt on
	// (where the replacing node now stands, the range's first node,
	// ReplacedSeq, stood), so a provider's prompt cache of earlier requests
	// serves at most the messages before it. False when the append only
	// added at the tail: the prompt sent so far is a prefix of the next one,
	// and the cache survives. A harness alerts on cache churn with it.
	Replaced    bool
	ReplacedAt  int
	ReplacedSeq int64
}

// StoreWrite records one write of a store: an append or a batch.
type StoreWrite struct {
	Timing
	// Store is "jsonl", "sqlite" or "postgres".
	Store string
	// Seq is the first event's seq; Events how many were written.
	Seq    int64
	Events int
	// Synced says whether the write was forced to stable storage (a
	// file store's fsync, a database commit); Sync is how long that took.
	Synced bool
	Sync   time.Duration
	Err    error
}

// Compaction records the end of a compaction.
type Compaction struct {
	Timing
	// StartSeq is the seq of its start event; -1 when it never began.
	StartSeq int64
	// Outcome is "committed", "aborted" or "failed".
	Outcome string
	// Nodes is the number of surface nodes the summary replaced.
	Nodes int
	// TokensBefore and TokensAfter are the session's token count
	// (Session.Tokens) before the compaction began and after it ended.
	TokensBefore, TokensAfter int
	// LockWait is how long Begin waited for another compaction call.
	LockWait time.Duration
	Err      error
}

// Prune records a tool-result prune.
type Prune struct {
	Timing
	// Seq is the pruned tool/result's seq.
	Seq int64
	// TokensBefore and TokensAfter are the session's token count.
	TokensBefore, TokensAfter int
	Err                       error
}

// Repair records a repair.
type Repair struct {
	Timing
	// Closers is the number of events the repair appended.
	Closers int
	Err     error
}

// Resume records a resume.
type Resume struct {
	Timing
	// Store is "jsonl", "sqlite", "postgres" or the store's Go type.
	Store string
	// Events is the number of events loaded; TornBytes the length of a
	// torn tail found; Closers the events the repair appended.
	Events    int
	TornBytes int64
	Closers   int
	Err       error
}

// Fork records a fork.
type Fork struct {
	Timing
	// Boundary is the parent's turn/end the child ends with; Events the
	// number of events the child inherited.
	Boundary int64
	Events   int
	Store    string
	Err      error
}

// Since returns the Timing of an operation that started at start.
func Since(start time.Time) Timing { return Timing{Start: start, Duration: time.Since(start)} }

// Multi returns an Observer that passes every record to each of obs in
// turn (nil ones skipped).
func Multi(obs ...Observer) Observer {
	var out multi
	for _, o := range obs {
		if o != nil {
			out = append(out, o)
		}
	}
	return out
}

type multi []Observer

func (m multi) Append(ctx context.Context, r Append) {
	for _, o := range m {
		o.Append(ctx, r)
	}
}
func (m multi) StoreWrite(ctx context.Context, r StoreWrite) {
	for _, o := range m {
		o.StoreWrite(ctx, r)
	}
}
func (m multi) Compaction(ctx context.Context, r Compaction) {
	for _, o := range m {
		o.Compaction(ctx, r)
	}
}
func (m multi) Prune(ctx context.Context, r Prune) {
	for _, o := range m {
		o.Prune(ctx, r)
	}
}
func (m multi) Repair(ctx context.Context, r Repair) {
	for _, o := range m {
		o.Repair(ctx, r)
	}
}
func (m multi) Resume(ctx context.Context, r Resume) {
	for _, o := range m {
		o.Resume(ctx, r)
	}
}
func (m multi) Fork(ctx context.Context, r Fork) {
	for _, o := range m {
		o.Fork(ctx, r)
	}
}
