package codex

import (
	"encoding/json"
	"strings"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/importer"
)

// legacyBudget is the estimated size (bytes/4 of their text) up to which
// a legacy compaction (a compacted line without replacement_history)
// keeps every retained user message. Codex keeps the newest within 20,000
// tokens of its own estimate and may cut the oldest; below this margin
// every estimate keeps them all, above it the cut is not determined by
// the facts, and the import refuses (IMP-3).
const legacyBudget = 15000

// Import turns a rollout into this library's events (IMP-6): the
// messages of the imported session are the history Codex rebuilds from
// the file on resume, before it closes calls left open (which a resume
// of this library does with repair). Lines are taken in order; the
// events of each line follow those of the line before.
//
// A line that is not a rollout line is refused (import.line_invalid), as
// is what has no place without changing what Codex would send
// (import.not_importable): a content part of an unknown kind, a call
// without call_id, a rollback that undoes a turn in which a compaction
// ran, a legacy compaction whose retained messages come near Codex's
// budget. The import does not check Codex's pairing rules (Check does)
// nor this library's strict rules (Log.CheckStrict does).
func Import(f *File) (*importer.Log, error) {
	h, err := Header(f)
	if err != nil {
		return nil, err
	}
	im := &imp{b: importer.NewBuilder(Record), callSeq: map[string]int64{}, callKind: map[string]string{}, pending: map[string]bool{}, contextual: map[int64]bool{}, summary: map[int64]bool{}}
	var notes []importer.Finding
	for i := range f.Lines {
		l := &f.Lines[i]
		im.b.At(l.N, importer.Millis(l.Timestamp))
		if l.Problem != "" {
			return nil, importer.Findingf(l.N, event.CodeImportLineInvalid, "%s", l.Problem)
		}
		if !Known(l.Type) {
			notes = append(notes, importer.Findingf(l.N, "", "a line of kind %q, which the format as covered does not have, is kept as an ignorable record", l.Type))
		}
		if err := im.line(l); err != nil {
			return nil, atLine(err, l.N)
		}
	}
	if err := im.b.Flush(); err != nil {
		return nil, err
	}
	log := im.b.Log(h)
	if f.Torn > 0 {
		notes = append(notes, importer.Findingf(0, "", "a torn last line of %d bytes (a crash while Codex wrote it) is not imported: Codex skips it too", f.Torn))
	}
	log.Notes = notes
	return log, nil
}

type imp struct {
	b *importer.Builder

	boundaries []int64          // surface nodes that begin a user turn, in order
	contextual map[int64]bool   // context nodes (developer or contextual user messages)
	summary    map[int64]bool   // summaries of legacy compactions
	callSeq    map[string]int64 // the node of each call
	callKind   map[string]string
	pending    map[string]bool // calls without output yet

	prevAssistant bool // the last surface item was the model's
	model         string
	aborted       bool
	turns         []bool // the user turns not rolled back: whether a compaction ran in each
}

func (im *imp) line(l *Line) error {
	b := im.b
	switch l.Type {
	case KindResponseItem:
		return im.item(l.Payload, false, describe(l))
	case KindCompacted:
		if err := b.Keep(describe(l), l.Raw); err != nil {
			return err
		}
		return im.compacted(l.Payload)
	case KindTurnContext:
		if m := str(l.Payload, "model"); m != "" {
			im.model = m
		}
	case KindEventMsg:
		switch l.Item {
		case "thread_rolled_back":
			var p struct {
				N int `json:"num_turns"`
			}
			json.Unmarshal(l.Payload, &p)
			if err := b.Keep(describe(l), l.Raw); err != nil {
				return err
			}
			return im.rollback(p.N)
		case "turn_aborted":
			im.aborted = true
		}
	}
	return b.Keep(describe(l), l.Raw)
}

// item maps one response item; inReplacement says it comes from a
// compacted line's replacement history (its line is kept already, and a
// user message there begins no turn of its own).
func (im *imp) item(it json.RawMessage, inReplacement bool, kind string) error {
	b := im.b
	t := str(it, "type")
	switch {
	case t == "message":
		switch role := str(it, "role"); {
		case role == "developer" || (role == "user" && Contextual(it)):
			return im.context(it, role, kind)
		case role == "user":
			return im.user(it, inReplacement, kind)
		case role == "assistant":
			return im.assistant(it, kind)
		}
	case isOutput(t):
		return im.output(it, kind)
	case apiItem(t):
		return im.assistant(it, kind)
	}
	// A system message, a ghost snapshot, an item of another kind: Codex
	// never sends them.
	if inReplacement {
		return nil
	}
	return b.Keep(kind, it)
}

func (im *imp) context(it json.RawMessage, role, kind string) error {
	content, err := im.messageBlocks(it, role == "developer")
	if err != nil {
		return err
	}
	if err := im.closePending(); err != nil {
		return err
	}
	raw := "raw"
	seq, err := im.b.Surface(event.ContextMessageData{Content: content, Source: json.RawMessage(`{"kind":"codex","role":` + quote(role) + `}`), Envelope: &raw})
	if err != nil {
		return err
	}
	im.b.Map(kind)
	im.contextual[seq] = true
	im.prevAssistant = false
	return nil
}

func (im *imp) user(it json.RawMessage, inReplacement bool, kind string) error {
	b := im.b
	content, err := im.messageBlocks(it, false)
	if err != nil {
		return err
	}
	if err := im.closePending(); err != nil {
		return err
	}
	if !inReplacement {
		reason := "completed"
		if im.aborted {
			reason = "aborted"
		}
		if err := b.EndTurn(reason); err != nil {
			return err
		}
		if err := b.StartTurn("message"); err != nil {
			return err
		}
		im.aborted = false
		im.turns = append(im.turns, false)
	}
	seq, err := b.Surface(event.UserMessageData{Content: content, Source: json.RawMessage(`{"kind":"user"}`)})
	if err != nil {
		return err
	}
	b.Map(kind)
	im.boundaries = append(im.boundaries, seq)
	im.prevAssistant = false
	return nil
}

func (im *imp) assistant(it json.RawMessage, kind string) error {
	b := im.b
	block, err := im.assistantBlocks(it)
	if err != nil {
		return err
	}
	if _, open := b.Step(); !open || (!im.prevAssistant && len(im.pending) == 0) {
		if err := b.StartStep(); err != nil {
			return err
		}
	}
	turn, _ := b.Turn()
	step, _ := b.Step()
	seq, err := b.Surface(event.AssistantMessageData{Turn: turn, Step: step, Content: block})
	if err != nil {
		return err
	}
	b.Map(kind)
	if t := str(it, "type"); outputFor[t] != "" {
		id := str(it, "call_id")
		im.callSeq[id], im.pending[id], im.callKind[id] = seq, true, t
	}
	im.prevAssistant = true
	return nil
}

// closePending answers the calls still waiting, before a user-side
// message, with the output Codex itself sends for them at its next request
// ("aborted", spec/harnesses.md §1.6), marked synthetic: Codex never
// writes it to the file, and a provider refuses a call without output.
func (im *imp) closePending() error {
	calls := make(map[string]int64, len(im.pending))
	for id := range im.pending {
		calls[id] = im.callSeq[id]
	}
	clear(im.pending)
	return im.b.AnswerPending(calls, "aborted", func(id string) json.RawMessage {
		return json.RawMessage(`{"codexType":` + quote(outputFor[im.callKind[id]]) + `,"synthetic":true}`)
	})
}

func (im *imp) output(it json.RawMessage, kind string) error {
	b := im.b
	id := str(it, "call_id")
	if _, open := b.Step(); !open {
		if err := b.StartStep(); err != nil {
			return err
		}
	}
	content, isString, err := outputBlocks(member(it, "output"))
	if err != nil {
		return err
	}
	meta, _ := json.Marshal(struct {
		Type   string `json:"codexType"`
		String bool   `json:"outputString,omitempty"`
	}{str(it, "type"), isString})
	var sources []int64
	if seq, ok := im.callSeq[id]; ok {
		if _, on := b.S.Position(seq); on {
			sources = []int64{seq}
		}
	}
	turn, _ := b.Turn()
	step, _ := b.Step()
	if _, err := b.Surface(event.ToolResultData{Turn: turn, Step: step, CallID: id, Content: content, Meta: meta}, sources...); err != nil {
		return err
	}
	b.Map(kind)
	delete(im.pending, id)
	im.prevAssistant = false
	return nil
}

// rollback drops the last n user turns (spec/harnesses.md §1.5): the
// surface from the n-th last turn's prompt (and the context messages right
// above it) to the tail is replaced by the next surface event.
func (im *imp) rollback(n int) error {
	b := im.b
	if n <= 0 {
		return nil
	}
	for i := 0; i < n && len(im.turns) > 0; i++ {
		if im.turns[len(im.turns)-1] {
			return importer.Findingf(b.Line(), event.CodeImportNotImportable,
				"the rollback undoes a turn in which a compaction ran: Codex then rebuilds from an older compaction, which the imported log has replaced")
		}
		im.turns = im.turns[:len(im.turns)-1]
	}
	if len(im.boundaries) == 0 {
		return nil
	}
	idx := max(len(im.boundaries)-n, 0)
	pos, ok := b.S.Position(im.boundaries[idx])
	if !ok {
		return nil
	}
	sf := b.S.Surface()
	for pos > 0 && im.contextual[sf.At(pos-1)] {
		pos--
	}
	for id := range im.pending {
		if p, on := b.S.Position(im.callSeq[id]); on && p >= pos {
			delete(im.pending, id)
		}
	}
	im.boundaries = im.boundaries[:idx]
	b.ReplaceFrom(sf.At(pos))
	return nil
}

func (im *imp) compacted(payload json.RawMessage) error {
	b := im.b
	if len(im.turns) > 0 {
		im.turns[len(im.turns)-1] = true
	}
	rh, ok := event.ObjectMember(payload, "replacement_history")
	if ok && string(rh) != "null" {
		b.ReplaceAll()
		im.boundaries, im.pending = nil, map[string]bool{}
		for _, it := range event.ArrayElements(rh) {
			if err := im.item(it, true, "compacted replacement_history "+str(it, "type")); err != nil {
				return err
			}
		}
		return b.Flush()
	}
	// Legacy: the retained user messages, then the summary.
	var keep [][]json.RawMessage
	size := 0
	for _, seq := range im.boundaries {
		if im.summary[seq] {
			continue
		}
		var d event.UserMessageData
		json.Unmarshal(b.S.Events()[seq].Data, &d)
		for _, c := range d.Content {
			size += len(event.StringMember(c, "text"))
		}
		keep = append(keep, d.Content)
	}
	if (size+3)/4 > legacyBudget {
		return importer.Findingf(b.Line(), event.CodeImportNotImportable,
			"a legacy compaction (no replacement_history) retaining about %d tokens of user messages: Codex keeps the newest within its 20,000-token estimate and may cut the oldest, which the facts do not determine", (size+3)/4)
	}
	b.ReplaceAll()
	im.boundaries, im.pending = nil, map[string]bool{}
	for _, content := range keep {
		seq, err := b.Surface(event.UserMessageData{Content: content, Source: json.RawMessage(`{"kind":"user"}`)})
		if err != nil {
			return err
		}
		im.boundaries = append(im.boundaries, seq)
	}
	text := str(payload, "message")
	if text == "" {
		text = "(no summary available)"
	}
	seq, err := b.Surface(event.UserMessageData{Content: event.Text(text), Source: json.RawMessage(`{"kind":"plugin","plugin":"compact"}`)})
	if err != nil {
		return err
	}
	im.summary[seq] = true
	im.boundaries = append(im.boundaries, seq)
	im.prevAssistant = false
	return nil
}

// native is a block's native member for a Codex item (PROV-1).
func (im *imp) native(it json.RawMessage, opaque bool) string {
	var sb strings.Builder
	sb.WriteString(`{"provider":"openai"`)
	if im.model != "" {
		sb.WriteString(`,"model":` + quote(im.model))
	}
	if opaque {
		sb.WriteString(`,"opaque":true`)
	}
	sb.WriteString(`,"item":`)
	sb.Write(compactJSON(it))
	sb.WriteString(`}`)
	return sb.String()
}

// plainMessage says whether a message item has no member besides type,
// role and content, so its parts alone say all of it.
func plainMessage(it json.RawMessage) bool {
	var m map[string]json.RawMessage
	json.Unmarshal(it, &m)
	for k := range m {
		if k != "type" && k != "role" && k != "content" {
			return false
		}
	}
	return true
}

// messageBlocks are the content blocks of a message item: a block per
// part, or, when the item says more than its parts (a developer role, a
// phase, an id), one text block of its texts carrying the item as native.
func (im *imp) messageBlocks(it json.RawMessage, developer bool) ([]json.RawMessage, error) {
	parts := event.ArrayElements(member(it, "content"))
	if developer || !plainMessage(it) {
		var texts []string
		for _, p := range parts {
			if t := str(p, "type"); t == "input_text" || t == "output_text" {
				texts = append(texts, str(p, "text"))
			}
		}
		return []json.RawMessage{json.RawMessage(`{"type":"text","text":` + quote(strings.Join(texts, "\n")) + `,"native":` + im.native(it, false) + `}`)}, nil
	}
	out := make([]json.RawMessage, 0, len(parts))
	for _, p := range parts {
		blk, err := partBlock(p)
		if err != nil {
			return nil, err
		}
		out = append(out, blk)
	}
	return out, nil
}

// partBlock maps a content part of a message or an output.
func partBlock(p json.RawMessage) (json.RawMessage, error) {
	switch t := str(p, "type"); t {
	case "input_text", "output_text":
		return json.RawMessage(`{"type":"text","text":` + quote(str(p, "text")) + `}`), nil
	case "input_image":
		return json.RawMessage(`{"type":"image","url":` + quote(str(p, "image_url")) + `}`), nil
	default:
		return nil, importer.Finding{Code: event.CodeImportNotImportable, Detail: "a content part of kind " + quote(t) + ", which has no block in this library's vocabulary"}
	}
}

// outputBlocks maps a call output: a string, or an array of parts.
func outputBlocks(out json.RawMessage) ([]json.RawMessage, bool, error) {
	if len(out) > 0 && out[0] == '"' {
		var s string
		json.Unmarshal(out, &s)
		return event.Text(s), true, nil
	}
	var blocks []json.RawMessage
	for _, p := range event.ArrayElements(out) {
		blk, err := partBlock(p)
		if err != nil {
			return nil, false, err
		}
		blocks = append(blocks, blk)
	}
	if blocks == nil {
		blocks = []json.RawMessage{}
	}
	return blocks, false, nil
}

// assistantBlocks map one model item to the block that holds it.
func (im *imp) assistantBlocks(it json.RawMessage) ([]json.RawMessage, error) {
	switch t := str(it, "type"); t {
	case "message":
		return im.messageBlocks(it, false)
	case "reasoning":
		var texts []string
		for _, p := range event.ArrayElements(member(it, "summary")) {
			texts = append(texts, str(p, "text"))
		}
		opaque := str(it, "encrypted_content") != ""
		return []json.RawMessage{json.RawMessage(`{"type":"reasoning","text":` + quote(strings.Join(texts, "\n\n")) + `,"native":` + im.native(it, opaque) + `}`)}, nil
	case "function_call", "custom_tool_call", "local_shell_call":
		id := str(it, "call_id")
		if id == "" {
			return nil, importer.Finding{Code: event.CodeImportNotImportable, Detail: "a " + t + " without call_id cannot be paired with its output"}
		}
		name, args := str(it, "name"), str(it, "arguments")
		switch t {
		case "custom_tool_call":
			b, _ := json.Marshal(map[string]string{"input": str(it, "input")})
			args = string(b)
		case "local_shell_call":
			name = "local_shell"
			args = string(compactJSON(member(it, "action")))
		}
		return []json.RawMessage{json.RawMessage(`{"type":"tool-call","id":` + quote(id) + `,"name":` + quote(name) + `,"arguments":` + quote(args) + `,"native":` + im.native(it, false) + `}`)}, nil
	default:
		opaque := str(it, "encrypted_content") != "" || t == "compaction" || t == "compaction_summary"
		return []json.RawMessage{json.RawMessage(`{"type":"provider-item","native":` + im.native(it, opaque) + `}`)}, nil
	}
}

// atLine gives a finding without a line the line it comes from.
func atLine(err error, line int) error {
	if f, ok := err.(importer.Finding); ok && f.Line == 0 {
		f.Line = line
		return f
	}
	return err
}
