package conformance

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// SQLite databases for the store steps. A vector does not carry a
// database's bytes (they depend on the SQLite library that wrote them): a
// store_open step of format "sqlite" carries the SQL statements that make
// it, and the runner runs them on an empty database and sends its bytes
// (Prepared). Everything here goes through database/sql with the driver
// "sqlite3" that impl/persist registers when built with cgo; without cgo
// the SQLite vectors fail with an error.

// Prepared is s as a testee receives it: for a store_open whose database
// is given as SQL, the database's bytes in File.
func (s Step) Prepared() (Step, error) {
	if s.SQL == nil {
		return s, nil
	}
	b, err := BuildSQLite(s.SQL)
	if err != nil {
		return s, err
	}
	s.File, s.SQL = &b, nil
	return s, nil
}

// BuildSQLite runs stmts on a new, empty SQLite database (rollback
// journal, so the database is one file) and returns its bytes.
func BuildSQLite(stmts []string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "surface-sqlite")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "build.db")
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=DELETE")
	if err != nil {
		return nil, err
	}
	for _, st := range stmts {
		if _, err := db.Exec(st); err != nil {
			db.Close()
			return nil, fmt.Errorf("build a SQLite database: %s: %w", st, err)
		}
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// sqliteContent is what a SQLite session database holds, read plainly:
// its user_version, its tables, and the events of one session as wire-form
// lines (the ignorable flag from event_envelope), with the session's
// seed_length (-1 when none, or when the session has no row).
type sqliteContent struct {
	userVersion int64
	tables      []string
	objects     int
	hasSession  bool
	seedLength  int64
	lines       []json.RawMessage
}

// readSQLite reads the database at path without writing to it.
func readSQLite(path, id string) (*sqliteContent, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite3", "file:"+abs+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	c := &sqliteContent{seedLength: -1}
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&c.userVersion); err != nil {
		return nil, err
	}
	rows, err := db.Query(`SELECT type, name FROM sqlite_master ORDER BY name`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var typ, name string
		if err := rows.Scan(&typ, &name); err != nil {
			rows.Close()
			return nil, err
		}
		c.objects++
		if typ == "table" {
			c.tables = append(c.tables, name)
		}
	}
	rows.Close()
	if !c.has("sessions") || !c.has("events") {
		return c, nil
	}
	var seedLength sql.NullInt64
	switch err := db.QueryRow(`SELECT seed_length FROM sessions WHERE id = ?`, id).Scan(&seedLength); {
	case err == sql.ErrNoRows:
	case err != nil:
		return nil, err
	default:
		c.hasSession = true
		if seedLength.Valid {
			c.seedLength = seedLength.Int64
		}
	}
	ignorable := map[int64]bool{}
	if c.has("event_envelope") {
		rows, err := db.Query(`SELECT seq FROM event_envelope WHERE session_id = ? AND ignorable = 1`, id)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var seq int64
			rows.Scan(&seq)
			ignorable[seq] = true
		}
		rows.Close()
	}
	rows, err = db.Query(`SELECT seq, type, time, data, source_event_seqs, surface_op FROM events WHERE session_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var seq, tm int64
		var typ, data string
		var sources, op sql.NullString
		if err := rows.Scan(&seq, &typ, &tm, &data, &sources, &op); err != nil {
			return nil, err
		}
		t, _ := json.Marshal(typ)
		var b bytes.Buffer
		b.WriteString(`{"type":` + string(t) + `,"seq":` + strconv.FormatInt(seq, 10) + `,"time":` + strconv.FormatInt(tm, 10) + `,"data":` + data)
		if sources.Valid {
			b.WriteString(`,"sourceEventSeqs":` + sources.String)
		}
		if op.Valid {
			b.WriteString(`,"surfaceOp":` + op.String)
		}
		if ignorable[seq] {
			b.WriteString(`,"ignorable":true`)
		}
		b.WriteByte('}')
		c.lines = append(c.lines, json.RawMessage(b.Bytes()))
	}
	return c, rows.Err()
}

func (c *sqliteContent) has(table string) bool {
	for _, t := range c.tables {
		if t == table {
			return true
		}
	}
	return false
}

// sqliteMagic begins every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

func isSQLite(data []byte) bool { return strings.HasPrefix(string(data), sqliteMagic) }
