package persist

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

// castagnoli is the CRC-32C table of checkpoints (STORE-18).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CheckpointFormat and CheckpointVersion name the JSONL store's checkpoint
// file (STORE-18); a file of any other format or version is ignored.
const (
	CheckpointFormat  = "surface-checkpoint"
	CheckpointVersion = 1
)

// CheckpointName is the file beside the log at path that holds its
// checkpoint: PATH.checkpoint.
func CheckpointName(path string) string { return path + ".checkpoint" }

// WithCheckpoints makes the JSONL store keep a checkpoint beside the log
// (STORE-18, CheckpointName), written at the first turn/end at least every
// events after the last one (and after 4*every events without one), and
// makes opening the store use the checkpoint it finds: the events it
// covers are not read (but for the surface's own), so a Resume costs the
// events after it. A checkpoint that does not match the log is ignored and
// the whole log read (LoadReport.CheckpointIgnored says why). The
// checkpoint file is written without a sync: one lost or torn by a crash
// is ignored. every < 1 is 1.
func WithCheckpoints(every int) JSONLOption {
	return func(j *JSONL) { j.cpEvery = max(every, 1) }
}

// checkpointFile is the JSON of the checkpoint file.
type checkpointFile struct {
	Format     string          `json:"format"`
	Version    int             `json:"version"`
	Session    string          `json:"session"`
	Events     int64           `json:"events"`
	Offset     int64           `json:"offset"`
	PrefixCRC  uint32          `json:"prefixCRC32C"`
	Last       *checkpointLine `json:"last,omitempty"`
	Nodes      []checkpointRef `json:"nodes"`
	NextLabel  int64           `json:"nextLabel"`
	Generation int64           `json:"generation"`
	Ledger     json.RawMessage `json:"ledger"`
	// Sum is the CRC-32C of the file's JSON written with sum 0.
	Sum uint32 `json:"sum"`
}

// checkpointLine is where the line of the last covered event is, and its
// SHA-256.
type checkpointLine struct {
	Offset int64  `json:"offset"`
	Length int64  `json:"length"`
	SHA256 string `json:"sha256"`
}

// checkpointRef is one surface node: its seq and label, and where its
// event's line is (without its newline).
type checkpointRef struct {
	Seq    int64 `json:"seq"`
	Label  int64 `json:"label"`
	Offset int64 `json:"offset"`
	Length int64 `json:"length"`
}

// lineRef is where an event's line is: its first byte and its length
// without the newline.
type lineRef struct{ offset, length int64 }

// restoreFrom is what a store opened from a checkpoint hands to Resume.
type restoreFrom struct {
	cp    session.Checkpoint
	nodes []event.Event
}

// rowDigest is the SHA-256 of an event row's columns, each with its length
// before it.
func rowDigest(typ, data, sources, op []byte, time int64) string {
	h := sha256.New()
	for _, c := range [][]byte{typ, []byte(strconv.FormatInt(time, 10)), data, sources, op} {
		fmt.Fprintf(h, "%d:", len(c))
		h.Write(c)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// encodeCheckpoint is the checkpoint file's content.
func encodeCheckpoint(f checkpointFile) ([]byte, error) {
	f.Sum = 0
	b, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	f.Sum = crc32.Checksum(b, castagnoli)
	return json.Marshal(f)
}

// decodeCheckpoint reads a checkpoint file's content and checks its sum,
// format and version.
func decodeCheckpoint(b []byte) (checkpointFile, error) {
	var f checkpointFile
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("not a checkpoint: %v", err)
	}
	if f.Format != CheckpointFormat || f.Version != CheckpointVersion {
		return f, fmt.Errorf("format %q version %d, not %q version %d", f.Format, f.Version, CheckpointFormat, CheckpointVersion)
	}
	sum := f.Sum
	f.Sum = 0
	b2, err := json.Marshal(f)
	if err != nil || crc32.Checksum(b2, castagnoli) != sum {
		return f, errors.New("its checksum does not match: torn or changed")
	}
	f.Sum = sum
	return f, nil
}

// writeCheckpoint writes cp beside the log, replacing the last one. It is
// the session's checkpoint writer (session.WithCheckpoints); a checkpoint
// it cannot place (a node whose line it does not know) or write is not
// written, and the old one stays.
func (j *JSONL) writeCheckpoint(cp session.Checkpoint) {
	j.mu.Lock()
	f, ok := j.checkpointOf(cp)
	j.mu.Unlock()
	if !ok {
		return
	}
	b, err := encodeCheckpoint(f)
	if err != nil {
		return
	}
	dir, base := filepath.Split(CheckpointName(j.path))
	tmp, err := os.CreateTemp(dir, "."+base+"-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), CheckpointName(j.path)) != nil {
		os.Remove(tmp.Name())
		return
	}
	j.mu.Lock()
	j.cpCovers = f.Events
	j.mu.Unlock()
}

// checkpointCovers implements checkpointed.
func (j *JSONL) checkpointCovers() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.cpCovers
}

// checkpointOf places cp in the file: the offsets of its lines. Caller
// holds j.mu.
func (j *JSONL) checkpointOf(cp session.Checkpoint) (checkpointFile, bool) {
	if j.closed || j.broken != nil || j.pending || !j.tracked || cp.Events > j.next || cp.Events < j.lineBase {
		return checkpointFile{}, false
	}
	f := fileOf(cp, j.header.ID)
	// The CRC of the bytes before offset: the running CRC is of every
	// good byte, so a checkpoint is placed only at the store's end.
	if cp.Events != j.next {
		return checkpointFile{}, false
	}
	f.Offset, f.PrefixCRC = j.size, j.crc
	if cp.Events > 0 {
		last, ok := j.lineOf(cp.Events - 1)
		if !ok {
			return checkpointFile{}, false
		}
		line := make([]byte, last.length)
		if _, err := j.osFile.ReadAt(line, last.offset); err != nil {
			return checkpointFile{}, false
		}
		sum := sha256.Sum256(line)
		f.Last = &checkpointLine{Offset: last.offset, Length: last.length, SHA256: hex.EncodeToString(sum[:])}
	}
	for i := range f.Nodes {
		at, ok := j.lineOf(f.Nodes[i].Seq)
		if !ok {
			return checkpointFile{}, false
		}
		f.Nodes[i].Offset, f.Nodes[i].Length = at.offset, at.length
	}
	return f, true
}

// lineOf is where the line of event seq is, when the store knows it.
// Caller holds j.mu.
func (j *JSONL) lineOf(seq int64) (lineRef, bool) {
	if seq >= j.lineBase && seq < j.next {
		i := seq - j.lineBase
		start := j.starts[i]
		end := j.size
		if i+1 < int64(len(j.starts)) {
			end = j.starts[i+1]
		}
		return lineRef{offset: start, length: end - start - 1}, true
	}
	r, ok := j.cpLines[seq]
	return r, ok
}

// openCheckpoint reads the checkpoint beside the log and checks it against
// the file (STORE-18): it returns the checkpoint and the events of its
// surface, or why it cannot be used. size is the file's size.
func (j *JSONL) openCheckpoint(size int64, header Header, headerLen int64) (checkpointFile, []event.Event, error) {
	b, err := os.ReadFile(CheckpointName(j.path))
	if err != nil {
		return checkpointFile{}, nil, err
	}
	f, err := decodeCheckpoint(b)
	if err != nil {
		return f, nil, err
	}
	switch {
	case f.Session != header.ID:
		return f, nil, fmt.Errorf("it is of session %q", f.Session)
	case f.Events < 0 || f.Offset < headerLen || f.Offset > size:
		return f, nil, fmt.Errorf("it covers %d events to byte %d of a file of %d", f.Events, f.Offset, size)
	case f.Events == 0 && (f.Offset != headerLen || f.Last != nil || len(f.Nodes) > 0):
		return f, nil, errors.New("it covers no event but more than the header")
	}
	var d event.Decoder
	if f.Events > 0 {
		if f.Last == nil || f.Last.Offset+f.Last.Length+1 != f.Offset {
			return f, nil, errors.New("its last line does not end where it covers to")
		}
		line, err := readLineAt(j.osFile, f.Last.Offset, f.Last.Length, f.Offset)
		if err != nil {
			return f, nil, err
		}
		if sum := sha256.Sum256(line); hex.EncodeToString(sum[:]) != f.Last.SHA256 {
			return f, nil, errors.New("its last line is not the log's")
		}
		if err := d.Decode(line); err != nil || d.Log().Events()[0].Seq != f.Events-1 {
			return f, nil, fmt.Errorf("its last line is not event %d", f.Events-1)
		}
		d = event.Decoder{}
	}
	for _, n := range f.Nodes {
		line, err := readLineAt(j.osFile, n.Offset, n.Length, f.Offset)
		if err != nil {
			return f, nil, err
		}
		if err := d.Decode(line); err != nil {
			return f, nil, fmt.Errorf("node %d: %v", n.Seq, err)
		}
	}
	return f, d.Log().Events(), nil
}

// readLineAt reads the line of length n at offset, which must end before
// limit with a newline and follow one, and returns it without the newline.
// One read takes the byte before it too.
func readLineAt(r io.ReaderAt, offset, n, limit int64) ([]byte, error) {
	if offset < 1 || n < 0 || offset+n+1 > limit || n > MaxLineBytes {
		return nil, fmt.Errorf("a line at %d of %d bytes is not within the %d bytes it covers", offset, n, limit)
	}
	b := make([]byte, n+2)
	if _, err := r.ReadAt(b, offset-1); err != nil {
		return nil, err
	}
	if b[0] != '\n' || b[n+1] != '\n' {
		return nil, fmt.Errorf("no line at %d", offset)
	}
	return b[1 : n+1], nil
}

// loadFromCheckpoint opens the log from its checkpoint: the header, then
// the lines after the checkpoint's offset. It returns false, having read
// nothing the caller keeps, when the checkpoint cannot be used (and says
// why in the report).
func (j *JSONL) loadFromCheckpoint(size int64) (bool, error) {
	r := bufio.NewReaderSize(io.NewSectionReader(j.osFile, 0, size), 64<<10)
	line, rerr := readLine(r, MaxHeaderBytes)
	if rerr != nil && rerr != io.EOF {
		return false, nil // the full scan reports it
	}
	header, err := readHeader(line, j.path)
	if err != nil {
		return false, nil
	}
	f, nodes, err := j.openCheckpoint(size, header, int64(len(line)))
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			j.report.CheckpointIgnored = err.Error()
		}
		return false, nil
	}
	sc := scanned{header: header, good: f.Offset, track: true, crc: f.PrefixCRC, base: int(f.Events)}
	var d event.Decoder
	tail := bufio.NewReaderSize(io.NewSectionReader(j.osFile, f.Offset, size-f.Offset), 64<<10)
	serr := scanEvents(tail, &sc, &d, j.path, int(f.Events)+2, size)
	sc.log = d.Log()
	if serr != nil {
		return true, serr
	}
	j.cpLines = make(map[int64]lineRef, len(f.Nodes))
	for _, n := range f.Nodes {
		j.cpLines[n.Seq] = lineRef{offset: n.Offset, length: n.Length}
	}
	j.header, j.log, j.size, j.next = sc.header, sc.log, sc.good, f.Events+int64(sc.log.Len())
	j.starts, j.crc, j.lineBase, j.tracked = sc.starts, sc.crc, f.Events, true
	j.restore, j.cpCovers = restoreOf(f, nodes), f.Events
	j.report = LoadReport{Events: int(j.next), TornBytes: int64(len(sc.torn)), CheckpointEvents: int(f.Events)}
	j.tornBytes = sc.torn
	j.prefixEnd = f.Offset
	return true, nil
}

// readPrefix reads the events a checkpoint covers: the file's bytes before
// its offset, as a log.
func (j *JSONL) readPrefix(end int64) (*event.Log, error) {
	sc, err := scan(io.NewSectionReader(j.osFile, 0, end), j.path, end)
	if err != nil {
		return nil, err
	}
	if len(sc.torn) > 0 {
		return nil, event.Errorf(event.CodePersistCorrupt, -1, "%s: the bytes before the checkpoint's offset %d end inside a line", j.path, end)
	}
	return sc.log, nil
}

// takeRestore implements checkpointed.
func (j *JSONL) takeRestore() (*restoreFrom, func() (*event.Log, error)) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.restore == nil {
		return nil, nil
	}
	end := j.prefixEnd
	return j.restore, func() (*event.Log, error) {
		j.mu.Lock()
		defer j.mu.Unlock()
		return j.readPrefix(end)
	}
}

// loadWhole reads the whole log again, for a Resume that cannot use the
// checkpoint it was opened from.
func (j *JSONL) loadWhole() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.restore == nil {
		return nil
	}
	quarantined, torn := j.report.Quarantine, j.torn
	j.restore, j.cpLines, j.cpCovers = nil, nil, 0
	if err := j.load(false); err != nil {
		return err
	}
	// The torn tail, if any, was quarantined at open and is cut as then.
	j.report.Quarantine, j.torn, j.tornBytes = quarantined, torn, nil
	j.report.CheckpointIgnored = "the session could not resume from it"
	return nil
}

// checkpointEvery implements checkpointed.
func (j *JSONL) checkpointEvery() int { return j.cpEvery }

// CheckpointCheck is what CheckJSONLCheckpoint found beside a log.
type CheckpointCheck struct {
	// Found is whether a checkpoint file is there.
	Found bool
	// Ignored says why a resume would not use it (torn, another session,
	// not where it says, ...); "" when a resume would use it.
	Ignored string
	// Events is the number of events it covers.
	Events int
}

// CheckJSONLCheckpoint checks the checkpoint beside the JSONL log at path
// (STORE-18) against events, the log's events as a validator read them
// (every one): it reports whether a resume would use it, and fails when a
// resume would use it but it is not true of the log: the CRC-32C of the
// bytes it covers differs, a line is not where it says, or the state it
// holds is not the one a replay of those events derives (opts are the
// session's options, e.g. a vocabulary). It reads the file again, and
// replays the events the checkpoint covers once more.
func CheckJSONLCheckpoint(path string, events []event.Event, opts ...session.Option) (CheckpointCheck, error) {
	if _, err := os.Stat(CheckpointName(path)); errors.Is(err, os.ErrNotExist) {
		return CheckpointCheck{}, nil
	} else if err != nil {
		return CheckpointCheck{}, ioError(err, "read %s", CheckpointName(path))
	}
	out := CheckpointCheck{Found: true}
	file, err := os.Open(path)
	if err != nil {
		return out, ioError(err, "open %s", path)
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return out, ioError(err, "stat %s", path)
	}
	// What a resume does: the cheap checks decide whether it is used.
	j := &JSONL{path: path, osFile: file}
	r := bufio.NewReaderSize(io.NewSectionReader(file, 0, fi.Size()), 64<<10)
	head, _ := readLine(r, MaxHeaderBytes)
	header, err := readHeader(head, path)
	if err != nil {
		return out, err
	}
	f, _, err := j.openCheckpoint(fi.Size(), header, int64(len(head)))
	if err != nil {
		out.Ignored = err.Error()
		return out, nil
	}
	out.Events = int(f.Events)
	bad := func(format string, args ...any) (CheckpointCheck, error) {
		return out, event.Errorf(event.CodePersistCheckpointUnusable, -1, "%s: the checkpoint a resume would use is not true of the log: "+format, append([]any{CheckpointName(path)}, args...)...)
	}
	if f.Events > int64(len(events)) {
		return bad("it covers %d events of %d", f.Events, len(events))
	}
	// Every byte it covers, and where each line is.
	crc := crc32.New(castagnoli)
	starts := make([]int64, 0, f.Events)
	var at, lineStart int64
	lr := bufio.NewReaderSize(io.NewSectionReader(file, 0, f.Offset), 64<<10)
	for at < f.Offset {
		chunk, err := lr.ReadSlice('\n')
		if len(chunk) == 0 {
			return bad("the file ends at byte %d, before the %d it covers", at, f.Offset)
		}
		crc.Write(chunk)
		at += int64(len(chunk))
		if err == bufio.ErrBufferFull {
			continue // the line goes on
		}
		if lineStart >= int64(len(head)) {
			starts = append(starts, lineStart)
		}
		lineStart = at
	}
	if crc.Sum32() != f.PrefixCRC {
		return bad("the CRC-32C of its %d bytes is %08x, not %08x", f.Offset, crc.Sum32(), f.PrefixCRC)
	}
	if int64(len(starts)) != f.Events {
		return bad("the bytes it covers hold %d lines, not %d", len(starts), f.Events)
	}
	for _, n := range f.Nodes {
		if n.Seq < 0 || n.Seq >= f.Events || starts[n.Seq] != n.Offset {
			return bad("the line of node %d is not at byte %d", n.Seq, n.Offset)
		}
	}
	if err := checkState(f, events, opts); err != nil {
		return bad("%v", err)
	}
	return out, nil
}

// checkState compares the state checkpoint f holds with the state a
// replay of the events it covers derives (opts: the session's options).
func checkState(f checkpointFile, events []event.Event, opts []session.Option) error {
	if f.Events > int64(len(events)) {
		return fmt.Errorf("it covers %d events of %d", f.Events, len(events))
	}
	s, err := session.Seed(events[:f.Events], opts...)
	if err != nil {
		return fmt.Errorf("its events do not replay: %v", err)
	}
	want := s.Checkpoint()
	gb, _ := json.Marshal(f.state())
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		return fmt.Errorf("its state is not the replay's:\n got %s\nwant %s", gb, wb)
	}
	return nil
}

// rowReader reads the row of event seq of a database store: its digest
// (rowDigest) and, when d is not nil, the event into d.
type rowReader func(d *event.Decoder, seq int64) (string, error)

// openRows checks a database store's checkpoint, state, against its rows
// (STORE-18), as a resume does: its own checksum, format and version, the
// session id, the digest of the last row it covers, and the rows of its
// surface, whose events it returns.
func openRows(state, id string, row rowReader) (checkpointFile, []event.Event, error) {
	f, err := decodeCheckpoint([]byte(state))
	if err != nil {
		return f, nil, err
	}
	if f.Session != id || f.Events < 0 {
		return f, nil, fmt.Errorf("it is of session %q, %d events", f.Session, f.Events)
	}
	var d event.Decoder
	if f.Events > 0 {
		if f.Last == nil {
			return f, nil, errors.New("it names no last row")
		}
		digest, err := row(nil, f.Events-1)
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
		if _, err := row(&d, n.Seq); err != nil {
			return f, nil, fmt.Errorf("its node %d: %v", n.Seq, err)
		}
	}
	return f, d.Log().Events(), nil
}

// rowState is the state column of a database store's checkpoint of cp
// in session id: cp with the digest of its last row; false when that row
// cannot be read.
func rowState(cp session.Checkpoint, id string, row rowReader) (string, bool) {
	f := fileOf(cp, id)
	if cp.Events > 0 {
		digest, err := row(nil, cp.Events-1)
		if err != nil {
			return "", false
		}
		f.Last = &checkpointLine{SHA256: digest}
	}
	b, err := encodeCheckpoint(f)
	return string(b), err == nil
}

// openFromRows is a database store's open from its checkpoint state: the
// checks of openRows, then the events after it (tail reads the events
// from a seq on).
func openFromRows(state, id string, row rowReader, tail func(from int64) (*event.Log, error)) (*restoreFrom, *event.Log, error) {
	f, nodes, err := openRows(state, id, row)
	if err != nil {
		return nil, nil, err
	}
	l, err := tail(f.Events)
	if err != nil {
		return nil, nil, err
	}
	return restoreOf(f, nodes), l, nil
}

// restoreOf is what a store opened from checkpoint f hands to Resume.
func restoreOf(f checkpointFile, nodes []event.Event) *restoreFrom {
	return &restoreFrom{cp: f.state(), nodes: nodes}
}

// fileOf is the checkpoint file of session id holding cp: its nodes name
// their seqs and labels, not yet where their lines or rows are.
func fileOf(cp session.Checkpoint, id string) checkpointFile {
	f := checkpointFile{Format: CheckpointFormat, Version: CheckpointVersion, Session: id, Events: cp.Events,
		NextLabel: cp.NextLabel, Generation: cp.Generation, Ledger: cp.Ledger, Nodes: make([]checkpointRef, len(cp.Surface))}
	for i, n := range cp.Surface {
		f.Nodes[i] = checkpointRef{Seq: n.Seq, Label: n.Label}
	}
	return f
}

// state is the session's checkpoint f holds.
func (f checkpointFile) state() session.Checkpoint {
	cp := session.Checkpoint{Events: f.Events, NextLabel: f.NextLabel, Generation: f.Generation, Ledger: f.Ledger, Surface: make([]session.CheckpointNode, len(f.Nodes))}
	for i, n := range f.Nodes {
		cp.Surface[i] = session.CheckpointNode{Seq: n.Seq, Label: n.Label}
	}
	return cp
}

// checkRows is what a database store's validator does with its checkpoint
// row (STORE-18): the checks a resume makes (openRows), then the state
// against a replay of events.
func checkRows(name, state, id string, events []event.Event, row rowReader, opts []session.Option) (CheckpointCheck, error) {
	out := CheckpointCheck{Found: true}
	f, _, err := openRows(state, id, row)
	if err != nil {
		out.Ignored = err.Error()
		return out, nil
	}
	out.Events = int(f.Events)
	if err := checkState(f, events, opts); err != nil {
		return out, event.Errorf(event.CodePersistCheckpointUnusable, -1, "%s: the checkpoint a resume would use is not true of the log: %v", name, err)
	}
	return out, nil
}

// withPrefix joins the events a checkpoint covers, read back (prefix, or
// the error reading them), with the tail loaded at open: nil and an error
// when the read failed or did not give the covered events, seqs 0 to
// covered-1, so a caller never takes part of a log for the whole.
func withPrefix(prefix *event.Log, err error, covered int64, tail *event.Log) ([]event.Event, error) {
	if err != nil {
		return nil, &event.Error{Code: event.CodePersistCorrupt, Index: -1, Seq: -1, Detail: "the events before the checkpoint cannot be read back: " + err.Error(), Cause: err}
	}
	events := prefix.Events()
	if int64(len(events)) != covered {
		return nil, event.Errorf(event.CodePersistCorrupt, -1, "%d events read back where the checkpoint covers %d", len(events), covered)
	}
	for i := range events {
		if events[i].Seq != int64(i) {
			return nil, event.Errorf(event.CodePersistCorrupt, int64(i), "the event read back at index %d has seq %d", i, events[i].Seq)
		}
	}
	return append(events[:len(events):len(events)], tail.Events()...), nil
}
