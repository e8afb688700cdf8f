//go:build cgo

package persist

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3" // also registers the database/sql driver "sqlite3"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/observe"
	"github.com/surfacelog/surface/impl/session"
)

// SQLiteAvailable reports whether this build has the SQLite store: it
// needs cgo (github.com/mattn/go-sqlite3), which this build has.
const SQLiteAvailable = true

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
// PRAGMA synchronous FULL; NORMAL, with FULL for the commit of every
// turn/end (SyncOnTurnEnd) or of every event but a chunk (SyncMessages),
// which syncs the WAL up to it; and OFF.
func WithSQLiteSync(p SyncPolicy) SQLiteOption { return func(s *SQLite) { s.policy = p } }

// WithSQLiteSyncWindow makes the store commit in groups (SyncGroup):
// transactions commit without syncing the WAL (PRAGMA synchronous NORMAL),
// and a sync of the WAL covers every commit of a window, which closes
// delay after its first commit or once its events hold bytes bytes of data
// (zero: DefaultSyncDelay, DefaultSyncBytes); a turn/end or a batch of
// several events commits with a sync.
func WithSQLiteSyncWindow(delay time.Duration, bytes int64) SQLiteOption {
	return func(s *SQLite) { s.policy, s.group = SyncGroup, newGroupCommit(delay, bytes) }
}

// SQLite is the session log of one session in a SQLite database (STORE-5).
type SQLite struct {
	obs    observe.Observer // nil: nothing measured
	mu     sync.Mutex
	path   string
	lock   *os.File
	db     *sql.DB
	insert *sql.Stmt
	policy SyncPolicy
	group  groupCommit // SyncGroup's open window
	header Header
	log    *event.Log // the events loaded, until Resume takes them
	loaded int        // the number of events loaded at open
	next   int64      // seq of the next event
	closed bool
	broken error // a group commit's sync failed: appends are refused
	// pending is a fork child not written yet (STORE-14): its session
	// row is written with its events, in one transaction, by Fork.
	pending bool
	// Checkpoints (STORE-18, WithSQLiteCheckpoints): every is their
	// spacing; restore is the checkpoint the store was opened from, until
	// Resume takes it, covering the first covered events; report says
	// what opening found of them.
	cpEvery  int
	cpCovers int64 // the events of the checkpoint written or opened from (0: none)
	restore  *restoreFrom
	covered  int64
	cpReport LoadReport
}

// OpenSQLite opens the database at path for writing the session
// header.ID, creating the session when the database does not have it. It
// takes the file's lock (STORE-4) and, before it writes anything, proves
// that the file is a database of this schema or a new one (STORE-5,
// STORE-9): a file that is not a SQLite database, or a database with
// other tables, is refused with persist.not_a_session and left as it was.
// A new database is initialised in one transaction.
func OpenSQLite(ctx context.Context, path string, header Header, opts ...SQLiteOption) (*SQLite, error) {
	if err := session.Cancelled(ctx, -1); err != nil {
		return nil, err
	}
	s := &SQLite{path: path, policy: SyncEveryAppend}
	for _, o := range opts {
		o(s)
	}
	if err := checkHeader(&header); err != nil {
		return nil, err
	}
	// A missing file is a new, empty database (STORE-5).
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o644)
	if err != nil {
		return nil, ioError(err, "open %s", path)
	}
	f.Close()
	fresh, err := inspectSQLite(path)
	if err != nil {
		return nil, err
	}
	// One writer per session, not per database (STORE-4): the lock is a
	// file of its own beside the database, named after the session.
	lockPath := sessionLockPath(path, header.ID)
	lock, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, ioError(err, "open %s", lockPath)
	}
	if err := lockFile(lock, path+" session "+strconv.Quote(header.ID)); err != nil {
		lock.Close()
		return nil, err
	}
	s.lock = lock
	if err := s.open(header, fresh); err != nil {
		if s.db != nil {
			s.db.Close()
		}
		lock.Close()
		return nil, err
	}
	return s, nil
}

// sessionLockPath is the lock file of session id in the database at path:
// PATH.lock-HASH, HASH the first 16 bytes of the SHA-256 of the id in hex,
// so any id makes a short, safe file name.
func sessionLockPath(path, id string) string {
	sum := sha256.Sum256([]byte(id))
	return path + ".lock-" + hex.EncodeToString(sum[:16])
}

// sqliteMagic begins every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// inspectSQLite decides, reading only, whether the file at path is a new
// database (true), one of ours (false), or neither (an error).
func inspectSQLite(path string) (fresh bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return false, ioError(err, "open %s", path)
	}
	magic := make([]byte, len(sqliteMagic))
	n, _ := io.ReadFull(f, magic)
	f.Close()
	if n == 0 {
		return true, nil // a zero-length file is an empty database
	}
	if string(magic[:n]) != sqliteMagic {
		return false, event.Errorf(event.CodePersistNotASession, -1, "%s is not a SQLite database; it was left as it is", path)
	}
	dsn, err := readOnlyDSN(path)
	if err != nil {
		return false, err
	}
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return false, ioError(err, "open %s", path)
	}
	defer db.Close()
	var version int64
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil {
		return false, event.Errorf(event.CodePersistCorrupt, -1, "%s is not a readable SQLite database: %v", path, err)
	}
	tables := map[string]bool{}
	objects := 0
	rows, err := db.Query(`SELECT type, name FROM sqlite_master`)
	if err != nil {
		return false, event.Errorf(event.CodePersistCorrupt, -1, "%s: read the schema: %v", path, err)
	}
	for rows.Next() {
		var typ, name string
		if err := rows.Scan(&typ, &name); err != nil {
			rows.Close()
			return false, event.Errorf(event.CodePersistCorrupt, -1, "%s: read the schema: %v", path, err)
		}
		objects++
		if typ == "table" {
			tables[name] = true
		}
	}
	rows.Close()
	ours := tables["sessions"] && tables["events"]
	switch {
	case version == 0 && objects == 0:
		return true, nil
	case !ours:
		return false, event.Errorf(event.CodePersistNotASession, -1, "%s is a SQLite database without the session tables (user_version %d, %d schema objects); it was left as it is", path, version, objects)
	case version != SchemaVersion:
		return false, event.Errorf(event.CodePersistSchemaVersion, -1, "%s has schema version %d, this build uses exactly %d", path, version, SchemaVersion)
	}
	for table, columns := range map[string][]string{
		"sessions": {"id", "version", "created_at", "cwd", "parent_session", "seed_length"},
		"events":   {"session_id", "seq", "type", "time", "data", "source_event_seqs", "surface_op"},
	} {
		have := map[string]bool{}
		rows, err := db.Query(`SELECT name FROM pragma_table_info(?)`, table)
		if err != nil {
			return false, event.Errorf(event.CodePersistCorrupt, -1, "%s: read table %s: %v", path, table, err)
		}
		for rows.Next() {
			var c string
			rows.Scan(&c)
			have[c] = true
		}
		rows.Close()
		for _, c := range columns {
			if !have[c] {
				return false, event.Errorf(event.CodePersistNotASession, -1, "%s: table %s has no column %s; it was left as it is", path, table, c)
			}
		}
	}
	return false, nil
}

// readOnlyDSN opens a database for reading without creating anything
// beside it. Without a WAL file there is nothing but the database to read,
// and immutable=1 keeps SQLite from creating -wal and -shm files; with
// one (a writer is live, or one crashed), the WAL must be read, through
// its existing shared-memory file.
func readOnlyDSN(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", ioError(err, "open %s", path)
	}
	if _, err := os.Stat(abs + "-wal"); err == nil {
		return "file:" + abs + "?mode=ro", nil
	}
	return "file:" + abs + "?mode=ro&immutable=1", nil
}

func (s *SQLite) open(header Header, fresh bool) error {
	sync := map[SyncPolicy]string{SyncEveryAppend: "FULL", SyncOnTurnEnd: "NORMAL", SyncMessages: "NORMAL", SyncGroup: "NORMAL", SyncNever: "OFF"}[s.policy]
	// The pragmas are in the DSN so that every connection the pool opens
	// gets them, not only the first (STORE-11).
	db, err := sql.Open("sqlite3", "file:"+s.path+"?_foreign_keys=on&_journal_mode=WAL&_synchronous="+sync+"&_busy_timeout=5000")
	if err != nil {
		return ioError(err, "open %s", s.path)
	}
	db.SetMaxOpenConns(1)
	s.db = db
	if fresh {
		if err := initSQLite(db); err != nil {
			return ioError(err, "initialise %s", s.path)
		}
	}
	if err := s.loadHeader(header); err != nil {
		return err
	}
	if s.cpEvery > 0 && !s.pending {
		if _, err := db.Exec(checkpointSchema); err != nil {
			return ioError(err, "create the checkpoints table of %s", s.path)
		}
	}
	if s.cpEvery == 0 || s.pending || !s.loadFromCheckpoint() {
		if err := s.loadEvents(); err != nil {
			return err
		}
	}
	s.next = int64(s.loaded)
	s.insert, err = db.Prepare(`INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op) VALUES (?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return ioError(err, "prepare insert")
	}
	return nil
}

// initSQLite creates the schema and stamps the version in one transaction,
// so a crash leaves a new database or a complete one.
func initSQLite(db *sql.DB) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	if _, err := tx.Exec(schema + `PRAGMA user_version=` + strconv.Itoa(SchemaVersion) + `;`); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func (s *SQLite) loadHeader(want Header) error {
	h, err := readSQLiteHeader(s.db, want.ID)
	if errors.Is(err, sql.ErrNoRows) && forkChild(want) {
		// A fork child (its header names a parent): Fork writes its row with its events (STORE-14).
		want.Version = SessionFormatVersion
		s.header, s.pending = want, true
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		want.Version = SessionFormatVersion
		if err := insertSQLiteSession(s.db, want); err != nil {
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
	s.header = h
	return nil
}

// readSQLiteHeader reads the row of session id (sql.ErrNoRows when there
// is none).
func readSQLiteHeader(db *sql.DB, id string) (Header, error) {
	var h Header
	var cwd, parent sql.NullString
	var seedLength sql.NullInt64
	err := db.QueryRow(`SELECT id, version, created_at, cwd, parent_session, seed_length FROM sessions WHERE id = ?`, id).
		Scan(&h.ID, &h.Version, &h.CreatedAt, &cwd, &parent, &seedLength)
	h.Cwd, h.ParentSession = cwd.String, parent.String
	if seedLength.Valid {
		h.SeedLength = &seedLength.Int64
	}
	return h, err
}

// insertSQLiteSession writes the row of session h.
func insertSQLiteSession(db interface {
	Exec(string, ...any) (sql.Result, error)
}, h Header) error {
	_, err := db.Exec(`INSERT INTO sessions (id, version, created_at, cwd, parent_session, seed_length) VALUES (?, ?, ?, ?, ?, ?)`,
		h.ID, h.Version, h.CreatedAt, nullString(h.Cwd), nullString(h.ParentSession), h.SeedLength)
	return err
}

func (s *SQLite) loadEvents() error {
	l, err := readSQLiteLog(s.db, s.header.ID)
	s.log, s.loaded = l, l.Len()
	return err
}

// ReadSQLite reads the events of one session from a database with the
// schema of STORE-5, without changing it.
func ReadSQLite(db *sql.DB, sessionID string) ([]event.Event, error) {
	l, err := readSQLiteLog(db, sessionID)
	return l.Events(), err
}

// readSQLiteLog reads the events of one session into an event.Log: one
// scan of each row's data, which is checked and compacted as it is read.
func readSQLiteLog(db *sql.DB, sessionID string) (*event.Log, error) {
	return readSQLiteRange(db, sessionID, 0, math.MaxInt64)
}

// readSQLiteRange is readSQLiteLog of the events with seqs from from up
// to (not including) to.
func readSQLiteRange(db *sql.DB, sessionID string, from, to int64) (*event.Log, error) {
	var d event.Decoder
	// The primary key gives the last seq at once: room for the whole log,
	// so it is not copied as it grows.
	var last sql.NullInt64
	if db.QueryRow(`SELECT MAX(seq) FROM events WHERE session_id = ?`, sessionID).Scan(&last) == nil && last.Valid && last.Int64 >= from && last.Int64-from < 1<<31 {
		d.Grow(int(min(last.Int64+1, to) - from))
	}
	// Without an envelope table no event is ignorable, and the rows are
	// read without the column that would say so.
	query := `SELECT seq, type, time, data, source_event_seqs, surface_op FROM events WHERE session_id = ? AND seq >= ? AND seq < ? ORDER BY seq`
	var envelope int
	withEnvelope := db.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'event_envelope'`).Scan(&envelope) == nil && envelope == 1
	if withEnvelope {
		query = `SELECT e.seq, e.type, e.time, e.data, e.source_event_seqs, e.surface_op, COALESCE(f.ignorable, 0)
FROM events e LEFT JOIN event_envelope f ON f.session_id = e.session_id AND f.seq = e.seq
WHERE e.session_id = ? AND e.seq >= ? AND e.seq < ? ORDER BY e.seq`
	}
	rows, err := db.Query(query, sessionID, from, to)
	if err != nil {
		return nil, ioError(err, "read events")
	}
	defer rows.Close()
	var typ, data, sources, op sql.RawBytes
	var seq, time, ignorable int64
	dest := []any{&seq, &typ, &time, &data, &sources, &op, &ignorable}
	if !withEnvelope {
		dest = dest[:6]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return d.Log(), event.Errorf(event.CodePersistCorrupt, -1, "a row of session %q: %v", sessionID, err)
		}
		// The columns hold the wire form's members; the markers decode as
		// event.Decode would, and the data is checked by the seed (STORE-3).
		d.DecodeParts(typ, seq, time, data, sources, op, ignorable != 0)
	}
	if err := rows.Err(); err != nil {
		return d.Log(), ioError(err, "read events")
	}
	return d.Log(), nil
}

// Header implements Store.
func (s *SQLite) Header() Header { return s.header }

// Events implements Store: the events loaded at open, until Resume hands
// them to the session.
// A store opened from a checkpoint reads the events it covers first; when
// they cannot be read back, Events returns nil (never the tail alone) and
// ReadEvents says why.
func (s *SQLite) Events() []event.Event {
	events, _ := s.ReadEvents()
	return events
}

// ReadEvents is Events with the error of a read back that failed: a store
// opened from a checkpoint whose covered rows can no longer be read, or
// are not the events it covers (persist.corrupt).
func (s *SQLite) ReadEvents() ([]event.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.restore == nil || s.log == nil {
		return s.log.Events(), nil
	}
	prefix, err := readSQLiteRange(s.db, s.header.ID, 0, s.covered)
	return withPrefix(prefix, err, s.covered, s.log)
}

// takeLog implements logStore.
func (s *SQLite) takeLog() *event.Log { return s.log }

// releaseLog implements logStore.
func (s *SQLite) releaseLog() { s.log = nil }

// Report implements Store.
func (s *SQLite) Report() LoadReport {
	r := s.cpReport
	r.Events = s.loaded
	return r
}

// Append implements Store: the events' INSERTs in one transaction
// (STORE-17), committed with a sync of the WAL when the policy syncs any
// of them. ctx interrupts the transaction; a cancelled one is rolled back.
func (s *SQLite) Append(ctx context.Context, events ...event.Event) error {
	if s.obs == nil || len(events) == 0 {
		_, err := s.write(ctx, events, new(time.Duration))
		return err
	}
	start := time.Now()
	var took time.Duration
	synced, err := s.write(ctx, events, &took)
	n := len(events)
	if err != nil {
		n = 0
	}
	s.obs.StoreWrite(ctx, observe.StoreWrite{Timing: observe.Since(start), Store: "sqlite", Seq: events[0].Seq, Events: n, Synced: synced, Sync: took, Err: err})
	return err
}

// setObserver implements observed.
func (s *SQLite) setObserver(o observe.Observer) { s.obs = o }

// write is Append; synced says whether it forced the events to stable
// storage, and with an observer *took is how long that took.
func (s *SQLite) write(ctx context.Context, events []event.Event, took *time.Duration) (synced bool, err error) {
	if len(events) == 0 {
		return false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	first := events[0].Seq
	if s.closed {
		return false, event.Errorf(event.CodePersistClosed, first, "store %s is closed", s.path)
	}
	if s.broken != nil {
		return false, s.broken
	}
	if s.pending {
		return false, event.Errorf(event.CodePersistForkIncomplete, first, "session %q of %s is a fork child that does not exist yet: persist.Fork writes it (STORE-14)", s.header.ID, s.path)
	}
	sync := false
	for k := range events {
		if events[k].Seq != s.next+int64(k) {
			return false, event.Errorf(event.CodePersistConflict, events[k].Seq, "session %q holds %d events: event %d is not the next one (two sessions write through one store?)", s.header.ID, s.next+int64(k), events[k].Seq)
		}
		sync = sync || s.policy.syncs(events[k].Type)
	}
	if s.policy == SyncGroup && !sync {
		var n int64
		for k := range events {
			n += int64(len(events[k].Data))
		}
		sync = len(events) > 1 || s.group.wrote(n)
	}
	if err := session.Cancelled(ctx, first); err != nil {
		return false, err
	}
	if (s.policy == SyncOnTurnEnd || s.policy == SyncMessages || s.policy == SyncGroup) && sync {
		// The commit syncs the WAL, and with it every earlier commit
		// (STORE-11); a failed sync fails this append.
		if _, err := s.db.ExecContext(ctx, `PRAGMA synchronous=FULL`); err != nil {
			return false, s.writeError(ctx, err, first, "sync before event %d", first)
		}
		defer s.db.Exec(`PRAGMA synchronous=NORMAL`)
	}
	var began time.Time
	if s.obs != nil {
		began = time.Now()
	}
	if len(events) == 1 && !events[0].Ignorable {
		e := &events[0]
		sources, op := markerColumns(e)
		_, err = s.insert.ExecContext(ctx, s.header.ID, e.Seq, string(e.Type), e.Time, string(e.Data), sources, op)
	} else {
		err = s.insertAll(ctx, events)
	}
	if err != nil {
		var se sqlite3.Error
		if errors.As(err, &se) && se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey {
			return false, &event.Error{Code: event.CodePersistConflict, Index: -1, Seq: first, Detail: "event " + strconv.FormatInt(first, 10) + " of session " + strconv.Quote(s.header.ID) + " is already stored: another writer got there first", Cause: err}
		}
		return false, s.writeError(ctx, err, first, "insert event %d", first)
	}
	if s.obs != nil && sync {
		*took = time.Since(began) // the commit that synced the WAL
	}
	s.next += int64(len(events))
	if s.policy == SyncGroup {
		if sync {
			s.group.synced()
		} else {
			s.group.arm(s.groupSync)
		}
	}
	return sync, nil
}

// groupSync closes a SyncGroup window when its delay has passed: a
// checkpoint, which syncs the WAL (every commit since the last sync) before
// it copies it into the database. A failed one leaves the store refusing
// appends: what it acknowledged since the last sync may be lost.
func (s *SQLite) groupSync() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.group.timer = nil
	if s.closed || s.broken != nil || s.group.unsynced == 0 {
		return
	}
	if _, err := s.db.Exec(`PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
		s.broken = ioError(err, "sync %s (group commit): commits since the last sync may be lost", s.path)
		return
	}
	s.group.synced()
}

// insertAll stores events in one transaction.
func (s *SQLite) insertAll(ctx context.Context, events []event.Event) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	insert := tx.StmtContext(ctx, s.insert)
	for k := range events {
		if err := insertEvent(ctx, tx, insert, s.header.ID, &events[k]); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// writeError is persist.cancelled when ctx ended (the transaction was
// rolled back), persist.io otherwise.
func (s *SQLite) writeError(ctx context.Context, err error, seq int64, format string, args ...any) error {
	if cerr := session.Cancelled(ctx, seq); cerr != nil {
		return cerr
	}
	e := ioError(err, format, args...)
	e.Seq = seq
	return e
}

// writeSeed implements seedWriter: the session row (made, or given its
// seedLength) and every inherited event in one transaction (STORE-14).
func (s *SQLite) writeSeed(ctx context.Context, h Header, events []event.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return event.Errorf(event.CodePersistClosed, 0, "store %s is closed", s.path)
	}
	if s.next != 0 {
		return event.Errorf(event.CodePersistConflict, 0, "fork target session %q is not empty", s.header.ID)
	}
	h.Version = SessionFormatVersion
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.writeError(ctx, err, 0, "begin the fork of %q", h.ID)
	}
	defer tx.Rollback()
	if s.pending {
		err = insertSQLiteSession(tx, h)
	} else {
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET seed_length = ? WHERE id = ?`, h.SeedLength, h.ID)
	}
	if err != nil {
		return s.writeError(ctx, err, 0, "write the fork child %q", h.ID)
	}
	insert := tx.StmtContext(ctx, s.insert)
	for k := range events {
		e := &events[k]
		if err := insertEvent(ctx, tx, insert, h.ID, e); err != nil {
			return s.writeError(ctx, err, e.Seq, "write event %d of the fork child %q", e.Seq, h.ID)
		}
		if forkHook != nil {
			forkHook(k)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.writeError(ctx, err, 0, "commit the fork child %q", h.ID)
	}
	if forkHook != nil {
		forkHook(len(events))
	}
	s.header, s.pending, s.next = h, false, int64(len(events))
	return nil
}

// envelopeSchema is the table of envelope members beyond the seed system's
// columns (STORE-5): one row per event marked "ignorable": true. It is
// created with the first such event, so a database that never holds one
// keeps exactly the seed system's schema.
const envelopeSchema = `CREATE TABLE IF NOT EXISTS event_envelope (
  session_id TEXT NOT NULL,
  seq        INTEGER NOT NULL,
  ignorable  INTEGER NOT NULL,
  PRIMARY KEY (session_id, seq),
  FOREIGN KEY (session_id, seq) REFERENCES events(session_id, seq) ON DELETE CASCADE
) STRICT`

// insertEvent stores e of session id in tx through insert (the events
// row), and for an event marked ignorable its envelope row too.
func insertEvent(ctx context.Context, tx *sql.Tx, insert *sql.Stmt, id string, e *event.Event) error {
	sources, op := markerColumns(e)
	if e.Ignorable {
		if _, err := tx.ExecContext(ctx, envelopeSchema); err != nil {
			return err
		}
	}
	if _, err := insert.ExecContext(ctx, id, e.Seq, string(e.Type), e.Time, string(e.Data), sources, op); err != nil {
		return err
	}
	if e.Ignorable {
		if _, err := tx.ExecContext(ctx, `INSERT INTO event_envelope (session_id, seq, ignorable) VALUES (?, ?, 1)`, id, e.Seq); err != nil {
			return err
		}
	}
	return nil
}

// Sync implements Store: a full WAL checkpoint.
func (s *SQLite) Sync(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(FULL)`); err != nil {
		return s.writeError(ctx, err, -1, "checkpoint %s", s.path)
	}
	s.group.synced()
	return nil
}

// Close implements Store: it closes the database (committed
// transactions are durable under the sync policy already) and releases
// the session's lock; ctx is not needed for either.
func (s *SQLite) Close(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	defer detach(s)
	if s.policy == SyncGroup && s.group.unsynced > 0 {
		s.db.Exec(`PRAGMA wal_checkpoint(PASSIVE)`) // the open window's commits; closing checkpoints too
	}
	s.group.synced()
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
	detach(s)
}

// SQLiteReader reads the sessions of a SQLite database without locking or
// changing it (conformance validate uses it). Opening checks the file as
// OpenSQLite does (STORE-5, STORE-9), reading only.
type SQLiteReader struct {
	db   *sql.DB
	path string
}

// OpenSQLiteReader opens the database at path for reading. A new (empty)
// database has no sessions.
func OpenSQLiteReader(path string) (*SQLiteReader, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, ioError(err, "open %s", path)
	}
	fresh, err := inspectSQLite(path)
	if err != nil {
		return nil, err
	}
	r := &SQLiteReader{path: path}
	if fresh {
		return r, nil
	}
	dsn, err := readOnlyDSN(path)
	if err != nil {
		return nil, err
	}
	if r.db, err = sql.Open("sqlite3", dsn); err != nil {
		return nil, ioError(err, "open %s", path)
	}
	return r, nil
}

// Sessions returns the ids of the database's sessions, sorted.
func (r *SQLiteReader) Sessions() ([]string, error) {
	if r.db == nil {
		return nil, nil
	}
	rows, err := r.db.Query(`SELECT id FROM sessions ORDER BY id`)
	if err != nil {
		return nil, ioError(err, "list the sessions of %s", r.path)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, event.Errorf(event.CodePersistCorrupt, -1, "%s: a session id: %v", r.path, err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// Events reads the events of one session (ReadSQLite).
func (r *SQLiteReader) Events(sessionID string) ([]event.Event, error) {
	if r.db == nil {
		return nil, nil
	}
	return ReadSQLite(r.db, sessionID)
}

// Header reads the header of one session.
func (r *SQLiteReader) Header(sessionID string) (Header, error) {
	if r.db == nil {
		return Header{}, event.Errorf(event.CodePersistNotASession, -1, "%s has no session %q", r.path, sessionID)
	}
	h, err := readSQLiteHeader(r.db, sessionID)
	if err != nil {
		return h, event.Errorf(event.CodePersistCorrupt, -1, "%s: session %q: %v", r.path, sessionID, err)
	}
	return h, nil
}

// Close closes the reader.
func (r *SQLiteReader) Close() error {
	if r.db == nil {
		return nil
	}
	return r.db.Close()
}

// unwritten implements seedWriter.
func (s *SQLite) unwritten() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending
}
