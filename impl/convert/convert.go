package convert

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/released"
	"github.com/surfacelog/surface/impl/session"
)

// Options tune a conversion.
type Options struct {
	// Provider and Model stand in for the provenance of an
	// assistant/message that has none, which the released vocabulary
	// requires (its message source names them). Empty: such an event is
	// refused.
	Provider, Model string
	// DropHeaderExtras lets HeaderFromReleased drop origin, agentPreset and
	// a delegationDepth other than 0, which this library's header has no
	// place for. Without it they are refused.
	DropHeaderExtras bool
}

// LegacyID is the message id the released loader gives a message that
// had none: legacy-message:SESSION:SEQ. ToReleased uses it too, and
// FromReleased leaves it out again, so it costs nothing in a round trip.
func LegacyID(session string, seq int64) string {
	return "legacy-message:" + session + ":" + strconv.FormatInt(seq, 10)
}

// triggerUnrecorded is the turn/start trigger FromReleased writes: the
// released turn/start records none.
const triggerUnrecorded = `{"kind":"unrecorded"}`

// ToReleased converts a log in this library's vocabulary to the released
// one (REL-6), event by event, seqs kept. session is the session's id
// (the released message ids of converted messages name it). The result
// passes released.Check; an event that cannot be converted is refused with
// convert.not_convertible naming it.
func ToReleased(session string, events []event.Event, o Options) ([]event.Event, error) {
	c := toReleased{session: session, o: o, ids: map[int64]string{}, open: ""}
	out := make([]event.Event, 0, len(events))
	for i := range events {
		e, err := c.event(events[i])
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	lines := make([]json.RawMessage, len(out))
	for i := range out {
		b, err := out[i].AppendJSON(nil)
		if err != nil {
			return nil, refuse(&events[i], "%v", err)
		}
		lines[i] = b
	}
	if _, err := released.Check(&released.Log{Events: lines}); err != nil {
		return nil, notConvertible(events, err)
	}
	return out, nil
}

// notConvertible turns a rule the converted log breaks into the typed
// error naming the original event.
func notConvertible(events []event.Event, err error) error {
	var ee *event.Error
	if errors.As(err, &ee) && ee.Seq >= 0 && ee.Seq < int64(len(events)) {
		return refuse(&events[ee.Seq], "the converted event breaks a rule of the other vocabulary: %v", err)
	}
	return event.Errorf(event.CodeConvertNotConvertible, -1, "the converted log breaks a rule of the other vocabulary: %v", err)
}

type toReleased struct {
	session string
	o       Options
	ids     map[int64]string // message id of each converted message, by seq
	open    string           // compactionId of the open compact/* bracket
}

func (c *toReleased) event(e event.Event) (event.Event, error) {
	ms, err := members(e.Data)
	if err != nil {
		return e, refuse(&e, "%v", err)
	}
	switch e.Type {
	case event.TypeUserMessage:
		if k, ok := only(ms, "content", "source", "id", "role"); !ok {
			// Extra members of a released user/message reach the model
			// (its derive takes the data as it is): not determined, so refused.
			return e, refuse(&e, "member %q has no place in a released user/message", k)
		}
		id, hasID := stringValue(get(ms, "id"))
		if !hasID {
			id = LegacyID(c.session, e.Seq)
		}
		source := get(ms, "source")
		if c.open != "" && isCompactCheckpoint(source) {
			source = object(append(mustMembers(source), member{"compactionId", str(c.open)})...)
		}
		// The members in their order (a message converted from the released
		// vocabulary keeps its), the source in its place, id and role last
		// when they are new.
		for i := range ms {
			if ms[i].key == "source" {
				ms[i].value = source
			}
		}
		if !hasID {
			ms = append(ms, member{"id", str(id)})
		}
		if get(ms, "role") == nil {
			ms = append(ms, member{"role", str("user")})
		}
		e.Data = object(ms...)
		c.ids[e.Seq] = id
	case event.TypeContextMessage, event.TypeSteeringMessage:
		if get(ms, "meta") != nil {
			return e, refuse(&e, "a context/message's meta has no place in the released vocabulary")
		}
		if k, ok := only(ms, "content", "source", "envelope", "turn"); !ok {
			return e, refuse(&e, "member %q has no place in the released vocabulary", k)
		}
		m, _ := message.FromEvent(&e) // the framing this library's derive adds
		id := LegacyID(c.session, e.Seq)
		e.Type = event.TypeUserMessage
		e.Data = object(member{"content", array(m.Content...)}, member{"source", get(ms, "source")}, member{"id", str(id)}, member{"role", str("user")})
		c.ids[e.Seq] = id
	case event.TypeAssistantMessage:
		if k, ok := only(ms, "turn", "step", "content", "provenance", "usage", "interrupted", "messageId"); !ok {
			return e, refuse(&e, "member %q has no place in a released assistant/message", k)
		}
		source, err := c.modelSource(&e, get(ms, "provenance"))
		if err != nil {
			return e, err
		}
		id, ok := stringValue(get(ms, "messageId"))
		if !ok {
			id = LegacyID(c.session, e.Seq)
		}
		msg := object(member{"id", str(id)}, member{"role", str("assistant")}, member{"content", get(ms, "content")}, member{"source", source})
		e.Data = object(member{"turn", get(ms, "turn")}, member{"step", get(ms, "step")}, member{"usage", get(ms, "usage")}, member{"message", msg}, member{"interrupted", get(ms, "interrupted")})
		c.ids[e.Seq] = id
	case event.TypeToolResult:
		if k, ok := only(ms, "turn", "step", "callId", "content", "isError", "error", "meta", "messageId"); !ok {
			return e, refuse(&e, "member %q has no place in a released tool/result", k)
		}
		id, ok := stringValue(get(ms, "messageId"))
		switch {
		case ok:
		case e.Op.Kind == event.OpReplace && c.ids[e.Op.Start] != "":
			id = c.ids[e.Op.Start] // a rewrite keeps the message's id
		default:
			id = LegacyID(c.session, e.Seq)
		}
		block := message.ToolResultBlock(e.Data)
		msg := object(member{"id", str(id)}, member{"role", str("user")}, member{"content", array(block)},
			member{"source", object(member{"kind", str("tool")}, member{"callId", get(ms, "callId")})})
		e.Data = object(member{"turn", get(ms, "turn")}, member{"step", get(ms, "step")}, member{"error", get(ms, "error")}, member{"meta", get(ms, "meta")}, member{"message", msg})
		c.ids[e.Seq] = id
	case event.TypeTurnStart:
		if k, ok := only(ms, "turn", "trigger"); !ok {
			return e, refuse(&e, "member %q has no place in a released turn/start", k)
		}
		e.Data = object(member{"turn", get(ms, "turn")}) // the trigger is dropped, as the released loader drops it
	case event.TypeTurnEnd:
		data, err := turnEndToReleased(&e, ms)
		if err != nil {
			return e, err
		}
		e.Data = data
	case event.TypeCompactStart:
		c.open = "c" + strconv.FormatInt(e.Seq, 10)
		e.Type, e.Data = event.TypeCompactionStart, object(append([]member{{"compactionId", str(c.open)}}, ms...)...)
	case event.TypeCompactSummary, event.TypeCompactEnd:
		if c.open == "" {
			return e, refuse(&e, "no compact/start is open: the released record needs its compaction's id")
		}
		e.Data = object(append([]member{{"compactionId", str(c.open)}}, ms...)...)
		if e.Type == event.TypeCompactSummary {
			e.Type = event.TypeCompactionSummary
		} else {
			e.Type, c.open = event.TypeCompactionEnd, ""
		}
	default:
		if !released.Known(e.Type) {
			e.Ignorable = true // kept and skipped by the released reader
		}
	}
	return e, nil
}

// modelSource is the released message source of an assistant/message:
// its provenance with kind "model" (where a provenance holds a kind, in
// its place).
func (c *toReleased) modelSource(e *event.Event, provenance []byte) ([]byte, error) {
	if provenance == nil {
		if c.o.Provider == "" || c.o.Model == "" {
			return nil, refuse(e, "an assistant/message without provenance has no released message source (set Options.Provider and Model)")
		}
		return object(member{"provider", str(c.o.Provider)}, member{"model", str(c.o.Model)}, member{"kind", str("model")}), nil
	}
	ms, err := members(provenance)
	if err != nil {
		return nil, refuse(e, "provenance is not an object")
	}
	if get(ms, "kind") != nil {
		for i := range ms {
			if ms[i].key == "kind" {
				ms[i].value = str("model")
			}
		}
		return object(ms...), nil
	}
	return object(append(ms, member{"kind", str("model")})...), nil
}

func isCompactCheckpoint(source []byte) bool {
	kind, _ := stringValue(mustGet(source, "kind"))
	plugin, _ := stringValue(mustGet(source, "plugin"))
	return kind == "plugin" && plugin == "compact"
}

func mustMembers(obj []byte) []member {
	ms, _ := members(obj)
	return ms
}

func mustGet(obj []byte, key string) []byte { return get(mustMembers(obj), key) }

// turnEndToReleased maps a turn/end reason (B5): aborted without a reason
// becomes aborted for a legacy reason, disposed becomes aborted because
// disposed, error moves its message and code (UNKNOWN when absent) into an
// error object and drops its step; rejected has no released counterpart.
func turnEndToReleased(e *event.Event, ms []member) ([]byte, error) {
	reason := mustMembers(get(ms, "reason"))
	kind, _ := stringValue(get(reason, "kind"))
	var r []byte
	switch kind {
	case "aborted":
		if get(reason, "reason") != nil {
			return e.Data, nil // passes unchanged, as in the released loader
		}
		r = object(member{"kind", str("aborted")}, member{"reason", object(member{"kind", str("legacy")})})
	case "disposed":
		r = object(member{"kind", str("aborted")}, member{"reason", object(member{"kind", str("disposed")})})
	case "error":
		code := get(reason, "code")
		if code == nil {
			code = str("UNKNOWN")
		}
		r = object(member{"kind", str("error")}, member{"error", object(member{"message", get(reason, "message")}, member{"code", code})})
	case "rejected":
		return nil, refuse(e, "the turn/end reason rejected has no released counterpart")
	default:
		return e.Data, nil
	}
	return object(append(without(ms, "reason"), member{"reason", r})...), nil
}

// FromReleased converts a released log (as released.Check returns it) to
// this library's vocabulary (REL-6), event by event, seqs kept. session is
// the session's id (message ids equal to LegacyID are left out). The
// result passes this library's seed rules; an event that cannot be
// converted is refused with convert.not_convertible naming it.
func FromReleased(sessionID string, events []event.Event) ([]event.Event, error) {
	out := make([]event.Event, 0, len(events))
	for i := range events {
		e, err := fromReleased(sessionID, events[i])
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if _, err := session.Seed(out); err != nil { // this library's seed rules
		return nil, notConvertible(events, err)
	}
	return out, nil
}

func fromReleased(session string, e event.Event) (event.Event, error) {
	if e.Ignorable && !event.Known(e.Type) {
		return e, nil
	}
	ms, err := members(e.Data)
	if err != nil {
		return e, refuse(&e, "%v", err)
	}
	switch e.Type {
	case event.TypeUserMessage:
		if k, ok := only(ms, "content", "source", "id", "role"); !ok {
			return e, refuse(&e, "member %q has no place in a user/message", k)
		}
		return e, nil // the released user/message is a b736889ac7 one with id and role
	case event.TypeAssistantMessage:
		if k, ok := only(ms, "turn", "step", "message", "usage", "interrupted"); !ok {
			return e, refuse(&e, "member %q has no place in an assistant/message", k)
		}
		msg := mustMembers(get(ms, "message"))
		if k, ok := only(msg, "id", "role", "content", "source"); !ok {
			return e, refuse(&e, "message member %q has no place in an assistant/message", k)
		}
		// The source is the provenance. Its kind is left out where
		// ToReleased writes it (last), and kept in its place otherwise, so
		// that both round trips give back the same bytes.
		provenance := mustMembers(get(msg, "source"))
		if n := len(provenance); n > 0 && provenance[n-1].key == "kind" {
			provenance = provenance[:n-1]
		}
		e.Data = object(member{"turn", get(ms, "turn")}, member{"step", get(ms, "step")}, member{"content", get(msg, "content")},
			member{"provenance", object(provenance...)}, member{"usage", get(ms, "usage")}, member{"interrupted", get(ms, "interrupted")},
			member{"messageId", ownID(session, e.Seq, get(msg, "id"))})
	case event.TypeToolResult:
		if k, ok := only(ms, "turn", "step", "message", "error", "meta"); !ok {
			return e, refuse(&e, "member %q has no place in a tool/result", k)
		}
		msg := mustMembers(get(ms, "message"))
		if k, ok := only(msg, "id", "role", "content", "source"); !ok {
			return e, refuse(&e, "message member %q has no place in a tool/result", k)
		}
		var blocks []json.RawMessage
		_ = json.Unmarshal(get(msg, "content"), &blocks) // one block: Check saw to it
		block := mustMembers(blocks[0])
		if k, ok := only(block, "type", "toolCallId", "content", "isError"); !ok {
			return e, refuse(&e, "tool-result block member %q has no place in a tool/result", k)
		}
		isError := get(block, "isError")
		if isError == nil {
			isError = []byte("false")
		}
		e.Data = object(member{"turn", get(ms, "turn")}, member{"step", get(ms, "step")}, member{"callId", get(block, "toolCallId")},
			member{"content", get(block, "content")}, member{"isError", isError}, member{"error", get(ms, "error")}, member{"meta", get(ms, "meta")},
			member{"messageId", ownID(session, e.Seq, get(msg, "id"))})
	case event.TypeTurnStart:
		if get(ms, "trigger") == nil {
			e.Data = object(append(ms, member{"trigger", []byte(triggerUnrecorded)})...)
		}
	case event.TypeTurnEnd:
		e.Data = turnEndFromReleased(ms, e.Data)
	default:
		if !event.Known(e.Type) {
			e.Ignorable = true // kept and skipped here
		}
	}
	return e, nil
}

// ownID is a message id worth keeping: nil when it is the legacy id of
// this seq (ToReleased makes it again).
func ownID(session string, seq int64, id []byte) []byte {
	if s, ok := stringValue(id); ok && s == LegacyID(session, seq) {
		return nil
	}
	return id
}

// turnEndFromReleased undoes turnEndToReleased where it can: aborted for a
// legacy reason is aborted, aborted because disposed is disposed, and an
// error object's message and code move back into the reason.
func turnEndFromReleased(ms []member, data []byte) []byte {
	reason := mustMembers(get(ms, "reason"))
	kind, _ := stringValue(get(reason, "kind"))
	inner, _ := stringValue(mustGet(get(reason, "reason"), "kind"))
	var r []byte
	switch {
	case kind == "aborted" && inner == "legacy" && len(mustMembers(get(reason, "reason"))) == 1:
		r = object(member{"kind", str("aborted")})
	case kind == "aborted" && inner == "disposed" && len(mustMembers(get(reason, "reason"))) == 1:
		r = object(member{"kind", str("disposed")})
	case kind == "error" && get(reason, "error") != nil:
		e := mustMembers(get(reason, "error"))
		r = object(append([]member{{"kind", str("error")}}, e...)...)
	default:
		return data
	}
	return object(append(without(ms, "reason"), member{"reason", r})...)
}

// HeaderToReleased is the released header of a session stored here, with
// delegationDepth 0 (a session of this library is not a delegated one).
func HeaderToReleased(h persist.Header) released.Header {
	r := released.Header{Version: 0, ID: h.ID, CreatedAt: h.CreatedAt, SeedLength: h.SeedLength}
	if h.Cwd != "" {
		r.Cwd = &h.Cwd
	}
	if h.ParentSession != "" {
		r.ParentSession = &h.ParentSession
	}
	return r
}

// HeaderFromReleased is this library's header of a released session. Its
// origin, agentPreset and a delegationDepth other than 0 have no place
// here: refused unless o.DropHeaderExtras.
func HeaderFromReleased(h released.Header, o Options) (persist.Header, error) {
	if !o.DropHeaderExtras && (h.Origin != nil || h.AgentPreset != nil || h.DelegationDepth != 0) {
		return persist.Header{}, event.Errorf(event.CodeConvertNotConvertible, -1, "the released header's origin, agentPreset or delegationDepth %d has no place here (Options.DropHeaderExtras drops them)", h.DelegationDepth)
	}
	p := persist.Header{ID: h.ID, CreatedAt: h.CreatedAt, SeedLength: h.SeedLength}
	if h.Cwd != nil {
		p.Cwd = *h.Cwd
	}
	if h.ParentSession != nil {
		p.ParentSession = *h.ParentSession
	}
	return p, nil
}
