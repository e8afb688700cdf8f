package released

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf16"

	"github.com/klauspost/compress/zstd"
	"github.com/surfacelog/surface/impl/event"
)

// Encode returns a released session file holding h and events (REL-7):
// the header line (with delegationDepth), then one line per event. With
// compressed, the file is a .jsonl.zstd: a checksummed frame holding
// exactly the header line, then one checksummed frame per batch; the
// released writer flushes one frame per write batch, and so does this:
// each element of batches is one. Chunk runs are not packed (packing is a
// writer option of the released system; the reader reads both). Events
// are written as they are: Encode does not check them (Check does).
func Encode(h Header, batches [][]event.Event, compressed bool) ([]byte, error) {
	head, err := headerLine(h)
	if err != nil {
		return nil, err
	}
	var texts [][]byte
	for _, batch := range batches {
		var b []byte
		for i := range batch {
			if b, err = batch[i].AppendJSON(b); err != nil {
				return nil, fmt.Errorf("released: event %d: %w", batch[i].Seq, err)
			}
			b = append(b, '\n')
		}
		if len(b) > 0 {
			texts = append(texts, b)
		}
	}
	if !compressed {
		return bytes.Join(append([][]byte{head}, texts...), nil), nil
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer enc.Close()
	out := enc.EncodeAll(head, nil)
	for _, t := range texts {
		out = enc.EncodeAll(t, out)
	}
	return out, nil
}

// headerLine is the header's JSON line in the released key order: type,
// version, id, createdAt, cwd, parentSession, seedLength, origin,
// delegationDepth, agentPreset (absent optionals omitted).
func headerLine(h Header) ([]byte, error) {
	if h.ID == "" {
		return nil, event.Errorf(event.CodePersistHeaderInvalid, -1, "released: a session header needs an id")
	}
	if h.DelegationDepth < 0 || h.CreatedAt < 0 {
		return nil, event.Errorf(event.CodePersistHeaderInvalid, -1, "released: createdAt and delegationDepth must be at least 0")
	}
	b, err := json.Marshal(struct {
		Type string `json:"type"`
		Header
	}{"session", h})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Path is where the released JSONL store keeps session h under root:
// root/PROJECT/ID/session.jsonl (or session.jsonl.zstd), PROJECT being
// _no-cwd without a cwd and --SLUG-- with one, ID the session id encoded
// as one path segment. A released harness configured with that root finds
// the file there.
func Path(root string, h Header, compressed bool) (string, error) {
	project := "_no-cwd"
	if h.Cwd != nil {
		if *h.Cwd == "" {
			return "", event.Errorf(event.CodePersistHeaderInvalid, -1, "released: an empty cwd has no project directory")
		}
		project = projectKey(*h.Cwd)
	}
	if h.ID == "" {
		return "", event.Errorf(event.CodePersistHeaderInvalid, -1, "released: a session header needs an id")
	}
	name := "session.jsonl"
	if compressed {
		name += ".zstd"
	}
	return filepath.Join(root, project, EncodeSegment(h.ID), name), nil
}

// EncodeSegment encodes s as one path segment, reversibly: the UTF-16
// code units A-Z, a-z, 0-9, '.', '_' and '-' stay, every other unit
// becomes ~XXXX (four upper-case hex digits), and the segments "." and
// ".." are escaped whole.
func EncodeSegment(s string) string {
	switch s {
	case ".":
		return "~002E"
	case "..":
		return "~002E~002E"
	}
	var b strings.Builder
	for _, u := range utf16.Encode([]rune(s)) {
		if plain(u) {
			b.WriteByte(byte(u))
		} else {
			fmt.Fprintf(&b, "~%04X", u)
		}
	}
	return b.String()
}

func plain(u uint16) bool {
	return u < 0x80 && (u >= 'A' && u <= 'Z' || u >= 'a' && u <= 'z' || u >= '0' && u <= '9' || u == '.' || u == '_' || u == '-')
}

// projectKey is the released project directory of cwd: each run of '/',
// '\' or ':' becomes one '-', other units as in EncodeSegment, leading
// '-' removed ("root" when nothing is left), at most 251 units, between
// "--" and "--". It is lossy on purpose (human-readable).
func projectKey(cwd string) string {
	var b strings.Builder
	run := false
	for _, u := range utf16.Encode([]rune(cwd)) {
		switch {
		case u == '/' || u == '\\' || u == ':':
			if !run {
				b.WriteByte('-')
			}
			run = true
			continue
		case plain(u):
			b.WriteByte(byte(u))
		default:
			fmt.Fprintf(&b, "~%04X", u)
		}
		run = false
	}
	slug := strings.TrimLeft(b.String(), "-")
	if slug == "" {
		slug = "root"
	}
	if len(slug) > 251 {
		slug = slug[:251]
	}
	return "--" + slug + "--"
}
