package codex_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/importer"
	"github.com/surfacelog/surface/impl/importer/codex"
)

// rebuild is a second, independent reading of spec/harnesses.md §1.5: the
// history Codex rebuilds from a rollout on resume, before for_prompt
// closes open calls. A reverse scan finds the base (the newest compacted
// line with a replacement history whose turn segment no rollback
// skipped); a forward replay from it applies items, legacy compactions
// and rollbacks to a plain list of items. It shares nothing with Import
// but the line parser.
func rebuild(f *codex.File) []json.RawMessage {
	var lines []*codex.Line
	for i := range f.Lines {
		if f.Lines[i].Problem == "" {
			lines = append(lines, &f.Lines[i])
		}
	}
	// Segments: each begins at a task_started.
	seg := make([]int, len(lines))
	n := 0
	for i, l := range lines {
		if l.Type == codex.KindEventMsg && (l.Item == "task_started" || l.Item == "turn_started") {
			n++
		}
		seg[i] = n
	}
	skipped := map[int]bool{}
	pending := 0
	counts := false
	base := -1
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		switch {
		case l.Type == codex.KindEventMsg && l.Item == "thread_rolled_back":
			var p struct {
				N int `json:"num_turns"`
			}
			json.Unmarshal(l.Payload, &p)
			pending += p.N
		case l.Type == codex.KindEventMsg && l.Item == "user_message":
			counts = true
		case l.Type == codex.KindResponseItem && userBoundary(l.Payload):
			counts = true
		}
		if i == 0 || seg[i-1] != seg[i] { // the segment is finalized
			if pending > 0 && counts {
				skipped[seg[i]] = true
				pending--
			}
			counts = false
		}
	}
	for i := len(lines) - 1; i >= 0 && base < 0; i-- {
		if l := lines[i]; l.Type == codex.KindCompacted && !skipped[seg[i]] && hasReplacement(l.Payload) {
			base = i
		}
	}
	type entry struct {
		item    json.RawMessage
		summary bool
	}
	var h []entry
	start := 0
	if base >= 0 {
		for _, it := range arr(lines[base].Payload, "replacement_history") {
			if sent(it) {
				h = append(h, entry{item: it})
			}
		}
		start = base + 1
	}
	for _, l := range lines[start:] {
		switch l.Type {
		case codex.KindResponseItem:
			if sent(l.Payload) {
				h = append(h, entry{item: l.Payload})
			}
		case codex.KindCompacted:
			if hasReplacement(l.Payload) {
				h = h[:0]
				for _, it := range arr(l.Payload, "replacement_history") {
					if sent(it) {
						h = append(h, entry{item: it})
					}
				}
				continue
			}
			var kept []entry
			for _, e := range h {
				if userBoundary(e.item) && !e.summary {
					kept = append(kept, e)
				}
			}
			msg := event.StringMember(l.Payload, "message")
			if msg == "" {
				msg = "(no summary available)"
			}
			s, _ := json.Marshal(msg)
			h = append(kept, entry{item: json.RawMessage(`{"type":"message","role":"user","content":[{"type":"input_text","text":` + string(s) + `}]}`), summary: true})
		case codex.KindEventMsg:
			if l.Item != "thread_rolled_back" {
				continue
			}
			var p struct {
				N int `json:"num_turns"`
			}
			json.Unmarshal(l.Payload, &p)
			var bounds []int
			for i, e := range h {
				if userBoundary(e.item) {
					bounds = append(bounds, i)
				}
			}
			if p.N <= 0 || len(bounds) == 0 {
				continue
			}
			cut := bounds[max(len(bounds)-p.N, 0)]
			for cut > 0 && contextualItem(h[cut-1].item) {
				cut--
			}
			h = h[:cut]
		}
	}
	out := make([]json.RawMessage, 0, len(h))
	for _, e := range h {
		if event.StringMember(e.item, "type") != "ghost_snapshot" {
			out = append(out, e.item)
		}
	}
	return out
}

func hasReplacement(p json.RawMessage) bool {
	v, ok := event.ObjectMember(p, "replacement_history")
	return ok && string(v) != "null"
}

func arr(obj json.RawMessage, name string) [][]byte {
	v, _ := event.ObjectMember(obj, name)
	return event.ArrayElements(v)
}

// sent says whether Codex records an item into the history it rebuilds
// (ghost snapshots are recorded, and stripped before sending).
func sent(it json.RawMessage) bool {
	switch event.StringMember(it, "type") {
	case "message":
		return event.StringMember(it, "role") != "system"
	case "reasoning", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output", "local_shell_call",
		"tool_search_call", "tool_search_output", "web_search_call", "image_generation_call", "compaction", "compaction_summary", "ghost_snapshot":
		return true
	}
	return false
}

func userBoundary(it json.RawMessage) bool {
	return event.StringMember(it, "type") == "message" && event.StringMember(it, "role") == "user" && !contextualItem(it)
}

// contextualItem: a developer message, or a user message Codex injects.
func contextualItem(it json.RawMessage) bool {
	if event.StringMember(it, "type") != "message" {
		return false
	}
	switch event.StringMember(it, "role") {
	case "developer":
		return true
	case "user":
		for _, p := range arr(it, "content") {
			t := strings.TrimLeft(event.StringMember(p, "text"), " \t\r\n")
			for _, pre := range []string{"# AGENTS.md instructions", "<environment_context>", "<skill>", "<user_shell_command>", "<turn_aborted>", "<subagent_notification>"} {
				if strings.HasPrefix(t, pre) {
					return true
				}
			}
		}
	}
	return false
}

// project turns the messages of an imported log back into Codex items:
// a block's native item where it has one, a message item of the other
// blocks, an output item per tool/result (synthetic ones left out: Codex
// never records them).
func project(l *importer.Log, msgs []msgOf) []json.RawMessage {
	var out []json.RawMessage
	for _, m := range msgs {
		e := l.Events[m.seq]
		if e.Type == event.TypeToolResult {
			meta, _ := event.ObjectMember(e.Data, "meta")
			if string(must(event.ObjectMember(meta, "synthetic"))) == "true" {
				continue
			}
			var d event.ToolResultData
			json.Unmarshal(e.Data, &d)
			item := map[string]any{"type": event.StringMember(meta, "codexType"), "call_id": d.CallID}
			if string(must(event.ObjectMember(meta, "outputString"))) == "true" {
				item["output"] = event.StringMember(d.Content[0], "text")
			} else {
				item["output"] = parts(d.Content, "input_text")
			}
			b, _ := json.Marshal(item)
			out = append(out, b)
			continue
		}
		var plain []json.RawMessage
		flush := func() {
			if len(plain) == 0 {
				return
			}
			kind := "input_text"
			if m.role == "assistant" {
				kind = "output_text"
			}
			b, _ := json.Marshal(map[string]any{"type": "message", "role": m.role, "content": parts(plain, kind)})
			out = append(out, b)
			plain = nil
		}
		for _, blk := range m.content {
			native, ok := event.ObjectMember(blk, "native")
			if ok && event.StringMember(native, "provider") == "openai" {
				flush()
				out = append(out, must(event.ObjectMember(native, "item")))
				continue
			}
			plain = append(plain, blk)
		}
		flush()
	}
	return out
}

func must(v []byte, _ bool) []byte { return v }

func parts(blocks []json.RawMessage, textKind string) []map[string]any {
	var ps []map[string]any
	for _, b := range blocks {
		switch event.StringMember(b, "type") {
		case "text":
			ps = append(ps, map[string]any{"type": textKind, "text": event.StringMember(b, "text")})
		case "image":
			ps = append(ps, map[string]any{"type": "input_image", "image_url": event.StringMember(b, "url")})
		default:
			ps = append(ps, map[string]any{"type": "unknown block " + string(b)})
		}
	}
	return ps
}

type msgOf struct {
	seq     int64
	role    string
	content []json.RawMessage
}

// render is the one-line form of an item that the .want files hold.
func render(it json.RawMessage) string {
	esc := func(s string) string { return strings.ReplaceAll(s, "\n", `\n`) }
	partsText := func(v []byte) string {
		if len(v) > 0 && v[0] == '"' {
			var s string
			json.Unmarshal(v, &s)
			return esc(s)
		}
		var ss []string
		for _, p := range event.ArrayElements(v) {
			switch event.StringMember(p, "type") {
			case "input_image":
				ss = append(ss, "image "+event.StringMember(p, "image_url"))
			default:
				ss = append(ss, esc(event.StringMember(p, "text")))
			}
		}
		return strings.Join(ss, " | ")
	}
	switch t := event.StringMember(it, "type"); t {
	case "message":
		return event.StringMember(it, "role") + ": " + partsText(must(event.ObjectMember(it, "content")))
	case "reasoning":
		var ss []string
		for _, p := range arr(it, "summary") {
			ss = append(ss, event.StringMember(p, "text"))
		}
		return "reasoning: " + esc(strings.Join(ss, "\n\n"))
	case "function_call":
		return fmt.Sprintf("function_call %s %s %s", event.StringMember(it, "call_id"), event.StringMember(it, "name"), event.StringMember(it, "arguments"))
	case "custom_tool_call":
		return fmt.Sprintf("custom_tool_call %s %s %s", event.StringMember(it, "call_id"), event.StringMember(it, "name"), esc(event.StringMember(it, "input")))
	case "local_shell_call":
		var a any
		json.Unmarshal(must(event.ObjectMember(it, "action")), &a)
		b, _ := json.Marshal(a)
		return fmt.Sprintf("local_shell_call %s %s", event.StringMember(it, "call_id"), b)
	case "function_call_output", "custom_tool_call_output":
		return fmt.Sprintf("%s %s: %s", t, event.StringMember(it, "call_id"), partsText(must(event.ObjectMember(it, "output"))))
	default:
		return t
	}
}

func renderAll(items []json.RawMessage) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = render(it)
	}
	return out
}

func sortedKeys(m map[string]int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
