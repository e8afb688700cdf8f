// Package message derives the LLM messages of surface nodes (SURF-19 to
// SURF-22): one event in, zero or one message out.
package message

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/surfacelog/surface/impl/event"
)

// Role is the role of a message: "user" or "assistant".
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one LLM message derived from one surface node.
//
// Messages handed out by a session are shared: treat Content as read-only.
type Message struct {
	// Seq is the seq of the surface node the message came from (SURF-19).
	Seq int64 `json:"seq"`
	// Role is the message role.
	Role Role `json:"role"`
	// Content holds the content blocks as JSON text. Blocks taken from the
	// event keep their stored bytes (SURF-22).
	Content []json.RawMessage `json:"content"`
	// Provenance is an assistant message's provenance as its event stored
	// it ({provider, model, ...}), nil when the event has none (SURF-20).
	Provenance json.RawMessage `json:"provenance,omitempty"`
}

// FromEvent maps a validated surface-eligible event to its message. ok is
// false when the event gives no message: an assistant/message with empty
// content (SURF-20), or a type that is not surface-eligible.
func FromEvent(e *event.Event) (m Message, ok bool) {
	m, _, ok = read(e, false, nil)
	return m, ok
}

// Metered is FromEvent(e) and Tokens(e, m, estimate) with e's data read
// once: the message of surface node e and its token count (0 when e gives
// no message).
func Metered(e *event.Event, estimate func(Message) int) (m Message, tokens int, ok bool) {
	return read(e, true, estimate)
}

// The members each type's message is made of, looked up in one walk of
// its data (event.ObjectMembers).
var (
	assistantMembers  = []string{"content", "provenance", "usage"}
	toolResultMembers = []string{"callId", "content", "isError"}
	contextMembers    = []string{"envelope", "content", "source"}
	steeringMembers   = []string{"content", "source"}
)

// read is FromEvent, and with count the message's tokens (see Tokens).
func read(e *event.Event, count bool, estimate func(Message) int) (m Message, tokens int, ok bool) {
	m.Seq = e.Seq
	var vals [3][]byte
	var usage []byte // an assistant message's usage member, when counted
	switch e.Type {
	case event.TypeUserMessage:
		m.Role = RoleUser
		content, _ := event.ObjectMember(e.Data, "content")
		m.Content = blocksOf(content)
	case event.TypeAssistantMessage:
		names := assistantMembers
		if !count {
			names = names[:2] // no usage
		}
		event.ObjectMembers(e.Data, names, vals[:])
		m.Role = RoleAssistant
		m.Content = blocksOf(vals[0])
		if len(m.Content) == 0 {
			return Message{}, 0, false
		}
		if vals[1] != nil {
			m.Provenance = json.RawMessage(vals[1])
		}
		usage = vals[2]
	case event.TypeToolResult:
		m.Role = RoleUser
		m.Content = []json.RawMessage{toolResultBlock(e.Data)}
	case event.TypeContextMessage:
		event.ObjectMembers(e.Data, contextMembers, vals[:])
		m.Role = RoleUser
		if vals[0] != nil && isRaw(vals[0]) {
			m.Content = blocksOf(vals[1])
		} else {
			m.Content = tagged("context", vals[2], vals[1])
		}
	case event.TypeSteeringMessage:
		event.ObjectMembers(e.Data, steeringMembers, vals[:])
		m.Role = RoleUser
		m.Content = tagged("steering", vals[1], vals[0])
	default:
		return Message{}, 0, false
	}
	if count {
		tokens = tokensOf(m, usage, estimate)
	}
	return m, tokens, true
}

// blocksOf is the blocks of a content member's value.
func blocksOf(content []byte) []json.RawMessage {
	els := event.ArrayElements(content)
	out := make([]json.RawMessage, len(els))
	for i, b := range els {
		out[i] = b
	}
	return out
}

// ToolResultBlock is the content block a tool/result's data derives
// (SURF-19): {"type":"tool-result","toolCallId","content","isError"}, its
// values the stored bytes.
func ToolResultBlock(data []byte) json.RawMessage { return toolResultBlock(data) }

func toolResultBlock(data []byte) json.RawMessage {
	var vals [3][]byte
	event.ObjectMembers(data, toolResultMembers, vals[:])
	callID, content, isError := vals[0], vals[1], vals[2]
	b := make([]byte, 0, 64+len(callID)+len(content))
	b = append(b, `{"type":"tool-result","toolCallId":`...)
	b = append(b, callID...)
	b = append(b, `,"content":`...)
	b = append(b, content...)
	b = append(b, `,"isError":`...)
	b = append(b, isError...)
	return append(b, '}')
}

// tagged is the content of a context or steering message that is not raw:
// its blocks (content) between two text blocks naming tag and the kind of
// its source.
func tagged(tag string, source, content []byte) []json.RawMessage {
	kindRaw, _ := event.ObjectMember(source, "kind")
	inner := blocksOf(content)
	out := make([]json.RawMessage, 0, len(inner)+2)
	out = append(out, textBlock("<"+tag+" source="+Restringify(kindRaw)+">"))
	out = append(out, inner...)
	return append(out, textBlock("</"+tag+">"))
}

func textBlock(text string) json.RawMessage {
	b := append([]byte(`{"type":"text","text":`), QuoteJS(text)...)
	return append(b, '}')
}

// QuoteJS quotes s exactly as JavaScript's JSON.stringify quotes a string:
// `"` and `\` escaped, \b \f \n \r \t by name, other control characters as
// \u00xx, and nothing else escaped (SURF-22). Invalid UTF-8 becomes U+FFFD.
func QuoteJS(s string) string {
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for _, r := range s {
		switch r {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			if r < 0x20 {
				b = append(b, `\u00`...)
				h := strconv.FormatInt(int64(r), 16)
				if len(h) < 2 {
					b = append(b, '0')
				}
				b = append(b, h...)
			} else {
				b = utf8.AppendRune(b, r)
			}
		}
	}
	return string(append(b, '"'))
}

func isRaw(env []byte) bool {
	if string(env) == `"raw"` {
		return true
	}
	var s string
	return json.Unmarshal(env, &s) == nil && s == "raw"
}

// Restringify returns what JavaScript's JSON.stringify(JSON.parse(lit))
// returns for a JSON string literal lit (SURF-22): the string is read as
// UTF-16 code units, and a lone surrogate (an escape such as \ud800 that
// no other escape pairs) is written back as a lowercase \u escape, as
// JSON.stringify writes it, rather than replaced.
func Restringify(lit []byte) string {
	units := make([]uint16, 0, len(lit))
	for i := 1; i < len(lit)-1; {
		c := lit[i]
		if c != '\\' {
			r, size := utf8.DecodeRune(lit[i:])
			units = utf16.AppendRune(units, r)
			i += size
			continue
		}
		switch e := lit[i+1]; e {
		case 'u':
			v, _ := strconv.ParseUint(string(lit[i+2:i+6]), 16, 16)
			units = append(units, uint16(v))
			i += 6
			continue
		case 'b':
			units = append(units, '\b')
		case 'f':
			units = append(units, '\f')
		case 'n':
			units = append(units, '\n')
		case 'r':
			units = append(units, '\r')
		case 't':
			units = append(units, '\t')
		default: // '"', '\\', '/'
			units = append(units, uint16(e))
		}
		i += 2
	}
	b := []byte{'"'}
	for k := 0; k < len(units); k++ {
		u := units[k]
		switch {
		case utf16.IsSurrogate(rune(u)):
			if u < 0xdc00 && k+1 < len(units) && units[k+1] >= 0xdc00 && units[k+1] <= 0xdfff {
				b = utf8.AppendRune(b, utf16.DecodeRune(rune(u), rune(units[k+1])))
				k++
				continue
			}
			b = append(b, `\u`...)
			b = append(b, fmt.Sprintf("%04x", u)...)
		default:
			q := QuoteJS(string(rune(u)))
			b = append(b, q[1:len(q)-1]...)
		}
	}
	return string(append(b, '"'))
}

// EstimateTokens is the default token estimate of a message (COMP-5):
// the seed system's token meter. 4 for the message's role, and for each
// content block: a text or reasoning block ceil(len(text)/4) + 4; a
// tool-call block ceil(len(name)/4) + ceil(len(arguments)/4) + 4; a
// tool-result block the estimate of its content + 4; any other block
// ceil(len(its JSON text)/4) + 4. Lengths count UTF-16 code units, as
// JavaScript's length does; a tool call's arguments are its JSON text
// (the string's content when they are a string), and another block's
// JSON text is its stored text with its strings quoted as JavaScript
// quotes them.
func EstimateTokens(m Message) int { return meterBlocks(m.Content) + 4 }

// JSNumber returns the JSON number literal lit as JavaScript writes the
// number it denotes: 1.50 is 1.5, 1e2 is 100, 1e21 is 1e+21, 1e-7 is
// 1e-7.
func JSNumber(lit []byte) string {
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return string(lit)
	}
	if f == 0 {
		return "0"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±xx, shortest digits
	mant, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	if exp >= -6 && exp < 21 {
		return sign + strconv.FormatFloat(f, 'f', -1, 64)
	}
	if exp >= 0 {
		return sign + mant + "e+" + strconv.Itoa(exp)
	}
	return sign + mant + "e" + strconv.Itoa(exp)
}

// UsageTokens reads the output tokens an assistant/message's data records
// in its usage object (outputTokens, output_tokens or completion_tokens, a
// whole number, or a string holding one); ok is false when it records
// none. A provider's own count beats any estimate. data is an event's
// data as the log keeps it (compact, no member repeated); it is read in
// place, without encoding/json.
func UsageTokens(data []byte) (int, bool) {
	u, _ := event.ObjectMember(data, "usage")
	return usageOf(u)
}

// usageOf is UsageTokens of the value of the usage member (nil: none).
func usageOf(u []byte) (int, bool) {
	if len(u) < 2 || u[0] != '{' {
		return 0, false
	}
	for _, k := range [...]string{"outputTokens", "output_tokens", "completion_tokens"} {
		if v, ok := event.ObjectMember(u, k); ok {
			if n, ok := wholeNumber(v); ok {
				return n, true
			}
		}
	}
	return 0, false
}

// wholeNumber reads a JSON value as encoding/json's Number.Int64 would:
// a plain integer literal (or a string holding one) that fits an int64
// and is not negative.
func wholeNumber(v []byte) (int, bool) {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		var s string
		if json.Unmarshal(v, &s) != nil || !json.Valid([]byte(s)) || len(s) == 0 || !isNumberByte(s[0]) {
			return 0, false
		}
		v = []byte(s)
	}
	i, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || i < 0 || int64(int(i)) != i {
		return 0, false
	}
	return int(i), true
}

// Tokens is the token count of node e's message m: the output tokens its
// provider reported, for an assistant message that recorded usage, else
// estimate(m) (nil: EstimateTokens). A node without a message counts 0.
func Tokens(e *event.Event, m Message, estimate func(Message) int) int {
	if m.Role == "" {
		return 0
	}
	var usage []byte
	if e.Type == event.TypeAssistantMessage {
		usage, _ = event.ObjectMember(e.Data, "usage")
	}
	return tokensOf(m, usage, estimate)
}

// tokensOf is the token count of message m whose node records usage (the
// value of an assistant message's usage member; nil: none): the output
// tokens it reports, else estimate(m) (nil: EstimateTokens).
func tokensOf(m Message, usage []byte, estimate func(Message) int) int {
	if n, ok := usageOf(usage); ok {
		return n
	}
	if estimate == nil {
		return EstimateTokens(m)
	}
	return estimate(m)
}

// ProviderItems reports what the content blocks of a node hold of
// providers' items (spec §14): an opaque native item (PROV-1: a
// signature, encrypted content, redacted data, a provider's compaction),
// and a provider's compaction (PROV-3: a provider-item block with
// "compaction": true).
func ProviderItems(content []json.RawMessage) (opaque, compaction bool) {
	for _, b := range content {
		if !bytes.Contains(b, []byte(`"native"`)) {
			continue
		}
		n, ok := event.ObjectMember(b, "native")
		if !ok {
			continue
		}
		if v, _ := event.ObjectMember(n, "opaque"); string(v) == "true" {
			opaque = true
		}
		if v, _ := event.ObjectMember(b, "compaction"); string(v) == "true" && event.StringMember(b, "type") == "provider-item" {
			compaction = true
		}
	}
	return opaque, compaction
}

// ProviderHolds reports whether the data of an assistant/message records
// a reply made on history its provider holds (PROV-5): a response whose
// conversation or previousResponseId is a non-empty string.
func ProviderHolds(data []byte) bool {
	r, ok := event.ObjectMember(data, "response")
	if !ok {
		return false
	}
	return event.StringMember(r, "conversation") != "" || event.StringMember(r, "previousResponseId") != ""
}
