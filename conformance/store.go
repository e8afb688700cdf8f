package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/internal/ops"
	"github.com/surfacelog/surface/model"
)

// The store steps (FeatureStore): the implementation opens a real JSONL
// file in a directory of its own; the model keeps the file in memory
// (model.JSONLFile) and writes each event the session appends.

// storeState is a machine's store: its file, and for the implementation
// the open store and its directory.
type storeState struct {
	format string // "jsonl" or "sqlite"
	// model: the file in memory (JSONL), or what the database holds
	// (SQLite); live while a session writes to it.
	file *model.JSONLFile
	db   *sqliteModel
	live bool
	// implementation: the directory, the file's path, the open store.
	dir, path, id string
	sess          *persist.Session
}

// detach ends the store the vector wrote through: a seed, a fork that
// goes on, a crash or a reset leaves it.
func (m *Machine) detach() {
	if m.st.sess != nil {
		m.st.sess.Close(context.Background())
		m.st.sess = nil
	}
	m.st.live = false
}

// dropStore forgets the store altogether (reset, close).
func (m *Machine) dropStore() {
	m.detach()
	if m.st.dir != "" {
		os.RemoveAll(m.st.dir)
	}
	m.st = storeState{}
}

// syncStore writes to the model's file the events the session appended
// since the last step (the implementation's store did as it went).
func (m *Machine) syncStore() {
	if !m.st.live {
		return
	}
	events := m.d.State().Events
	if m.st.db != nil {
		m.st.db.append(events)
		return
	}
	if n := len(m.st.file.Lines); len(events) > n {
		m.st.file.Append(events[n:]...)
	}
}

func (m *Machine) storeOpen(s Step) (Result, error) {
	if s.Format != "jsonl" && s.Format != "sqlite" {
		return Result{}, protocolError("store_open: unknown format " + s.Format)
	}
	if s.ID == nil || s.CreatedAt == nil {
		return Result{}, protocolError("store_open without id or createdAt")
	}
	m.dropStore()
	var data []byte
	if s.File != nil {
		data = bytes.Clone(*s.File)
		if data == nil {
			data = []byte{}
		}
	}
	m.st.format = s.Format
	if m.persist {
		return m.storeOpenImpl(s, data)
	}
	if s.Format == "sqlite" {
		return m.storeOpenSQLiteModel(s, data)
	}
	f, err := model.OpenJSONL(data, s.Beside, *s.ID, *s.CreatedAt)
	if err != nil {
		m.st.file = &model.JSONLFile{Data: data, Beside: s.Beside} // left as it was
		return Result{}, err
	}
	m.st.file = f
	lines := make([]json.RawMessage, len(f.Lines))
	for i, l := range f.Lines {
		lines[i] = l
	}
	closers, err := m.resumeModel(f.SeedLength(), lines)
	if err != nil {
		return Result{}, err
	}
	f.Append(closers...)
	m.st.live = true
	r := closersResult(closers)
	r.Report = &StoreReport{Events: len(lines), TornBytes: len(f.Beside[f.Quarantine]), Quarantine: f.Quarantine}
	return m.state(r), nil
}

func (m *Machine) storeOpenImpl(s Step, data []byte) (Result, error) {
	dir, err := os.MkdirTemp("", "surface-store")
	if err != nil {
		return Result{}, err
	}
	m.st.dir, m.st.path = dir, filepath.Join(dir, "s."+s.Format)
	if data != nil {
		if err := os.WriteFile(m.st.path, data, 0o644); err != nil {
			return Result{}, err
		}
	}
	for suffix, b := range s.Beside {
		if strings.ContainsAny(suffix, `/\`) {
			return Result{}, protocolError("store_open: a beside suffix names another directory: " + suffix)
		}
		if err := os.WriteFile(m.st.path+suffix, b, 0o644); err != nil {
			return Result{}, err
		}
	}
	ctx := context.Background()
	var st persist.Store
	if s.Format == "sqlite" {
		st, err = persist.OpenSQLite(ctx, m.st.path, persist.Header{ID: *s.ID, CreatedAt: *s.CreatedAt}, persist.WithSQLiteSync(persist.SyncNever))
	} else {
		// With checkpoints (STORE-18): one handed beside the file is used
		// when it matches, and every vector's outcome must stay a replay's.
		st, err = persist.OpenJSONL(ctx, m.st.path, persist.Header{ID: *s.ID, CreatedAt: *s.CreatedAt}, persist.WithSync(persist.SyncNever), persist.WithCheckpoints(1))
	}
	if err != nil {
		return Result{}, err
	}
	opts := []session.Option{session.WithVocabulary(m.voc), session.WithClock(m.clock)}
	if m.strict {
		opts = append(opts, session.WithStrict())
	}
	sess, rep, err := persist.Resume(ctx, st, opts...)
	if err != nil {
		st.Close(ctx)
		return Result{}, err
	}
	m.st.sess, m.st.id = sess, *s.ID
	m.d = &ops.Impl{S: sess.Session, Clock: m.clock, Voc: m.voc, Strict: m.strict}
	r := closersResult(rep.Closers)
	r.Report = &StoreReport{Events: rep.Events, TornBytes: int(rep.TornBytes), Quarantine: strings.TrimPrefix(rep.Quarantine, m.st.path)}
	return m.state(r), nil
}

func (m *Machine) storeFile(s Step) (Result, error) {
	if m.st.format == "sqlite" {
		return m.storeFileSQLite(s)
	}
	var data []byte
	beside := map[string][]byte{}
	switch {
	case m.persist && m.st.path != "":
		var err error
		if data, err = os.ReadFile(m.st.path); err != nil {
			return Result{}, err
		}
		names, _ := filepath.Glob(m.st.path + ".torn-*")
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				return Result{}, err
			}
			beside[strings.TrimPrefix(n, m.st.path)] = b
		}
	case !m.persist && m.st.file != nil:
		data = m.st.file.Data
		for k, v := range m.st.file.Beside {
			if strings.HasPrefix(k, ".torn-") {
				beside[k] = v
			}
		}
	default:
		return Result{}, protocolError("store_file before any store_open")
	}
	return Result{File: FileOf(data, beside, s.Exact)}, nil
}

// FileOf is the store_file result for a file's bytes and the files beside
// it: its complete lines as JSON values (none when one is not JSON text in
// UTF-8),
// the bytes after its last newline, and with exact all its bytes.
func FileOf(data []byte, beside map[string][]byte, exact bool) *StoreFile {
	f := &StoreFile{Beside: beside}
	lines := []json.RawMessage{}
	rest := data
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		if lines != nil && utf8.Valid(rest[:i]) && json.Valid(rest[:i]) {
			lines = append(lines, json.RawMessage(bytes.Clone(rest[:i])))
		} else {
			lines = nil
		}
		rest = rest[i+1:]
	}
	if lines != nil {
		f.Lines = &lines
	}
	if len(rest) > 0 {
		f.Tail = bytes.Clone(rest)
	}
	if exact {
		f.Bytes = bytes.Clone(data)
		if f.Bytes == nil {
			f.Bytes = []byte{}
		}
	}
	return f
}

// sqliteModel is what the model knows a SQLite session database holds
// once opened: its user_version and tables, and the session's events as
// wire-form lines; or, for a database the store refused, its bytes.
type sqliteModel struct {
	userVersion int64
	tables      []string
	lines       []json.RawMessage
	refused     []byte
}

// append records the events the session appended since the last step
// (an ignorable one makes the table event_envelope, STORE-5).
func (db *sqliteModel) append(events []event.Event) {
	for _, e := range events[len(db.lines):] {
		b, _ := e.MarshalJSON()
		db.lines = append(db.lines, b)
		if e.Ignorable && !slices.Contains(db.tables, "event_envelope") {
			db.tables = append(db.tables, "event_envelope")
			slices.Sort(db.tables)
		}
	}
}

// storeOpenSQLiteModel opens a SQLite session database as the model does
// (STORE-5, STORE-9, STORE-14, STORE-15): the checks one after another,
// the database read plainly and never written.
func (m *Machine) storeOpenSQLiteModel(s Step, data []byte) (Result, error) {
	m.st.db = &sqliteModel{refused: data}
	if *s.ID == "" {
		return Result{}, event.Errorf(event.CodePersistHeaderInvalid, -1, "a session header needs a non-empty id")
	}
	fresh := &sqliteContent{userVersion: persist.SchemaVersion, tables: []string{"events", "sessions"}, seedLength: -1}
	c := fresh
	if len(data) > 0 {
		if !isSQLite(data) {
			return Result{}, event.Errorf(event.CodePersistNotASession, -1, "not a SQLite database")
		}
		dir, err := os.MkdirTemp("", "surface-model-sqlite")
		if err != nil {
			return Result{}, err
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "s.db")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return Result{}, err
		}
		if c, err = readSQLite(path, *s.ID); err != nil {
			return Result{}, err
		}
		switch {
		case c.userVersion == 0 && c.objects == 0:
			c = fresh
		case !c.has("sessions") || !c.has("events"):
			return Result{}, event.Errorf(event.CodePersistNotASession, -1, "a SQLite database without the session tables")
		case c.userVersion != persist.SchemaVersion:
			return Result{}, event.Errorf(event.CodePersistSchemaVersion, -1, "schema version %d, not %d", c.userVersion, persist.SchemaVersion)
		}
	}
	closers, err := m.resumeModel(c.seedLength, c.lines)
	if err != nil {
		return Result{}, err
	}
	m.st.db = &sqliteModel{userVersion: c.userVersion, tables: c.tables, lines: slices.Clone(c.lines)}
	m.st.db.append(m.d.State().Events)
	m.st.live = true
	r := closersResult(closers)
	r.Report = &StoreReport{Events: len(c.lines)}
	return m.state(r), nil
}

func (m *Machine) storeFileSQLite(s Step) (Result, error) {
	f := &StoreFile{Beside: map[string][]byte{}}
	switch {
	case m.persist && m.st.path != "":
		data, err := os.ReadFile(m.st.path)
		if err != nil {
			return Result{}, err
		}
		if s.Exact {
			f.Bytes = data
		}
		if m.st.sess == nil && !s.Exact {
			return Result{}, protocolError("store_file: a refused database is read by its bytes only (exact)")
		}
		if m.st.sess != nil {
			c, err := readSQLite(m.st.path, m.st.id)
			if err != nil {
				return Result{}, err
			}
			lines := c.lines
			if lines == nil {
				lines = []json.RawMessage{}
			}
			f.Lines, f.Tables, f.UserVersion = &lines, c.tables, &c.userVersion
		}
	case !m.persist && m.st.db != nil:
		db := m.st.db
		if db.tables == nil { // refused: left as it was
			if !s.Exact {
				return Result{}, protocolError("store_file: the model reads a refused database's bytes only (exact)")
			}
			f.Bytes = db.refused
			break
		}
		lines := slices.Clone(db.lines)
		if lines == nil {
			lines = []json.RawMessage{}
		}
		v := db.userVersion
		f.Lines, f.Tables, f.UserVersion = &lines, db.tables, &v
	default:
		return Result{}, protocolError("store_file before any store_open")
	}
	return Result{File: f}, nil
}

// resumeModel resumes the model from stored lines: a fork child must hold
// the events its header promises (STORE-14), the lines load as a seed
// (STORE-3) and the closers are appended (STORE-7). seedLength is -1 when
// the header has none.
func (m *Machine) resumeModel(seedLength int64, lines []json.RawMessage) ([]event.Event, error) {
	if seedLength > int64(len(lines)) {
		return nil, event.Errorf(event.CodePersistForkIncomplete, -1, "the header promises %d inherited events, the store holds %d", seedLength, len(lines))
	}
	next, err := m.newSess(m.voc, m.strict).SeedJSON(lines)
	if err != nil {
		return nil, err
	}
	m.d = next
	return m.d.Repair()
}
