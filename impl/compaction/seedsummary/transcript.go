package seedsummary

import (
	"encoding/json"
	"strings"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
)

// Transcript renders the events of seqs (surface nodes, in surface order)
// as the seed system's summariser reads them: one entry per event that
// renders any text, entries separated by a blank line.
//
//	User: TEXT
//	Assistant: TEXT
//	Tool result (call ID): TEXT      (Tool error … when isError is true)
//	[Context: TEXT]
//	[Steering: TEXT]
//
// TEXT is the event's content blocks, one line each: a text block's
// text, a reasoning block as "[reasoning: TEXT]", a tool call as
// "[tool-call: NAME(ARGUMENTS)]", a tool result as "[tool-result: INNER]"
// (or "[tool-result]" when its content renders nothing), any other block
// as "[TYPE]"; empty texts render nothing. Values are written as
// JavaScript's String() writes them (an object is "[object Object]").
// Events of other types, and seqs outside events, render nothing.
func Transcript(events []event.Event, seqs []int64) string {
	var entries []string
	for _, seq := range seqs {
		if seq < 0 || seq >= int64(len(events)) {
			continue
		}
		e := &events[seq]
		var d map[string]json.RawMessage
		if json.Unmarshal(e.Data, &d) != nil {
			continue
		}
		text := renderBlocks(d["content"])
		if text == "" {
			continue
		}
		switch e.Type {
		case event.TypeUserMessage:
			entries = append(entries, "User: "+text)
		case event.TypeAssistantMessage:
			entries = append(entries, "Assistant: "+text)
		case event.TypeToolResult:
			label := "Tool result"
			if truthy(d["isError"]) {
				label = "Tool error"
			}
			entries = append(entries, label+" (call "+jsString(d["callId"])+"): "+text)
		case event.TypeContextMessage:
			entries = append(entries, "[Context: "+text+"]")
		case event.TypeSteeringMessage:
			entries = append(entries, "[Steering: "+text+"]")
		}
	}
	return strings.Join(entries, "\n\n")
}

// renderBlocks renders content blocks, one line each.
func renderBlocks(content json.RawMessage) string {
	var blocks []map[string]json.RawMessage
	if json.Unmarshal(content, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		switch jsString(b["type"]) {
		case "text":
			if truthy(b["text"]) {
				parts = append(parts, jsString(b["text"]))
			}
		case "reasoning":
			if truthy(b["text"]) {
				parts = append(parts, "[reasoning: "+jsString(b["text"])+"]")
			}
		case "tool-call":
			parts = append(parts, "[tool-call: "+jsString(b["name"])+"("+jsString(b["arguments"])+")]")
		case "tool-result":
			if inner := renderBlocks(b["content"]); inner != "" {
				parts = append(parts, "[tool-result: "+inner+"]")
			} else {
				parts = append(parts, "[tool-result]")
			}
		default:
			parts = append(parts, "["+jsString(b["type"])+"]")
		}
	}
	return strings.Join(parts, "\n")
}

// jsString is JavaScript's String(v) of a JSON value (absent: undefined).
func jsString(v json.RawMessage) string {
	if len(v) == 0 {
		return "undefined"
	}
	switch v[0] {
	case '"':
		var s string
		_ = json.Unmarshal(v, &s)
		return s
	case '{':
		return "[object Object]"
	case '[':
		var elems []json.RawMessage
		_ = json.Unmarshal(v, &elems)
		out := make([]string, len(elems))
		for i, e := range elems {
			if string(e) != "null" {
				out[i] = jsString(e)
			}
		}
		return strings.Join(out, ",")
	case 't', 'f', 'n':
		return string(v)
	}
	return message.JSNumber(v)
}

// truthy is JavaScript's truthiness of a JSON value (absent: undefined).
func truthy(v json.RawMessage) bool {
	switch string(v) {
	case "", "null", "false", `""`:
		return false
	}
	if v[0] == '-' || (v[0] >= '0' && v[0] <= '9') {
		return message.JSNumber(v) != "0"
	}
	return true
}
