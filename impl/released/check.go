package released

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/surface"
)

// Session is a released log that passed the released rules (REL-2 to
// REL-5): its events, decoded, its surface and the messages derived from
// it, in the released (identified-message) form.
type Session struct {
	Header Header
	// Events are the log's events. Time may be negative (the released
	// envelope asks only for a safe integer).
	Events []event.Event
	// Surface holds the seqs of the surface nodes, head to tail.
	Surface []int64
	// Messages are the derived messages (REL-5), one per surface node
	// that yields one: a user/message's data as it is, the message of an
	// assistant/message (none when its content is empty) or a tool/result.
	Messages []json.RawMessage
}

// Check checks the events of l by the released rules, in order: the
// envelope (event.invalid_envelope), the seq (seq.not_contiguous), the
// type (event.unknown_type, released.type_refused), the identified message
// of a surface event (released.message_invalid), the markers and the
// replace rules of the b736889ac7 surface (the same codes as SURF-6 to
// SURF-14), then the replace rule of a tool/result
// (released.tool_result_replace). The first event that breaks a rule is
// named by the error; nothing is repaired.
func Check(l *Log) (*Session, error) {
	s := &Session{Header: l.Header, Events: make([]event.Event, 0, len(l.Events))}
	m := surface.New()
	shadow := make([]event.Event, 0, len(l.Events)) // what the surface manager sees
	for i, line := range l.Events {
		if err := s.add(m, &shadow, line, i); err != nil {
			if ee, ok := err.(*event.Error); ok {
				ee.Index = i // the event's index in the log (the header not counted)
			}
			return nil, err
		}
	}
	if err := m.Sync(shadow); err != nil {
		return nil, err
	}
	for n := m.Head(); n != nil; n = n.Next() {
		s.Surface = append(s.Surface, n.Seq())
		if msg, ok := Derive(&s.Events[n.Seq()]); ok {
			s.Messages = append(s.Messages, msg)
		}
	}
	return s, nil
}

// add checks event line i against the events before it and adds it.
func (s *Session) add(m *surface.Manager, shadow *[]event.Event, line json.RawMessage, i int) error {
	accept := func(*event.Event, int64) *event.Error { return nil }
	e, err := decode(line, int64(i))
	if err != nil {
		return err
	}
	seen := e
	seen.Time = 0 // checked above; the manager needs no time
	if !Known(e.Type) {
		seen.Type = "released/ignorable" // kept, never on the surface
	}
	if err := m.ValidateWith(*shadow, &seen, accept); err != nil {
		return err
	}
	if e.Type == event.TypeToolResult && e.Op.Kind == event.OpReplace {
		if err := toolResultReplace(s.Events, &e); err != nil {
			return err
		}
	}
	*shadow = append(*shadow, seen)
	s.Events = append(s.Events, e)

	return nil
}

// Derive returns the message a released surface event yields (REL-5).
func Derive(e *event.Event) (json.RawMessage, bool) {
	switch e.Type {
	case event.TypeUserMessage:
		return e.Data, true
	case event.TypeAssistantMessage:
		msg, _ := event.ObjectMember(e.Data, "message")
		content, _ := event.ObjectMember(msg, "content")
		if len(event.ArrayElements(content)) == 0 {
			return nil, false
		}
		return msg, true
	case event.TypeToolResult:
		msg, _ := event.ObjectMember(e.Data, "message")
		return msg, true
	}
	return nil, false
}

var envelopeMembers = map[string]bool{"type": true, "seq": true, "time": true, "data": true, "surfaceOp": true, "sourceEventSeqs": true, "ignorable": true}

// decode reads one event line by the released envelope and checks the
// rules that need no other event.
func decode(line json.RawMessage, want int64) (event.Event, error) {
	var raw map[string]json.RawMessage
	if json.Unmarshal(line, &raw) != nil {
		return event.Event{}, event.Errorf(event.CodeInvalidEnvelope, want, "line %d is not a JSON object", want)
	}
	for k := range raw {
		if !envelopeMembers[k] {
			return event.Event{}, event.Errorf(event.CodeInvalidEnvelope, want, "unknown envelope member %q", k)
		}
	}
	var e event.Event
	var typ string
	seq, seqOK := safeInt(raw["seq"])
	t, timeOK := safeInt(raw["time"])
	switch {
	case json.Unmarshal(raw["type"], &typ) != nil || typ == "":
		return e, event.Errorf(event.CodeInvalidEnvelope, want, "type is not a non-empty string")
	case !seqOK || seq < 0:
		return e, event.Errorf(event.CodeInvalidEnvelope, want, "seq is not a safe integer at least 0")
	case !timeOK:
		return e, event.Errorf(event.CodeInvalidEnvelope, seq, "time is not a safe integer")
	case raw["data"] == nil:
		return e, event.Errorf(event.CodeInvalidEnvelope, seq, "data is missing")
	case raw["ignorable"] != nil && string(raw["ignorable"]) != "true":
		return e, event.Errorf(event.CodeInvalidEnvelope, seq, "ignorable is present and not true")
	}
	e = event.Event{Type: event.Type(typ), Seq: seq, Time: t, Ignorable: raw["ignorable"] != nil}
	var buf bytes.Buffer
	_ = json.Compact(&buf, raw["data"]) // valid: it parsed
	e.Data = buf.Bytes()
	e.Op, e.Sources = event.DecodeMarkers(raw["surfaceOp"], raw["sourceEventSeqs"])
	if seq != want {
		return e, event.Errorf(event.CodeSeqNotContiguous, seq, "seq %d where %d was expected", seq, want)
	}
	if why, ok := refused[e.Type]; ok {
		return e, event.Errorf(event.CodeReleasedTypeRefused, seq, "%s", why)
	}
	if e.Type == "request/header" && event.StringMember(e.Data, "reason") == "fallback" {
		return e, event.Errorf(event.CodeReleasedTypeRefused, seq, "a request/header with reason \"fallback\" is refused by the released reader")
	}
	if !Known(e.Type) && !e.Ignorable {
		return e, event.Errorf(event.CodeUnknownType, seq, "event type %q is unknown to the released reader and not marked ignorable", e.Type)
	}
	if IsSurface(e.Type) {
		if why := identified(e.Type, e.Data); why != "" {
			return e, event.Errorf(event.CodeReleasedMessageInvalid, seq, "%s at %d %s", e.Type, seq, why)
		}
	}
	if err := event.CheckMarkers(&e, IsSurface(e.Type)); err != nil { // SURF-6 to SURF-9, released eligibility
		return e, err
	}
	return e, nil
}

// identified checks the identified message of a surface event (REL-3)
// and says what is wrong, or "".
func identified(t event.Type, data []byte) string {
	msg := data
	if t != event.TypeUserMessage {
		var ok bool
		if msg, ok = event.ObjectMember(data, "message"); !ok {
			return "lacks an identified message"
		}
	}
	var m struct {
		ID      *string           `json:"id"`
		Role    string            `json:"role"`
		Content []json.RawMessage `json:"content"`
		Source  *struct {
			Kind     string `json:"kind"`
			Provider string `json:"provider"`
			Model    string `json:"model"`
			CallID   string `json:"callId"`
		} `json:"source"`
	}
	if json.Unmarshal(msg, &m) != nil {
		// A member of the wrong kind: find which, in the order below.
		var loose map[string]json.RawMessage
		if json.Unmarshal(msg, &loose) != nil {
			return "lacks an identified message"
		}
		var s string
		switch {
		case json.Unmarshal(loose["id"], &s) != nil:
			return "lacks an identified message"
		case json.Unmarshal(loose["role"], &s) != nil:
			return "message has an invalid role"
		case !isArray(loose["content"]):
			return "message has invalid content"
		}
		return "message has invalid source"
	}
	role := "user"
	if t == event.TypeAssistantMessage {
		role = "assistant"
	}
	switch {
	case m.ID == nil || *m.ID == "":
		return "lacks an identified message"
	case m.Role != role:
		return `message must have role "` + role + `"`
	case m.Source == nil || m.Source.Kind == "":
		return "message has invalid source"
	case m.Content == nil:
		return "message has invalid content"
	}
	switch t {
	case event.TypeAssistantMessage:
		if m.Source.Kind != "model" || m.Source.Provider == "" || m.Source.Model == "" {
			return "message must have model source"
		}
	case event.TypeToolResult:
		if m.Source.Kind != "tool" || m.Source.CallID == "" {
			return "message must have tool source"
		}
		var block struct {
			Type       string `json:"type"`
			ToolCallID string `json:"toolCallId"`
		}
		if len(m.Content) != 1 || json.Unmarshal(m.Content[0], &block) != nil || block.Type != "tool-result" {
			return "message must contain one tool-result block"
		}
		if block.ToolCallID != m.Source.CallID {
			return "message has mismatched tool call ids"
		}
	}
	return ""
}

func isArray(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] == '['
}

// toolResultReplace is the released rule for a replace by a tool/result
// (REL-4), checked after the range and the sources: it rewrites exactly
// one node, a tool/result, and changes only message.content[0].content.
func toolResultReplace(log []event.Event, e *event.Event) error {
	if e.Op.Start != e.Op.End {
		return event.Errorf(event.CodeReleasedToolResultReplace, e.Seq, "tool/result surface replacement must rewrite exactly one current node")
	}
	old := &log[e.Op.Start]
	if old.Type != event.TypeToolResult {
		return event.Errorf(event.CodeReleasedToolResultReplace, e.Seq, "tool/result surface replacement must target a current tool/result")
	}
	if !reflect.DeepEqual(withoutContent(old.Data), withoutContent(e.Data)) {
		return event.Errorf(event.CodeReleasedToolResultReplace, e.Seq, "tool/result surface replacement may change only content")
	}
	return nil
}

// withoutContent is data decoded, with message.content[0].content removed.
func withoutContent(data []byte) any {
	var v map[string]any
	if json.Unmarshal(data, &v) != nil {
		return nil
	}
	if msg, ok := v["message"].(map[string]any); ok {
		if blocks, ok := msg["content"].([]any); ok && len(blocks) > 0 {
			if b, ok := blocks[0].(map[string]any); ok {
				delete(b, "content")
			}
		}
	}
	return v
}
