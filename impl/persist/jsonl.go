package persist

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/observe"
	"github.com/surfacelog/surface/impl/session"
)

// File is what the JSONL store needs of its file; tests wrap it to inject
// short writes, failing syncs and a full disk.
type File interface {
	WriteAt(p []byte, off int64) (int, error)
	Sync() error
	Truncate(size int64) error
}

// JSONLOption configures a JSONL store.
type JSONLOption func(*JSONL)

// WithSync sets the sync policy (default SyncEveryAppend).
func WithSync(p SyncPolicy) JSONLOption { return func(j *JSONL) { j.policy = p } }

// WithSyncWindow makes the store commit in groups (SyncGroup): a sync
// covers every append of a window, which closes delay after its first
// append or once its appends hold bytes bytes (zero: DefaultSyncDelay,
// DefaultSyncBytes).
func WithSyncWindow(delay time.Duration, bytes int64) JSONLOption {
	return func(j *JSONL) { j.policy, j.group = SyncGroup, newGroupCommit(delay, bytes) }
}

// WithFile wraps the store's file, e.g. to inject faults in tests.
func WithFile(wrap func(File) File) JSONLOption { return func(j *JSONL) { j.wrap = wrap } }

// JSONL is a session log in a JSONL file (STORE-1).
type JSONL struct {
	obs    observe.Observer // nil: nothing measured
	synced time.Duration    // the last write's sync, measured with obs
	mu     sync.Mutex
	path   string
	osFile *os.File
	file   File
	wrap   func(File) File
	policy SyncPolicy
	group  groupCommit // SyncGroup's open window
	header Header
	log    *event.Log // the events loaded, until Resume takes them
	report LoadReport
	size   int64 // bytes of good content; the next line goes here
	next   int64 // seq of the next event: the number of events in the file
	torn   bool  // bytes past size must be cut off before the next write
	// tornBytes is a torn tail load found, until quarantineTorn copies it.
	tornBytes []byte
	broken    error // set when a failed write could not be undone
	closed    bool
	scratch   []byte
	// pending is a fork child not written yet (STORE-14): the file does
	// not exist until Fork links it into place, complete.
	pending bool
	// Checkpoints (STORE-18, WithCheckpoints): every is their spacing;
	// with tracked set, starts holds where the line of each event from
	// seq lineBase on starts, crc is the CRC-32C of the size good bytes,
	// and cpLines where the lines of the surface nodes of the checkpoint
	// the store was opened from are. restore is that checkpoint, until
	// Resume takes it, and prefixEnd the offset it covers to.
	cpEvery   int
	cpCovers  int64 // the events of the checkpoint written or opened from (0: none)
	tracked   bool
	starts    []int64
	lineBase  int64
	crc       uint32
	cpLines   map[int64]lineRef
	restore   *restoreFrom
	prefixEnd int64
}

// OpenJSONL opens the session file at path for writing. A file that does
// not exist is created with header, atomically: it appears with a complete
// header line or not at all. An existing file must be a session log this
// format wrote (STORE-9): a file that does not begin with a session header,
// even an empty one, is refused with persist.not_a_session and left as it
// was. OpenJSONL takes the file's lock (STORE-4), checks the header
// (STORE-1) and reads every event. A torn last line (STORE-2) is copied to
// a quarantine file beside the log (STORE-8), named in the report, and cut
// off before the first append; no other byte of an existing file is ever
// changed.
func OpenJSONL(ctx context.Context, path string, header Header, opts ...JSONLOption) (*JSONL, error) {
	if err := session.Cancelled(ctx, -1); err != nil {
		return nil, err
	}
	j := &JSONL{path: path, policy: SyncEveryAppend}
	for _, o := range opts {
		o(j)
	}
	if err := checkHeader(&header); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) && forkChild(header) {
		// A fork child (its header names a parent): Fork writes it whole, or nothing (STORE-14).
		header.Version = SessionFormatVersion
		j.header, j.pending = header, true
		j.log = new(event.Decoder).Log()
		return j, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		if err := createJSONL(path, header); err != nil {
			return nil, err
		}
		f, err = os.OpenFile(path, os.O_RDWR, 0)
	}
	if err != nil {
		return nil, ioError(err, "open %s", path)
	}
	if err := lockFile(f, path); err != nil {
		f.Close()
		return nil, err
	}
	j.osFile, j.file = f, File(f)
	if j.wrap != nil {
		j.file = j.wrap(j.file)
	}
	if err := j.load(j.cpEvery > 0); err != nil {
		f.Close()
		return nil, err
	}
	if j.header.ID != header.ID {
		f.Close()
		return nil, event.Errorf(event.CodePersistWrongSession, -1, "%s holds session %q, not %q; it was left as it is", path, j.header.ID, header.ID)
	}
	if err := j.quarantineTorn(); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

// createJSONL makes a new session file holding just the header line: the
// line is written and synced under a temporary name in the same directory,
// then linked to path, which fails if path exists. A crash leaves either no
// file at path or a complete one (and perhaps a stray temporary file, never
// the log). When another process created path first, createJSONL leaves
// its file alone and returns nil: the caller then opens and checks it.
func createJSONL(path string, header Header) error {
	header.Version = SessionFormatVersion
	line, err := json.Marshal(headerLine{Type: "session", Header: header})
	if err != nil {
		return ioError(err, "encode header")
	}
	line = append(line, '\n')
	dir, base := filepath.Split(path)
	tmp, err := os.CreateTemp(dir, "."+base+".creating-*")
	if err != nil {
		return ioError(bare(err), "create %s", path)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(line); err != nil {
		tmp.Close()
		return ioError(bare(err), "write header of %s", path)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return ioError(bare(err), "sync %s", path)
	}
	if err := tmp.Close(); err != nil {
		return ioError(err, "create %s", path)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return ioError(bare(err), "create %s", path)
	}
	return syncDir(path)
}

// dirOf is the directory of path.
func dirOf(path string) string { return filepath.Dir(path) }

// load reads the file; with fromCheckpoint set (a store keeping
// checkpoints) it starts from the checkpoint beside it when that one
// matches the file (STORE-18).
func (j *JSONL) load(fromCheckpoint bool) error {
	size := int64(-1)
	if fi, err := j.osFile.Stat(); err == nil {
		size = fi.Size()
	}
	if fromCheckpoint && size >= 0 {
		if ok, err := j.loadFromCheckpoint(size); ok || err != nil {
			return err
		}
	}
	ignored := j.report.CheckpointIgnored
	sc, err := scanTracked(io.NewSectionReader(j.osFile, 0, max(size, 1<<62)), j.path, size, j.cpEvery > 0)
	if err != nil {
		return err
	}
	j.header, j.log, j.size, j.next = sc.header, sc.log, sc.good, int64(sc.log.Len())
	j.starts, j.crc, j.lineBase, j.tracked = sc.starts, sc.crc, 0, sc.track
	j.report = LoadReport{Events: sc.log.Len(), TornBytes: int64(len(sc.torn)), CheckpointIgnored: ignored}
	j.tornBytes = sc.torn
	return nil
}

// QuarantineName is the file beside path to which a writer copies a
// torn last line that begins at offset before it cuts it off (STORE-8):
// PATH.torn-OFFSET (with .2, .3, ... after it when that name holds other
// bytes).
func QuarantineName(path string, offset int64) string {
	return path + ".torn-" + strconv.FormatInt(offset, 10)
}

// quarantineTorn copies a torn tail found by load beside the file
// (STORE-8). OpenJSONL calls it once the file is known to hold the
// session asked for: nothing is written beside a file that is not.
func (j *JSONL) quarantineTorn() error {
	if len(j.tornBytes) == 0 {
		return nil
	}
	q, err := quarantine(j.path, j.size, j.tornBytes)
	if err != nil {
		return err
	}
	j.torn, j.report.Quarantine, j.tornBytes = true, q, nil
	return nil
}

// quarantine copies the torn bytes that start at offset to a new file
// beside the log (STORE-8) and returns its name. It never overwrites: a
// name that holds the same bytes (a second open of the same torn file) is
// reused, a name that holds other bytes is skipped.
func quarantine(path string, offset int64, torn []byte) (string, error) {
	base := QuarantineName(path, offset)
	for n := 1; n <= 1000; n++ {
		name := base
		if n > 1 {
			name += "." + strconv.Itoa(n)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			if old, rerr := os.ReadFile(name); rerr == nil && bytes.Equal(old, torn) {
				return name, nil
			}
			continue
		}
		if err != nil {
			return "", ioError(err, "quarantine the torn tail of %s", path)
		}
		_, werr := f.Write(torn)
		serr := f.Sync()
		cerr := f.Close()
		if err := errors.Join(werr, serr, cerr); err != nil {
			os.Remove(name)
			return "", ioError(err, "quarantine the torn tail of %s", path)
		}
		return name, syncDir(name)
	}
	return "", event.Errorf(event.CodePersistIO, -1, "quarantine the torn tail of %s: %s.* are all taken", path, base)
}

// scanned is what scan found in a JSONL session file.
type scanned struct {
	header Header
	log    *event.Log
	good   int64  // length of the header and the complete event lines
	torn   []byte // a torn last line (STORE-2), or nil
	// With tracking on (a store that keeps checkpoints): where each event's
	// line starts, and the CRC-32C of the good bytes.
	track  bool
	starts []int64
	crc    uint32
	// base is the number of events before the first line scanned (a scan
	// from a checkpoint's offset).
	base int
}

// scan reads a JSONL session file: its header, its events, and a torn
// last line (STORE-2). A line that is complete and JSON but not an event
// is an error naming the line, wherever it is; a line that is not JSON is
// a torn tail when it is the last line and persist.corrupt otherwise.
//
// size, when not -1, is the file's size: once the first lines are read,
// the decoder makes room for as many events as the file seems to hold, so
// a large log is not copied as it grows.
func scan(f io.Reader, path string, size int64) (sc scanned, err error) {
	return scanTracked(f, path, size, false)
}

// scanTracked is scan, keeping the line starts and the CRC when track is
// set.
func scanTracked(f io.Reader, path string, size int64, track bool) (sc scanned, err error) {
	var d event.Decoder
	defer func() { sc.log = d.Log() }()
	sc.track = track
	r := bufio.NewReaderSize(f, 64<<10)
	line, rerr := readLine(r, MaxHeaderBytes)
	if rerr == errLineTooLong {
		return sc, event.Errorf(event.CodePersistNotASession, -1, "%s is not a session log: its first line is longer than %d bytes, which no session header is; it was left as it is", path, MaxHeaderBytes)
	}
	if rerr != nil && rerr != io.EOF {
		return sc, ioError(rerr, "read %s", path)
	}
	if sc.header, err = readHeader(line, path); err != nil {
		return sc, err
	}
	sc.good = int64(len(line))
	if track {
		sc.crc = crc32.Update(0, castagnoli, line)
	}
	return sc, scanEvents(r, &sc, &d, path, 2, size)
}

// scanEvents reads event lines from r, the first of them line lineNo of
// the file, starting sc.good bytes into it, into d (see scan).
func scanEvents(r *bufio.Reader, sc *scanned, d *event.Decoder, path string, lineNo int, size int64) error {
	from := sc.good
	for read := 1; ; read, lineNo = read+1, lineNo+1 {
		line, rerr := readLine(r, MaxLineBytes)
		if rerr == errLineTooLong {
			return event.Errorf(event.CodePersistCorrupt, -1, "%s: line %d is longer than %d bytes (STORE-2)", path, lineNo, MaxLineBytes)
		}
		if rerr != nil && rerr != io.EOF {
			return ioError(rerr, "read %s", path)
		}
		if len(line) == 0 {
			return nil
		}
		if line[len(line)-1] != '\n' { // (a) a last line without its newline
			sc.torn = append([]byte(nil), line...)
			return nil
		}
		// One scan: the envelope is decoded and the data checked and
		// compacted into the log's memory (event.Decoder).
		derr := d.Decode(line[:len(line)-1])
		if derr == nil {
			if sc.track {
				sc.starts = append(sc.starts, sc.good)
				sc.crc = crc32.Update(sc.crc, castagnoli, line)
			}
			sc.good += int64(len(line))
			if read == 1024 && size > 0 {
				perLine := (sc.good - from) / 1024
				more := max(int((size-sc.good)/max(perLine, 1)*21/20), 0)
				d.Grow(more)
				if sc.track {
					sc.starts = slices.Grow(sc.starts, more)
				}
			}
			continue
		}
		if event.ValidSyntax(line[:len(line)-1]) { // JSON, but not an event: never cut
			return lineError(derr, path, lineNo, sc.base+d.Len())
		}
		if _, perr := r.Peek(1); perr == io.EOF { // (b) a last line that is not JSON
			sc.torn = append([]byte(nil), line...)
			return nil
		}
		return event.Errorf(event.CodePersistCorrupt, -1, "%s: line %d is not JSON; only the last line may be torn", path, lineNo)
	}
}

// lineError names the file and line of a rejected event line.
func lineError(err error, path string, lineNo, index int) error {
	var ee *event.Error
	if errors.As(err, &ee) {
		out := *ee
		out.Index = index
		out.Detail = path + ": line " + strconv.Itoa(lineNo) + ": " + ee.Detail
		return &out
	}
	return err
}

// MaxHeaderBytes and MaxLineBytes bound the lines a JSONL reader takes
// (STORE-1, STORE-2): a first line longer than MaxHeaderBytes is no session
// header (persist.not_a_session), an event line longer than MaxLineBytes is
// persist.corrupt. So a reader never holds more than that much of one line,
// whatever it is pointed at (a device that never ends a line, say).
const (
	MaxHeaderBytes = 1 << 20
	MaxLineBytes   = 256 << 20
)

var errLineTooLong = errors.New("line too long")

// readLine returns the next line with its '\n', of at most limit bytes
// (errLineTooLong beyond).
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		if len(line) > limit {
			return nil, errLineTooLong
		}
		return line, err
	}
	buf := append([]byte(nil), line...)
	for err == bufio.ErrBufferFull {
		line, err = r.ReadSlice('\n')
		buf = append(buf, line...)
		if len(buf) > limit {
			return nil, errLineTooLong
		}
	}
	return buf, err
}

type headerLine struct {
	Type string `json:"type"`
	Header
}

// readHeader checks the first line of a file (STORE-1, STORE-9).
func readHeader(line []byte, path string) (Header, error) {
	notOurs := func(why string) error {
		return event.Errorf(event.CodePersistNotASession, -1, "%s is not a session log: %s; it was left as it is", path, why)
	}
	switch {
	case len(line) == 0:
		return Header{}, notOurs("it is empty")
	case line[len(line)-1] != '\n':
		return Header{}, notOurs("its first line is not complete")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return Header{}, notOurs("its first line is not a JSON object")
	}
	if string(raw["type"]) != `"session"` || raw["version"] == nil {
		return Header{}, notOurs(`its first line is not a header {"type":"session","version":...}`)
	}
	if v := string(raw["version"]); v != strconv.Itoa(SessionFormatVersion) {
		if !event.ValidSyntax(raw["version"]) || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
			return Header{}, notOurs("its header's version is not a number")
		}
		// The version is read as JSON.parse reads it (STORE-1): 0.0, 0e0
		// and -0 are 0.
		if f, err := strconv.ParseFloat(v, 64); err != nil || f != SessionFormatVersion {
			return Header{}, event.Errorf(event.CodePersistFormatVersion, -1, "%s: session format version %s, this build reads exactly %d", path, v, SessionFormatVersion)
		}
	}
	var h headerLine
	if string(raw["version"]) != "0" {
		// 0.0, 0e0, -0: the value 0, which an int field refuses.
		raw["version"] = json.RawMessage("0")
		line, _ = json.Marshal(raw)
	}
	if err := json.Unmarshal(line, &h); err != nil {
		return Header{}, event.Errorf(event.CodePersistCorrupt, -1, "%s: line 1: the session header is malformed: %v", path, err)
	}
	return h.Header, nil
}

func errOr(err, fallback error) error {
	if err != nil {
		return err
	}
	return fallback
}

// Header implements Store.
func (j *JSONL) Header() Header { return j.header }

// Events implements Store.
// The events are those loaded at open, until Resume hands them to the
// session (the store keeps no copy of a resumed log).
// A store opened from a checkpoint reads the events it covers back first;
// when they cannot be read back, Events returns nil (never the tail
// alone) and ReadEvents says why.
func (j *JSONL) Events() []event.Event {
	events, _ := j.ReadEvents()
	return events
}

// ReadEvents is Events with the error of a read back that failed: a store
// opened from a checkpoint whose covered events can no longer be read, or
// are not the events it covers (persist.corrupt).
func (j *JSONL) ReadEvents() ([]event.Event, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.restore == nil || j.log == nil {
		return j.log.Events(), nil
	}
	prefix, err := j.readPrefix(j.prefixEnd)
	return withPrefix(prefix, err, j.restore.cp.Events, j.log)
}

// track records the lines just written at the store's end. Caller holds
// j.mu.
func (j *JSONL) track(lines []byte) {
	j.crc = crc32.Update(j.crc, castagnoli, lines)
	at := j.size
	for len(lines) > 0 {
		j.starts = append(j.starts, at)
		n := bytes.IndexByte(lines, '\n') + 1
		at += int64(n)
		lines = lines[n:]
	}
}

// takeLog implements logStore.
func (j *JSONL) takeLog() *event.Log { return j.log }

// releaseLog implements logStore.
func (j *JSONL) releaseLog() { j.log = nil }

// Report implements Store.
func (j *JSONL) Report() LoadReport { return j.report }

func (j *JSONL) location(index int) string {
	return j.path + ": line " + strconv.Itoa(index+2)
}

// Path is the file's path.
func (j *JSONL) Path() string { return j.path }

// Append implements Store: one write of the events' lines, then one sync
// when the policy syncs any of them (STORE-17). ctx is checked before the
// write and before the sync (a write handed to the operating system is not
// interrupted). On failure, cancellation included, the file is cut back to
// its last good size; if even that fails the store refuses further appends
// (STORE-6).
func (j *JSONL) Append(ctx context.Context, events ...event.Event) error {
	if j.obs == nil || len(events) == 0 {
		_, err := j.write(ctx, events, new(time.Duration))
		return err
	}
	start := time.Now()
	var took time.Duration
	synced, err := j.write(ctx, events, &took)
	n := len(events)
	if err != nil {
		n = 0
	}
	j.obs.StoreWrite(ctx, observe.StoreWrite{Timing: observe.Since(start), Store: "jsonl", Seq: events[0].Seq, Events: n, Synced: synced, Sync: took, Err: err})
	return err
}

// setObserver implements observed.
func (j *JSONL) setObserver(o observe.Observer) { j.obs = o }

// write is Append; synced says whether it forced the events to stable
// storage, and with an observer *took is how long that took.
func (j *JSONL) write(ctx context.Context, events []event.Event, took *time.Duration) (synced bool, err error) {
	if len(events) == 0 {
		return false, nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	first := events[0].Seq
	if err := closedError(j.closed, j.broken, first, "store "+j.path); err != nil {
		return false, err
	}
	if j.pending {
		return false, event.Errorf(event.CodePersistForkIncomplete, first, "store %s is a fork child that does not exist yet: persist.Fork writes it (STORE-14)", j.path)
	}
	sync := false
	for k := range events {
		if events[k].Seq != j.next+int64(k) {
			return false, event.Errorf(event.CodePersistConflict, events[k].Seq, "store %s holds %d events: event %d is not the next one (two sessions write through one store?)", j.path, j.next+int64(k), events[k].Seq)
		}
		sync = sync || j.policy.syncs(events[k].Type)
	}
	if j.policy == SyncGroup && len(events) > 1 {
		sync = true // a batch ends synced
	}
	if err := session.Cancelled(ctx, first); err != nil {
		return false, err
	}
	if j.torn {
		if err := j.file.Truncate(j.size); err != nil {
			return false, ioError(err, "cut the torn tail of %s", j.path)
		}
		j.torn = false
	}
	lines := j.scratch[:0]
	for k := range events {
		var err error
		if lines, err = events[k].AppendJSON(lines); err != nil {
			return false, err
		}
		lines = append(lines, '\n')
	}
	j.scratch = lines[:0]
	n, werr := j.file.WriteAt(lines, j.size)
	if werr == nil && n != len(lines) {
		werr = io.ErrShortWrite
	}
	if werr == nil && j.policy == SyncGroup && !sync {
		sync = j.group.wrote(int64(n))
	}
	if werr == nil && sync {
		if werr = session.Cancelled(ctx, first); werr == nil {
			var began time.Time
			if j.obs != nil {
				began = time.Now()
			}
			werr = j.file.Sync()
			if j.obs != nil {
				*took = time.Since(began)
			}
		}
	}
	if werr != nil {
		if terr := j.file.Truncate(j.size); terr != nil {
			j.broken = errors.Join(werr, terr)
		}
		var ee *event.Error
		if errors.As(werr, &ee) {
			return false, werr // cancelled before the sync: cut back, nothing acknowledged
		}
		if len(events) == 1 {
			return false, ioError(werr, "append event %d to %s", first, j.path)
		}
		return false, ioError(werr, "append events %d to %d to %s", first, first+int64(len(events))-1, j.path)
	}
	if j.tracked {
		j.track(lines)
	}
	j.size += int64(len(lines))
	j.next += int64(len(events))
	if j.policy == SyncGroup {
		if sync {
			j.group.synced()
		} else {
			j.group.arm(j.groupSync)
		}
	}
	return sync, nil
}

// groupSync closes a SyncGroup window when its delay has passed: one sync
// for every append since the last. A failed sync leaves the store
// refusing appends: what it acknowledged since the last sync may be lost.
func (j *JSONL) groupSync() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.group.timer = nil
	if j.closed || j.broken != nil || j.group.unsynced == 0 {
		return
	}
	if err := j.file.Sync(); err != nil {
		j.broken = ioError(err, "sync %s (group commit): appends since the last sync may be lost", j.path)
		return
	}
	j.group.synced()
}

// writeSeed implements seedWriter: the header (with seedLength) and the
// inherited events are written and synced under a temporary name, locked,
// and then linked into place (a pending child: never over an existing
// file) or renamed over the header-only file this store created; a crash
// at any point leaves no child, or this store's empty one, or the whole
// child (STORE-14).
func (j *JSONL) writeSeed(ctx context.Context, h Header, events []event.Event) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := closedError(j.closed, j.broken, 0, "store "+j.path); err != nil {
		return err
	}
	if j.next != 0 {
		return event.Errorf(event.CodePersistConflict, 0, "fork target %s is not empty", j.path)
	}
	h.Version = SessionFormatVersion
	head, err := json.Marshal(headerLine{Type: "session", Header: h})
	if err != nil {
		return ioError(err, "encode header")
	}
	dir, base := filepath.Split(j.path)
	tmp, err := os.CreateTemp(dir, "."+base+".forking-*")
	if err != nil {
		return ioError(bare(err), "create the fork child %s", j.path)
	}
	linked := false
	defer func() {
		if !linked {
			tmp.Close()
		}
		os.Remove(tmp.Name())
	}()
	if err := lockFile(tmp, j.path); err != nil {
		return err
	}
	w := bufio.NewWriterSize(tmp, 256<<10)
	w.Write(append(head, '\n'))
	size := int64(len(head) + 1)
	line := j.scratch[:0]
	for k := range events {
		line, err = events[k].AppendJSON(line[:0])
		if err != nil {
			return err
		}
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			return ioError(bare(err), "write the fork child %s", j.path)
		}
		size += int64(len(line))
		if k%1024 == 1023 {
			if err := session.Cancelled(ctx, 0); err != nil {
				return err
			}
		}
		if forkHook != nil {
			w.Flush()
			forkHook(k)
		}
	}
	if err := w.Flush(); err != nil {
		return ioError(bare(err), "write the fork child %s", j.path)
	}
	if err := session.Cancelled(ctx, 0); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return ioError(bare(err), "sync the fork child %s", j.path)
	}
	if j.pending {
		err = os.Link(tmp.Name(), j.path)
		if errors.Is(err, fs.ErrExist) {
			return event.Errorf(event.CodePersistLocked, 0, "%s appeared while the fork was written: another writer made it; it was left as it is", j.path)
		}
	} else {
		err = os.Rename(tmp.Name(), j.path)
	}
	if err != nil {
		return ioError(bare(err), "put the fork child %s in place", j.path)
	}
	if err := syncDir(j.path); err != nil {
		return err
	}
	linked = true
	if forkHook != nil {
		forkHook(len(events))
	}
	if j.osFile != nil {
		j.osFile.Close() // the header-only file, now replaced
	}
	j.osFile, j.file = tmp, File(tmp)
	if j.wrap != nil {
		j.file = j.wrap(j.file)
	}
	j.header, j.pending, j.torn = h, false, false
	j.size, j.next = size, int64(len(events))
	j.tracked = false // no line index of the seed: no checkpoint until it is opened again
	j.scratch = line[:0]
	return nil
}

// Sync implements Store.
func (j *JSONL) Sync(ctx context.Context) error {
	if err := session.Cancelled(ctx, -1); err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.pending {
		return nil
	}
	if err := j.file.Sync(); err != nil {
		return ioError(err, "sync %s", j.path)
	}
	j.group.synced()
	return nil
}

// Close implements Store: it syncs (unless ctx has ended) and releases
// the file and its lock.
func (j *JSONL) Close(ctx context.Context) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil
	}
	j.closed = true
	defer detach(j)
	j.group.synced() // the sync below covers the open window
	if j.pending {
		return nil // nothing was written: no child
	}
	serr := session.Cancelled(ctx, -1)
	if serr == nil {
		serr = j.file.Sync()
	}
	cerr := j.osFile.Close() // releases the flock
	if err := errors.Join(serr, cerr); err != nil {
		return ioError(err, "close %s", j.path)
	}
	return nil
}

// ReadJSONL reads a JSONL session file without locking or changing it:
// the header, the events, and the length of a torn last line (STORE-2).
func ReadJSONL(path string) (Header, []event.Event, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, nil, 0, ioError(err, "open %s", path)
	}
	defer f.Close()
	size := int64(-1)
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	return DecodeJSONL(f, path, size)
}

// DecodeJSONL reads a JSONL session file from r (name is used in errors;
// size is the file's size, or -1 when unknown): the header, the events,
// and the length of a torn last line (STORE-2).
func DecodeJSONL(r io.Reader, name string, size int64) (Header, []event.Event, int64, error) {
	sc, err := scan(r, name, size)
	return sc.header, sc.log.Events(), int64(len(sc.torn)), err
}

// DecodeJSONLLog is DecodeJSONL with the events as the decoder left them:
// an *event.Log whose data was checked while it was read, for
// session.SeedLog (one scan per event, as Resume reads a store). The Log
// is never nil.
func DecodeJSONLLog(r io.Reader, name string, size int64) (Header, *event.Log, int64, error) {
	sc, err := scan(r, name, size)
	if sc.log == nil {
		sc.log = &event.Log{}
	}
	return sc.header, sc.log, int64(len(sc.torn)), err
}

// crash drops the store the way a killed process would: no sync, the file
// descriptor (and with it the lock) released. For tests.
func (j *JSONL) crash() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.closed = true
	j.osFile.Close()
	detach(j)
}

// unwritten implements seedWriter.
func (j *JSONL) unwritten() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.pending
}
