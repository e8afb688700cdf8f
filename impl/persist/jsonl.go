package persist

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/surfacelog/surface/impl/event"
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

// WithFile wraps the store's file, e.g. to inject faults in tests.
func WithFile(wrap func(File) File) JSONLOption { return func(j *JSONL) { j.wrap = wrap } }

// JSONL is a session log in a JSONL file (STORE-1).
type JSONL struct {
	mu      sync.Mutex
	path    string
	osFile  *os.File
	file    File
	wrap    func(File) File
	policy  SyncPolicy
	header  Header
	events  []event.Event
	report  LoadReport
	size    int64 // bytes of good content; the next line goes here
	torn    bool  // bytes past size must be cut off before the next write
	broken  error // set when a failed write could not be undone
	closed  bool
	scratch []byte
}

// OpenJSONL opens the session file at path for writing, creating it with
// header when it does not exist (or holds no complete header line, which
// only a crash during creation leaves). It takes the file's lock
// (STORE-4), checks the header (STORE-1) and reads every event, noting a
// torn last line (STORE-2). An existing file is not changed by opening; a
// torn tail is cut off before the first append.
func OpenJSONL(path string, header Header, opts ...JSONLOption) (*JSONL, error) {
	j := &JSONL{path: path, policy: SyncEveryAppend}
	for _, o := range opts {
		o(j)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
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
	if err := j.load(header); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

func (j *JSONL) load(header Header) error {
	h, events, good, torn, err := scan(j.osFile, j.path)
	if errors.Is(err, errNoHeader) {
		// Empty, or creation was interrupted before the header line was
		// complete: nothing was ever acknowledged.
		return j.create(header)
	}
	if err != nil {
		return err
	}
	j.header, j.events, j.size = h, events, good
	j.torn = torn > 0
	j.report = LoadReport{Events: len(events), TornBytes: torn}
	return nil
}

var errNoHeader = errors.New("no complete header line")

// scan reads a JSONL session file: its header, its events, the length of
// the good content, and the length of a torn last line (STORE-2).
func scan(f io.Reader, path string) (h Header, events []event.Event, good, torn int64, err error) {
	r := bufio.NewReaderSize(f, 64<<10)
	line, rerr := readLine(r)
	if rerr != nil && rerr != io.EOF {
		return h, nil, 0, 0, ioError(rerr, "read %s", path)
	}
	if len(line) == 0 || line[len(line)-1] != '\n' {
		return h, nil, 0, 0, errNoHeader
	}
	if h, err = readHeader(line, path); err != nil {
		return h, nil, 0, 0, err
	}
	good = int64(len(line))
	for lineNo := 2; ; lineNo++ {
		line, rerr = readLine(r)
		if rerr != nil && rerr != io.EOF {
			return h, nil, 0, 0, ioError(rerr, "read %s", path)
		}
		if len(line) == 0 {
			return h, events, good, 0, nil
		}
		complete := line[len(line)-1] == '\n'
		var e event.Event
		var derr error
		if complete {
			e, derr = event.Decode(line[:len(line)-1])
		}
		if !complete || derr != nil {
			if _, perr := r.Peek(1); complete && perr != io.EOF {
				return h, nil, 0, 0, event.Errorf(event.CodePersistCorrupt, -1, "%s: line %d is damaged (%v); only the last line may be torn", path, lineNo, derr)
			}
			return h, events, good, int64(len(line)), nil
		}
		events = append(events, e)
		good += int64(len(line))
	}
}

// readLine returns the next line with its '\n', of any length.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, err
	}
	buf := append([]byte(nil), line...)
	for err == bufio.ErrBufferFull {
		line, err = r.ReadSlice('\n')
		buf = append(buf, line...)
	}
	return buf, err
}

type headerLine struct {
	Type string `json:"type"`
	Header
}

func readHeader(line []byte, path string) (Header, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return Header{}, event.Errorf(event.CodePersistCorrupt, -1, "%s: the header line is not a JSON object", path)
	}
	var h headerLine
	if err := json.Unmarshal(line, &h); err != nil || h.Type != "session" || raw["version"] == nil {
		return Header{}, event.Errorf(event.CodePersistCorrupt, -1, "%s: the first line is not a session header", path)
	}
	if h.Version != SessionFormatVersion {
		return Header{}, event.Errorf(event.CodePersistFormatVersion, -1, "%s: session format version %d, this build reads %d", path, h.Version, SessionFormatVersion)
	}
	return h.Header, nil
}

func (j *JSONL) create(header Header) error {
	header.Version = SessionFormatVersion
	line, err := json.Marshal(headerLine{Type: "session", Header: header})
	if err != nil {
		return ioError(err, "encode header")
	}
	line = append(line, '\n')
	if err := j.file.Truncate(0); err != nil {
		return ioError(err, "truncate %s", j.path)
	}
	if n, err := j.file.WriteAt(line, 0); err != nil || n != len(line) {
		return ioError(errOr(err, io.ErrShortWrite), "write header of %s", j.path)
	}
	if err := j.file.Sync(); err != nil {
		return ioError(err, "sync %s", j.path)
	}
	j.header, j.size = header, int64(len(line))
	j.events, j.report, j.torn = nil, LoadReport{}, false
	return nil
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
func (j *JSONL) Events() []event.Event { return j.events }

// Report implements Store.
func (j *JSONL) Report() LoadReport { return j.report }

// Path is the file's path.
func (j *JSONL) Path() string { return j.path }

// Append implements Store: one write of one line, then a sync under the
// policy. On failure the file is cut back to its last good size; if even
// that fails the store refuses further appends (STORE-6).
func (j *JSONL) Append(e event.Event) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed || j.broken != nil {
		return event.Errorf(event.CodePersistClosed, e.Seq, "store %s is closed or failed earlier: %v", j.path, j.broken)
	}
	if j.torn {
		if err := j.file.Truncate(j.size); err != nil {
			return ioError(err, "cut the torn tail of %s", j.path)
		}
		j.torn = false
	}
	line, err := e.AppendJSON(j.scratch[:0])
	if err != nil {
		return err
	}
	line = append(line, '\n')
	j.scratch = line[:0]
	n, werr := j.file.WriteAt(line, j.size)
	if werr == nil && n != len(line) {
		werr = io.ErrShortWrite
	}
	if werr == nil && (j.policy == SyncEveryAppend || j.policy == SyncOnTurnEnd && e.Type == event.TypeTurnEnd) {
		if err := j.file.Sync(); err != nil {
			werr = err
		}
	}
	if werr != nil {
		if terr := j.file.Truncate(j.size); terr != nil {
			j.broken = errors.Join(werr, terr)
		}
		return ioError(werr, "append event %d to %s", e.Seq, j.path)
	}
	j.size += int64(len(line))
	return nil
}

// Sync implements Store.
func (j *JSONL) Sync() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.file.Sync(); err != nil {
		return ioError(err, "sync %s", j.path)
	}
	return nil
}

// Close implements Store.
func (j *JSONL) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil
	}
	j.closed = true
	serr := j.file.Sync()
	cerr := j.osFile.Close() // releases the flock
	if err := errors.Join(serr, cerr); err != nil {
		return ioError(err, "close %s", j.path)
	}
	return nil
}

// ReadJSONL reads a JSONL session file without locking or changing it:
// the header, the events, and the length of a torn last line.
func ReadJSONL(path string) (Header, []event.Event, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, nil, 0, ioError(err, "open %s", path)
	}
	defer f.Close()
	h, events, _, torn, err := scan(f, path)
	if errors.Is(err, errNoHeader) {
		err = event.Errorf(event.CodePersistCorrupt, -1, "%s: no complete header line", path)
	}
	return h, events, torn, err
}

// crash drops the store the way a killed process would: no sync, the file
// descriptor (and with it the lock) released. For tests.
func (j *JSONL) crash() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.closed = true
	j.osFile.Close()
}
