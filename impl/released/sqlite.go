package released

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strconv"

	"github.com/klauspost/compress/zstd"
	_ "github.com/mattn/go-sqlite3" // the database/sql driver "sqlite3"
	"github.com/surfacelog/surface/impl/event"
)

// ApplicationID is the PRAGMA application_id of a released session
// database: ASCII "DSHP".
const ApplicationID = 0x44534850

// SchemaVersions are the released schemas Read reads (PRAGMA
// user_version): 14 (0.0.1-rc.1, the published one), 15 (adds
// events.ignorable) and 17 (0.1.0-rc.8: data as JSON text or a zstd blob,
// sourceEventSeqs as a varint blob, packed chunk rows).
var SchemaVersions = []int{14, 15, 17}

// IsSQLite reports whether data starts like a SQLite database file.
func IsSQLite(data []byte) bool { return bytes.HasPrefix(data, []byte("SQLite format 3\x00")) }

// ReadSQLite reads session id from a released SQLite database, read-only
// (the database is opened with mode=ro; a write-ahead log beside it is
// read too, as SQLite does). With id "" the database must hold exactly one
// session. The events come back in wire form, packed rows expanded, like
// Read's.
func ReadSQLite(ctx context.Context, path, id string) (*Log, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, event.Errorf(event.CodePersistIO, -1, "%v", err)
	}
	db, err := openRO(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	version, err := checkSchema(ctx, db)
	if err != nil {
		return nil, err
	}
	if id == "" {
		ids, err := sessionIDs(ctx, db)
		if err != nil {
			return nil, err
		}
		if len(ids) != 1 {
			return nil, event.Errorf(event.CodePersistWrongSession, -1, "the database holds %d sessions; name one", len(ids))
		}
		id = ids[0]
	}
	l := &Log{}
	var cwd, parent, origin, preset sql.NullString
	var seedLength, depth sql.NullInt64
	err = db.QueryRowContext(ctx, "SELECT version, created_at, cwd, parent_session, seed_length, origin, delegation_depth, agent_preset FROM sessions WHERE id = ?", id).
		Scan(&l.Header.Version, &l.Header.CreatedAt, &cwd, &parent, &seedLength, &origin, &depth, &preset)
	if err == sql.ErrNoRows {
		return nil, event.Errorf(event.CodePersistWrongSession, -1, "no session %q in the database", id)
	}
	if err != nil {
		return nil, event.Errorf(event.CodePersistCorrupt, -1, "%v", err)
	}
	if l.Header.Version != 0 {
		return nil, event.Errorf(event.CodePersistFormatVersion, -1, "session format version %d; only 0 is read", l.Header.Version)
	}
	h := &l.Header
	h.ID, h.DelegationDepth = id, depth.Int64
	h.Cwd, h.ParentSession, h.Origin, h.AgentPreset = str(cwd), str(parent), str(origin), str(preset)
	if seedLength.Valid {
		h.SeedLength = &seedLength.Int64
	}
	ignorable := "NULL"
	if version >= 15 {
		ignorable = "ignorable"
	}
	rows, err := db.QueryContext(ctx, "SELECT seq, type, time, data, source_event_seqs, surface_op, "+ignorable+" FROM events WHERE session_id = ? ORDER BY seq", id)
	if err != nil {
		return nil, event.Errorf(event.CodePersistCorrupt, -1, "%v", err)
	}
	defer rows.Close()
	var lines []json.RawMessage
	var lineSeqs []int64
	for rows.Next() {
		var seq, t int64
		var typ string
		var data, sources any
		var op sql.NullString
		var ign sql.NullInt64
		if err := rows.Scan(&seq, &typ, &t, &data, &sources, &op, &ign); err != nil {
			return nil, event.Errorf(event.CodePersistCorrupt, -1, "%v", err)
		}
		line, err := rowLine(seq, typ, t, data, sources, op, ign, version)
		if err != nil {
			return nil, event.Errorf(event.CodePersistCorrupt, seq, "event row %d: %v", seq, err)
		}
		lines, lineSeqs = append(lines, line), append(lineSeqs, seq)
	}
	if err := rows.Err(); err != nil {
		return nil, event.Errorf(event.CodePersistCorrupt, -1, "%v", err)
	}
	return l, l.addRows(lines, lineSeqs)
}

// addRows adds the rows' events, with the released torn-tail rule: a row
// that does not parse, or a hole in the seqs, is corruption when a turn/end
// row follows it and a tolerated crash tail otherwise.
func (l *Log) addRows(lines []json.RawMessage, seqs []int64) error {
	for k, line := range lines {
		err := error(nil)
		if want := int64(len(l.Events)); seqs[k] != want {
			err = fmt.Errorf("row %d where %d was expected", seqs[k], want)
		} else {
			err = l.addLine(line)
		}
		if err == nil {
			continue
		}
		for _, later := range lines[k+1:] {
			if isTurnEnd(later) {
				return event.Errorf(event.CodePersistCorrupt, int64(len(l.Events)), "%v, before a later turn/end", err)
			}
		}
		l.TornBytes = len(lines) - k // rows, not bytes, for a database
		return nil
	}
	return nil
}

func str(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}

// rowLine rebuilds the wire form of one events row.
func rowLine(seq int64, typ string, t int64, data, sources any, op sql.NullString, ign sql.NullInt64, version int64) (json.RawMessage, error) {
	d, err := rowData(data)
	if err != nil {
		return nil, err
	}
	if ign.Valid && ign.Int64 == 0 && version >= 17 { // a packed chunk row
		return json.Marshal(struct {
			Type  string          `json:"type"`
			Seq0  int64           `json:"seq0"`
			Time0 int64           `json:"time0"`
			Data  json.RawMessage `json:"data"`
		}{typ, seq, t, d})
	}
	var b bytes.Buffer
	b.WriteString(`{"type":`)
	q, _ := json.Marshal(typ)
	b.Write(q)
	fmt.Fprintf(&b, `,"seq":%d,"time":%d,"data":`, seq, t)
	b.Write(d)
	if op.Valid {
		b.WriteString(`,"surfaceOp":`)
		b.WriteString(op.String)
	}
	if sources != nil {
		src, err := rowSources(sources)
		if err != nil {
			return nil, err
		}
		b.WriteString(`,"sourceEventSeqs":`)
		b.Write(src)
	}
	if ign.Valid && ign.Int64 == 1 {
		b.WriteString(`,"ignorable":true`)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

var blobDecoder, _ = zstd.NewReader(nil)

// rowData is a data column: JSON text, or (schema 17) a zstd blob of it.
func rowData(v any) (json.RawMessage, error) {
	switch d := v.(type) {
	case string:
		return json.RawMessage(d), nil
	case []byte:
		if !IsZstd(d) {
			return json.RawMessage(bytes.Clone(d)), nil
		}
		out, err := blobDecoder.DecodeAll(d, nil)
		if err != nil {
			return nil, fmt.Errorf("compressed data: %v", err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("data is %T, not text or a blob", v)
}

// rowSources is a source_event_seqs column: JSON text (14, 15) or a blob
// of unsigned LEB128 varints, the first seq then zig-zag deltas (17).
func rowSources(v any) ([]byte, error) {
	switch s := v.(type) {
	case string:
		return []byte(s), nil
	case []byte:
		var out []int64
		for i := 0; i < len(s); {
			var u uint64
			var shift uint
			for {
				if i >= len(s) || shift > 63 {
					return nil, fmt.Errorf("source_event_seqs blob ends inside a varint")
				}
				c := s[i]
				i++
				u |= uint64(c&0x7f) << shift
				shift += 7
				if c < 0x80 {
					break
				}
			}
			if len(out) == 0 {
				out = append(out, int64(u))
				continue
			}
			d := int64(u >> 1)
			if u&1 == 1 {
				d = -int64((u + 1) >> 1)
			}
			out = append(out, out[len(out)-1]+d)
		}
		b := []byte{'['}
		for k, q := range out {
			if k > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, q, 10)
		}
		return append(b, ']'), nil
	}
	return nil, fmt.Errorf("source_event_seqs is %T", v)
}

// openRO opens the database at path read-only; without a write-ahead
// log beside it, as immutable, so that SQLite creates no file beside it.
func openRO(path string) (*sql.DB, error) {
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?mode=ro&_query_only=1"
	if _, err := os.Stat(path + "-wal"); err != nil {
		dsn += "&immutable=1"
	}
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, event.Errorf(event.CodePersistIO, -1, "%v", err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// IsReleasedSQLite reports whether path is a SQLite database with the
// released application id (REL-1), whatever its schema version.
func IsReleasedSQLite(ctx context.Context, path string) bool {
	db, err := openRO(path)
	if err != nil {
		return false
	}
	defer db.Close()
	var app int64
	return db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&app) == nil && app == ApplicationID
}

// SQLiteSessions lists the ids of the sessions of a released database.
func SQLiteSessions(ctx context.Context, path string) ([]string, error) {
	db, err := openRO(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if _, err := checkSchema(ctx, db); err != nil {
		return nil, err
	}
	return sessionIDs(ctx, db)
}

// sessionIDs lists the ids of the sessions of an open released database.
func sessionIDs(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT id FROM sessions ORDER BY id")
	if err != nil {
		return nil, event.Errorf(event.CodePersistCorrupt, -1, "%v", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, event.Errorf(event.CodePersistCorrupt, -1, "%v", err)
		}
		ids = append(ids, s)
	}
	if err := rows.Err(); err != nil {
		return nil, event.Errorf(event.CodePersistCorrupt, -1, "%v", err)
	}
	return ids, nil
}

// checkSchema checks the application id and the schema version.
func checkSchema(ctx context.Context, db *sql.DB) (int64, error) {
	var app, version int64
	if err := db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&app); err != nil {
		return 0, event.Errorf(event.CodePersistNotASession, -1, "not a SQLite database: %v", err)
	}
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return 0, event.Errorf(event.CodePersistIO, -1, "%v", err)
	}
	if app != ApplicationID {
		return 0, event.Errorf(event.CodePersistNotASession, -1, "application id %d, not the released session database's %d", app, ApplicationID)
	}
	switch version {
	case 14, 15, 17:
		return version, nil
	}
	return 0, event.Errorf(event.CodePersistSchemaVersion, -1, "released session database schema %d; this reader reads 14, 15 and 17", version)
}
