//go:build cgo

package persist

import (
	"database/sql"
	"errors"
	"fmt"
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
	return checkRows(r.path+" session "+strconv.Quote(id), state, id, events, func(seq int64) (string, error) { return sqliteRow(r.db, id, seq, nil) }, opts)
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
	f := checkpointFile{Format: CheckpointFormat, Version: CheckpointVersion, Session: s.header.ID, Events: cp.Events,
		NextLabel: cp.NextLabel, Generation: cp.Generation, Ledger: cp.Ledger, Nodes: make([]checkpointRef, 0, len(cp.Surface))}
	if cp.Events > 0 {
		digest, err := s.readRow(nil, cp.Events-1)
		if err != nil {
			return
		}
		f.Last = &checkpointLine{SHA256: digest}
	}
	for _, n := range cp.Surface {
		f.Nodes = append(f.Nodes, checkpointRef{Seq: n.Seq, Label: n.Label})
	}
	b, err := encodeCheckpoint(f)
	if err != nil {
		return
	}
	s.db.Exec(`INSERT OR REPLACE INTO checkpoints (session_id, state) VALUES (?, ?)`, s.header.ID, string(b))
}

// loadFromCheckpoint opens the session from its checkpoint row: the rows
// after it, and its surface's rows. It is false, having kept nothing,
// when there is none or it does not match the rows (the report says why).
func (s *SQLite) loadFromCheckpoint() bool {
	f, nodes, err := s.openCheckpoint()
	if err != nil {
		if !errors.Is(err, sql.ErrNoRows) {
			s.cpReport.CheckpointIgnored = err.Error()
		}
		return false
	}
	tail, err := readSQLiteRange(s.db, s.header.ID, f.Events, 1<<62)
	if err != nil {
		s.cpReport.CheckpointIgnored = err.Error()
		return false
	}
	cp := session.Checkpoint{Events: f.Events, NextLabel: f.NextLabel, Generation: f.Generation, Ledger: f.Ledger, Surface: make([]session.CheckpointNode, len(f.Nodes))}
	for i, n := range f.Nodes {
		cp.Surface[i] = session.CheckpointNode{Seq: n.Seq, Label: n.Label}
	}
	s.log, s.loaded, s.covered = tail, int(f.Events)+tail.Len(), f.Events
	s.restore = &restoreFrom{cp: cp, nodes: nodes}
	s.cpReport.CheckpointEvents = int(f.Events)
	return true
}

// openCheckpoint reads the checkpoint row and checks it against the rows
// (STORE-18).
func (s *SQLite) openCheckpoint() (checkpointFile, []event.Event, error) {
	var state string
	if err := s.db.QueryRow(`SELECT state FROM checkpoints WHERE session_id = ?`, s.header.ID).Scan(&state); err != nil {
		return checkpointFile{}, nil, err
	}
	f, err := decodeCheckpoint([]byte(state))
	if err != nil {
		return f, nil, err
	}
	if f.Session != s.header.ID || f.Events < 0 {
		return f, nil, fmt.Errorf("it is of session %q, %d events", f.Session, f.Events)
	}
	var last sql.NullInt64
	if err := s.db.QueryRow(`SELECT MAX(seq) FROM events WHERE session_id = ?`, s.header.ID).Scan(&last); err != nil {
		return f, nil, err
	}
	if f.Events > 0 && (!last.Valid || last.Int64 < f.Events-1) {
		return f, nil, fmt.Errorf("it covers %d events of a log of %d", f.Events, last.Int64+1)
	}
	var d event.Decoder
	if f.Events > 0 {
		if f.Last == nil {
			return f, nil, errors.New("it names no last row")
		}
		digest, err := s.readRow(nil, f.Events-1)
		if err != nil || digest != f.Last.SHA256 {
			return f, nil, fmt.Errorf("its last row (event %d) is not the log's", f.Events-1)
		}
	} else if len(f.Nodes) > 0 {
		return f, nil, errors.New("it covers no event but has a surface")
	}
	for _, n := range f.Nodes {
		if n.Seq < 0 || n.Seq >= f.Events {
			return f, nil, fmt.Errorf("its node %d is not an event it covers", n.Seq)
		}
		if _, err := s.readRow(&d, n.Seq); err != nil {
			return f, nil, fmt.Errorf("its node %d: %v", n.Seq, err)
		}
	}
	return f, d.Log().Events(), nil
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
	s.restore, s.covered = nil, 0
	s.cpReport = LoadReport{CheckpointIgnored: "the session could not resume from it"}
	return s.loadEvents()
}

// checkpointEvery implements checkpointed.
func (s *SQLite) checkpointEvery() int { return s.cpEvery }
