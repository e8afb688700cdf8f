package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/surfacelog/surface/impl/event"
)

// The model of the released seed system's files (spec §13, REL-1 to
// REL-5), written plainly and apart from impl/released: the file is read
// line by line, each event checked against the log before it, the surface
// kept as a slice. zstd frames are found by their structure and
// decompressed by klauspost/compress; a torn last frame gives what a
// streaming decoder gives of it, block by block.

// Released is what a released file holds, by the released rules.
type Released struct {
	Events    int
	TornBytes int
	Surface   []int64
	Messages  []json.RawMessage
}

// releasedKnown are the 48 types of the released reader (0.1.0-rc.8).
var releasedKnown = strings.Fields(`agent-preset/selected agent/inbox/spliced approval/asked approval/decided
approval/policy assistant/chunk assistant/message command/done command/run compaction/end compaction/prune
compaction/start compaction/summary feedback/record goal/change hook/invoked hook/result llm/retry
llm/retry-started permission/preset plan/mode request/context request/header sandbox/mode schedule/change
session/end-seed session/title session/title-llm-request step/end step/start subagent/descriptor team/member
team/message/delivered team/message/queued team/task todo/write tool-workflow/agent-end
tool-workflow/agent-start tool-workflow/run-end tool-workflow/run-start tool/call tool/code-dispatch
tool/code-dispatch-start tool/result turn/end turn/start user/message web/deepseek-search-llm-request`)

func releasedSurfaceType(t string) bool {
	return t == "user/message" || t == "assistant/message" || t == "tool/result"
}

func relErr(code event.Code, index int, format string, args ...any) *event.Error {
	e := event.Errorf(code, int64(index), format, args...)
	if index >= 0 {
		e.Index = index
	}
	return e
}

// OpenReleased reads a released session file (plain JSONL or .jsonl.zstd)
// and checks it by the released rules.
func OpenReleased(data []byte) (*Released, error) {
	zstdTorn := 0
	if bytes.HasPrefix(data, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
		whole, torn, err := zstdFrames(data)
		if err != nil {
			return nil, relErr(event.CodePersistCorrupt, -1, "zstd: %v", err)
		}
		dec, err := zstd.NewReader(nil)
		if err != nil {
			return nil, err
		}
		plain, err := dec.DecodeAll(whole, nil)
		if err != nil {
			dec.Close()
			return nil, relErr(event.CodePersistCorrupt, -1, "zstd: %v", err)
		}
		// A torn last frame: what a streaming decoder gives of it (its
		// whole blocks, then what arrived of a raw block), up to its last
		// complete record.
		got := streamed(dec, torn)
		dec.Close()
		if i := bytes.LastIndexByte(got, '\n'); i >= 0 {
			plain = append(plain, got[:i+1]...)
		}
		data, zstdTorn = plain, len(torn)
	}
	text := string(data)
	nl := strings.IndexByte(text, '\n')
	if nl < 0 {
		return nil, relErr(event.CodePersistNotASession, -1, "no header line")
	}
	if err := releasedHeader(text[:nl]); err != nil {
		return nil, err
	}
	rest := text[nl+1:]
	r := &Released{}
	lines := strings.SplitAfter(rest, "\n")
	if last := lines[len(lines)-1]; !strings.HasSuffix(last, "\n") {
		r.TornBytes = len(last) // a last line without its newline is ignored
		lines = lines[:len(lines)-1]
	}
	var events []json.RawMessage
	for k, l := range lines {
		l = strings.TrimSuffix(l, "\n")
		expanded, ok := expandLine(l)
		if !ok {
			for _, later := range lines[k+1:] {
				var probe struct{ Type string }
				if json.Unmarshal([]byte(later), &probe) == nil && probe.Type == "turn/end" {
					return nil, relErr(event.CodePersistCorrupt, -1, "a damaged line before a later turn/end")
				}
			}
			for _, t := range lines[k:] {
				r.TornBytes += len(t)
			}
			break
		}
		events = append(events, expanded...)
	}
	r.Events = len(events)
	r.TornBytes += zstdTorn
	var log []map[string]json.RawMessage
	r.Surface = []int64{}
	for i, line := range events {
		e, err := releasedEvent(line, i, log, r.Surface)
		if err != nil {
			return nil, err
		}
		log = append(log, e)
		if releasedSurfaceType(str(e["type"])) {
			op, _ := DecodeMarkers(e["surfaceOp"], nil)
			if op.Kind == event.OpAppend {
				r.Surface = append(r.Surface, int64(i))
			} else {
				a, b := slices.Index(r.Surface, op.Start), slices.Index(r.Surface, op.End)
				r.Surface = append(append(append([]int64{}, r.Surface[:a]...), int64(i)), r.Surface[b+1:]...)
			}
		}
	}
	r.Messages = []json.RawMessage{}
	for _, q := range r.Surface {
		e := log[q]
		var msg json.RawMessage
		switch str(e["type"]) {
		case "user/message":
			msg = e["data"]
		case "assistant/message":
			var d struct {
				Message struct {
					Content []json.RawMessage `json:"content"`
				} `json:"message"`
			}
			_ = json.Unmarshal(e["data"], &d)
			if len(d.Message.Content) == 0 {
				continue
			}
			msg = member(e["data"], "message")
		case "tool/result":
			msg = member(e["data"], "message")
		}
		var c bytes.Buffer
		_ = json.Compact(&c, msg)
		r.Messages = append(r.Messages, c.Bytes())
	}
	return r, nil
}

func str(v json.RawMessage) string {
	var s string
	_ = json.Unmarshal(v, &s)
	return s
}

func member(obj json.RawMessage, key string) json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(obj, &m)
	return m[key]
}

// safeNumber reports whether v is a JSON number with a safe integer value
// (at least 0 with nonNegative, and then not written -0).
func safeNumber(v json.RawMessage, nonNegative bool) bool {
	var f float64
	if v == nil || json.Unmarshal(v, &f) != nil || f != math.Trunc(f) || math.Abs(f) > maxSafe {
		return false
	}
	return !nonNegative || f >= 0 && !strings.HasPrefix(strings.TrimSpace(string(v)), "-")
}

func releasedHeader(line string) error {
	var h map[string]json.RawMessage
	if json.Unmarshal([]byte(line), &h) != nil || str(h["type"]) != "session" {
		return relErr(event.CodePersistNotASession, -1, "not a session header")
	}
	var v float64
	if json.Unmarshal(h["version"], &v) == nil && v != 0 {
		return relErr(event.CodePersistFormatVersion, -1, "version %s", h["version"])
	}
	if h["sandboxMode"] != nil || h["approvalPolicy"] != nil {
		return relErr(event.CodePersistCorrupt, -1, "retired header fields")
	}
	var id string
	if string(h["version"]) != "0" || json.Unmarshal(h["id"], &id) != nil || id == "" ||
		!safeNumber(h["delegationDepth"], true) || !safeNumber(h["createdAt"], true) {
		return relErr(event.CodePersistNotASession, -1, "not a released session header")
	}
	return nil
}

// expandLine is one line's events: the line itself, or the members of a
// packed chunk row; ok is false when the line is not a JSON object or is
// a malformed row.
func expandLine(line string) ([]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(line), &m) != nil {
		return nil, false
	}
	tag := str(m["type"])
	kind := map[string]string{"text-chunks": "text-delta", "reasoning-chunks": "reasoning-delta", "tool-call-chunks": "tool-call-delta"}[tag]
	if kind == "" {
		return []json.RawMessage{json.RawMessage(line)}, true
	}
	if len(m) != 4 || m["seq0"] == nil || m["time0"] == nil || m["data"] == nil || !safeNumber(m["seq0"], true) || !safeNumber(m["time0"], false) {
		return nil, false
	}
	var d map[string]json.RawMessage
	if json.Unmarshal(m["data"], &d) != nil {
		return nil, false
	}
	keys := []string{"turn", "step", "index", "dt", "texts"}
	list := "texts"
	if tag == "tool-call-chunks" {
		keys, list = []string{"turn", "step", "index", "dt", "id", "args"}, "args"
		if d["name"] != nil {
			keys = append(keys, "name")
		}
	}
	if len(d) != len(keys) {
		return nil, false
	}
	for _, k := range keys {
		if d[k] == nil {
			return nil, false
		}
	}
	for _, k := range []string{"turn", "step", "index"} {
		if !safeNumber(d[k], false) {
			return nil, false
		}
	}
	if tag == "tool-call-chunks" {
		var s string
		if json.Unmarshal(d["id"], &s) != nil || d["name"] != nil && json.Unmarshal(d["name"], &s) != nil {
			return nil, false
		}
	}
	var items []string
	var dts []json.RawMessage
	if json.Unmarshal(d[list], &items) != nil || len(items) == 0 || json.Unmarshal(d["dt"], &dts) != nil || len(dts) != len(items)-1 {
		return nil, false
	}
	var seq0, t float64
	_ = json.Unmarshal(m["seq0"], &seq0)
	_ = json.Unmarshal(m["time0"], &t)
	var out []json.RawMessage
	for k, it := range items {
		if k > 0 {
			if !safeNumber(dts[k-1], false) {
				return nil, false
			}
			var dt float64
			_ = json.Unmarshal(dts[k-1], &dt)
			t += dt
		}
		if math.Abs(t) > maxSafe || seq0+float64(k) > maxSafe {
			return nil, false
		}
		text, _ := json.Marshal(it)
		var chunk string
		if tag == "tool-call-chunks" {
			name := ""
			if d["name"] != nil {
				name = `,"name":` + string(d["name"])
			}
			chunk = fmt.Sprintf(`{"type":"tool-call-delta","index":%s,"id":%s%s,"argumentsDelta":%s}`, d["index"], d["id"], name, text)
		} else {
			chunk = fmt.Sprintf(`{"type":%q,"index":%s,"text":%s}`, kind, d["index"], text)
		}
		out = append(out, json.RawMessage(fmt.Sprintf(`{"type":"assistant/chunk","seq":%d,"time":%d,"data":{"turn":%s,"step":%s,"chunk":%s}}`,
			int64(seq0)+int64(k), int64(t), d["turn"], d["step"], chunk)))
	}
	return out, true
}

// releasedEvent checks event line i against the log before it (REL-2 to
// REL-4) and returns its members.
func releasedEvent(line json.RawMessage, i int, log []map[string]json.RawMessage, surface []int64) (map[string]json.RawMessage, error) {
	var e map[string]json.RawMessage
	if json.Unmarshal(line, &e) != nil {
		return nil, relErr(event.CodeInvalidEnvelope, i, "not an object")
	}
	for k := range e {
		if !slices.Contains([]string{"type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable"}, k) {
			return nil, relErr(event.CodeInvalidEnvelope, i, "member %s", k)
		}
	}
	var typ string
	if json.Unmarshal(e["type"], &typ) != nil || typ == "" || !safeNumber(e["seq"], true) || !safeNumber(e["time"], false) ||
		e["data"] == nil || e["ignorable"] != nil && string(e["ignorable"]) != "true" {
		return nil, relErr(event.CodeInvalidEnvelope, i, "envelope")
	}
	var seq float64
	_ = json.Unmarshal(e["seq"], &seq)
	if int(seq) != i {
		return nil, relErr(event.CodeSeqNotContiguous, i, "seq")
	}
	if typ == "request/header-delta" || typ == "mode/set" || typ == "request/header" && str(member(e["data"], "reason")) == "fallback" {
		return nil, relErr(event.CodeReleasedTypeRefused, i, "%s", typ)
	}
	known := slices.Contains(releasedKnown, typ)
	if !known && e["ignorable"] == nil {
		return nil, relErr(event.CodeUnknownType, i, "%s", typ)
	}
	surfaceType := known && releasedSurfaceType(typ)
	if surfaceType {
		if why := identifiedProblem(typ, e["data"]); why != "" {
			return nil, relErr(event.CodeReleasedMessageInvalid, i, "%s", why)
		}
	}
	op, sources := DecodeMarkers(e["surfaceOp"], e["sourceEventSeqs"])
	ev := event.Event{Type: event.Type(typ), Seq: int64(i), Op: op, Sources: sources}
	if !surfaceType {
		if op.Kind != event.OpNone {
			return nil, relErr(event.CodeOpForbidden, i, "surfaceOp")
		}
		if sources != nil {
			return nil, relErr(event.CodeSourcesForbidden, i, "sources")
		}
		return e, nil
	}
	// The marker and replace rules are the b736889ac7 ones (SURF-7 to
	// SURF-14): the model's own, on an event that stands for this one.
	stand := ev
	stand.Data = []byte(`{"content":[],"source":{"kind":"user"}}`)
	if typ == "assistant/message" {
		stand.Data = []byte(`{"turn":1,"step":1,"content":[]}`)
	} else if typ == "tool/result" {
		stand.Data = []byte(`{"turn":1,"step":1,"callId":"x","content":[],"isError":false}`)
	}
	stand.Time = 0
	shadowLog := make([]event.Event, len(log))
	for k := range log {
		shadowLog[k] = event.Event{Type: "todo/write", Seq: int64(k), Data: []byte(`{"todos":[]}`)}
	}
	if _, err := accept(options{}, shadowLog, surface, stand, i); err != nil {
		return nil, err
	}
	if typ == "tool/result" && op.Kind == event.OpReplace {
		if op.Start != op.End {
			return nil, relErr(event.CodeReleasedToolResultReplace, i, "exactly one node")
		}
		old := log[op.Start]
		if str(old["type"]) != "tool/result" {
			return nil, relErr(event.CodeReleasedToolResultReplace, i, "a tool/result")
		}
		if !reflect.DeepEqual(contentless(old["data"]), contentless(e["data"])) {
			return nil, relErr(event.CodeReleasedToolResultReplace, i, "only content")
		}
	}
	return e, nil
}

// contentless is a tool/result's data without message.content[0].content.
func contentless(data json.RawMessage) any {
	var v any
	_ = json.Unmarshal(data, &v)
	if m, ok := v.(map[string]any); ok {
		if msg, ok := m["message"].(map[string]any); ok {
			if c, ok := msg["content"].([]any); ok && len(c) > 0 {
				if b, ok := c[0].(map[string]any); ok {
					delete(b, "content")
				}
			}
		}
	}
	return v
}

// identifiedProblem says what is wrong with a surface event's identified
// message (REL-3), or "".
func identifiedProblem(typ string, data json.RawMessage) string {
	msg := data
	if typ != "user/message" {
		msg = member(data, "message")
		if msg == nil {
			return "lacks an identified message"
		}
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil {
		return "lacks an identified message"
	}
	var id string
	if json.Unmarshal(m["id"], &id) != nil || id == "" {
		return "lacks an identified message"
	}
	role := "user"
	if typ == "assistant/message" {
		role = "assistant"
	}
	if str(m["role"]) != role || m["role"] == nil || m["role"][0] != '"' {
		return "role"
	}
	var src map[string]json.RawMessage
	if json.Unmarshal(m["source"], &src) != nil || src == nil || str(src["kind"]) == "" {
		return "source"
	}
	var content []json.RawMessage
	if json.Unmarshal(m["content"], &content) != nil || content == nil {
		return "content"
	}
	switch typ {
	case "assistant/message":
		if str(src["kind"]) != "model" || str(src["provider"]) == "" || str(src["model"]) == "" {
			return "model source"
		}
	case "tool/result":
		if str(src["kind"]) != "tool" || str(src["callId"]) == "" {
			return "tool source"
		}
		if len(content) != 1 || str(member(content[0], "type")) != "tool-result" {
			return "one tool-result block"
		}
		if str(member(content[0], "toolCallId")) != str(src["callId"]) {
			return "mismatched tool call ids"
		}
	}
	return ""
}

// zstdFrames splits a .jsonl.zstd file into its whole frames and a torn
// last frame, by the frame format (RFC 8878): magic, descriptor, window,
// dictionary ID and content size, then blocks until the last, then the
// checksum when the descriptor says so.
func zstdFrames(data []byte) (whole, torn []byte, err error) {
	at := 0
	for at < len(data) {
		end, ok := frameEnd(data[at:])
		if !ok {
			if len(data)-at >= 4 && !bytes.HasPrefix(data[at:], []byte{0x28, 0xb5, 0x2f, 0xfd}) {
				return nil, nil, fmt.Errorf("no frame magic at byte %d", at)
			}
			return data[:at], data[at:], nil
		}
		at += end
	}
	return data, nil, nil
}

// frameEnd is the length of the frame data starts with; ok is false when
// the data stops before the frame does.
func frameEnd(f []byte) (int, bool) {
	if len(f) < 5 || !bytes.HasPrefix(f, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
		return 0, false
	}
	n := headerLen(f[4])
	for {
		if n+3 > len(f) {
			return 0, false
		}
		h := int(f[n]) | int(f[n+1])<<8 | int(f[n+2])<<16
		size := h >> 3
		if (h>>1)&3 == 1 { // RLE: one byte on the wire
			size = 1
		}
		n += 3 + size
		if n > len(f) {
			return 0, false
		}
		if h&1 == 1 {
			break
		}
	}
	if f[4]&0x04 != 0 {
		n += 4
	}
	return n, n <= len(f)
}

// headerLen is the length of a frame header with descriptor d.
func headerLen(d byte) int {
	n := 5 + []int{0, 1, 2, 4}[d&3] + []int{0, 2, 4, 8}[d>>6]
	if d&0x20 == 0 {
		n++ // window descriptor
	} else if d>>6 == 0 {
		n++ // a single-segment frame's 1-byte size
	}
	return n
}

// streamed is what a streaming decoder gives of a frame cut short: block
// by block, each whole block's content (a compressed one decoded with the
// blocks before it, as a frame of its own: windowed 64 MiB, no size, no
// checksum), then the bytes that arrived of a raw block.
func streamed(dec *zstd.Decoder, torn []byte) []byte {
	if len(torn) < 5 || len(torn) < headerLen(torn[4]) {
		return nil
	}
	d := torn[4]
	blocks := []byte{}
	var out []byte
	for n := headerLen(d); n+3 <= len(torn); {
		h := int(torn[n]) | int(torn[n+1])<<8 | int(torn[n+2])<<16
		typ, size := (h>>1)&3, h>>3
		wire := size
		if typ == 1 {
			wire = 1
		}
		if n+3+wire > len(torn) {
			if typ == 0 {
				out = append(out, torn[n+3:]...)
			}
			break
		}
		blocks = append(blocks, torn[n:n+3+wire]...)
		// A frame of the blocks so far, the last one marked last.
		frame := append([]byte{0x28, 0xb5, 0x2f, 0xfd, d & 3, 16 << 3}, torn[5+boolInt(d&0x20 == 0):5+boolInt(d&0x20 == 0)+[]int{0, 1, 2, 4}[d&3]]...)
		frame = append(frame, blocks...)
		frame[len(frame)-3-wire] |= 1
		content, err := dec.DecodeAll(frame, nil)
		if err != nil {
			return out
		}
		out = content
		n += 3 + wire
		if h&1 == 1 {
			break
		}
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
