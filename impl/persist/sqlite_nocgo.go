//go:build !cgo

package persist

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

// SQLiteAvailable reports whether this build has the SQLite store: it
// needs cgo (github.com/mattn/go-sqlite3). This build has not.
const SQLiteAvailable = false

// SchemaVersion is SCHEMA_VERSION, kept in PRAGMA user_version (STORE-5).
const SchemaVersion = 4

// errNoSQLite is the error of every SQLite entry point in a build without
// cgo. It matches errors.ErrUnsupported.
func errNoSQLite(path string) error {
	e := event.Errorf(event.CodePersistIO, -1, "%s: this program was built without cgo, and the SQLite store needs it (build with CGO_ENABLED=1 and a C compiler)", path)
	e.Cause = errors.ErrUnsupported
	return e
}

// SQLiteOption configures a SQLite store.
type SQLiteOption func(*SQLite)

// WithSQLiteSync sets the sync policy.
func WithSQLiteSync(p SyncPolicy) SQLiteOption { return func(*SQLite) {} }

// WithSQLiteSyncWindow is accepted and does nothing without cgo.
func WithSQLiteSyncWindow(delay time.Duration, bytes int64) SQLiteOption { return func(*SQLite) {} }

// SQLite is the SQLite store; in a build without cgo it cannot be opened.
type SQLite struct {
	path string
	db   *sql.DB
}

// OpenSQLite fails in a build without cgo.
func OpenSQLite(ctx context.Context, path string, header Header, opts ...SQLiteOption) (*SQLite, error) {
	return nil, errNoSQLite(path)
}

func (s *SQLite) Header() Header                               { return Header{} }
func (s *SQLite) Events() []event.Event                        { return nil }
func (s *SQLite) ReadEvents() ([]event.Event, error)           { return nil, errNoSQLite(s.path) }
func (s *SQLite) Report() LoadReport                           { return LoadReport{} }
func (s *SQLite) Append(context.Context, ...event.Event) error { return errNoSQLite(s.path) }
func (s *SQLite) Sync(context.Context) error                   { return errNoSQLite(s.path) }
func (s *SQLite) Close(context.Context) error                  { return nil }
func (s *SQLite) crash()                                       {}
func ReadSQLite(*sql.DB, string) ([]event.Event, error)        { return nil, errNoSQLite("SQLite") }

// SQLiteReader reads SQLite databases; in a build without cgo it cannot
// be opened.
type SQLiteReader struct{}

// OpenSQLiteReader fails in a build without cgo.
func OpenSQLiteReader(path string) (*SQLiteReader, error) { return nil, errNoSQLite(path) }

func (r *SQLiteReader) Sessions() ([]string, error) { return nil, errNoSQLite("SQLite") }
func (r *SQLiteReader) Events(sessionID string) ([]event.Event, error) {
	return nil, errNoSQLite("SQLite")
}
func (r *SQLiteReader) Header(sessionID string) (Header, error) {
	return Header{}, errNoSQLite("SQLite")
}
func (r *SQLiteReader) Close() error { return nil }

// WithSQLiteCheckpoints is WithSQLiteCheckpoints of a cgo build.
func WithSQLiteCheckpoints(every int) SQLiteOption { return func(*SQLite) {} }

// Checkpoint finds no checkpoint in a build without cgo.
func (r *SQLiteReader) Checkpoint(id string, events []event.Event, opts ...session.Option) (CheckpointCheck, error) {
	return CheckpointCheck{}, nil
}
