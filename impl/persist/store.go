package persist

import (
	"errors"
	"os"
	"syscall"

	"github.com/surfacelog/surface/impl/event"
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
)

func (p SyncPolicy) String() string {
	switch p {
	case SyncEveryAppend:
		return "every-append"
	case SyncOnTurnEnd:
		return "turn-end"
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
	// Closers are the events Resume appended to repair an open turn.
	Closers []event.Event
}

// Store is a durable event log of one session.
type Store interface {
	// Header is the session's header.
	Header() Header
	// Events returns the events loaded when the store was opened. They
	// have not been checked against the rules: Resume does that.
	Events() []event.Event
	// Report says what opening found.
	Report() LoadReport
	// Append writes one accepted event; it returns once the event is
	// written and, under the sync policy, synced (STORE-6).
	Append(e event.Event) error
	// Sync forces every write so far to stable storage.
	Sync() error
	// Close syncs and releases the store and its lock.
	Close() error
}

// Session is a session whose appends go to a store first.
type Session struct {
	*session.Session
	Store Store
}

// Resume loads a store into a session through the seed constructor
// (STORE-3), repairs an open last turn by appending closers through the
// store (STORE-7), and returns a Session whose appends are durable.
func Resume(store Store, opts ...session.Option) (*Session, LoadReport, error) {
	report := store.Report()
	opts = append(opts, session.WithWriteAhead(store.Append))
	s, err := session.Seed(store.Events(), opts...)
	if err != nil {
		return nil, report, err
	}
	closers, err := s.Repair()
	report.Closers = closers
	if err != nil {
		return nil, report, err
	}
	return &Session{Session: s, Store: store}, report, nil
}

// Fork forks src at boundary (SURF-24) into dst, which must be a new,
// empty store (its header should name src as ParentSession and the
// boundary+1 as SeedLength). The child's events are written to dst.
func Fork(src *Session, boundary int64, dst Store, opts ...session.Option) (*Session, error) {
	if len(dst.Events()) != 0 {
		return nil, event.Errorf(event.CodePersistCorrupt, -1, "fork target is not empty")
	}
	child, err := src.Session.Fork(boundary)
	if err != nil {
		return nil, err
	}
	for _, e := range child.Events() {
		if err := dst.Append(e); err != nil {
			return nil, err
		}
	}
	opts = append(opts, session.WithWriteAhead(dst.Append))
	s, err := session.Seed(child.Events(), opts...)
	if err != nil {
		return nil, err
	}
	return &Session{Session: s, Store: dst}, nil
}

// lockFile takes an exclusive, non-blocking flock on f (STORE-4).
func lockFile(f *os.File, path string) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return event.Errorf(event.CodePersistLocked, -1, "%s is open by another writer", path)
		}
		return ioError(err, "lock %s", path)
	}
	return nil
}

func ioError(err error, format string, args ...any) *event.Error {
	e := event.Errorf(event.CodePersistIO, -1, format, args...)
	e.Detail += ": " + err.Error()
	e.Cause = err
	return e
}
