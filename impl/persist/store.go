package persist

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/observe"
	"github.com/surfacelog/surface/impl/session"
)

// SyncPolicy says when a store forces its writes to stable storage.
type SyncPolicy int

const (
	// SyncEveryAppend syncs before every append is acknowledged. The default:
	// an acknowledged event survives a crash of the process or the machine.
	SyncEveryAppend SyncPolicy = iota
	// SyncOnTurnEnd syncs when a turn/end is appended, and on Sync and Close:
	// a crash may lose the events of the open turn, which repair then closes.
	SyncOnTurnEnd
	// SyncNever leaves syncing to the operating system (and Sync, Close):
	// events survive a process crash but maybe not a machine crash.
	SyncNever
	// SyncMessages syncs every append but a streamed assistant/chunk:
	// chunks are best-effort (durable with the next synced event), every
	// message, result, turn and step boundary is durable when its append
	// returns. A streamed step then costs about one sync, not one per
	// chunk.
	SyncMessages
	// SyncGroup is group commit (WithSyncWindow, WithSQLiteSyncWindow): an
	// append returns once its events are written (the operating system has
	// them), and one sync covers every append of a window, which closes a
	// delay after its first append or once its appends hold a number of
	// bytes; a turn/end, a batch of several events (AppendBatch, a
	// repair's closers), Sync and Close sync at once. A crash of the
	// process loses nothing; a crash of the machine loses at most the
	// appends of the window then open, never one a sync covered, and what
	// is left is a prefix of the log (a torn last line is quarantined at
	// the next open, STORE-2). A sync that fails in the background leaves
	// the store refusing appends (persist.io).
	SyncGroup
)

// syncs reports whether policy p syncs the append of an event of type t.
func (p SyncPolicy) syncs(t event.Type) bool {
	switch p {
	case SyncEveryAppend:
		return true
	case SyncOnTurnEnd:
		return t == event.TypeTurnEnd
	case SyncMessages:
		return t != event.TypeAssistantChunk
	case SyncGroup:
		return t == event.TypeTurnEnd
	}
	return false
}

func (p SyncPolicy) String() string {
	switch p {
	case SyncEveryAppend:
		return "every-append"
	case SyncOnTurnEnd:
		return "turn-end"
	case SyncMessages:
		return "messages"
	case SyncGroup:
		return "group"
	default:
		return "never"
	}
}

// SessionFormatVersion is SESSION_FORMAT_VERSION, written in every header.
const SessionFormatVersion = event.SessionFormatVersion

// Header is a session's metadata, kept outside its event log.
type Header struct {
	Version       int    `json:"version"`
	ID            string `json:"id"`
	CreatedAt     int64  `json:"createdAt"`
	Cwd           string `json:"cwd,omitempty"`
	ParentSession string `json:"parentSession,omitempty"`
	// SeedLength is how many leading events a fork inherited.
	SeedLength *int64 `json:"seedLength,omitempty"`
}

// LoadReport says what opening a store found.
type LoadReport struct {
	// Events is the number of events loaded.
	Events int
	// TornBytes is the length of a torn last line that will be cut off
	// before the next append (STORE-2); 0 when there was none.
	TornBytes int64
	// Quarantine names the file that holds a copy of the torn bytes
	// (STORE-8); "" when nothing is to be cut.
	Quarantine string
	// Closers are the events Resume appended to repair an open turn.
	Closers []event.Event
	// CheckpointEvents is the number of events covered by the checkpoint
	// the store was opened from (STORE-18), which Resume did not replay;
	// 0 when it read every event.
	CheckpointEvents int
	// CheckpointIgnored says why a checkpoint beside the log was not used
	// (it does not match the log, is torn, ...); "" when none was found or
	// it was used.
	CheckpointIgnored string
}

// Store is a durable event log of one session.
//
// Every method that writes or waits takes a context (STORE-16): when it
// ends before the store has acknowledged the operation, the method fails
// with persist.cancelled and nothing of it is acknowledged.
type Store interface {
	// Header is the session's header.
	Header() Header
	// Events returns the events loaded when the store was opened, until
	// Resume hands them to the session. They have not been checked against
	// every rule: Resume does that. Treat them as read-only.
	Events() []event.Event
	// Report says what opening found.
	Report() LoadReport
	// Append writes accepted events, consecutive and continuing the log,
	// as one step (STORE-17): it returns once they are written and, under
	// the sync policy, synced (STORE-6); on error none of them is. It
	// must not keep the slice.
	Append(ctx context.Context, events ...event.Event) error
	// Sync forces every write so far to stable storage.
	Sync(ctx context.Context) error
	// Close syncs and releases the store and its lock. It releases them
	// even when ctx has ended (then it may skip the sync and say so).
	Close(ctx context.Context) error
}

// Session is a session whose appends go to a store first.
type Session struct {
	*session.Session
	Store Store
}

// Resume loads a store into a session through the seed constructor
// (STORE-3), repairs an open last turn by appending closers through the
// store (STORE-7), and returns a Session whose appends are durable.
//
// A store has at most one live session (STORE-10): a second Resume of the
// same store fails with persist.locked, whether or not the first succeeded
// in repairing, so two sessions can never write through one store.
//
// With session.WithObserver among opts, the store reports its writes to
// the observer, and Resume reports the resume.
func Resume(ctx context.Context, store Store, opts ...session.Option) (*Session, LoadReport, error) {
	obs := session.ObserverOf(opts...)
	if obs == nil {
		return resume(ctx, store, nil, opts)
	}
	start := time.Now()
	s, report, err := resume(ctx, store, obs, opts)
	obs.Resume(ctx, observe.Resume{Timing: observe.Since(start), Store: storeName(store), Events: report.Events, TornBytes: report.TornBytes, Closers: len(report.Closers), Err: err})
	return s, report, err
}

// observed is implemented by the stores of this package, which report
// their writes to an observer.
type observed interface{ setObserver(observe.Observer) }

// storeName names a store in an observer's records.
func storeName(store Store) string {
	switch store.(type) {
	case *JSONL:
		return "jsonl"
	case *SQLite:
		return "sqlite"
	case *Postgres:
		return "postgres"
	}
	return fmt.Sprintf("%T", store)
}

func resume(ctx context.Context, store Store, obs observe.Observer, opts []session.Option) (*Session, LoadReport, error) {
	report := store.Report()
	if err := session.Cancelled(ctx, -1); err != nil {
		return nil, report, err
	}
	if err := CheckSeedLength(store.Header(), report.Events); err != nil {
		return nil, report, err
	}
	if err := attach(store); err != nil {
		return nil, report, err
	}
	opts = append(opts, session.WithWriteAhead(writeAhead(store)))
	cs, checkpoints := store.(checkpointed)
	if checkpoints && cs.checkpointEvery() > 0 {
		opts = append(opts, session.WithCheckpoints(cs.checkpointEvery(), cs.writeCheckpoint))
	}
	var s *session.Session
	var err error
	if checkpoints {
		if s, err = restore(store, cs, opts); err != nil {
			detach(store)
			return nil, report, err
		}
		report = store.Report()
	}
	ls, logged := store.(logStore)
	switch {
	case s != nil: // resumed from the checkpoint
	case logged && ls.takeLog() != nil:
		// One scan per event: the store decoded and checked the data
		// as it read it, and hands the events over without a copy.
		if s, err = session.SeedLog(ls.takeLog(), opts...); err == nil {
			ls.releaseLog()
		}
	default:
		s, err = session.Seed(store.Events(), opts...)
	}
	if err != nil {
		detach(store)
		return nil, report, locate(store, err)
	}
	if so, ok := store.(observed); ok && obs != nil {
		so.setObserver(obs)
	}
	closers, err := s.Repair(ctx)
	report.Closers = closers
	if err != nil {
		return nil, report, err
	}
	return &Session{Session: s, Store: store}, report, nil
}

// restore resumes from the checkpoint the store was opened from
// (STORE-18): nil when it was opened from none, or when the checkpoint
// cannot be used (session.Restore refuses it) and the store has read its
// whole log again, whose replay then gives the verdict.
func restore(store Store, cs checkpointed, opts []session.Option) (*session.Session, error) {
	r, prefix := cs.takeRestore()
	if r == nil {
		return nil, nil
	}
	ls := store.(logStore)
	s, err := session.Restore(r.cp, r.nodes, ls.takeLog(), prefix, opts...)
	if err != nil {
		return nil, cs.loadWhole()
	}
	ls.releaseLog()
	return s, nil
}

// checkpointed is implemented by the stores that keep checkpoints
// (STORE-18).
type checkpointed interface {
	checkpointEvery() int                                    // 0: no checkpoints
	writeCheckpoint(session.Checkpoint)                      // the session's checkpoint writer
	checkpointCovers() int64                                 // events the store's checkpoint covers (0: none)
	takeRestore() (*restoreFrom, func() (*event.Log, error)) // the checkpoint opened from, or nil
	loadWhole() error                                        // read every event: the checkpoint cannot be used
}

// logStore is implemented by the stores of this package, which decode
// their events into an event.Log as they load them.
type logStore interface {
	takeLog() *event.Log // the loaded log, or nil once released
	releaseLog()         // forget the log: a session owns it now
}

// locator is implemented by stores that can say where the event at an
// index of their log is kept, so a rejection names the line or row.
type locator interface{ location(index int) string }

// locate adds the place of a rejected seed event to err.
func locate(store Store, err error) error {
	var ee *event.Error
	l, ok := store.(locator)
	if !ok || !errors.As(err, &ee) || ee == nil || ee.Index < 0 {
		return err
	}
	out := *ee
	out.Detail = l.location(ee.Index) + ": " + ee.Detail
	return &out
}

// live holds the stores that have a live session (STORE-10).
var live sync.Map

// attach records that store gets a live session, or fails with
// persist.locked when it has one. A store of a type that cannot be a map
// key is not tracked here; its own seq check (persist.conflict) still
// keeps a second session from writing.
func attach(store Store) error {
	if !reflect.TypeOf(store).Comparable() {
		return nil
	}
	if _, loaded := live.LoadOrStore(store, struct{}{}); loaded {
		return event.Errorf(event.CodePersistLocked, -1, "the store already has a live session: use that session (one store, one session)")
	}
	return nil
}

// detach forgets a live session whose construction failed.
func detach(store Store) {
	if reflect.TypeOf(store).Comparable() {
		live.Delete(store)
	}
}

// writeAhead is the session's write-ahead through store.
func writeAhead(store Store) func(context.Context, []event.Event) error {
	return func(ctx context.Context, events []event.Event) error { return store.Append(ctx, events...) }
}

// Close closes the session's store; the session takes no more appends.
// A store that keeps checkpoints (WithCheckpoints) gets one of the whole
// log first, unless its newest one covers it already, so that the next
// Resume replays nothing.
func (s *Session) Close(ctx context.Context) error {
	if cs, ok := s.Store.(checkpointed); ok && cs.checkpointEvery() > 0 && ctx.Err() == nil && cs.checkpointCovers() != int64(s.Session.Len()) {
		cs.writeCheckpoint(s.Session.Checkpoint())
	}
	err := s.Store.Close(ctx)
	detach(s.Store)
	return err
}

// Fork forks src at boundary (SURF-24) into dst, which must be a new,
// empty store whose header names src as ParentSession; its SeedLength,
// when set, must be boundary+1 (Fork always writes it). A store of this
// package opened without a parent session is refused (persist.conflict):
// it was created empty at once. The stores of this package write
// the child whole or not at all (STORE-14): a store opened with a header
// naming a parent session (or promising inherited events) writes nothing
// until Fork writes its header and inherited events in one step (a JSONL
// file linked into place, one SQLite or Postgres transaction), so a fork
// killed or refused leaves no child, never an empty one. A fork refused before it
// writes (fork.open_turn, fork.boundary_out_of_range) leaves nothing. A
// Store of another package gets the events in one Append. When ctx ends
// before the child is complete, Fork fails with persist.cancelled and
// leaves no child.
//
// The child reports to the observer among opts (session.WithObserver), or
// else to src's; so does its store, and Fork reports the fork.
func Fork(ctx context.Context, src *Session, boundary int64, dst Store, opts ...session.Option) (*Session, error) {
	obs := session.ObserverOf(opts...)
	if obs == nil && src.Observer() != nil {
		obs = src.Observer()
		opts = append(slices.Clip(opts), session.WithObserver(obs))
	}
	if obs == nil {
		return fork(ctx, src, boundary, dst, opts)
	}
	start := time.Now()
	s, err := fork(ctx, src, boundary, dst, opts)
	n := 0
	if err == nil {
		n = s.Len()
	}
	obs.Fork(ctx, observe.Fork{Timing: observe.Since(start), Boundary: boundary, Events: n, Store: storeName(dst), Err: err})
	return s, err
}

func fork(ctx context.Context, src *Session, boundary int64, dst Store, opts []session.Option) (*Session, error) {
	if err := session.Cancelled(ctx, -1); err != nil {
		return nil, err
	}
	if dst.Report().Events != 0 {
		return nil, event.Errorf(event.CodePersistConflict, -1, "fork target is not empty")
	}
	// The child keeps src's options (session.Session.Fork), then opts; its
	// writes go to dst. Nothing is appended to it before it is returned,
	// so the write-ahead is in place before dst holds the seed.
	s, err := src.Session.Fork(boundary, append(slices.Clip(opts), session.WithWriteAhead(writeAhead(dst)))...)
	if err != nil {
		return nil, err
	}
	h := dst.Header()
	n := boundary + 1
	if h.SeedLength != nil && *h.SeedLength != n {
		return nil, event.Errorf(event.CodePersistConflict, -1, "the fork target's header promises %d inherited events; a fork at %d inherits %d", *h.SeedLength, boundary, n)
	}
	h.SeedLength = &n
	if h.ParentSession == "" {
		h.ParentSession = src.Store.Header().ID
	}
	if err := attach(dst); err != nil {
		return nil, err
	}
	if sw, ok := dst.(seedWriter); ok && !sw.unwritten() {
		detach(dst)
		return nil, event.Errorf(event.CodePersistConflict, -1, "the fork target %q was opened with a header that names no parent session, so it was created empty at once, and a fork stopped midway would leave that empty session looking whole: open the target with Header.ParentSession set", h.ID)
	}
	if sw, ok := dst.(seedWriter); ok {
		err = sw.writeSeed(ctx, h, s.Events())
	} else {
		err = dst.Append(ctx, s.Events()...)
	}
	if so, ok := dst.(observed); ok && err == nil && s.Observer() != nil {
		so.setObserver(s.Observer())
	}
	if err != nil {
		detach(dst)
		return nil, err
	}
	return &Session{Session: s, Store: dst}, nil
}

// seedWriter is implemented by the stores of this package: writeSeed
// writes a fork child's header h and its inherited events as one atomic
// step (STORE-14).
type seedWriter interface {
	writeSeed(ctx context.Context, h Header, events []event.Event) error
	// unwritten says whether the store is a fork child not written yet
	// (forkChild): nothing of it exists until writeSeed.
	unwritten() bool
}

// forkHook, when set (by the fork kill test), is called after each
// inherited event is written (with its index) and once the child is in
// place (with their number).
var forkHook func(written int)

// checkHeader refuses a header that cannot name a session, and gives a
// zero createdAt the current time (STORE-15).
func checkHeader(h *Header) error {
	if h.ID == "" {
		return event.Errorf(event.CodePersistHeaderInvalid, -1, "a session header needs a non-empty id")
	}
	if h.CreatedAt == 0 {
		h.CreatedAt = time.Now().UnixMilli()
	}
	return nil
}

// CheckSeedLength is persist.fork_incomplete when h promises more
// inherited events than the n a store holds (STORE-14), and when h names
// a parent session without a seedLength and the store holds no event: a
// fork inherits at least its boundary's turn/end, so such a child is one
// whose fork never wrote it (a writer older than STORE-14's rule, or
// another implementation, created the header first).
func CheckSeedLength(h Header, n int) error {
	if h.SeedLength != nil && int64(n) < *h.SeedLength {
		return event.Errorf(event.CodePersistForkIncomplete, -1, "session %q is a fork child whose header promises %d inherited events, and it holds %d: the fork that wrote it did not finish", h.ID, *h.SeedLength, n)
	}
	if h.SeedLength == nil && h.ParentSession != "" && n == 0 {
		return event.Errorf(event.CodePersistForkIncomplete, -1, "session %q names parent session %q and holds no event: a fork inherits at least its boundary, so the fork that wrote it did not finish", h.ID, h.ParentSession)
	}
	return nil
}

// forkChild says whether a store opened with h, and not holding the
// session yet, is a fork child: its header names a parent session or
// promises inherited events. Such a store writes nothing until Fork
// writes it whole, header (with seedLength) and inherited events in one
// step (STORE-14): a fork killed or refused leaves no child, never an
// empty one that looks whole.
func forkChild(h Header) bool {
	return h.ParentSession != "" || h.SeedLength != nil && *h.SeedLength > 0
}

// bare is err without the path an *os.PathError names: for errors on
// temporary files, whose names mean nothing to a user (STORE-15).
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

func ioError(err error, format string, args ...any) *event.Error {
	e := event.Errorf(event.CodePersistIO, -1, format, args...)
	// format names the operation and the path: of an *fs.PathError, only
	// its cause is added, so a cause is never said twice ("open X: open
	// X: ...").
	var pe *fs.PathError
	if errors.As(err, &pe) {
		e.Detail += ": " + pe.Err.Error()
	} else {
		e.Detail += ": " + err.Error()
	}
	e.Cause = err
	return e
}

// closedError is persist.closed for a store that was closed (closed) or
// that a failed write left unusable (broken, its cause), or nil when it
// is neither. what names the store.
func closedError(closed bool, broken error, seq int64, what string) error {
	switch {
	case broken != nil:
		e := event.Errorf(event.CodePersistClosed, seq, "%s failed earlier and takes no more appends (reopen it): %v", what, broken)
		e.Cause = broken
		return e
	case closed:
		return event.Errorf(event.CodePersistClosed, seq, "%s is closed", what)
	}
	return nil
}
