package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// genLine is one generated wire line and what a second producer
// (encoding/json) says it holds.
type genLine struct {
	line string
	seq  int64
	data []byte // the data as encoding/json compacts it; nil when it is not JSON encoding/json takes
}

// spaced inserts whitespace after some colons and commas of compact JSON
// text whose strings hold neither, so the decoder must compact it.
func spaced(r *rand.Rand, s string) string {
	var b strings.Builder
	ws := []string{"", " ", "\t", "\r\n  "}
	for _, c := range s {
		b.WriteRune(c)
		if c == ':' || c == ',' || c == '{' || c == '[' {
			b.WriteString(ws[r.IntN(len(ws))])
		}
	}
	return b.String()
}

// genLines writes n wire lines of varied shape: known types with data that
// passes their shape and data that does not, unknown and ignorable types,
// escapes, whitespace inside the data and the envelope, members in any
// order, markers and sources present or not, and values past the arena's
// chunk (the first line among them).
func genLines(r *rand.Rand, n int) []genLine {
	texts := []string{"plain", "caf\\u00e9", "line\\nbreak", "say \\\"hi\\\"", "日本語", "tab\\there", strings.Repeat("x", 20_000), ""}
	var out []genLine
	for i := 0; i < n; i++ {
		text := texts[r.IntN(len(texts))]
		switch i {
		case 0:
			text = strings.Repeat("big ", 6_000) // a first value bigger than a quarter chunk
		case 7:
			text = strings.Repeat("huge ", 14_000) // a value bigger than a whole chunk
		}
		typ, data, marker := "", "", ""
		dupKeys := false
		kind := r.IntN(8)
		if i == 0 || i == 7 {
			kind = 0 // a user message, whose text is the big value
		}
		switch kind {
		case 0, 1:
			typ, data, marker = "user/message", `{"content":[{"type":"text","text":"`+text+`"}],"source":{"kind":"user"}}`, `"append"`
		case 2:
			typ, data = "step/start", fmt.Sprintf(`{"turn":%d,"step":%d}`, r.IntN(1000), r.IntN(9))
		case 3:
			typ, data = "turn/end", fmt.Sprintf(`{"turn":%d}`, r.IntN(100))
		case 4:
			typ, data, marker = "assistant/message", `{"turn":1,"step":1,"content":[{"type":"text","text":"`+text+`"}]}`, `"append"`
		case 5:
			typ, data, marker = "user/message", `{"content":"`+text+`"}`, `"append"` // breaks SURF-5
		case 6:
			typ, data = "x/custom", `{"note":"`+text+`","n":[1,2.5,-3e2,true,null]}`
		case 7:
			typ, data, dupKeys = "x/custom", `{"a":1,"a":2}`, true // duplicate keys: not SURF-4 JSON
		}
		if r.IntN(3) == 0 {
			data = spaced(r, data)
		}
		members := []string{
			fmt.Sprintf(`"type":"%s"`, typ),
			fmt.Sprintf(`"seq":%d`, i),
			fmt.Sprintf(`"time":%d`, 1_700_000_000_000+int64(r.IntN(1000))),
			`"data":` + data,
		}
		if marker != "" {
			if r.IntN(4) == 0 && i > 0 {
				marker = fmt.Sprintf(`{"op":"replace","start":%d,"end":%d}`, r.IntN(i), r.IntN(i))
			}
			members = append(members, `"surfaceOp":`+marker)
		}
		if r.IntN(3) == 0 && i > 1 {
			members = append(members, fmt.Sprintf(`"sourceEventSeqs":[%d,%d]`, r.IntN(i), r.IntN(i)))
		}
		if strings.HasPrefix(typ, "x/") && r.IntN(2) == 0 {
			members = append(members, `"ignorable":true`)
		}
		r.Shuffle(len(members), func(a, b int) { members[a], members[b] = members[b], members[a] })
		sep := []string{",", ", ", " ,\t"}[r.IntN(3)]
		g := genLine{line: "{" + strings.Join(members, sep) + "}", seq: int64(i)}
		var probe any
		if !dupKeys && json.Unmarshal([]byte(data), &probe) == nil {
			var c bytes.Buffer
			if err := json.Compact(&c, []byte(data)); err == nil {
				g.data = c.Bytes()
			}
		}
		out = append(out, g)
	}
	return out
}

// TestDecoderKeepsEveryEvent decodes generated lines with one Decoder (one
// arena and one log for all of them), then checks every event of the
// finished log against a second producer's reading of its line: the data
// as encoding/json compacts it, the envelope as Decode reads the line on
// its own. An event whose data memory a later one reused, a checked bit
// set for the wrong event (more than 64 of them), or a value past the
// arena's chunk lost, shows here. Log.Check, which skips the data scan for
// checked events, must give the code that Check gives after a full scan,
// and DecodeParts the same log as Decode.
func TestDecoderKeepsEveryEvent(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	lines := genLines(r, 400)
	var d, parts Decoder
	for _, g := range lines {
		if err := d.Decode([]byte(g.line)); err != nil {
			t.Fatalf("line %d: %v\n%s", g.seq, err, g.line)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(g.line), &m); err != nil {
			t.Fatalf("the generator wrote a line encoding/json refuses: %v", err)
		}
		var typ string
		_ = json.Unmarshal(m["type"], &typ)
		var seq, tm int64
		_ = json.Unmarshal(m["seq"], &seq)
		_ = json.Unmarshal(m["time"], &tm)
		parts.DecodeParts([]byte(typ), seq, tm, m["data"], m["sourceEventSeqs"], m["surfaceOp"], m["ignorable"] != nil)
	}
	log, plog := d.Log(), parts.Log()
	if log.Len() != len(lines) || plog.Len() != len(lines) {
		t.Fatalf("decoded %d and %d events of %d lines", log.Len(), plog.Len(), len(lines))
	}
	checkedFast, big, huge := 0, 0, 0
	for i, g := range lines {
		e := log.Events()[i]
		alone, err := Decode([]byte(g.line))
		if err != nil {
			t.Fatal(err)
		}
		if e.Type != alone.Type || e.Seq != g.seq || e.Time != alone.Time || e.Ignorable != alone.Ignorable ||
			e.Op != alone.Op || !slices.Equal(e.Sources, alone.Sources) || (e.Sources == nil) != (alone.Sources == nil) {
			t.Errorf("event %d: the log holds %+v, the line alone decodes to %+v", i, e, alone)
		}
		if g.data != nil && !bytes.Equal(e.Data, g.data) {
			t.Errorf("event %d: data %.80s, encoding/json compacts it to %.80s", i, e.Data, g.data)
		}
		if !bytes.Equal(e.Data, alone.Data) {
			t.Errorf("event %d: data %.80s in the log, %.80s alone", i, e.Data, alone.Data)
		}
		if cap(e.Data) != len(e.Data) {
			t.Errorf("event %d: data capacity %d past its length %d (an append would write into the next event)", i, cap(e.Data), len(e.Data))
		}
		if len(e.Data) > arenaChunk/4 {
			big++
		}
		if len(e.Data) > arenaChunk {
			huge++
		}
		p := plog.Events()[i]
		if p.Type != e.Type || p.Seq != e.Seq || p.Time != e.Time || p.Op != e.Op || !slices.Equal(p.Sources, e.Sources) || p.Ignorable != e.Ignorable || !bytes.Equal(p.Data, e.Data) {
			t.Errorf("event %d: DecodeParts gives %+v, Decode %+v", i, p, e)
		}
		if (plog.checked[i/64]&(1<<(i%64)) != 0) != (log.checked[i/64]&(1<<(i%64)) != 0) {
			t.Errorf("event %d: DecodeParts and Decode disagree on whether its data was checked", i)
		}
		full := e.Clone()
		want := CodeOf(Check(&full, int64(i)))
		if got := CodeOf(log.Check(nil, i, int64(i))); got != want {
			t.Errorf("event %d (%s): Log.Check says %q, a full Check %q\n%.200s", i, e.Type, got, want, g.line)
		}
		if got := CodeOf(plog.Check(nil, i, int64(i))); got != want {
			t.Errorf("event %d (%s): the parts' Log.Check says %q, a full Check %q", i, e.Type, got, want)
		}
		if log.checked[i/64]&(1<<(i%64)) != 0 {
			checkedFast++
		}
	}
	if checkedFast < 100 || checkedFast > len(lines)-50 || big < 2 || huge < 1 {
		t.Fatalf("the lines must mix checked and unchecked data and big values: %d of %d checked at decode, %d past a quarter chunk, %d past a chunk", checkedFast, len(lines), big, huge)
	}
}

// TestEnvelopeRefusals: a line that is not an event names no seq (-1: it
// has none) and the index of the line, and says what is wrong with it: an
// unknown member by its name, apart from a line that is not an object.
func TestEnvelopeRefusals(t *testing.T) {
	var d Decoder
	_ = d.Decode([]byte(`{"type":"x/y","seq":0,"time":1,"data":{}}`))
	for line, detail := range map[string]string{
		`{"type":"x","seq":1,"time":1,"data":{},"extra":1}`:         `unknown member "extra"`,
		`{"type":"x","seq":1,"time":1,"data":{},"extra":}`:          "an event must be a JSON object",
		`{"type":"x","seq":1,"time":1,"data":{},"seq":1}`:           `member "seq" appears twice`,
		`{"type":"x","seq":1,"time":1}`:                             "type, seq, time and data are required",
		`{"type":"x","seq":1,"time":1,"data":{}} x`:                 "an event must be one JSON object",
		`{"type":1,"seq":1,"time":1,"data":{}}`:                     "type must be a string",
		`{"type":"x","seq":-1,"time":1,"data":{}}`:                  "seq must be an integer",
		`{"type":"x","seq":1,"time":9007199254740992,"data":{}}`:    "time must be an integer",
		`{"type":"x","seq":1,"time":1,"data":{},"ignorable":false}`: "ignorable must be true",
	} {
		err := d.Decode([]byte(line))
		var ee *Error
		if !errors.As(err, &ee) || ee.Code != CodeInvalidEnvelope || ee.Seq != -1 || ee.Index != 1 || !strings.Contains(ee.Detail, detail) {
			t.Errorf("%s: %+v, want %s at index 1, seq -1, saying %q", line, err, CodeInvalidEnvelope, detail)
		}
	}
	if d.Len() != 1 {
		t.Errorf("refused lines were kept: %d events", d.Len())
	}
}

// TestDecoderGrow: Grow makes room for at least n more events (and a
// headroom), keeps the events decoded so far and their checked bits, and
// does nothing when the room is there.
func TestDecoderGrow(t *testing.T) {
	var d Decoder
	lines := genLines(rand.New(rand.NewPCG(9, 9)), 70)
	for _, g := range lines[:66] {
		if err := d.Decode([]byte(g.line)); err != nil {
			t.Fatal(err)
		}
	}
	before := slices.Clone(d.log.events)
	bits := slices.Clone(d.log.checked)
	d.Grow(1000)
	if room := cap(d.log.events) - len(d.log.events); room < 1000 {
		t.Fatalf("Grow(1000) left room for %d events", room)
	}
	if len(d.log.checked) != len(bits) || cap(d.log.checked)*64 < cap(d.log.events) {
		t.Fatalf("checked bits: len %d (was %d), room for %d events", len(d.log.checked), len(bits), cap(d.log.checked)*64)
	}
	c := cap(d.log.events)
	d.Grow(10)
	d.Grow(0)
	if cap(d.log.events) != c {
		t.Errorf("Grow with room enough reallocated: cap %d -> %d", c, cap(d.log.events))
	}
	for _, g := range lines[66:] {
		if err := d.Decode([]byte(g.line)); err != nil {
			t.Fatal(err)
		}
	}
	l := d.Log()
	for i := range before {
		if e := l.Events()[i]; e.Seq != before[i].Seq || !bytes.Equal(e.Data, before[i].Data) || (l.checked[i/64]&(1<<(i%64)) != 0) != (bits[i/64]&(1<<(i%64)) != 0) {
			t.Fatalf("event %d changed by Grow", i)
		}
	}
	if l.Len() != 70 {
		t.Fatalf("%d events after Grow", l.Len())
	}
}
