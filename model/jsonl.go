package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/surfacelog/surface/impl/event"
)

// JSONLFile is a JSONL session file as the model keeps it: its bytes in
// memory and the files beside it (by suffix of the file's name), read and
// written by STORE-1, STORE-2, STORE-8, STORE-9 and STORE-15 one check
// after another, with no I/O. The conformance vectors of the store steps
// are generated from it.
type JSONLFile struct {
	Data   []byte            // the file
	Beside map[string][]byte // the files beside it, by suffix (".torn-57")
	// Header is the header line's members.
	Header map[string]json.RawMessage
	// Lines are the complete event lines, without their "\n".
	Lines [][]byte
	// Good is the length of the header and the complete event lines;
	// Torn the bytes after them (a torn tail), cut at the next append.
	Good int
	Torn []byte
	// Quarantine is the suffix of the file the torn tail was copied to.
	Quarantine string
}

// NewHeaderLine is the header line a store writes for a new session
// (STORE-1).
func NewHeaderLine(id string, createdAt int64) []byte {
	idJSON, _ := json.Marshal(id)
	return []byte(`{"type":"session","version":0,"id":` + string(idJSON) + `,"createdAt":` + strconv.FormatInt(createdAt, 10) + "}\n")
}

// OpenJSONL opens a session file for the session id: data is the file
// (nil: there is none, and it is created with a header of id and
// createdAt), beside the files beside it. On success the torn tail, if
// any, has been copied beside the file (STORE-8).
func OpenJSONL(data []byte, beside map[string][]byte, id string, createdAt int64) (*JSONLFile, error) {
	if id == "" { // STORE-15
		return nil, event.Errorf(event.CodePersistHeaderInvalid, -1, "a session header needs a non-empty id")
	}
	f := &JSONLFile{Data: data, Beside: map[string][]byte{}}
	for k, v := range beside {
		f.Beside[k] = v
	}
	if data == nil {
		f.Data = NewHeaderLine(id, createdAt)
	}
	nl := bytes.IndexByte(f.Data, '\n')
	if nl < 0 { // STORE-1: not even a complete first line
		return nil, event.Errorf(event.CodePersistNotASession, -1, "the first line is not a complete session header")
	}
	if err := f.readHeader(f.Data[:nl+1]); err != nil {
		return nil, err
	}
	f.Good = nl + 1
	rest := f.Data[nl+1:]
	for len(rest) > 0 {
		end := bytes.IndexByte(rest, '\n')
		if end < 0 { // STORE-2 (a): a last line without its newline
			f.Torn = rest
			break
		}
		line := rest[:end]
		if _, err := DecodeLine(line); err != nil {
			if syntaxOK(line) { // JSON, but not an event: refused, never cut
				err.(*event.Error).Index = len(f.Lines)
				return nil, err
			}
			if end+1 == len(rest) { // STORE-2 (b): a last line that is not JSON
				f.Torn = rest
				break
			}
			return nil, event.Errorf(event.CodePersistCorrupt, -1, "line %d is not JSON; only the last line may be torn", len(f.Lines)+2)
		}
		f.Lines = append(f.Lines, line)
		f.Good += end + 1
		rest = rest[end+1:]
	}
	if got := stringMember(f.Header["id"]); got != id { // STORE-15
		return nil, event.Errorf(event.CodePersistWrongSession, -1, "the file holds session %q, not %q", got, id)
	}
	if len(f.Torn) > 0 { // STORE-8: a name that holds other bytes is skipped
		base := ".torn-" + strconv.Itoa(f.Good)
		for n := 1; ; n++ {
			name := base
			if n > 1 {
				name += "." + strconv.Itoa(n)
			}
			old, taken := f.Beside[name]
			if !taken || bytes.Equal(old, f.Torn) {
				f.Beside[name], f.Quarantine = bytes.Clone(f.Torn), name
				break
			}
		}
	}
	return f, nil
}

// readHeader checks the first line (STORE-1, STORE-9).
func (f *JSONLFile) readHeader(line []byte) error {
	notOurs := func(why string) error {
		return event.Errorf(event.CodePersistNotASession, -1, "not a session log: %s", why)
	}
	if err := json.Unmarshal(line, &f.Header); err != nil || f.Header == nil {
		return notOurs("the first line is not a JSON object")
	}
	version, ok := f.Header["version"]
	if string(f.Header["type"]) != `"session"` || !ok {
		return notOurs(`the first line is not {"type":"session","version":...}`)
	}
	if string(version) != "0" {
		if version[0] != '-' && (version[0] < '0' || version[0] > '9') {
			return notOurs("the version is not a number")
		}
		var v float64 // as JSON.parse reads it: 0.0, 0e0 and -0 are 0
		if json.Unmarshal(version, &v) != nil || v != 0 {
			return event.Errorf(event.CodePersistFormatVersion, -1, "session format version %s; only 0 is read", version)
		}
	}
	var h struct {
		ID         string `json:"id"`
		CreatedAt  int64  `json:"createdAt"`
		SeedLength *int64 `json:"seedLength"`
	}
	if err := json.Unmarshal(line, &h); err != nil {
		return event.Errorf(event.CodePersistCorrupt, -1, "the session header is malformed: %v", err)
	}
	return nil
}

// SeedLength is the header's seedLength, -1 when it has none (STORE-14).
func (f *JSONLFile) SeedLength() int64 {
	var n *int64
	if json.Unmarshal(f.Header["seedLength"], &n) != nil || n == nil {
		return -1
	}
	return *n
}

// Append writes events at the end of the file, a line each, after cutting
// the torn tail off (STORE-2).
func (f *JSONLFile) Append(events ...event.Event) {
	if len(events) == 0 {
		return
	}
	if len(f.Torn) > 0 {
		f.Data, f.Torn = f.Data[:f.Good], nil
	}
	f.Data = bytes.Clone(f.Data)
	for _, e := range events {
		b, _ := e.MarshalJSON()
		f.Data = append(append(f.Data, b...), '\n')
		f.Lines = append(f.Lines, b)
	}
	f.Good = len(f.Data)
}

func syntaxOK(b []byte) bool {
	end, ok := skipValue(b, ws(b, 0))
	return ok && ws(b, end) == len(b)
}

func stringMember(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) != nil {
		return fmt.Sprint(v)
	}
	return s
}
