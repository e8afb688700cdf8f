package claudecode

import (
	"encoding/json"
	"strings"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/importer"
)

// interrupted is the tool_result text Claude Code gives a tool_use left
// open when the user interrupts (spec/harnesses.md §2.5, item 5).
const interrupted = "[Request interrupted by user for tool use]"

// Import turns a transcript into this library's events (IMP-6): the
// messages of the imported session are the conversation Claude Code
// resends on resume: the chain from the newest main entry back to the
// latest compact boundary, regrouped by message id (a response's blocks in
// one assistant message, the tool_results answering it after it, off-chain
// parallel siblings included). Entries are taken in file order; an
// assistant message comes at the line of its response's last entry, the
// results written before that line right after it. The chains that led to
// each compact boundary (its logicalParentUuid) are imported before it, and
// the compact summary replaces them. Entries of other branches, sidechains,
// progress, system, attachment and metadata entries and synthetic API
// errors are kept as ignorable claude-code/entry records.
//
// A line that is not an entry is refused (import.line_invalid), as is a
// content block with no place (import.not_importable). The import does
// not check the transcript's rules (Check does) nor this library's strict
// rules (Log.CheckStrict does).
func Import(f *File) (*importer.Log, error) {
	h, err := Header(f)
	if err != nil {
		return nil, err
	}
	for i := range f.Entries {
		if e := &f.Entries[i]; e.Problem != "" {
			return nil, importer.Findingf(e.N, event.CodeImportLineInvalid, "%s", e.Problem)
		}
	}
	im := &imp{f: f, b: importer.NewBuilder(Record), t: NewTree(f), g: groups(f), onPath: map[int]bool{}, last: map[string]int{},
		emitted: map[string]bool{}, deferred: map[string][][]byte{}, callSeq: map[string]int64{}, pending: map[string]bool{}, answered: map[string]bool{}}
	im.paths()
	for i := range f.Entries {
		e := &f.Entries[i]
		im.b.At(e.N, importer.Millis(e.Timestamp))
		if err := im.entry(i, e); err != nil {
			if x, ok := err.(importer.Finding); ok && x.Line == 0 {
				x.Line = e.N
				return nil, x
			}
			return nil, err
		}
	}
	if err := im.b.Flush(); err != nil {
		return nil, err
	}
	log := im.b.Log(h)
	if f.Torn > 0 {
		log.Notes = append(log.Notes, importer.Findingf(0, "", "a torn last line of %d bytes (a crash while Claude Code wrote it) is not imported", f.Torn))
	}
	return log, nil
}

type imp struct {
	f *File
	b *importer.Builder
	t *Tree
	g grouping

	onPath   map[int]bool        // entries whose content is imported as messages
	last     map[string]int      // the last entry on the path of each response
	emitted  map[string]bool     // responses appended
	buf      [][]byte            // blocks of the response being read
	deferred map[string][][]byte // tool_result blocks read before their response was appended
	callSeq  map[string]int64
	pending  map[string]bool
	answered map[string]bool
	model    string
}

// paths marks the entries imported as messages: the chain from the leaf
// back to the latest boundary, and for each boundary the chain that led
// to it; with, for each response on them, its other entries and the
// tool_results that answer it.
func (im *imp) paths() {
	f, t := im.f, im.t
	add := func(chain []int) {
		for _, i := range chain {
			if !f.Entries[i].Boundary() {
				im.onPath[i] = true
			}
		}
	}
	if leaf := Leaf(f); leaf >= 0 {
		if c, ok := t.Chain(leaf); ok {
			add(c)
		}
	}
	for i := range f.Entries {
		e := &f.Entries[i]
		if !e.Boundary() || e.LogicalParent == "" {
			continue
		}
		if p, ok := t.byUUID[e.LogicalParent]; ok && p < i {
			if c, ok := t.Chain(p); ok {
				add(c)
			}
		}
	}
	uses := map[string]bool{}
	for i := range f.Entries {
		e := &f.Entries[i]
		if !im.onPath[i] || e.Type != "assistant" || e.Sidechain || e.Synthetic() {
			continue
		}
		for _, k := range im.g.entries[e.MessageID] {
			im.onPath[k] = true
			for _, b := range blocks(f.Entries[k].Content) {
				if event.StringMember(b, "type") == "tool_use" {
					uses[event.StringMember(b, "id")] = true
				}
			}
		}
	}
	for i := range f.Entries {
		e := &f.Entries[i]
		if e.Type != "user" || e.Sidechain || im.onPath[i] {
			continue
		}
		for _, b := range blocks(e.Content) {
			if event.StringMember(b, "type") == "tool_result" && uses[event.StringMember(b, "tool_use_id")] {
				im.onPath[i] = true
			}
		}
	}
	for i := range f.Entries {
		if e := &f.Entries[i]; im.onPath[i] && e.Type == "assistant" {
			im.last[e.MessageID] = i
		}
	}
}

func kindOf(e *Entry) string {
	k := e.Type
	if e.Subtype != "" {
		k += "/" + e.Subtype
	}
	return k
}

func (im *imp) entry(i int, e *Entry) error {
	b := im.b
	if !im.onPath[i] || e.Sidechain {
		k := kindOf(e)
		switch {
		case e.Sidechain:
			k += " (sidechain)"
		case e.Synthetic():
			k += " (synthetic)"
		case e.Conversation():
			k += " (another branch)"
		}
		return b.Keep(k, e.Raw)
	}
	if e.Type == "assistant" {
		if e.Synthetic() {
			return b.Keep(kindOf(e)+" (synthetic)", e.Raw)
		}
		im.model = e.Model
		for _, blk := range blocks(e.Content) {
			out, err := im.assistantBlock(blk)
			if err != nil {
				return err
			}
			im.buf = append(im.buf, out)
		}
		b.Map("assistant")
		if im.last[e.MessageID] == i {
			return im.response(e.MessageID)
		}
		return nil
	}
	// A user entry.
	b.Map("user")
	var rest []json.RawMessage
	hasResults := false
	for _, blk := range blocks(e.Content) {
		if event.StringMember(blk, "type") == "tool_result" {
			hasResults = true
			id := event.StringMember(blk, "tool_use_id")
			if mid, ok := im.g.ofUse[id]; ok && !im.emitted[mid] && im.last[mid] > i {
				im.deferred[mid] = append(im.deferred[mid], blk)
				continue
			}
			if err := im.result(blk); err != nil {
				return err
			}
			continue
		}
		out, err := userBlock(blk)
		if err != nil {
			return err
		}
		rest = append(rest, out)
	}
	if len(rest) == 0 {
		if !hasResults {
			return b.Keep(kindOf(e)+" (no content)", e.Raw) // nothing to send, kept
		}
		return nil
	}
	if err := im.closePending(); err != nil {
		return err
	}
	switch {
	case e.CompactSum:
		b.ReplaceAll()
		_, err := b.Surface(event.UserMessageData{Content: rest, Source: json.RawMessage(`{"kind":"plugin","plugin":"compact"}`)})
		return err
	case e.Meta || hasResults:
		raw := "raw"
		_, err := b.Surface(event.ContextMessageData{Content: rest, Source: json.RawMessage(`{"kind":"claude-code","meta":true}`), Envelope: &raw})
		return err
	}
	if err := b.EndTurn("completed"); err != nil {
		return err
	}
	if err := b.StartTurn("message"); err != nil {
		return err
	}
	_, err := b.Surface(event.UserMessageData{Content: rest, Source: json.RawMessage(`{"kind":"user"}`)})
	return err
}

// response appends the assistant message of one API response, then the
// results read before it.
func (im *imp) response(mid string) error {
	b := im.b
	content := im.buf
	im.buf = nil
	if _, open := b.Step(); !open || len(im.pending) == 0 {
		if err := b.StartStep(); err != nil {
			return err
		}
	}
	turn, _ := b.Turn()
	step, _ := b.Step()
	raw := make([]json.RawMessage, len(content))
	for i := range content {
		raw[i] = content[i]
	}
	seq, err := b.Surface(event.AssistantMessageData{Turn: turn, Step: step, Content: raw})
	if err != nil {
		return err
	}
	im.emitted[mid] = true
	for _, blk := range content {
		if event.StringMember(blk, "type") == "tool-call" {
			id := event.StringMember(blk, "id")
			im.callSeq[id] = seq
			if !im.answered[id] {
				im.pending[id] = true
			}
		}
	}
	for _, blk := range im.deferred[mid] {
		if err := im.result(blk); err != nil {
			return err
		}
	}
	delete(im.deferred, mid)
	return nil
}

func (im *imp) result(blk []byte) error {
	b := im.b
	id := event.StringMember(blk, "tool_use_id")
	content, _ := event.ObjectMember(blk, "content")
	var out []json.RawMessage
	if len(content) > 0 && content[0] == '"' {
		out = []json.RawMessage{textBlock(content)}
	} else {
		for _, c := range event.ArrayElements(content) {
			x, err := userBlock(c)
			if err != nil {
				return err
			}
			out = append(out, x)
		}
	}
	if out == nil {
		out = []json.RawMessage{}
	}
	isErr, _ := event.ObjectMember(blk, "is_error")
	var sources []int64
	if seq, ok := im.callSeq[id]; ok {
		if _, on := b.S.Position(seq); on {
			sources = []int64{seq}
		}
	}
	if _, open := b.Step(); !open {
		if err := b.StartStep(); err != nil {
			return err
		}
	}
	turn, _ := b.Turn()
	step, _ := b.Step()
	if _, err := b.Surface(event.ToolResultData{Turn: turn, Step: step, CallID: id, Content: out, IsError: string(isErr) == "true"}, sources...); err != nil {
		return err
	}
	delete(im.pending, id)
	im.answered[id] = true
	return nil
}

// closePending answers the tool_uses still open before a user message
// with the result Claude Code gives them on an interrupt, marked
// synthetic.
func (im *imp) closePending() error {
	calls := make(map[string]int64, len(im.pending))
	for id := range im.pending {
		calls[id] = im.callSeq[id]
		im.answered[id] = true
	}
	clear(im.pending)
	return im.b.AnswerPending(calls, interrupted, func(string) json.RawMessage { return json.RawMessage(`{"synthetic":true}`) })
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func (im *imp) native(blk []byte, opaque bool) string {
	var sb strings.Builder
	sb.WriteString(`{"provider":"anthropic"`)
	if im.model != "" {
		sb.WriteString(`,"model":` + quote(im.model))
	}
	if opaque {
		sb.WriteString(`,"opaque":true`)
	}
	sb.WriteString(`,"item":`)
	sb.Write(blk)
	sb.WriteString(`}`)
	return sb.String()
}

// assistantBlock maps a block of an assistant message.
func (im *imp) assistantBlock(blk []byte) ([]byte, error) {
	switch t := event.StringMember(blk, "type"); t {
	case "text":
		return []byte(`{"type":"text","text":` + quote(event.StringMember(blk, "text")) + `}`), nil
	case "thinking":
		return []byte(`{"type":"reasoning","text":` + quote(event.StringMember(blk, "thinking")) + `,"native":` + im.native(blk, event.StringMember(blk, "signature") != "") + `}`), nil
	case "tool_use":
		input, _ := event.ObjectMember(blk, "input")
		if len(input) == 0 {
			input = []byte("{}")
		}
		return []byte(`{"type":"tool-call","id":` + quote(event.StringMember(blk, "id")) + `,"name":` + quote(event.StringMember(blk, "name")) + `,"arguments":` + quote(string(input)) + `}`), nil
	case "":
		return nil, importer.Finding{Code: event.CodeImportNotImportable, Detail: "a content block without a type"}
	default: // redacted_thinking, server tools' blocks
		return []byte(`{"type":"provider-item","native":` + im.native(blk, true) + `}`), nil
	}
}

// userBlock maps a block of a user message or a tool_result's content.
func userBlock(blk []byte) ([]byte, error) {
	switch t := event.StringMember(blk, "type"); t {
	case "text":
		return []byte(`{"type":"text","text":` + quote(event.StringMember(blk, "text")) + `}`), nil
	case "image":
		src, _ := event.ObjectMember(blk, "source")
		switch event.StringMember(src, "type") {
		case "base64":
			return []byte(`{"type":"image","mediaType":` + quote(event.StringMember(src, "media_type")) + `,"data":` + quote(event.StringMember(src, "data")) + `}`), nil
		case "url":
			return []byte(`{"type":"image","url":` + quote(event.StringMember(src, "url")) + `}`), nil
		}
		return nil, importer.Finding{Code: event.CodeImportNotImportable, Detail: "an image whose source is neither base64 nor url"}
	default:
		return nil, importer.Finding{Code: event.CodeImportNotImportable, Detail: "a user content block of kind " + quote(t) + ", which has no block in this library's vocabulary"}
	}
}
