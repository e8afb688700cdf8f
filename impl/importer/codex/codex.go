package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/importer"
	"github.com/surfacelog/surface/impl/persist"
)

// Record is the type of the ignorable events that keep the lines with no
// place among the messages: data {"line": N, "kind": K, "record": LINE}.
const Record event.Type = "codex/line"

// Line kinds of a rollout (RolloutItem, spec/harnesses.md §1.3).
const (
	KindSessionMeta  = "session_meta"
	KindResponseItem = "response_item"
	KindCompacted    = "compacted"
	KindTurnContext  = "turn_context"
	KindEventMsg     = "event_msg"
)

// Line is one parsed line of a rollout.
type Line struct {
	importer.Line
	Timestamp string
	Type      string
	Payload   json.RawMessage
	// Item is the payload's own "type" (a response item's or an event's).
	Item string
	// Problem says why the line is not a rollout line; "" when it is one.
	Problem string
}

// File is a parsed rollout.
type File struct {
	Lines []Line
	Torn  int // length of a torn last line, 0 when none
}

// Parse reads a rollout. Blank lines are skipped; a line that is not a
// rollout line is kept with its Problem.
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
		f.Lines = append(f.Lines, parseLine(l))
	}
	return f, nil
}

func parseLine(l importer.Line) Line {
	out := Line{Line: l}
	if !l.Valid {
		out.Problem = "not a JSON object"
		return out
	}
	var env struct {
		Timestamp *string         `json:"timestamp"`
		Type      *string         `json:"type"`
		Payload   json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(l.Raw, &env); err != nil {
		out.Problem = "not a rollout line: " + err.Error()
		return out
	}
	switch {
	case env.Timestamp == nil:
		out.Problem = "no string timestamp"
	case env.Type == nil:
		out.Problem = "no string type"
	case len(env.Payload) == 0 || env.Payload[0] != '{':
		out.Problem = "no object payload"
	}
	if out.Problem != "" {
		return out
	}
	out.Timestamp, out.Type, out.Payload = *env.Timestamp, *env.Type, env.Payload
	out.Item = str(out.Payload, "type")
	return out
}

// Known says whether kind is a line kind of the format as covered.
func Known(kind string) bool {
	switch kind {
	case KindSessionMeta, KindResponseItem, KindCompacted, KindTurnContext, KindEventMsg:
		return true
	}
	return false
}

// str is the string member name of the object obj, "" when absent.
func str(obj json.RawMessage, name string) string {
	return event.StringMember(obj, name)
}

func member(obj json.RawMessage, name string) json.RawMessage {
	v, _ := event.ObjectMember(obj, name)
	return v
}

// contextualPrefixes begin the text of a user message Codex injects
// rather than the user types (spec/harnesses.md §1.5, item 4).
var contextualPrefixes = []string{"# AGENTS.md instructions", "<environment_context>", "<skill>", "<user_shell_command>", "<turn_aborted>", "<subagent_notification>"}

// Contextual says whether a user message item is contextual: injected by
// Codex, not a user turn's prompt.
func Contextual(item json.RawMessage) bool {
	for _, part := range event.ArrayElements(member(item, "content")) {
		t := strings.TrimLeft(str(part, "text"), " \t\r\n")
		for _, p := range contextualPrefixes {
			if strings.HasPrefix(t, p) {
				return true
			}
		}
	}
	return false
}

// Boundary says whether a response item begins a user turn: a user
// message that is not contextual.
func Boundary(item json.RawMessage) bool {
	return str(item, "type") == "message" && str(item, "role") == "user" && !Contextual(item)
}

// call kinds and the output kind that answers each.
var outputFor = map[string]string{
	"function_call":    "function_call_output",
	"custom_tool_call": "custom_tool_call_output",
	"local_shell_call": "function_call_output",
}

// isOutput says whether an item kind answers a call.
func isOutput(kind string) bool {
	return kind == "function_call_output" || kind == "custom_tool_call_output"
}

// ItemKinds sent to the model after a rebuild besides messages
// (spec/harnesses.md §1.5, item 2).
func apiItem(kind string) bool {
	switch kind {
	case "message", "reasoning", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output",
		"local_shell_call", "tool_search_call", "tool_search_output", "web_search_call", "image_generation_call",
		"compaction", "compaction_summary":
		return true
	}
	return false
}

// Header is the session header a rollout's session_meta gives: its id,
// time, cwd, and the thread it was forked from.
func Header(f *File) (persist.Header, error) {
	for _, l := range f.Lines {
		if l.Problem == "" && l.Type == KindSessionMeta {
			id := str(l.Payload, "id")
			if id == "" {
				return persist.Header{}, importer.Findingf(l.N, event.CodeImportNoSession, "the session_meta names no id")
			}
			ts := importer.Millis(str(l.Payload, "timestamp"))
			if ts == 0 {
				ts = importer.Millis(l.Timestamp)
			}
			return persist.Header{ID: id, CreatedAt: ts, Cwd: str(l.Payload, "cwd"), ParentSession: str(l.Payload, "forked_from_id")}, nil
		}
	}
	return persist.Header{}, importer.Findingf(0, event.CodeImportNoSession, "no session_meta line: Codex cannot resume a rollout without one")
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func compactJSON(b []byte) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return json.RawMessage(b)
	}
	return buf.Bytes()
}

func describe(l *Line) string {
	if l.Item != "" {
		return fmt.Sprintf("%s %s", l.Type, l.Item)
	}
	return l.Type
}
