package event

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Unit tests of the package's parts on their own: the scanner (SURF-4),
// the wire codec (SURF-1), the helpers over compact JSON, and Check's
// order (SURF-16). The differential tests of impl/session cover them
// against the model; these pin the edges a mutation tool would try.

func keys(n int) string {
	var b []string
	for i := 0; i < n; i++ {
		b = append(b, fmt.Sprintf(`"k%d":%d`, i, i))
	}
	return strings.Join(b, ",")
}

func nest(levels int) string { return strings.Repeat("[", levels) + strings.Repeat("]", levels) }

// TestScanner: SURF-4 on data, and compaction.
func TestScanner(t *testing.T) {
	for _, c := range []struct {
		data string
		ok   bool
		want string // compact form when ok
	}{
		{` { "a" : [ 1 , 2.50 , -3e2 ] , "b" : "x y" } `, true, `{"a":[1,2.50,-3e2],"b":"x y"}`},
		{`{"a":1,"a":2}`, false, ""},
		{`{"x":[{"a":1,"b":2,"a":3}]}`, false, ""},         // nested duplicate
		{`{` + keys(16) + `,"k0":0}`, false, ""},           // duplicate of the first key after 16 others
		{`{` + keys(40) + `,"k39":0}`, false, ""},          // ... and of the last of many
		{`{` + keys(40) + `}`, true, `{` + keys(40) + `}`}, // many distinct keys
		{"{\"s\":\"a\x80b\"}", false, ""},                  // a lone continuation byte
		{"{\"s\":\"\xc3\"}", false, ""},                    // a truncated sequence
		{`{"s":"\ud800"}`, true, `{"s":"\ud800"}`},         // an escaped lone surrogate is kept
		{`{"n":-0}`, false, ""},
		{`{"n":-0.0}`, false, ""},
		{`{"n":-1e-400}`, false, ""},
		{`{"n":1e400}`, false, ""},
		{`{"n":1e-400}`, true, `{"n":1e-400}`},
		{`{"n":9007199254740991}`, true, `{"n":9007199254740991}`},
		{`{"n":-9007199254740991}`, true, `{"n":-9007199254740991}`},
		{`{"n":9007199254740992}`, false, ""},
		{`{"n":9007199254740992.0}`, true, `{"n":9007199254740992.0}`}, // not an integer literal
		{`{"n":01}`, false, ""},
		{`{"a":1} x`, false, ""},
		{`[` + nest(9999) + `]`, true, `[` + nest(9999) + `]`}, // 10,000 levels
		{`[` + nest(10000) + `]`, false, ""},                   // 10,001 levels
	} {
		out, _, why := compactData([]byte(c.data))
		if (why == "") != c.ok || (c.ok && string(out) != c.want) {
			short := c.data
			if len(short) > 60 {
				short = short[:60] + "..."
			}
			t.Errorf("compactData(%q) = %.60q, %q; want ok=%v", short, out, why, c.ok)
		}
	}
}

// TestDepthLimit: SURF-4. Data nested 10,000 levels deep (the data object
// counting) is accepted on append and in a seed; 10,001 levels are
// event.data_not_json on both paths, never an envelope error.
func TestDepthLimit(t *testing.T) {
	data := func(levels int) string { return `{"todos":` + nest(levels-1) + `}` }
	for levels, want := range map[int]Code{10000: "", 10001: CodeDataNotJSON} {
		e := Event{Type: TypeTodoWrite, Data: []byte(data(levels))}
		if err := Check(&e, 0); CodeOf(err) != want {
			t.Errorf("append, %d levels: %v, want %q", levels, err, want)
		}
		var d Decoder
		line := `{"type":"todo/write","seq":0,"time":1,"data":` + data(levels) + `}`
		if err := d.Decode([]byte(line)); err != nil {
			t.Fatalf("decode, %d levels: %v", levels, err)
		}
		if err := d.Log().Check(nil, 0, 0); CodeOf(err) != want {
			t.Errorf("seed, %d levels: %v, want %q", levels, err, want)
		}
	}
}

// TestDecode: SURF-1 and the canonical invalid markers (SURF-8, SURF-9).
func TestDecode(t *testing.T) {
	for _, c := range []struct {
		line string
		code Code
		op   OpKind
		src  []int64
	}{
		{`{"type":"user/message","seq":0,"time":1,"data":{},"surfaceOp":"append","sourceEventSeqs":[0,1]}`, "", OpAppend, []int64{0, 1}},
		{`{"type":null,"seq":0,"time":1,"data":{}}`, CodeInvalidEnvelope, 0, nil},
		{`{"type":"x","seq":0,"time":1}`, CodeInvalidEnvelope, 0, nil},
		{`{"type":"x","seq":0,"time":1,"data":{},"type":"y"}`, CodeInvalidEnvelope, 0, nil},
		{`{"type":"x","seq":0,"time":1,"data":{},"extra":1}`, CodeInvalidEnvelope, 0, nil},
		{`{"type":"x","seq":0.5,"time":1,"data":{}}`, CodeInvalidEnvelope, 0, nil},
		{`{"type":"x","seq":9007199254740992,"time":1,"data":{}}`, CodeInvalidEnvelope, 0, nil},
		{`{"type":"x","seq":1.0,"time":-0,"data":{},"surfaceOp":{"op":"replace","start":1e0,"end":0.0}}`, "", OpReplace, nil},
		{`{"type":"x","seq":0,"time":1e400,"data":{}}`, CodeInvalidEnvelope, 0, nil},
		{`{"type":"x","seq":0,"time":1,"data":{},"surfaceOp":null}`, "", OpMalformed, nil},
		{`{"type":"x","seq":0,"time":1,"data":{},"surfaceOp":{"op":"swap","start":0,"end":0}}`, "", OpMalformedReplace, nil},
		{`{"type":"x","seq":0,"time":1,"data":{},"surfaceOp":{"op":"replace","start":0,"end":0,"x":1}}`, "", OpMalformedReplace, nil},
		{`{"type":"x","seq":0,"time":1,"data":{},"sourceEventSeqs":null}`, "", 0, []int64{-1}},
		{`{"type":"x","seq":0,"time":1,"data":{},"sourceEventSeqs":[1,"2",2.5,9007199254740991]}`, "", 0, []int64{1, -1, -1, 9007199254740991}},
		{`{"type":"x","seq":0,"time":1,"data":{},"ignorable":true}`, "", 0, nil},
		{`{"type":"x","seq":0,"time":1,"data":{},"ignorable":1}`, CodeInvalidEnvelope, 0, nil},
		{`[]`, CodeInvalidEnvelope, 0, nil},
		{`{"type":"x","seq":0,"time":1,"data":{}} {}`, CodeInvalidEnvelope, 0, nil},
		{`{"type":"x","seq":0,"time":1,"data":{"deep":` + nest(20000) + `}}`, "", 0, nil},
	} {
		e, err := Decode([]byte(c.line))
		if CodeOf(err) != c.code {
			t.Errorf("Decode(%.80s): %v, want %q", c.line, err, c.code)
			continue
		}
		if err == nil && (e.Op.Kind != c.op || fmt.Sprint(e.Sources) != fmt.Sprint(c.src)) {
			t.Errorf("Decode(%.80s): op %v sources %v, want %v %v", c.line, e.Op.Kind, e.Sources, c.op, c.src)
		}
	}
}

// TestWireRoundTrip: AppendJSON writes what Decode reads, member order and
// bytes kept (SURF-1, SURF-4).
func TestWireRoundTrip(t *testing.T) {
	for _, line := range []string{
		`{"type":"user/message","seq":3,"time":4,"data":{"content":[],"source":{"kind":"u"},"n":1.50},"sourceEventSeqs":[],"surfaceOp":"append"}`,
		`{"type":"user/message","seq":3,"time":4,"data":{"content":[]},"surfaceOp":{"op":"replace","start":2,"end":1}}`,
		`{"type":"x/y","seq":0,"time":0,"data":[1,{"a":"\ud800"}],"ignorable":true}`,
	} {
		e, err := Decode([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		if b, err := e.MarshalJSON(); err != nil || string(b) != line {
			t.Errorf("round trip:\n got %s\nwant %s", b, line)
		}
	}
	if _, err := (Event{Type: "x", Op: SurfaceOp{Kind: OpMalformed}, Data: []byte(`{}`)}).MarshalJSON(); !errors.Is(err, CodeOpInvalid) {
		t.Errorf("a malformed marker has no wire form: %v", err)
	}
}

// TestCompactHelpers: the walkers over compact JSON.
func TestCompactHelpers(t *testing.T) {
	obj := []byte(`{"a":[1,{"b":"}"}],"c\u0064":"x","e":{"f":[]}}`)
	if v, ok := ObjectMember(obj, "cd"); !ok || string(v) != `"x"` {
		t.Errorf(`ObjectMember "cd" (an escaped key) = %s %v`, v, ok)
	}
	if v, ok := ObjectMember(obj, "e"); !ok || string(v) != `{"f":[]}` {
		t.Errorf(`ObjectMember "e" = %s %v`, v, ok)
	}
	if _, ok := ObjectMember(obj, "f"); ok {
		t.Error("a nested key was found at the top")
	}
	els := ArrayElements([]byte(`[1,"a,b",{"x":[2,3]},[]]`))
	if len(els) != 4 || string(els[1]) != `"a,b"` || string(els[2]) != `{"x":[2,3]}` {
		t.Errorf("ArrayElements = %q", els)
	}
	if ArrayElements([]byte(`[]`)) != nil {
		t.Error("elements of an empty array")
	}
	if got := StringMember([]byte(`{"id":"a\u0062","n":1}`), "id"); got != "ab" {
		t.Errorf("StringMember = %q", got)
	}
	if got := StringMember([]byte(`{"id":"a","n":1}`), "n") + StringMember([]byte(`{"id":"a"}`), "x"); got != "" {
		t.Errorf("StringMember of a number or of an absent member = %q", got)
	}
	msg := []byte(`{"turn":1,"content":[{"type":"text","text":"tool-call"},{"type":"tool-call","id":"c2","name":"x"},{"type":"tool-call","id":7},{"type":"tool-call","id":"c1"}]}`)
	if got := ToolCallIDs(msg); !slices.Equal(got, []string{"c2", "c1"}) {
		t.Errorf("ToolCallIDs = %q, want the string ids in order", got)
	}
}

// TestCheckOrder: SURF-16 on combinations of broken rules.
func TestCheckOrder(t *testing.T) {
	src := func(xs ...int64) []int64 { return xs }
	for _, c := range []struct {
		name string
		e    Event
		want Code
	}{
		{"seq gap and unknown type", Event{Type: "x/unknown", Seq: 3, Data: []byte(`{}`)}, CodeSeqNotContiguous}, // checked at index 0
		{"unknown type and bad data", Event{Type: "x/unknown", Data: []byte(`{`)}, CodeUnknownType},
		{"bad data and bad marker", Event{Type: TypeUserMessage, Data: []byte(`{"a":1,"a":1}`), Op: SurfaceOp{Kind: OpMalformed}}, CodeDataNotJSON},
		{"shape and marker", Event{Type: TypeUserMessage, Data: []byte(`{}`)}, CodeDataInvalid},
		{"op before sources on a non-surface type", Event{Type: TypeToolCall, Data: []byte(`{"turn":1,"step":1,"callId":"c","name":"n","arguments":"{}"}`), Op: Append(), Sources: src(0)}, CodeOpForbidden},
		{"sources [-1,-1]", Event{Type: TypeUserMessage, Seq: 5, Data: []byte(`{"content":[],"source":{"kind":"u"}}`), Op: Append(), Sources: src(-1, -1)}, CodeSourcesInvalid},
		{"invalid before duplicate", Event{Type: TypeUserMessage, Seq: 9, Data: []byte(`{"content":[],"source":{"kind":"u"}}`), Op: Append(), Sources: src(5, 5, -1)}, CodeSourcesInvalid},
		{"duplicate before not earlier", Event{Type: TypeUserMessage, Seq: 6, Data: []byte(`{"content":[],"source":{"kind":"u"}}`), Op: Append(), Sources: src(7, 7)}, CodeSourcesDuplicate},
		{"duplicate among more than 8", Event{Type: TypeUserMessage, Seq: 20, Data: []byte(`{"content":[],"source":{"kind":"u"}}`), Op: Append(), Sources: src(0, 1, 2, 3, 4, 5, 6, 7, 8, 0)}, CodeSourcesDuplicate},
		{"empty sources on an assistant message", Event{Type: TypeAssistantMessage, Data: []byte(`{"turn":1,"step":1,"content":[]}`), Op: Append(), Sources: []int64{}}, ""},
		{"empty sources on a user message", Event{Type: TypeUserMessage, Data: []byte(`{"content":[],"source":{"kind":"u"}}`), Op: Append(), Sources: []int64{}}, CodeSourcesEmpty},
		{"absent sources on an assistant message", Event{Type: TypeAssistantMessage, Data: []byte(`{"turn":1,"step":1,"content":[]}`), Op: Append(), Sources: src()}, ""},
		{"bad second block", Event{Type: TypeUserMessage, Data: []byte(`{"content":[{"type":"t"},{"text":"x"}],"source":{"kind":"u"}}`), Op: Append()}, CodeDataInvalid},
		{"integer kind with 1.0", Event{Type: TypeStepStart, Data: []byte(`{"turn":1.0,"step":2e0}`)}, ""},
		{"null in an optional field", Event{Type: TypeAssistantMessage, Data: []byte(`{"turn":1,"step":1,"content":[],"usage":null}`), Op: Append()}, CodeDataInvalid},
		{"null in a nullable field", Event{Type: TypeCompactionStart, Data: []byte(`{"compactionId":"k","turn":null}`)}, ""},
	} {
		e := c.e
		at := e.Seq // the candidate's index in its log
		if c.want == CodeSeqNotContiguous {
			at = 0
		}
		if err := Check(&e, at); CodeOf(err) != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestEnvelopeAndSourcesAtTheirEdges: SURF-1's integers at 2^53-1 (the
// largest allowed) and 2^53, told apart by the code they get (a seq at
// the edge passes SURF-1 and fails SURF-2 only); sourceEventSeqs at the
// same edge; duplicates found by both of firstDuplicate's paths (up to 8
// seqs, and more), at the first and the last place, and none reported for
// lists without one of every length from 1 to 12; data with bytes after
// its value.
func TestEnvelopeAndSourcesAtTheirEdges(t *testing.T) {
	user := []byte(`{"content":[],"source":{"kind":"u"}}`)
	result := func(isError string) []byte {
		return []byte(`{"turn":1,"step":1,"callId":"c","content":[{"type":"text","text":"x"}],"isError":` + isError + `}`)
	}
	const edge = MaxSafeInteger
	for _, c := range []struct {
		name string
		e    Event
		at   int64
		want Code
	}{
		{"seq 2^53-1 at index 0", Event{Type: TypeTurnEnd, Seq: edge, Data: []byte(`{"turn":1}`)}, 0, CodeSeqNotContiguous},
		{"seq 2^53 at index 0", Event{Type: TypeTurnEnd, Seq: edge + 1, Data: []byte(`{"turn":1}`)}, 0, CodeInvalidEnvelope},
		{"seq 2^53-1 where expected", Event{Type: TypeUserMessage, Seq: edge, Data: user, Op: Append()}, edge, ""},
		{"time 2^53-1", Event{Type: TypeUserMessage, Time: edge, Data: user, Op: Append()}, 0, ""},
		{"time 2^53", Event{Type: TypeUserMessage, Time: edge + 1, Data: user, Op: Append()}, 0, CodeInvalidEnvelope},
		{"time -1", Event{Type: TypeUserMessage, Time: -1, Data: user, Op: Append()}, 0, CodeInvalidEnvelope},
		{"source 2^53-1", Event{Type: TypeUserMessage, Seq: 3, Data: user, Op: Append(), Sources: []int64{edge}}, 3, CodeSourcesNotEarlier},
		{"source 2^53", Event{Type: TypeUserMessage, Seq: 3, Data: user, Op: Append(), Sources: []int64{edge + 1}}, 3, CodeSourcesInvalid},
		{"source = own seq", Event{Type: TypeUserMessage, Seq: 3, Data: user, Op: Append(), Sources: []int64{0, 3}}, 3, CodeSourcesNotEarlier},
		{"source = own seq - 1", Event{Type: TypeUserMessage, Seq: 3, Data: user, Op: Append(), Sources: []int64{2}}, 3, ""},
		{"isError true", Event{Type: TypeToolResult, Data: result("true"), Op: Append()}, 0, ""},
		{"isError false", Event{Type: TypeToolResult, Data: result("false"), Op: Append()}, 0, ""},
		{"isError null", Event{Type: TypeToolResult, Data: result("null"), Op: Append()}, 0, CodeDataInvalid},
		{"isError 0", Event{Type: TypeToolResult, Data: result("0"), Op: Append()}, 0, CodeDataInvalid},
		{"isError \"true\"", Event{Type: TypeToolResult, Data: result(`"true"`), Op: Append()}, 0, CodeDataInvalid},
		{"source 0 and -1", Event{Type: TypeUserMessage, Seq: 3, Data: user, Op: Append(), Sources: []int64{0, -1}}, 3, CodeSourcesInvalid},
		{"trailing bytes after the data", Event{Type: TypeUserMessage, Data: []byte(`{"content":[],"source":{"kind":"u"}} x`), Op: Append()}, 0, CodeDataNotJSON},
		{"trailing value after the data", Event{Type: TypeUserMessage, Data: []byte(`{"content":[],"source":{"kind":"u"}}{}`), Op: Append()}, 0, CodeDataNotJSON},
		{"integer 0", Event{Type: TypeStepStart, Data: []byte(`{"turn":0,"step":1}`)}, 0, ""},
		{"integer 9", Event{Type: TypeStepStart, Data: []byte(`{"turn":9,"step":1}`)}, 0, ""},
		{"integer -1", Event{Type: TypeStepStart, Data: []byte(`{"turn":-1,"step":1}`)}, 0, ""},
		{"integer 1.5", Event{Type: TypeStepStart, Data: []byte(`{"turn":1.5,"step":1}`)}, 0, CodeDataInvalid},
		{"trailing space after the data", Event{Type: TypeUserMessage, Data: []byte(`{"content":[],"source":{"kind":"u"}}  `), Op: Append()}, 0, ""},
	} {
		e := c.e
		err := Check(&e, c.at)
		if CodeOf(err) != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		// An envelope whose seq is not one names no seq; any other
		// refusal names the event's.
		wantSeq := e.Seq
		if c.want == CodeInvalidEnvelope && (e.Seq < 0 || e.Seq > MaxSafeInteger) {
			wantSeq = -1
		}
		if err != nil && err.Seq != wantSeq {
			t.Errorf("%s: the refusal names seq %d, want %d", c.name, err.Seq, wantSeq)
		}
	}
	// Not a number at all, and a number that is not an integer, are told
	// apart in the detail.
	for v, want := range map[string]string{`"1"`: "is not a number", `true`: "is not a number", `1.5`: "is not an integer", `-0.5`: "is not an integer", `[1]`: "is not a number"} {
		e := Event{Type: TypeStepStart, Data: []byte(`{"turn":` + v + `,"step":1}`)}
		if err := Check(&e, 0); CodeOf(err) != CodeDataInvalid || !strings.Contains(err.Error(), want) {
			t.Errorf("turn %s: %v, want %s saying %q", v, err, CodeDataInvalid, want)
		}
	}
	for n := 1; n <= 12; n++ {
		seqs := make([]int64, n)
		for i := range seqs {
			seqs[i] = int64(i)
		}
		e := Event{Type: TypeUserMessage, Seq: 20, Data: user, Op: Append(), Sources: slices.Clone(seqs)}
		if err := Check(&e, 20); err != nil {
			t.Errorf("%d distinct sources: %v", n, err)
		}
		if n < 2 {
			continue
		}
		for _, dup := range [][2]int{{0, n - 1}, {n - 2, n - 1}, {0, 1}} {
			s := slices.Clone(seqs)
			s[dup[1]] = s[dup[0]]
			e := Event{Type: TypeUserMessage, Seq: 20, Data: user, Op: Append(), Sources: s}
			err := Check(&e, 20)
			if CodeOf(err) != CodeSourcesDuplicate || !strings.Contains(err.Error(), fmt.Sprintf("names %d twice", s[dup[0]])) {
				t.Errorf("%d sources %v: %v, want %s naming %d", n, s, err, CodeSourcesDuplicate, s[dup[0]])
			}
		}
	}
}
