//go:build cgo

package persist

import (
	"database/sql"
	"strconv"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

// checkpointSchema is the table of the SQLite store's checkpoints
// (STORE-18): one row per session, its state the checkpoint file's JSON
// (format, version, surface, ledger, its own checksum; the last covered
// row's digest in place of the last line's). Other readers ignore it.
const checkpointSchema = `CREATE TABLE IF NOT EXISTS checkpoints (
  session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
  state      TEXT NOT NULL
) STRICT`

// WithSQLiteCheckpoints makes the SQLite store keep a checkpoint of the
// session in the table checkpoints (STORE-18), as WithCheckpoints does for
// a JSONL file: written at the first turn/end at least every events after
// the last (and after 4*every without one) and at Close, and used by the
// next open when it matches the rows (the digest of the last row it
// covers, and its surface's rows); the rows it covers are not read.
func WithSQLiteCheckpoints(every int) SQLiteOption {
	return func(s *SQLite) { s.cpEvery = max(every, 1) }
}

// readRow reads the row of event seq: its digest and, into d, the event.
func (s *SQLite) readRow(d *event.Decoder, seq int64) (string, error) {
	return sqliteRow(s.db, s.header.ID, seq, d)
}

// sqliteRow reads the row of event seq of session id (see readRow).
func sqliteRow(db *sql.DB, id string, seq int64, d *event.Decoder) (string, error) {
	var typ, data, sources, op []byte
	var time int64
	err := db.QueryRow(`SELECT type, time, data, source_event_seqs, surface_op FROM events WHERE session_id = ? AND seq = ?`, id, seq).
		Scan(&typ, &time, &data, &sources, &op)
	if err != nil {
		return "", err
	}
	if d != nil {
		d.DecodeParts(typ, seq, time, data, sources, op, false)
	}
	return rowDigest(typ, data, sources, op, time), nil
}

// Checkpoint checks the checkpoint of session id, if the database keeps
// one (STORE-18), against events, the session's events as the validator
// read them: see CheckJSONLCheckpoint.
func (r *SQLiteReader) Checkpoint(id string, events []event.Event, opts ...session.Option) (CheckpointCheck, error) {
	if r.db == nil {
		return CheckpointCheck{}, nil
	}
	var state string
	err := r.db.QueryRow(`SELECT state FROM checkpoints WHERE session_id = ?`, id).Scan(&state)
	if err != nil { // no table, or no row: no checkpoint
		return CheckpointCheck{}, nil
	}
	return checkRows(r.path+" session "+strconv.Quote(id), state, id, events, func(d *event.Decoder, seq int64) (string, error) { return sqliteRow(r.db, id, seq, d) }, opts)
}

// writeCheckpoint is the session's checkpoint writer
// (session.WithCheckpoints): the row is replaced in one statement; a
// checkpoint it cannot write is not written.
func (s *SQLite) writeCheckpoint(cp session.Checkpoint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.broken != nil || s.pending || cp.Events > s.next || cp.Events < 0 {
		return
	}
	if state, ok := rowState(cp, s.header.ID, s.readRow); ok {
		if _, err := s.db.Exec(`INSERT OR REPLACE INTO checkpoints (session_id, state) VALUES (?, ?)`, s.header.ID, state); err == nil {
			s.cpCovers = cp.Events
		}
	}
}

// checkpointCovers implements checkpointed.
func (s *SQLite) checkpointCovers() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cpCovers
}

// loadFromCheckpoint opens the session from its checkpoint row: the rows
// after it, and its surface's rows. It is false, having kept nothing,
// when there is none or it does not match the rows (the report says why).
func (s *SQLite) loadFromCheckpoint() bool {
	var state string
	if err := s.db.QueryRow(`SELECT state FROM checkpoints WHERE session_id = ?`, s.header.ID).Scan(&state); err != nil {
		return false // no checkpoint
	}
	r, tail, err := openFromRows(state, s.header.ID, s.readRow, func(from int64) (*event.Log, error) {
		return readSQLiteRange(s.db, s.header.ID, from, 1<<62)
	})
	if err != nil {
		s.cpReport.CheckpointIgnored = err.Error()
		return false
	}
	s.log, s.loaded, s.covered, s.restore, s.cpCovers = tail, int(r.cp.Events)+tail.Len(), r.cp.Events, r, r.cp.Events
	s.cpReport.CheckpointEvents = int(r.cp.Events)
	return true
}

// takeRestore implements checkpointed.
func (s *SQLite) takeRestore() (*restoreFrom, func() (*event.Log, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.restore == nil {
		return nil, nil
	}
	covered := s.covered
	return s.restore, func() (*event.Log, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return readSQLiteRange(s.db, s.header.ID, 0, covered)
	}
}

// loadWhole implements checkpointed.
func (s *SQLite) loadWhole() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.restore == nil {
		return nil
	}
	s.restore, s.covered, s.cpCovers = nil, 0, 0
	s.cpReport = LoadReport{CheckpointIgnored: "the session could not resume from it"}
	return s.loadEvents()
}

// checkpointEvery implements checkpointed.
func (s *SQLite) checkpointEvery() int { return s.cpEvery }
