package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/surfacelog/surface/conformance"
	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/convert"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/released"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/internal/traffic"
	"github.com/surfacelog/surface/internal/zstdframe"
)

// --- the released seed system's files (REL-1 to REL-5; FeatureReleased) ---

// releasedVectors returns the vectors of the released_open step: released
// session files, plain and zstd, well formed and not, and sessions of this
// library converted to the released vocabulary (REL-6) and written as the
// released system writes them (REL-7).
func releasedVectors() []conformance.Vector {
	const header = `{"type":"session","version":0,"id":"s1","createdAt":1767225600000,"delegationDepth":0}`
	ev := func(seq int, t, data, rest string) string {
		return fmt.Sprintf(`{"type":%q,"seq":%d,"time":%d,"data":%s%s}`, t, seq, 1000+seq, data, rest)
	}
	msg := func(id, role, source, content string) string {
		return `{"id":"` + id + `","role":"` + role + `","content":` + content + `,"source":` + source + `}`
	}
	model := `{"kind":"model","provider":"p","model":"m"}`
	userData := func(id string) string {
		return `{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"},"role":"user","id":"` + id + `"}`
	}
	resultData := func(id, callID, text string) string {
		return `{"turn":1,"step":1,"message":` + msg(id, "user", `{"kind":"tool","callId":"`+callID+`"}`,
			`[{"type":"tool-result","toolCallId":"`+callID+`","content":[{"type":"text","text":"`+text+`"}],"isError":false}]`) + `,"meta":{"ms":3}}`
	}
	head := []string{
		ev(0, "turn/start", `{"turn":1}`, ""),
		ev(1, "user/message", userData("u1"), `,"surfaceOp":"append"`),
		ev(2, "assistant/message", `{"turn":1,"step":1,"message":`+msg("a1", "assistant", model, `[{"type":"tool-call","id":"c1","name":"read","arguments":{}}]`)+`}`, `,"sourceEventSeqs":[],"surfaceOp":"append"`),
		ev(3, "tool/call", `{"turn":1,"step":1,"callId":"c1","name":"read","arguments":"{}"}`, ""),
		ev(4, "tool/result", resultData("r1", "c1", "a long result"), `,"sourceEventSeqs":[3],"surfaceOp":"append"`),
	}
	withHead := func(lines ...string) []string { return append(append([]string{}, head...), lines...) }
	plain := func(lines ...string) *[]byte {
		b := []byte(header + "\n" + strings.Join(lines, "\n") + "\n")
		return &b
	}
	raw := func(text string) *[]byte {
		b := []byte(text)
		return &b
	}
	frames := func(batches ...[]string) *[]byte { // a header frame, then one frame per batch
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true), zstd.WithEncoderConcurrency(1))
		if err != nil {
			log.Fatal(err)
		}
		defer enc.Close()
		out := enc.EncodeAll([]byte(header+"\n"), nil)
		for _, b := range batches {
			out = enc.EncodeAll([]byte(strings.Join(b, "\n")+"\n"), out)
		}
		return &out
	}
	handFrames := func(batches ...[]string) *[]byte { // the header frame, then one hand-built frame per batch, each of another shape
		shapes := []zstdframe.Shape{
			{Single: true, Checksum: true},
			{Window: 3},
			{DictSize: 1, FCSFlag: 1, Window: 7, Checksum: true},
			{DictSize: 2, FCSFlag: 2, Single: true, Checksum: true},
			{DictSize: 4, FCSFlag: 3, Window: 0, Checksum: true},
		}
		texts := []string{header + "\n"}
		for _, b := range batches {
			texts = append(texts, strings.Join(b, "\n")+"\n")
		}
		var out []byte
		for i, text := range texts {
			s := shapes[i%len(shapes)]
			if !s.Fits(len(text)) {
				s.FCSFlag = 2
			}
			out = append(out, zstdframe.Frame(s, zstdframe.Split([]byte(text), min(s.MaxBlock(len(text)), 40), 2))...)
		}
		return &out
	}
	unusedBit := func(batches ...[]string) *[]byte {
		texts := []string{header + "\n"}
		for _, b := range batches {
			texts = append(texts, strings.Join(b, "\n")+"\n")
		}
		var out []byte
		for _, text := range texts {
			out = append(out, zstdframe.Frame(zstdframe.Shape{FCSFlag: 2, Unused: true, Checksum: true, Window: 5}, []zstdframe.Block{zstdframe.Raw([]byte(text))})...)
		}
		return &out
	}
	cut := func(f *[]byte, n int) *[]byte { // the file without its last n bytes
		b := (*f)[:len(*f)-n]
		return &b
	}
	rawLast := func(first, last []string) *[]byte { // Go-encoded frames, then the last batch as one raw block (no checksum)
		out := *frames(first)
		text := strings.Join(last, "\n") + "\n"
		out = append(out, zstdframe.Frame(zstdframe.Shape{Window: 7}, []zstdframe.Block{zstdframe.Raw([]byte(text))})...)
		return &out
	}
	open := func(f *[]byte) conformance.Step { return conformance.Step{Op: "released_open", File: f} }
	at5 := func(t, data, rest string) string { return ev(5, t, data, rest) }
	rewrite := func(data string, start, end int, sources string) string {
		return at5("tool/result", data, fmt.Sprintf(`,"surfaceOp":{"op":"replace","start":%d,"end":%d},"sourceEventSeqs":%s`, start, end, sources))
	}
	turnEnd := func(seq int) string { return ev(seq, "turn/end", `{"turn":1,"reason":{"kind":"completed"}}`, "") }
	cases := []struct {
		name  string
		desc  string
		steps []conformance.Step
		rules []string
	}{
		{"loads", "REL-1, REL-5: a released JSONL file loads; the messages are the identified messages as stored (a user/message's data, the message of the others), an assistant message with empty content derives none, session/end-seed and an ignorable unknown type are kept and skipped", []conformance.Step{
			open(plain(withHead(
				rewrite(resultData("r1", "c1", "pruned"), 4, 4, "[4]"),
				ev(6, "assistant/message", `{"turn":1,"step":2,"message":`+msg("a2", "assistant", model, `[]`)+`}`, `,"surfaceOp":"append"`),
				ev(7, "plugin/note", `{"n":1}`, `,"ignorable":true`),
				turnEnd(8),
				ev(9, "session/end-seed", `{}`, ""))...))}, []string{"REL-1", "REL-2", "REL-4", "REL-5"}},
		{"zstd", "REL-1: a .jsonl.zstd file, a header frame and one checksummed frame per batch, loads like the plain file", []conformance.Step{
			open(frames(head[:2], head[2:], []string{turnEnd(5)}))}, []string{"REL-1"}},
		{"zstd_frame_shapes", "REL-1: frames of every shape RFC 8878 allows, written by hand: single-segment with a 1-byte size, windowed without a size, raw and RLE blocks, a dictionary ID of 0 in 1, 2 and 4 bytes, a 2-, 4- and 8-byte size, no checksum: all load like the plain file", []conformance.Step{
			open(handFrames(head[:2], head[2:], []string{turnEnd(5)}))}, []string{"REL-1"}},
		{"zstd_unused_bit", "REL-1 (D66): a frame descriptor with the unused bit 4 set, which RFC 8878 says a decoder must not interpret, loads like the plain file", []conformance.Step{
			open(unusedBit(head[:2], head[2:], []string{turnEnd(5)}))}, []string{"REL-1"}},
		{"zstd_torn_frame", "REL-1: a last frame cut short keeps the records it holds whole, as a streaming decoder gives them (its whole blocks, then what arrived of a raw block), and its bytes are torn: cut in its checksum (every block whole), inside a raw block after three whole records, inside its first record, inside its header", []conformance.Step{
			open(cut(frames(head[:2], head[2:], []string{turnEnd(5)}), 1)),
			open(cut(rawLast(head[:2], append(head[2:], turnEnd(5))), len(turnEnd(5))/2)),
			open(cut(rawLast(head[:2], append(head[2:], turnEnd(5))), len(strings.Join(append(head[2:], turnEnd(5)), "\n"))-20)),
			open(cut(rawLast(head[:2], append(head[2:], turnEnd(5))), len(strings.Join(append(head[2:], turnEnd(5)), "\n"))+3+2))}, []string{"REL-1"}},
		{"packed_rows", "REL-1: packed chunk rows (text, reasoning, tool-call) stand for the assistant/chunk events they pack, their dt summed into times; a plain first tool-call delta with name precedes its row", []conformance.Step{
			open(plain(ev(0, "turn/start", `{"turn":1}`, ""),
				`{"type":"text-chunks","seq0":1,"time0":5,"data":{"turn":1,"step":1,"index":0,"dt":[1,-1],"texts":["a","b","<c>"]}}`,
				`{"type":"reasoning-chunks","seq0":4,"time0":9,"data":{"turn":1,"step":1,"index":1,"dt":[0,0,5],"texts":["r1","r2","r3","r4"]}}`,
				ev(8, "assistant/chunk", `{"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":2,"id":"c1","name":"read","argumentsDelta":"{"}}`, ""),
				`{"type":"tool-call-chunks","seq0":9,"time0":30,"data":{"turn":1,"step":1,"index":2,"dt":[1,1],"id":"c1","args":["\"p\"",":1","}"]}}`,
				turnEnd(12)))}, []string{"REL-1"}},
		{"torn_tail", "REL-1: a last line without its newline is left out and reported; so is a tail that does not parse with no turn/end after it; before a later turn/end it is persist.corrupt", []conformance.Step{
			open(raw(header + "\n" + strings.Join(head, "\n") + "\n" + `{"type":"turn/end","seq":5,"ti`)),
			open(raw(header + "\n" + strings.Join(head, "\n") + "\n\x00\x00\x00\n")),
			open(plain(withHead("not json", turnEnd(6))...))}, []string{"REL-1"}},
		{"malformed_row", "REL-1: a packed row with one dt too few is malformed: before a later turn/end, persist.corrupt", []conformance.Step{
			open(plain(ev(0, "turn/start", `{"turn":1}`, ""), `{"type":"text-chunks","seq0":1,"time0":5,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a","b","c"]}}`, turnEnd(4)))}, []string{"REL-1"}},
		{"unknown_packed_kind", "REL-1, REL-2: a row of a packed kind the reader does not know is no packed row but a line whose envelope has seq0: event.invalid_envelope at its index", []conformance.Step{
			open(plain(ev(0, "turn/start", `{"turn":1}`, ""), `{"type":"image-chunks","seq0":1,"time0":5,"data":{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["a","b","c"]}}`))}, []string{"REL-1", "REL-2"}},
		{"header_numbers", "REL-1: the header's numbers are read by their value, as JSON numbers: createdAt 1767225600000.0 and delegationDepth 1.0 are safe integers", []conformance.Step{
			open(raw(`{"type":"session","version":0,"id":"s1","createdAt":1767225600000.0,"delegationDepth":1.0}` + "\n" + strings.Join(withHead(turnEnd(5)), "\n") + "\n"))}, []string{"REL-1"}},
		{"header", "REL-1: the header needs delegationDepth (this library's own header is not a released one: persist.not_a_session), version 0 (persist.format_version), and none of the retired policy fields (persist.corrupt)", []conformance.Step{
			open(raw(`{"type":"session","version":0,"id":"s1","createdAt":1}` + "\n")),
			open(raw(`{"type":"session","version":0,"id":"s1","createdAt":1,"delegationDepth":-1}` + "\n")),
			open(raw(`{"type":"session","version":1,"id":"s1","createdAt":1,"delegationDepth":0}` + "\n")),
			open(raw(`{"type":"session","version":0,"id":"s1","createdAt":1,"delegationDepth":0,"approvalPolicy":"x"}` + "\n"))}, []string{"REL-1"}},
		{"types", "REL-2: a type outside the 48 is event.unknown_type unless ignorable (context/message is one of them); request/header-delta, mode/set and a fallback request/header are released.type_refused, ignorable or not", []conformance.Step{
			open(plain(withHead(at5("context/message", `{"content":[],"source":{"kind":"x"}}`, `,"surfaceOp":"append"`))...)),
			open(plain(withHead(at5("context/message", `{"content":[],"source":{"kind":"x"}}`, `,"ignorable":true`))...)),
			open(plain(withHead(at5("mode/set", `{}`, `,"ignorable":true`))...)),
			open(plain(withHead(at5("request/header", `{"header":{},"reason":"fallback"}`, ""))...)),
			open(plain(withHead(at5("request/header-delta", `{}`, ""))...))}, []string{"REL-2"}},
		{"identified_messages", "REL-3: b736889ac7 message data (no identified message), a wrong role, an assistant message without a model source, a tool result whose block names another call are released.message_invalid", []conformance.Step{
			open(plain(withHead(at5("user/message", `{"content":[],"source":{"kind":"user"}}`, `,"surfaceOp":"append"`))...)),
			open(plain(withHead(at5("assistant/message", `{"turn":1,"step":1,"content":[]}`, `,"surfaceOp":"append"`))...)),
			open(plain(withHead(at5("user/message", `{"id":"x","role":"assistant","content":[],"source":{"kind":"user"}}`, `,"surfaceOp":"append"`))...)),
			open(plain(withHead(at5("assistant/message", `{"turn":1,"step":1,"message":`+msg("x", "assistant", `{"kind":"model","provider":"p"}`, `[]`)+`}`, `,"surfaceOp":"append"`))...)),
			open(plain(withHead(at5("tool/result", `{"turn":1,"step":1,"message":`+msg("x", "user", `{"kind":"tool","callId":"c1"}`, `[{"type":"tool-result","toolCallId":"c2","content":[],"isError":false}]`)+`}`, `,"surfaceOp":"append"`))...))}, []string{"REL-3"}},
		{"tool_result_rewrite", "REL-4: a replace by a tool/result must rewrite exactly one current tool/result and change only its content; the range and sources are checked first (replace.start_not_on_surface before the released rule)", []conformance.Step{
			open(plain(withHead(rewrite(resultData("r1", "c1", "x"), 2, 4, "[2,4]"))...)),
			open(plain(withHead(rewrite(resultData("r1", "c1", "x"), 1, 1, "[1]"))...)),
			open(plain(withHead(rewrite(resultData("r9", "c1", "x"), 4, 4, "[4]"))...)),
			open(plain(withHead(rewrite(resultData("r1", "c1", "x"), 3, 3, "[3]"))...)),
			open(plain(withHead(rewrite(resultData("r1", "c1", "x"), 4, 4, "[4]"))...))}, []string{"REL-4", "SURF-12"}},
		{"negative_time", "REL-2: the released envelope's time is any safe integer, negative too", []conformance.Step{
			open(plain(`{"type":"turn/start","seq":0,"time":-5,"data":{"turn":1}}`))}, []string{"REL-2"}},
	}
	var out []conformance.Vector
	for _, c := range cases {
		out = append(out, vector("released.open."+c.name+".001", conformance.TierRequired, c.desc, c.steps, c.rules...))
	}
	// Sessions of this library, converted and written as the released
	// system writes them.
	for i, n := range []int{40, 160} {
		var now int64 = 1767225600000
		s := session.New(session.WithClock(func() int64 { now++; return now }))
		if err := traffic.New(s).Append(n); err != nil {
			log.Fatal(err)
		}
		if _, err := s.Repair(context.Background()); err != nil {
			log.Fatal(err)
		}
		events := s.Events()
		rel, err := convert.ToReleased("s1", events, convert.Options{Provider: "p", Model: "m"})
		if err != nil {
			log.Fatal(err)
		}
		half := len(rel) / 2
		b, err := released.Encode(released.Header{ID: "s1", CreatedAt: 1767225600000}, [][]event.Event{rel[:half], rel[half:]}, i == 1)
		if err != nil {
			log.Fatal(err)
		}
		out = append(out, vector(fmt.Sprintf("released.open.converted.%03d", i+1), conformance.TierRequired,
			fmt.Sprintf("REL-6, REL-7: a session of %d events of this library's traffic, converted to the released vocabulary and written as released JSONL (%s), loads with the same messages", len(events), map[bool]string{false: "plain", true: "zstd"}[i == 1]),
			[]conformance.Step{open(&b)}, "REL-1", "REL-5", "REL-6", "REL-7"))
	}
	b, err := released.Encode(released.Header{ID: "s1", CreatedAt: 1767225600000}, [][]event.Event{harnessSession()}, false)
	if err != nil {
		log.Fatal(err)
	}
	out = append(out, vector("released.open.converted.003", conformance.TierRequired,
		"REL-6, REL-7: a session with context (framed and raw) and steering messages, a pruned tool result and a compaction in the compact/* records, converted to the released vocabulary: the context and steering framing is written into the user/message content, the compaction gets its compactionId, the rewrite keeps its message id, and the released messages are this library's messages",
		[]conformance.Step{open(&b)}, "REL-1", "REL-4", "REL-5", "REL-6", "REL-7"))
	return out
}

// harnessSession is a session a harness on this library writes, converted
// to the released vocabulary.
func harnessSession() []event.Event {
	var now int64 = 1767225600000
	s := session.New(session.WithClock(func() int64 { now++; return now }))
	must := func(e event.Event, err error) event.Event {
		if err != nil {
			log.Fatal(err)
		}
		return e
	}
	ap := event.AppendIntent()
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	must(s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: raw(`{"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}`)}))
	first := must(s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: raw(`{"content":[{"type":"text","text":"fix the test"}],"source":{"kind":"user"}}`)}, ap))
	must(s.Append(context.Background(), event.Raw{Type: event.TypeContextMessage, Data: raw(`{"content":[{"type":"text","text":"repo: surface"}],"source":{"kind":"memory"}}`)}, ap))
	must(s.Append(context.Background(), event.Raw{Type: event.TypeContextMessage, Data: raw(`{"content":[{"type":"text","text":"<raw>"}],"source":{"kind":"hook"},"envelope":"raw"}`)}, ap))
	asst := must(s.Append(context.Background(), event.Raw{Type: event.TypeAssistantMessage, Data: raw(`{"turn":1,"step":1,"content":[{"type":"tool-call","id":"c1","name":"read","arguments":{"path":"a.go"}}],"provenance":{"provider":"p","model":"m"},"usage":{"inputTokens":10,"outputTokens":5}}`)}, ap))
	call := must(s.Append(context.Background(), event.Raw{Type: event.TypeToolCall, Data: raw(`{"turn":1,"step":1,"callId":"c1","name":"read","arguments":"{\"path\":\"a.go\"}"}`)}))
	res := must(s.Append(context.Background(), event.Raw{Type: event.TypeToolResult, Data: raw(`{"turn":1,"step":1,"callId":"c1","content":[{"type":"text","text":"` + strings.Repeat("package main ", 40) + `"}],"isError":false,"meta":{"ms":4}}`)}, event.Intent{Op: event.Append(), Sources: []int64{call.Seq}}))
	must(s.Append(context.Background(), event.Raw{Type: event.TypeSteeringMessage, Data: raw(`{"turn":1,"content":[{"type":"text","text":"also run vet"}],"source":{"kind":"user"}}`)}, ap))
	if _, err := compaction.PruneToolResult(s, res.Seq, []json.RawMessage{raw(`{"type":"text","text":"[pruned]"}`)}); err != nil {
		log.Fatal(err)
	}
	op, err := compaction.Begin(context.Background(), s, first.Seq, asst.Seq-1, compaction.WithoutSizeCheck())
	if err != nil {
		log.Fatal(err)
	}
	if _, err := op.Commit(context.Background(), []json.RawMessage{raw(`{"type":"text","text":"the user wants the test fixed"}`)}, compaction.Meta{Provider: "p", Model: "m"}, compaction.WithoutSizeCheck()); err != nil {
		log.Fatal(err)
	}
	must(s.Append(context.Background(), event.Raw{Type: event.TypeAssistantMessage, Data: raw(`{"turn":1,"step":2,"content":[{"type":"text","text":"done"}],"provenance":{"provider":"p","model":"m"}}`)}, ap))
	must(s.Append(context.Background(), event.Raw{Type: event.TypeTurnEnd, Data: raw(`{"turn":1,"reason":{"kind":"completed"}}`)}))
	rel, err := convert.ToReleased("s1", s.Events(), convert.Options{})
	if err != nil {
		log.Fatal(err)
	}
	return rel
}
