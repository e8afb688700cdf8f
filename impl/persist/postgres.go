package persist

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/observe"
	"github.com/surfacelog/surface/impl/session"
)

// PostgresSchemaVersion is the version of the Postgres store's tables,
// kept in the table schema_version of its Postgres schema. A database
// holding another version is rejected on open (persist.schema_version):
// bump and reject, no migration, as for SQLite (STORE-5, STORE-13).
const PostgresSchemaVersion = 1

// pgTables creates the store's tables in the Postgres schema %s. They
// mirror the SQLite schema (STORE-5), with the ignorable envelope member as
// a column of events.
const pgTables = `
CREATE TABLE %[1]s.schema_version (version INTEGER NOT NULL);
CREATE TABLE %[1]s.sessions (
  id             TEXT PRIMARY KEY,
  version        INTEGER NOT NULL,
  created_at     BIGINT NOT NULL,
  cwd            TEXT,
  parent_session TEXT,
  seed_length    BIGINT
);
CREATE TABLE %[1]s.events (
  session_id        TEXT NOT NULL REFERENCES %[1]s.sessions(id) ON DELETE CASCADE,
  seq               BIGINT NOT NULL,
  type              TEXT NOT NULL,
  time              BIGINT NOT NULL,
  data              TEXT NOT NULL,
  source_event_seqs TEXT,
  surface_op        TEXT,
  ignorable         BOOLEAN NOT NULL DEFAULT FALSE,
  PRIMARY KEY (session_id, seq)
);`

// PostgresOption configures a Postgres store.
type PostgresOption func(*Postgres)

// WithPostgresSchema sets the Postgres schema (namespace) of the store's
// tables (default "surface").
func WithPostgresSchema(name string) PostgresOption { return func(p *Postgres) { p.schema = name } }

// Postgres is the session log of one session in a PostgreSQL database,
// shared by many writers on many machines (STORE-13): a session is held by
// one writer at a time through a session-level advisory lock on the
// store's connection, every append is one transaction (acknowledged once
// committed, with the server's synchronous_commit), and the primary key
// (session_id, seq) makes a writer that raced another fail with
// persist.conflict, so nothing is lost or interleaved.
type Postgres struct {
	obs    observe.Observer // nil: nothing measured
	mu     sync.Mutex
	url    string
	schema string
	conn   *pgx.Conn
	header Header
	log    *event.Log
	loaded int
	next   int64
	closed bool
	broken error // set when an append's outcome is unknown
	// pending is a fork child not written yet (STORE-14): its session
	// row is written with its events, in one transaction, by Fork.
	pending bool
	// Checkpoints (STORE-18, WithPostgresCheckpoints), as in the SQLite
	// store.
	cpEvery  int
	cpCovers int64 // the events of the checkpoint written or opened from (0: none)
	restore  *restoreFrom
	covered  int64
	cpReport LoadReport
}

// pgTimeout bounds a statement whose context has no deadline, so that a
// silent network cannot hang a store for ever.
const pgTimeout = 30 * time.Second

func pgCtx(parent context.Context) (context.Context, context.CancelFunc) {
	if _, ok := parent.Deadline(); ok {
		return context.WithCancel(parent)
	}
	return context.WithTimeout(parent, pgTimeout)
}

// OpenPostgres connects to the database at url (a libpq URL or DSN) and
// opens the session header.ID for writing, creating the store's tables
// when the schema does not exist and the session when the database does
// not have it. It takes the session's lock (STORE-4, STORE-13): a second
// writer, anywhere, gets persist.locked until this store is closed. It
// reads the session's events in one streamed query.
//
// When ctx ends first, OpenPostgres fails with persist.cancelled and
// leaves nothing open.
func OpenPostgres(parent context.Context, url string, header Header, opts ...PostgresOption) (*Postgres, error) {
	if err := checkHeader(&header); err != nil {
		return nil, err
	}
	if err := session.Cancelled(parent, -1); err != nil {
		return nil, err
	}
	ctx, cancel := pgCtx(parent)
	defer cancel()
	p, err := dialPostgres(ctx, url, opts)
	if err != nil {
		if cerr := session.Cancelled(parent, -1); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	if err := p.open(ctx, header); err != nil {
		p.conn.Close(context.Background())
		if cerr := session.Cancelled(parent, -1); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	return p, nil
}

// dialPostgres connects to url and returns a Postgres on that connection
// with opts applied (schema "surface" unless one is given).
func dialPostgres(ctx context.Context, url string, opts []PostgresOption) (*Postgres, error) {
	p := &Postgres{url: url, schema: "surface"}
	for _, o := range opts {
		o(p)
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, ioError(err, "connect to the Postgres database")
	}
	// A cancelled statement is cancelled on the server (a cancel request),
	// so it is rolled back and the connection stays usable; only when the
	// server does not answer that is the connection dropped (STORE-16).
	cfg.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: 5 * time.Second}
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, ioError(err, "connect to the Postgres database")
	}
	p.conn = conn
	return p, nil
}

func (p *Postgres) ident() string { return pgx.Identifier{p.schema}.Sanitize() }

func (p *Postgres) open(ctx context.Context, header Header) error {
	if err := ensurePgSchema(ctx, p.conn, p.schema); err != nil {
		return err
	}
	var got bool
	if err := p.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, p.schema+"/"+header.ID).Scan(&got); err != nil {
		return ioError(err, "lock session %q", header.ID)
	}
	if !got {
		return event.Errorf(event.CodePersistLocked, -1, "session %q is held by another writer", header.ID)
	}
	if err := p.loadHeader(ctx, header); err != nil {
		return err
	}
	if p.cpEvery > 0 && !p.pending {
		if _, err := p.conn.Exec(ctx, sprintf(pgCheckpoints, p.ident())); err != nil {
			return ioError(err, "create the checkpoints table")
		}
		if p.loadFromCheckpoint(ctx) {
			p.next = int64(p.loaded)
			return nil
		}
	}
	l, err := readPostgresLog(ctx, p.conn, p.schema, p.header.ID)
	p.log, p.loaded, p.next = l, l.Len(), int64(l.Len())
	return err
}

// ensurePgSchema creates the store's schema and tables when the schema
// does not exist, and otherwise checks their version (STORE-13).
func ensurePgSchema(ctx context.Context, conn *pgx.Conn, schema string) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return ioError(err, "begin")
	}
	defer tx.Rollback(ctx)
	// Writers racing to create the schema wait for each other.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('surface schema ' || $1, 0))`, schema); err != nil {
		return ioError(err, "lock the schema")
	}
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&exists); err != nil {
		return ioError(err, "look up schema %q", schema)
	}
	id := pgx.Identifier{schema}.Sanitize()
	empty := false
	if exists {
		// A schema made for the store (by an administrator who grants
		// this user only that schema, say) and still empty is taken.
		var objects int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1`, schema).Scan(&objects); err != nil {
			return ioError(err, "read schema %q", schema)
		}
		empty = objects == 0
	}
	if !exists || empty {
		if !exists {
			if _, err := tx.Exec(ctx, `CREATE SCHEMA `+id); err != nil {
				return ioError(err, "create schema %q", schema)
			}
		}
		if _, err := tx.Exec(ctx, sprintf(pgTables, id)); err != nil {
			return ioError(err, "create the tables")
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+id+`.schema_version (version) VALUES ($1)`, PostgresSchemaVersion); err != nil {
			return ioError(err, "stamp the schema version")
		}
		if err := tx.Commit(ctx); err != nil {
			return ioError(err, "commit the schema")
		}
		return nil
	}
	var tables int
	if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = $1 AND table_name IN ('schema_version', 'sessions', 'events')`, schema).Scan(&tables); err != nil {
		return ioError(err, "read schema %q", schema)
	}
	if tables != 3 {
		return event.Errorf(event.CodePersistNotASession, -1, "Postgres schema %q exists without the session tables; it was left as it is (choose another with WithPostgresSchema)", schema)
	}
	var version int64
	if err := tx.QueryRow(ctx, `SELECT version FROM `+id+`.schema_version`).Scan(&version); err != nil {
		return event.Errorf(event.CodePersistSchemaVersion, -1, "Postgres schema %q has no readable version: %v", schema, err)
	}
	if version != PostgresSchemaVersion {
		return event.Errorf(event.CodePersistSchemaVersion, -1, "Postgres schema %q has version %d, this build uses exactly %d", schema, version, PostgresSchemaVersion)
	}
	return nil
}

func sprintf(format, id string) string {
	out := make([]byte, 0, len(format)+8*len(id))
	for i := 0; i < len(format); i++ {
		if i+4 < len(format) && format[i:i+5] == "%[1]s" {
			out = append(out, id...)
			i += 4
			continue
		}
		out = append(out, format[i])
	}
	return string(out)
}

func (p *Postgres) loadHeader(ctx context.Context, want Header) error {
	var h Header
	var cwd, parent *string
	var seedLength *int64
	err := p.conn.QueryRow(ctx, `SELECT id, version, created_at, cwd, parent_session, seed_length FROM `+p.ident()+`.sessions WHERE id = $1`, want.ID).
		Scan(&h.ID, &h.Version, &h.CreatedAt, &cwd, &parent, &seedLength)
	if errors.Is(err, pgx.ErrNoRows) && forkChild(want) {
		// A fork child (its header names a parent): Fork writes its row with its events (STORE-14).
		want.Version = SessionFormatVersion
		p.header, p.pending = want, true
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		want.Version = SessionFormatVersion
		if err := p.insertSession(ctx, p.conn, want); err != nil {
			return ioError(err, "create session %q", want.ID)
		}
		p.header = want
		return nil
	}
	if err != nil {
		return ioError(err, "read session %q", want.ID)
	}
	if h.Version != SessionFormatVersion {
		return event.Errorf(event.CodePersistFormatVersion, -1, "session %q has format version %d, this build reads %d", h.ID, h.Version, SessionFormatVersion)
	}
	if cwd != nil {
		h.Cwd = *cwd
	}
	if parent != nil {
		h.ParentSession = *parent
	}
	h.SeedLength = seedLength
	p.header = h
	return nil
}

// readPostgresLog reads one session's events in one streamed query into an
// event.Log (one scan of each row's data).
func readPostgresLog(ctx context.Context, conn *pgx.Conn, schema, sessionID string) (*event.Log, error) {
	return readPostgresRange(ctx, conn, schema, sessionID, 0, 1<<62)
}

// readPostgresRange is readPostgresLog of the events with seqs from from
// up to (not including) to.
func readPostgresRange(ctx context.Context, conn *pgx.Conn, schema, sessionID string, from, to int64) (*event.Log, error) {
	var d event.Decoder
	id := pgx.Identifier{schema}.Sanitize()
	var last *int64
	if conn.QueryRow(ctx, `SELECT MAX(seq) FROM `+id+`.events WHERE session_id = $1`, sessionID).Scan(&last) == nil && last != nil && *last >= from && *last-from < 1<<31 {
		d.Grow(int(min(*last+1, to) - from))
	}
	rows, err := conn.Query(ctx, `SELECT seq, type, time, data, source_event_seqs, surface_op, ignorable FROM `+id+`.events WHERE session_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq`, sessionID, from, to)
	if err != nil {
		return d.Log(), ioError(err, "read the events of session %q", sessionID)
	}
	defer rows.Close()
	for rows.Next() {
		vals := rows.RawValues() // text columns in text format; shared until Next
		var seq, t int64
		var ignorable bool
		if err := rows.Scan(&seq, nil, &t, nil, nil, nil, &ignorable); err != nil {
			return d.Log(), event.Errorf(event.CodePersistCorrupt, -1, "a row of session %q: %v", sessionID, err)
		}
		d.DecodeParts(vals[1], seq, t, vals[3], vals[4], vals[5], ignorable)
	}
	if err := rows.Err(); err != nil {
		return d.Log(), ioError(err, "read the events of session %q", sessionID)
	}
	return d.Log(), nil
}

// Header implements Store.
func (p *Postgres) Header() Header { return p.header }

// Events implements Store: the events loaded at open, until Resume hands
// them to the session.
// A store opened from a checkpoint reads the events it covers first; when
// they cannot be read back, Events returns nil (never the tail alone) and
// ReadEvents says why.
func (p *Postgres) Events() []event.Event {
	events, _ := p.ReadEvents()
	return events
}

// ReadEvents is Events with the error of a read back that failed: a store
// opened from a checkpoint whose covered rows can no longer be read, or
// are not the events it covers (persist.corrupt).
func (p *Postgres) ReadEvents() ([]event.Event, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.restore == nil || p.log == nil {
		return p.log.Events(), nil
	}
	ctx, cancel := pgCtx(context.Background())
	defer cancel()
	prefix, err := readPostgresRange(ctx, p.conn, p.schema, p.header.ID, 0, p.covered)
	return withPrefix(prefix, err, p.covered, p.log)
}

func (p *Postgres) takeLog() *event.Log { return p.log }
func (p *Postgres) releaseLog()         { p.log = nil }

func (p *Postgres) location(index int) string {
	return "Postgres session " + strconv.Quote(p.header.ID) + ", row of seq " + strconv.Itoa(index)
}

// Report implements Store.
func (p *Postgres) Report() LoadReport {
	r := p.cpReport
	r.Events = p.loaded
	return r
}

// Append implements Store: one INSERT for one event, one transaction for
// several (STORE-17), acknowledged once committed. When another writer
// stored a seq first, the primary key refuses it: persist.conflict. When
// ctx ends first, the statement is cancelled on the server and rolled
// back: persist.cancelled, and the store goes on. When the outcome cannot
// be known (the connection broke, or the server did not answer the
// cancel), the store refuses further appends (persist.closed, or
// persist.cancelled when ctx ended): reopen it to read what was committed.
func (p *Postgres) Append(parent context.Context, events ...event.Event) error {
	if p.obs == nil || len(events) == 0 {
		_, err := p.write(parent, events, new(time.Duration))
		return err
	}
	start := time.Now()
	var took time.Duration
	synced, err := p.write(parent, events, &took)
	n := len(events)
	if err != nil {
		n = 0
	}
	p.obs.StoreWrite(parent, observe.StoreWrite{Timing: observe.Since(start), Store: "postgres", Seq: events[0].Seq, Events: n, Synced: synced, Sync: took, Err: err})
	return err
}

// setObserver implements observed.
func (p *Postgres) setObserver(o observe.Observer) { p.obs = o }

// write is Append; synced says whether it forced the events to stable
// storage, and with an observer *took is how long that took.
func (p *Postgres) write(parent context.Context, events []event.Event, took *time.Duration) (synced bool, err error) {
	if len(events) == 0 {
		return false, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	first := events[0].Seq
	if err := closedError(p.closed, p.broken, first, fmt.Sprintf("Postgres store of session %q", p.header.ID)); err != nil {
		return false, err
	}
	if p.pending {
		return false, event.Errorf(event.CodePersistForkIncomplete, first, "session %q is a fork child that does not exist yet: persist.Fork writes it (STORE-14)", p.header.ID)
	}
	for k := range events {
		if events[k].Seq != p.next+int64(k) {
			return false, event.Errorf(event.CodePersistConflict, events[k].Seq, "session %q holds %d events: event %d is not the next one (two sessions write through one store?)", p.header.ID, p.next+int64(k), events[k].Seq)
		}
	}
	if err := session.Cancelled(parent, first); err != nil {
		return false, err
	}
	ctx, cancel := pgCtx(parent)
	defer cancel()
	insert := `INSERT INTO ` + p.ident() + `.events (session_id, seq, type, time, data, source_event_seqs, surface_op, ignorable) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`
	var began time.Time
	if p.obs != nil {
		began = time.Now()
		defer func() { *took = time.Since(began) }()
	}
	if len(events) == 1 {
		e := &events[0]
		sources, op := markerColumns(e)
		_, err = p.conn.Exec(ctx, insert, p.header.ID, e.Seq, string(e.Type), e.Time, string(e.Data), sources, op, e.Ignorable)
	} else {
		err = p.insertBatch(ctx, insert, events)
	}
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23505" { // unique_violation
			return false, &event.Error{Code: event.CodePersistConflict, Index: -1, Seq: first, Detail: "event " + strconv.FormatInt(first, 10) + " of session " + strconv.Quote(p.header.ID) + " is already stored: another writer got there first", Cause: err}
		}
		if !p.conn.IsClosed() && (pgconn.SafeToRetry(err) || errors.As(err, &pe)) {
			// Not committed: the statement failed, or was cancelled.
			if cerr := session.Cancelled(parent, first); cerr != nil {
				return false, cerr
			}
			return false, ioError(err, "insert event %d", first)
		}
		// The connection is gone, or the outcome cannot be known: the
		// events may or may not be committed, and the store takes no more
		// appends. Reopen it: Resume reads what was committed.
		p.broken = err
		code := event.CodePersistClosed
		if parent.Err() != nil {
			code = event.CodePersistCancelled
		}
		out := event.Errorf(code, first, "insert event %d of session %q: the outcome is unknown and the store takes no more appends (reopen it and Resume): %v", first, p.header.ID, err)
		out.Cause = err
		return false, out
	}
	p.next += int64(len(events))
	return true, nil
}

// insertBatch inserts events in one transaction. A failed transaction is
// rolled back with a context of its own, so that a cancelled ctx leaves
// the connection usable.
func (p *Postgres) insertBatch(ctx context.Context, insert string, events []event.Event) error {
	tx, err := p.conn.Begin(ctx)
	if err != nil {
		return err
	}
	var b pgx.Batch
	for k := range events {
		e := &events[k]
		sources, op := markerColumns(e)
		b.Queue(insert, p.header.ID, e.Seq, string(e.Type), e.Time, string(e.Data), sources, op, e.Ignorable)
	}
	if err = tx.SendBatch(ctx, &b).Close(); err == nil {
		return tx.Commit(ctx)
	}
	rctx, cancel := context.WithTimeout(context.Background(), pgTimeout)
	defer cancel()
	_ = tx.Rollback(rctx)
	return err
}

// writeSeed implements seedWriter: the session row (made, or given its
// seedLength) and every inherited event in one transaction (STORE-14).
func (p *Postgres) writeSeed(parent context.Context, h Header, events []event.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := closedError(p.closed, p.broken, 0, fmt.Sprintf("Postgres store of session %q", p.header.ID)); err != nil {
		return err
	}
	if p.next != 0 {
		return event.Errorf(event.CodePersistConflict, 0, "fork target session %q is not empty", h.ID)
	}
	h.Version = SessionFormatVersion
	fail := func(err error, seq int64, format string, args ...any) error {
		if !p.conn.IsClosed() {
			if cerr := session.Cancelled(parent, seq); cerr != nil {
				return cerr // rolled back: no child
			}
		}
		return p.connError(err, seq, format, args...)
	}
	ctx, cancel := pgCtx(parent)
	defer cancel()
	tx, err := p.conn.Begin(ctx)
	if err != nil {
		return fail(err, 0, "begin the fork of %q", h.ID)
	}
	defer tx.Rollback(context.Background())
	if p.pending {
		err = p.insertSession(ctx, tx, h)
	} else {
		_, err = tx.Exec(ctx, `UPDATE `+p.ident()+`.sessions SET seed_length = $1 WHERE id = $2`, h.SeedLength, h.ID)
	}
	if err != nil {
		return fail(err, 0, "write the fork child %q", h.ID)
	}
	// One batch: the events go to the server together, in the
	// transaction.
	var b pgx.Batch
	for k := range events {
		e := &events[k]
		sources, op := markerColumns(e)
		b.Queue(`INSERT INTO `+p.ident()+`.events (session_id, seq, type, time, data, source_event_seqs, surface_op, ignorable) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			h.ID, e.Seq, string(e.Type), e.Time, string(e.Data), sources, op, e.Ignorable)
	}
	br := tx.SendBatch(ctx, &b)
	for k := range events {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return fail(err, events[k].Seq, "write event %d of the fork child %q", events[k].Seq, h.ID)
		}
		if forkHook != nil {
			forkHook(k)
		}
	}
	if err := br.Close(); err != nil {
		return fail(err, 0, "write the fork child %q", h.ID)
	}
	if err := tx.Commit(ctx); err != nil {
		return fail(err, 0, "commit the fork child %q", h.ID)
	}
	if forkHook != nil {
		forkHook(len(events))
	}
	p.header, p.pending, p.next = h, false, int64(len(events))
	return nil
}

// insertSession writes the row of session h through db (the connection or
// a transaction).
func (p *Postgres) insertSession(ctx context.Context, db interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}, h Header) error {
	_, err := db.Exec(ctx, `INSERT INTO `+p.ident()+`.sessions (id, version, created_at, cwd, parent_session, seed_length) VALUES ($1, $2, $3, $4, $5, $6)`,
		h.ID, h.Version, h.CreatedAt, nullString(h.Cwd), nullString(h.ParentSession), h.SeedLength)
	return err
}

// connError is the error of a failed statement: persist.closed when the
// connection is gone (the store refuses further appends: reopen it, and
// Resume reads what was committed), persist.io otherwise.
func (p *Postgres) connError(err error, seq int64, format string, args ...any) error {
	if p.conn.IsClosed() {
		p.broken = err
		e := event.Errorf(event.CodePersistClosed, seq, format, args...)
		e.Detail += ": the connection to the database is gone (reopen the store and Resume it): " + err.Error()
		e.Cause = err
		return e
	}
	e := ioError(err, format, args...)
	e.Seq = seq
	return e
}

// Sync implements Store: every acknowledged append is already committed.
func (p *Postgres) Sync(ctx context.Context) error { return session.Cancelled(ctx, -1) }

// Close implements Store: it releases the session's lock and the
// connection (when ctx ends first, the connection is dropped, which
// releases the lock too).
func (p *Postgres) Close(parent context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	defer detach(p)
	ctx, cancel := pgCtx(parent)
	defer cancel()
	// Release the lock before the connection goes: the server frees a
	// dropped connection's locks only when its backend has exited, after
	// Close returned, and a writer opening the session at once would find
	// it still held (STORE-4). Should this fail, closing releases it later.
	_, _ = p.conn.Exec(ctx, `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, p.schema+"/"+p.header.ID)
	if err := p.conn.Close(ctx); err != nil {
		return ioError(err, "close the Postgres connection")
	}
	return nil
}

// crash drops the connection without a word, as a killed process would.
func (p *Postgres) crash() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.conn.PgConn().Conn().Close()
	detach(p)
}

// PostgresSessions lists the session ids of the database at url (schema
// "surface" unless given), sorted; none when the schema does not exist.
func PostgresSessions(url string, opts ...PostgresOption) ([]string, error) {
	var ids []string
	err := withReadConn(url, opts, func(ctx context.Context, p *Postgres) error {
		var exists bool
		if err := p.conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'sessions')`, p.schema).Scan(&exists); err != nil || !exists {
			return err
		}
		rows, err := p.conn.Query(ctx, `SELECT id FROM `+p.ident()+`.sessions ORDER BY id`)
		if err != nil {
			return ioError(err, "list sessions")
		}
		ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	return ids, err
}

// ReadPostgres reads the events of one session without locking it. A
// database whose schema has no session tables is persist.not_a_session.
func ReadPostgres(url, sessionID string, opts ...PostgresOption) ([]event.Event, error) {
	var events []event.Event
	err := withReadConn(url, opts, func(ctx context.Context, p *Postgres) error {
		var tables int
		if err := p.conn.QueryRow(ctx, `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = $1 AND table_name IN ('schema_version', 'sessions', 'events')`, p.schema).Scan(&tables); err != nil {
			return p.connError(err, -1, "read schema %q", p.schema)
		}
		if tables != 3 {
			return event.Errorf(event.CodePersistNotASession, -1, "the database has no session store in schema %q", p.schema)
		}
		l, err := readPostgresLog(ctx, p.conn, p.schema, sessionID)
		events = l.Events()
		return err
	})
	return events, err
}

// withReadConn connects to url for a read that takes no lock and runs
// read on that connection (p.conn) with the options applied (schema
// "surface" unless given).
func withReadConn(url string, opts []PostgresOption, read func(ctx context.Context, p *Postgres) error) error {
	ctx, cancel := pgCtx(context.Background())
	defer cancel()
	p, err := dialPostgres(ctx, url, opts)
	if err != nil {
		return err
	}
	defer p.conn.Close(context.Background())
	return read(ctx, p)
}

// unwritten implements seedWriter.
func (p *Postgres) unwritten() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pending
}
