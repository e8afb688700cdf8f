package released

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/surfacelog/surface/impl/event"
)

// Header is the header line of a released session file (Part B1): the
// b736889ac7 header and origin, the required delegationDepth, and
// agentPreset.
type Header struct {
	Version         int     `json:"version"`
	ID              string  `json:"id"`
	CreatedAt       int64   `json:"createdAt"`
	Cwd             *string `json:"cwd,omitempty"`
	ParentSession   *string `json:"parentSession,omitempty"`
	SeedLength      *int64  `json:"seedLength,omitempty"`
	Origin          *string `json:"origin,omitempty"`
	DelegationDepth int64   `json:"delegationDepth"`
	AgentPreset     *string `json:"agentPreset,omitempty"`
}

// Log is what a released session file holds.
type Log struct {
	Header Header
	// Events are the events in wire form, one per line of the file, with
	// packed chunk rows expanded into their assistant/chunk events.
	Events []json.RawMessage
	// Compressed is true for a .jsonl.zstd file; Frames counts its
	// complete frames.
	Compressed bool
	Frames     int
	// TornBytes is the length of what a crash left unfinished at the end:
	// a torn last frame (whose complete records are kept in Events), or a
	// plain last line without its newline, or a plain tail after the last
	// turn/end that does not parse (the released reader's tolerated tail).
	TornBytes int
}

// Read reads a released session file from its bytes, plain JSONL or
// .jsonl.zstd (told apart by the zstd magic). It never writes.
func Read(data []byte) (*Log, error) {
	if IsZstd(data) {
		return readZstd(data)
	}
	return readPlain(data)
}

func readZstd(data []byte) (*Log, error) {
	plain, torn, err := frames(data)
	if err != nil {
		return nil, err
	}
	l := &Log{Compressed: true, Frames: len(plain), TornBytes: len(torn)}
	if len(plain) == 0 {
		return nil, event.Errorf(event.CodePersistNotASession, -1, "no complete zstd frame: no session header")
	}
	first := plain[0]
	if bytes.IndexByte(first, '\n') != len(first)-1 {
		return nil, event.Errorf(event.CodePersistNotASession, -1, "the first zstd frame is not exactly one header line")
	}
	if l.Header, err = readHeader(first[:len(first)-1]); err != nil {
		return nil, err
	}
	for i, f := range plain[1:] {
		if len(f) > 0 && f[len(f)-1] != '\n' {
			return nil, event.Errorf(event.CodePersistCorrupt, -1, "zstd frame %d is complete but ends inside a JSONL record", i+2)
		}
		if err := l.addRecords(f, i+2); err != nil {
			return nil, err
		}
	}
	if torn != nil {
		if err := l.addRecords(recoverTorn(torn), len(plain)+1); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// addRecords adds the JSONL records of one frame's plaintext.
func (l *Log) addRecords(text []byte, frame int) error {
	for len(text) > 0 {
		i := bytes.IndexByte(text, '\n')
		line := text[:i]
		text = text[i+1:]
		if err := l.addLine(line); err != nil {
			return event.Errorf(event.CodePersistCorrupt, int64(len(l.Events)), "zstd frame %d: %v", frame, err)
		}
	}
	return nil
}

func readPlain(data []byte) (*Log, error) {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return nil, event.Errorf(event.CodePersistNotASession, -1, "no complete first line: no session header")
	}
	h, err := readHeader(data[:nl])
	if err != nil {
		return nil, err
	}
	l := &Log{Header: h}
	rest := data[nl+1:]
	var lines [][]byte
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 { // a last line without its newline is ignored
			l.TornBytes = len(rest)
			break
		}
		lines = append(lines, rest[:i])
		rest = rest[i+1:]
	}
	for k, line := range lines {
		if err := l.addLine(line); err != nil {
			// A line that does not parse is a tolerated crash tail when no
			// turn/end follows it, and corruption otherwise (Part B1).
			for _, later := range lines[k+1:] {
				if isTurnEnd(later) {
					return nil, event.Errorf(event.CodePersistCorrupt, int64(len(l.Events)), "line %d: %v, before a later turn/end", k+2, err)
				}
			}
			for _, t := range lines[k:] {
				l.TornBytes += len(t) + 1
			}
			break
		}
	}
	return l, nil
}

func isTurnEnd(line []byte) bool {
	var e struct{ Type string }
	return json.Unmarshal(line, &e) == nil && e.Type == "turn/end"
}

// addLine adds an event line, or the events a packed chunk row stands for.
func (l *Log) addLine(line []byte) error {
	var probe struct {
		Type string `json:"type"`
	}
	if !json.Valid(line) || json.Unmarshal(line, &probe) != nil {
		return fmt.Errorf("not a JSON object")
	}
	switch probe.Type {
	case "text-chunks", "reasoning-chunks", "tool-call-chunks":
		events, err := unpack(line, probe.Type)
		if err != nil {
			return err
		}
		l.Events = append(l.Events, events...)
	default:
		l.Events = append(l.Events, json.RawMessage(bytes.Clone(line)))
	}
	return nil
}

// readHeader checks the header line (Part B1): a numeric version other
// than 0 is refused before the shape; delegationDepth is required.
func readHeader(line []byte) (Header, error) {
	var raw map[string]json.RawMessage
	if json.Unmarshal(line, &raw) != nil || string(raw["type"]) != `"session"` {
		return Header{}, event.Errorf(event.CodePersistNotASession, -1, "the first line is not a session header")
	}
	var version float64
	if json.Unmarshal(raw["version"], &version) == nil && version != 0 {
		return Header{}, event.Errorf(event.CodePersistFormatVersion, -1, "session format version %s; only 0 is read", raw["version"])
	}
	if _, ok := raw["sandboxMode"]; ok {
		return Header{}, event.Errorf(event.CodePersistCorrupt, -1, "the session header uses the retired field sandboxMode")
	}
	if _, ok := raw["approvalPolicy"]; ok {
		return Header{}, event.Errorf(event.CodePersistCorrupt, -1, "the session header uses the retired field approvalPolicy")
	}
	// Numbers are read by their value, as the released reader reads them
	// (1.0 is 1); the strings by their type.
	var w struct {
		ID            string
		Cwd           *string
		ParentSession *string
		Origin        *string
		AgentPreset   *string
	}
	err := json.Unmarshal(line, &w)
	seedLength := raw["seedLength"]
	switch {
	case err != nil || json.Unmarshal(raw["version"], &version) != nil || w.ID == "":
		return Header{}, event.Errorf(event.CodePersistNotASession, -1, "the first line is not a session header")
	case raw["delegationDepth"] == nil || !safeNonNegative(raw["delegationDepth"]):
		return Header{}, event.Errorf(event.CodePersistNotASession, -1, "the session header has no delegationDepth (a safe integer, at least 0): it is not a released session file")
	case !safeNonNegative(raw["createdAt"]):
		return Header{}, event.Errorf(event.CodePersistNotASession, -1, "the session header's createdAt is not a safe integer at least 0")
	case seedLength != nil && string(seedLength) != "null" && !safeNonNegative(seedLength):
		return Header{}, event.Errorf(event.CodePersistNotASession, -1, "the session header's seedLength is not a safe integer at least 0")
	}
	h := Header{ID: w.ID, Cwd: w.Cwd, ParentSession: w.ParentSession, Origin: w.Origin, AgentPreset: w.AgentPreset,
		CreatedAt: safeValue(raw["createdAt"]), DelegationDepth: safeValue(raw["delegationDepth"])}
	if seedLength != nil && string(seedLength) != "null" {
		n := safeValue(seedLength)
		h.SeedLength = &n
	}
	return h, nil
}

// safeValue is the value of a number safeNonNegative accepted.
func safeValue(v json.RawMessage) int64 {
	var f float64
	_ = json.Unmarshal(v, &f)
	return int64(f)
}

// safeNonNegative reports whether v is a JSON number with a safe integer
// value at least 0, and not -0.
func safeNonNegative(v json.RawMessage) bool {
	var f float64
	if json.Unmarshal(v, &f) != nil || f != math.Trunc(f) || f < 0 || f > 1<<53-1 {
		return false
	}
	return !bytes.HasPrefix(bytes.TrimSpace(v), []byte("-"))
}
