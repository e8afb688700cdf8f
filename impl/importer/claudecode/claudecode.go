package claudecode

import (
	"encoding/json"
	"io"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/importer"
	"github.com/surfacelog/surface/impl/persist"
)

// Record is the type of the ignorable events that keep the lines with no
// place among the messages: data {"line": N, "kind": K, "record": LINE}.
const Record event.Type = "claude-code/entry"

// Entry is one parsed line of a transcript.
type Entry struct {
	importer.Line
	Type          string
	Subtype       string
	UUID          string
	Parent        string // "" for a root
	LogicalParent string
	Sidechain     bool
	SessionID     string
	Meta          bool // isMeta: injected, sent to the model
	CompactSum    bool // isCompactSummary
	Timestamp     string
	// Of the message of a user or assistant entry:
	MessageID string
	Model     string
	Content   json.RawMessage // a string or an array of blocks
	// Problem says why the line is not an entry; "" when it is one.
	Problem string
}

// Conversation says whether the entry is a user or assistant entry.
func (e *Entry) Conversation() bool { return e.Type == "user" || e.Type == "assistant" }

// Synthetic says whether an assistant entry is one Claude Code wrote
// itself (an API error, "No response requested."): never sent.
func (e *Entry) Synthetic() bool { return e.Type == "assistant" && e.Model == "<synthetic>" }

// Boundary says whether the entry is a compact boundary.
func (e *Entry) Boundary() bool { return e.Type == "system" && e.Subtype == "compact_boundary" }

// File is a parsed transcript.
type File struct {
	Entries []Entry
	Torn    int
}

// Parse reads a transcript. Blank lines are skipped.
func Parse(r io.Reader) (*File, error) {
	raw, torn, err := importer.ReadLines(r)
	if err != nil {
		return nil, err
	}
	f := &File{Torn: torn}
	for _, l := range raw {
		if l.Raw == nil {
			continue
		}
		f.Entries = append(f.Entries, parse(l))
	}
	return f, nil
}

func parse(l importer.Line) Entry {
	e := Entry{Line: l}
	if !l.Valid {
		e.Problem = "not a JSON object"
		return e
	}
	var v struct {
		Type          *string `json:"type"`
		Subtype       string  `json:"subtype"`
		UUID          string  `json:"uuid"`
		Parent        *string `json:"parentUuid"`
		LogicalParent *string `json:"logicalParentUuid"`
		Sidechain     bool    `json:"isSidechain"`
		SessionID     string  `json:"sessionId"`
		Meta          bool    `json:"isMeta"`
		CompactSum    bool    `json:"isCompactSummary"`
		Timestamp     string  `json:"timestamp"`
		Message       struct {
			ID      string          `json:"id"`
			Model   string          `json:"model"`
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if err := json.Unmarshal(l.Raw, &v); err != nil || v.Type == nil {
		e.Problem = "no string type"
		return e
	}
	e.Type, e.Subtype, e.UUID, e.Sidechain, e.SessionID = *v.Type, v.Subtype, v.UUID, v.Sidechain, v.SessionID
	if v.Parent != nil {
		e.Parent = *v.Parent
	}
	if v.LogicalParent != nil {
		e.LogicalParent = *v.LogicalParent
	}
	e.Meta, e.CompactSum, e.Timestamp = v.Meta, v.CompactSum, v.Timestamp
	e.MessageID, e.Model, e.Content = v.Message.ID, v.Message.Model, v.Message.Content
	if e.Conversation() && e.UUID == "" {
		e.Problem = "a " + e.Type + " entry without uuid"
	}
	return e
}

// Header is the session header of a transcript: the sessionId and cwd of
// its first main conversation entry.
func Header(f *File) (persist.Header, error) {
	for i := range f.Entries {
		e := &f.Entries[i]
		if e.Problem == "" && e.Conversation() && !e.Sidechain {
			var cwd struct {
				Cwd string `json:"cwd"`
			}
			json.Unmarshal(e.Raw, &cwd)
			return persist.Header{ID: e.SessionID, CreatedAt: importer.Millis(e.Timestamp), Cwd: cwd.Cwd}, nil
		}
	}
	return persist.Header{}, importer.Findingf(0, event.CodeImportNoSession, "no user or assistant entry of the main conversation")
}

// blocks are the content blocks of a message: a string is one text block.
func blocks(content json.RawMessage) [][]byte {
	if len(content) > 0 && content[0] == '"' {
		return [][]byte{textBlock(content)}
	}
	return event.ArrayElements(content)
}

func textBlock(quoted json.RawMessage) []byte {
	return []byte(`{"type":"text","text":` + string(quoted) + `}`)
}

// Tree is the parent structure of a transcript's entries.
type Tree struct {
	f      *File
	byUUID map[string]int // entry index of each uuid (the first, for repeats)
}

// NewTree indexes the entries by uuid.
func NewTree(f *File) *Tree {
	t := &Tree{f: f, byUUID: map[string]int{}}
	for i := range f.Entries {
		e := &f.Entries[i]
		if e.Problem != "" || e.UUID == "" {
			continue
		}
		if _, ok := t.byUUID[e.UUID]; !ok {
			t.byUUID[e.UUID] = i
		}
	}
	return t
}

// Chain is the entries from index leaf back to its root or the compact
// boundary that ends it (included), leaf first; ok is false on a cycle.
func (t *Tree) Chain(leaf int) (chain []int, ok bool) {
	seen := map[int]bool{}
	for i := leaf; ; {
		if seen[i] {
			return chain, false
		}
		seen[i] = true
		chain = append(chain, i)
		e := &t.f.Entries[i]
		if e.Boundary() || e.Parent == "" {
			return chain, true
		}
		p, ok := t.byUUID[e.Parent]
		if !ok {
			return chain, true
		}
		i = p
	}
}

// Leaf is the index of the newest main-chain conversation entry, -1 when
// there is none.
func Leaf(f *File) int {
	for i := len(f.Entries) - 1; i >= 0; i-- {
		e := &f.Entries[i]
		if e.Problem == "" && e.Conversation() && !e.Sidechain {
			return i
		}
	}
	return -1
}
