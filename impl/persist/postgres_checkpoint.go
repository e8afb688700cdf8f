package persist

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

// pgCheckpoints is the table of the Postgres store's checkpoints
// (STORE-18), as the SQLite store's; other readers ignore it.
const pgCheckpoints = `CREATE TABLE IF NOT EXISTS %[1]s.checkpoints (
  session_id TEXT PRIMARY KEY REFERENCES %[1]s.sessions(id) ON DELETE CASCADE,
  state      TEXT NOT NULL
)`

// WithPostgresCheckpoints makes the Postgres store keep a checkpoint of
// the session in the table checkpoints of its schema (STORE-18), as
// WithSQLiteCheckpoints does.
func WithPostgresCheckpoints(every int) PostgresOption {
	return func(p *Postgres) { p.cpEvery = max(every, 1) }
}

// readRow reads the row of event seq: its digest and, into d, the event.
func (p *Postgres) readRow(ctx context.Context, d *event.Decoder, seq int64) (string, error) {
	return pgRow(ctx, p.conn, p.ident(), p.header.ID, seq, d)
}

// pgRow reads the row of event seq of session id in the schema ident (see
// readRow).
func pgRow(ctx context.Context, conn *pgx.Conn, ident, id string, seq int64, d *event.Decoder) (string, error) {
	var typ, data, sources, op []byte
	var t int64
	var ignorable bool
	err := conn.QueryRow(ctx, `SELECT type, time, data, source_event_seqs, surface_op, ignorable FROM `+ident+`.events WHERE session_id = $1 AND seq = $2`, id, seq).
		Scan(&typ, &t, &data, &sources, &op, &ignorable)
	if err != nil {
		return "", err
	}
	if d != nil {
		d.DecodeParts(typ, seq, t, data, sources, op, ignorable)
	}
	return rowDigest(typ, data, sources, op, t), nil
}

// CheckPostgresCheckpoint checks the checkpoint of session id in the
// database at url (schema "surface" unless given), if it keeps one
// (STORE-18), against events, the session's events as the validator read
// them: see CheckJSONLCheckpoint.
func CheckPostgresCheckpoint(url, id string, events []event.Event, opts ...PostgresOption) (CheckpointCheck, error) {
	var out CheckpointCheck
	var cerr error
	err := withReadConn(url, opts, func(ctx context.Context, p *Postgres) error {
		var state string
		if p.conn.QueryRow(ctx, `SELECT state FROM `+p.ident()+`.checkpoints WHERE session_id = $1`, id).Scan(&state) != nil {
			return nil // no table, or no row: no checkpoint
		}
		out, cerr = checkRows("Postgres session "+strconv.Quote(id), state, id, events, func(d *event.Decoder, seq int64) (string, error) { return pgRow(ctx, p.conn, p.ident(), id, seq, d) }, nil)
		return nil
	})
	if err != nil {
		return out, err
	}
	return out, cerr
}

// writeCheckpoint is the session's checkpoint writer.
func (p *Postgres) writeCheckpoint(cp session.Checkpoint) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.broken != nil || p.pending || cp.Events > p.next || cp.Events < 0 {
		return
	}
	ctx, cancel := pgCtx(context.Background())
	defer cancel()
	row := func(d *event.Decoder, seq int64) (string, error) { return p.readRow(ctx, d, seq) }
	if state, ok := rowState(cp, p.header.ID, row); ok {
		if _, err := p.conn.Exec(ctx, `INSERT INTO `+p.ident()+`.checkpoints (session_id, state) VALUES ($1, $2) ON CONFLICT (session_id) DO UPDATE SET state = EXCLUDED.state`, p.header.ID, state); err == nil {
			p.cpCovers = cp.Events
		}
	}
}

// checkpointCovers implements checkpointed.
func (p *Postgres) checkpointCovers() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cpCovers
}

// loadFromCheckpoint opens the session from its checkpoint row (see the
// SQLite store's).
func (p *Postgres) loadFromCheckpoint(ctx context.Context) bool {
	var state string
	if err := p.conn.QueryRow(ctx, `SELECT state FROM `+p.ident()+`.checkpoints WHERE session_id = $1`, p.header.ID).Scan(&state); err != nil {
		return false // no checkpoint
	}
	row := func(d *event.Decoder, seq int64) (string, error) { return p.readRow(ctx, d, seq) }
	r, tail, err := openFromRows(state, p.header.ID, row, func(from int64) (*event.Log, error) {
		return readPostgresRange(ctx, p.conn, p.schema, p.header.ID, from, 1<<62)
	})
	if err != nil {
		p.cpReport.CheckpointIgnored = err.Error()
		return false
	}
	p.log, p.loaded, p.covered, p.restore, p.cpCovers = tail, int(r.cp.Events)+tail.Len(), r.cp.Events, r, r.cp.Events
	p.cpReport.CheckpointEvents = int(r.cp.Events)
	return true
}

// takeRestore implements checkpointed.
func (p *Postgres) takeRestore() (*restoreFrom, func() (*event.Log, error)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.restore == nil {
		return nil, nil
	}
	covered := p.covered
	return p.restore, func() (*event.Log, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		ctx, cancel := pgCtx(context.Background())
		defer cancel()
		return readPostgresRange(ctx, p.conn, p.schema, p.header.ID, 0, covered)
	}
}

// loadWhole implements checkpointed.
func (p *Postgres) loadWhole() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.restore == nil {
		return nil
	}
	p.restore, p.covered, p.cpCovers = nil, 0, 0
	p.cpReport = LoadReport{CheckpointIgnored: "the session could not resume from it"}
	ctx, cancel := pgCtx(context.Background())
	defer cancel()
	l, err := readPostgresLog(ctx, p.conn, p.schema, p.header.ID)
	p.log, p.loaded = l, l.Len()
	return err
}

// checkpointEvery implements checkpointed.
func (p *Postgres) checkpointEvery() int { return p.cpEvery }
