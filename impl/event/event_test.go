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
		{"empty sources on an assistant message", Event{Type: TypeAssistantMessage, Data: []byte(`{"turn":1,"step":1,"content":[]}`), Op: Append(), Sources: src()}, ""},
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
