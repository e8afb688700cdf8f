package persist

import (
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"sync"

	_ "github.com/mattn/go-sqlite3" // the database/sql driver "sqlite3"

	"github.com/surfacelog/surface/impl/event"
)

// SchemaVersion is SCHEMA_VERSION, kept in PRAGMA user_version (STORE-5).
const SchemaVersion = 4

const schema = `
CREATE TABLE IF NOT EXISTS sessions (
  id             TEXT PRIMARY KEY,
  version        INTEGER NOT NULL,
  created_at     INTEGER NOT NULL,
  cwd            TEXT,
  parent_session TEXT,
  seed_length    INTEGER
) STRICT;
CREATE TABLE IF NOT EXISTS events (
  session_id        TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  seq               INTEGER NOT NULL,
  type              TEXT NOT NULL,
  time              INTEGER NOT NULL,
  data              TEXT NOT NULL,
  source_event_seqs TEXT,
  surface_op        TEXT,
  PRIMARY KEY (session_id, seq)
) STRICT;`

// SQLiteOption configures a SQLite store.
type SQLiteOption func(*SQLite)

// WithSQLiteSync sets the sync policy (default SyncEveryAppend): it maps to
// PRAGMA synchronous FULL, NORMAL (WAL syncs at checkpoints and on Sync)
// and OFF.
func WithSQLiteSync(p SyncPolicy) SQLiteOption { return func(s *SQLite) { s.policy = p } }

// SQLite is the session log of one session in a SQLite database (STORE-5).
type SQLite struct {
	mu     sync.Mutex
	path   string
	lock   *os.File
	db     *sql.DB
	insert *sql.Stmt
	policy SyncPolicy
	header Header
	events []event.Event
	closed bool
}

// OpenSQLite opens the database at path (creating it when new) for
// writing the session header.ID, creating the session when the database
// does not have it. It takes the file's lock (STORE-4) and checks the
// schema version before changing anything (STORE-5).
func OpenSQLite(path string, header Header, opts ...SQLiteOption) (*SQLite, error) {
	s := &SQLite{path: path, policy: SyncEveryAppend}
	for _, o := range opts {
		o(s)
	}
	lock, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, ioError(err, "open %s", path)
	}
	if err := lockFile(lock, path); err != nil {
		lock.Close()
		return nil, err
	}
	s.lock = lock
	if err := s.open(header); err != nil {
		if s.db != nil {
			s.db.Close()
		}
		lock.Close()
		return nil, err
	}
	return s, nil
}

func (s *SQLite) open(header Header) error {
	db, err := sql.Open("sqlite3", "file:"+s.path+"?_foreign_keys=on")
	if err != nil {
		return ioError(err, "open %s", s.path)
	}
	db.SetMaxOpenConns(1)
	s.db = db
	var version int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil {
		return event.Errorf(event.CodePersistCorrupt, -1, "%s is not a readable SQLite database: %v", s.path, err)
	}
	if version != 0 && version != SchemaVersion {
		return event.Errorf(event.CodePersistSchemaVersion, -1, "%s has schema version %d, this build uses %d", s.path, version, SchemaVersion)
	}
	sync := map[SyncPolicy]string{SyncEveryAppend: "FULL", SyncOnTurnEnd: "NORMAL", SyncNever: "OFF"}[s.policy]
	for _, q := range []string{`PRAGMA journal_mode=WAL`, `PRAGMA synchronous=` + sync, schema, `PRAGMA user_version=` + strconv.Itoa(SchemaVersion)} {
		if _, err := db.Exec(q); err != nil {
			return ioError(err, "prepare %s", s.path)
		}
	}
	if err := s.loadHeader(header); err != nil {
		return err
	}
	if err := s.loadEvents(); err != nil {
		return err
	}
	s.insert, err = db.Prepare(`INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op) VALUES (?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return ioError(err, "prepare insert")
	}
	return nil
}

func (s *SQLite) loadHeader(want Header) error {
	var h Header
	var cwd, parent sql.NullString
	var seedLength sql.NullInt64
	err := s.db.QueryRow(`SELECT id, version, created_at, cwd, parent_session, seed_length FROM sessions WHERE id = ?`, want.ID).
		Scan(&h.ID, &h.Version, &h.CreatedAt, &cwd, &parent, &seedLength)
	if errors.Is(err, sql.ErrNoRows) {
		want.Version = SessionFormatVersion
		_, err = s.db.Exec(`INSERT INTO sessions (id, version, created_at, cwd, parent_session, seed_length) VALUES (?, ?, ?, ?, ?, ?)`,
			want.ID, want.Version, want.CreatedAt, nullString(want.Cwd), nullString(want.ParentSession), want.SeedLength)
		if err != nil {
			return ioError(err, "create session %q", want.ID)
		}
		s.header = want
		return nil
	}
	if err != nil {
		return event.Errorf(event.CodePersistCorrupt, -1, "%s: session %q: %v", s.path, want.ID, err)
	}
	if h.Version != SessionFormatVersion {
		return event.Errorf(event.CodePersistFormatVersion, -1, "session %q has format version %d, this build reads %d", h.ID, h.Version, SessionFormatVersion)
	}
	h.Cwd, h.ParentSession = cwd.String, parent.String
	if seedLength.Valid {
		h.SeedLength = &seedLength.Int64
	}
	s.header = h
	return nil
}

func nullString(v string) any {
	if v == "" {
		return nil
	}
	return v
}

func (s *SQLite) loadEvents() error {
	events, err := ReadSQLite(s.db, s.header.ID)
	s.events = events
	return err
}

// ReadSQLite reads the events of one session from a database with the
// schema of STORE-5, without changing it.
func ReadSQLite(db *sql.DB, sessionID string) ([]event.Event, error) {
	rows, err := db.Query(`SELECT seq, type, time, data, source_event_seqs, surface_op FROM events WHERE session_id = ? ORDER BY seq`, sessionID)
	if err != nil {
		return nil, ioError(err, "read events")
	}
	defer rows.Close()
	var events []event.Event
	for rows.Next() {
		var e event.Event
		var typ string
		var data []byte
		var sources, op sql.RawBytes
		if err := rows.Scan(&e.Seq, &typ, &e.Time, &data, &sources, &op); err != nil {
			return nil, event.Errorf(event.CodePersistCorrupt, -1, "a row of session %q: %v", sessionID, err)
		}
		// The columns hold the wire form's members; the markers decode as
		// event.Decode would, and the data is checked by the seed (STORE-3).
		e.Type, e.Data = event.Type(typ), data
		e.Op, e.Sources = event.DecodeMarkers(op, sources)
		if op != nil && len(op) == 0 {
			e.Op = event.SurfaceOp{Kind: event.OpMalformed}
		}
		if sources != nil && len(sources) == 0 {
			e.Sources = []int64{-1}
		}
		events = append(events, e)
	}
	if err := rows.Err(); err != nil {
		return nil, ioError(err, "read events")
	}
	return events, nil
}

// Header implements Store.
func (s *SQLite) Header() Header { return s.header }

// Events implements Store.
func (s *SQLite) Events() []event.Event { return s.events }

// Report implements Store.
func (s *SQLite) Report() LoadReport { return LoadReport{Events: len(s.events)} }

// Append implements Store: one INSERT in its own transaction.
func (s *SQLite) Append(e event.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return event.Errorf(event.CodePersistClosed, e.Seq, "store %s is closed", s.path)
	}
	sources, op := markerColumns(&e)
	if _, err := s.insert.Exec(s.header.ID, e.Seq, string(e.Type), e.Time, string(e.Data), sources, op); err != nil {
		return ioError(err, "insert event %d", e.Seq)
	}
	return nil
}

// markerColumns returns the source_event_seqs and surface_op columns of e:
// their wire forms as text, or NULL when absent.
func markerColumns(e *event.Event) (sources, op any) {
	if e.Sources != nil {
		b, _ := json.Marshal(e.Sources)
		sources = string(b)
	}
	if m := event.MarkerJSON(e.Op); m != nil {
		op = string(m)
	}
	return sources, op
}

// Sync implements Store: a full WAL checkpoint.
func (s *SQLite) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.db.Exec(`PRAGMA wal_checkpoint(FULL)`); err != nil {
		return ioError(err, "checkpoint %s", s.path)
	}
	return nil
}

// Close implements Store.
func (s *SQLite) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	err := errors.Join(s.insert.Close(), s.db.Close(), s.lock.Close())
	if err != nil {
		return ioError(err, "close %s", s.path)
	}
	return nil
}

// crash drops the store without a checkpoint, releasing the lock. For tests.
func (s *SQLite) crash() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.insert.Close()
	s.db.Close()
	s.lock.Close()
}
