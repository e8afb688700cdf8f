package seedsummary

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"

	"github.com/surfacelog/surface/impl/event"
)

// TestJSValuesAtTheirEdges: JavaScript's canonical array index (0 to
// 2^32-2, no leading zero), truthiness of numbers written every way a zero
// can be, and trim()'s white space beside look-alikes.
func TestJSValuesAtTheirEdges(t *testing.T) {
	for k, want := range map[string]bool{
		"0": true, "1": true, "9": true, "10": true, "4294967294": true,
		"": false, "00": false, "01": false, "-1": false, "4294967295": false, "4294967296": false, "1.5": false, "a": false,
	} {
		if arrayIndex(k) != want {
			t.Errorf("arrayIndex(%q) = %v, want %v", k, !want, want)
		}
	}
	for v, want := range map[string]bool{
		"0": false, "-0": false, "0.0": false, "0e5": false, "-0.0": false, "1": true, "-1": true, "9": true, "0.5": true,
		`""`: false, `"0"`: true, "null": false, "false": false, "true": true, "[]": true, "{}": true, "": false,
	} {
		if truthy(json.RawMessage(v)) != want {
			t.Errorf("truthy(%s) = %v, want %v", v, !want, want)
		}
	}
	for _, r := range []rune{'\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2000, 0x2005, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff} {
		if !jsSpace(r) {
			t.Errorf("U+%04X is JavaScript white space", r)
		}
	}
	for _, r := range []rune{'a', 0x1fff, 0x200b, 0x85, 0x180e, 0x1c, 0x1f, 0x2060} {
		if jsSpace(r) {
			t.Errorf("U+%04X is not JavaScript white space (unicode.Zs %v)", r, unicode.Is(unicode.Zs, r))
		}
	}
}

// TestTranscriptSeqsAtTheirEdges: seqs outside the log (-1, len) render
// nothing; the first and the last event render.
func TestTranscriptSeqsAtTheirEdges(t *testing.T) {
	msg := func(seq int64, text string) event.Event {
		return event.Event{Type: event.TypeUserMessage, Seq: seq, Data: json.RawMessage(`{"content":[{"type":"text","text":"` + text + `"}],"source":{"kind":"user"}}`), Op: event.Append()}
	}
	events := []event.Event{msg(0, "first"), msg(1, "last")}
	whole := Transcript(events, []int64{0, 1})
	if !strings.Contains(whole, "first") || !strings.Contains(whole, "last") {
		t.Fatalf("transcript %q", whole)
	}
	if got := Transcript(events, []int64{-1, 0, 1, 2}); got != whole {
		t.Errorf("seqs -1 and 2 changed the transcript: %q", got)
	}
	for _, seqs := range [][]int64{{-1}, {2}, {-5, 9}} {
		if got := Transcript(events, seqs); got != "" {
			t.Errorf("seqs %v render %q", seqs, got)
		}
	}
	if got := Transcript(events, []int64{0}); !strings.Contains(got, "first") || strings.Contains(got, "last") {
		t.Errorf("seq 0 renders %q", got)
	}
}

// TestRequestTargetsTheLastHeader: the model asked is the last
// request/header's, wherever it is in the log (not only last); a last
// header without a config falls back to the defaults.
func TestRequestTargetsTheLastHeader(t *testing.T) {
	header := func(seq int64, provider, model string) event.Event {
		return event.Event{Type: event.TypeRequestHeader, Seq: seq, Data: json.RawMessage(`{"header":{"config":{"provider":"` + provider + `","model":"` + model + `"}},"reason":"change"}`)}
	}
	user := event.Event{Type: event.TypeUserMessage, Data: json.RawMessage(`{"content":[],"source":{"kind":"user"}}`), Op: event.Append()}
	cfg := Config{DefaultProvider: "dp", DefaultModel: "dm"}
	for _, c := range []struct {
		name   string
		events []event.Event
		p, m   string
	}{
		{"one header, then messages", []event.Event{header(0, "a", "x"), user, user}, "a", "x"},
		{"two headers", []event.Event{header(0, "a", "x"), user, header(2, "b", "y"), user}, "b", "y"},
		{"header last", []event.Event{user, header(1, "c", "z")}, "c", "z"},
		{"no header", []event.Event{user, user}, "dp", "dm"},
		{"last header without a config", []event.Event{header(0, "a", "x"), {Type: event.TypeRequestHeader, Seq: 1, Data: json.RawMessage(`{"header":{},"reason":"change"}`)}, user}, "dp", "dm"},
	} {
		req, err := RequestFor(cfg, c.events, "t")
		if err != nil || req.Provider != c.p || req.Model != c.m {
			t.Errorf("%s: %s/%s (%v), want %s/%s", c.name, req.Provider, req.Model, err, c.p, c.m)
		}
	}
}

// TestAssemblerWithoutBlockEnd: blocks assembled from their deltas alone
// (no block-end came), a tool call's id and name given or not, and deltas
// after a block-end ignored.
func TestAssemblerWithoutBlockEnd(t *testing.T) {
	var a Assembler
	for _, c := range []string{
		`{"type":"text-delta","index":0,"text":"hel"}`,
		`{"type":"text-delta","index":0,"text":"lo"}`,
		`{"type":"tool-call-delta","index":1,"id":"c1","name":"read","argumentsDelta":"{\"a\":"}`,
		`{"type":"tool-call-delta","index":1,"id":"c1","name":"","argumentsDelta":"1}"}`,
		`{"type":"block-start","index":2,"blockType":"tool-call"}`,
		`{"type":"text-delta","index":3,"text":"x"}`,
		`{"type":"block-end","index":3,"block":{"type":"text","text":"kept"}}`,
		`{"type":"text-delta","index":3,"text":" ignored"}`,
		`{"type":"tool-call-delta","index":2,"id":"late","argumentsDelta":"{}"}`,
	} {
		if err := a.Push(Chunk(c)); err != nil {
			t.Fatal(err)
		}
	}
	blocks, err := a.Blocks()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range blocks {
		got = append(got, string(b))
	}
	want := []string{
		`{"type":"text","text":"hello"}`,
		`{"type":"tool-call","id":"c1","name":"read","arguments":"{\"a\":1}"}`,
		`{"type":"tool-call","id":"late","name":"","arguments":"{}"}`,
		`{"type":"text","text":"kept"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("blocks:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var b Assembler
	_ = b.Push(Chunk(`{"type":"block-start","index":4,"blockType":"tool-call"}`))
	if blocks, err := b.Blocks(); err != nil || len(blocks) != 1 || string(blocks[0]) != `{"type":"tool-call","id":"call-4","name":"","arguments":""}` {
		t.Errorf("a tool call with no delta: %s, %v", blocks, err)
	}
}

// TestRenderingAsJavaScript: blocks of every kind rendered as the seed
// system's template literals render them (String() of each value), arrays
// with nulls and nested arrays, a text block's missing, null and non-string
// text, and JSON.stringify's key order (array indices first).
func TestRenderingAsJavaScript(t *testing.T) {
	content := `[{"type":"text","text":"hi"},{"type":"text","text":""},{"type":"reasoning","text":"think"},{"type":"reasoning","text":""},` +
		`{"type":"tool-call","name":"read","arguments":"{\"p\":1}"},{"type":"tool-result","content":[{"type":"text","text":"out"}]},` +
		`{"type":"tool-result","content":[]},{"type":"image"},{"type":"tool-call","name":["a",null,["b",2]],"arguments":{"x":1}}]`
	got := renderBlocks(json.RawMessage(content))
	want := "hi\n[reasoning: think]\n[tool-call: read({\"p\":1})]\n[tool-result: out]\n[tool-result]\n[image]\n[tool-call: a,,b,2([object Object])]"
	if got != want {
		t.Errorf("rendered:\n%s\nwant\n%s", got, want)
	}
	for v, want := range map[string]string{``: "undefined", `null`: "null", `true`: "true", `[]`: "", `[null]`: "", `[1,[2,null],"x"]`: "1,2,,x", `1.50`: "1.5", `{}`: "[object Object]"} {
		if got := jsString(json.RawMessage(v)); got != want {
			t.Errorf("String(%s) = %q, want %q", v, got, want)
		}
	}
	for v, want := range map[string]string{
		``:      "Cannot read properties of undefined (reading 'trim')",
		`null`:  "Cannot read properties of null (reading 'trim')",
		`1`:     "block.text.trim is not a function",
		`["a"]`: "block.text.trim is not a function",
	} {
		if _, err := textOf(json.RawMessage(v)); err == nil || err.Error() != want {
			t.Errorf("textOf(%s): %v, want %q", v, err, want)
		}
	}
	if s, err := textOf(json.RawMessage(`"ok"`)); err != nil || s != "ok" {
		t.Errorf("textOf of a string: %q, %v", s, err)
	}
	for in, want := range map[string]string{
		`{"b":1,"2":true,"a":[1, 2,{"z":null,"0":"x"}],"10":[]}`: `{"2":true,"10":[],"b":1,"a":[1,2,{"0":"x","z":null}]}`,
		`[ ]`: `[]`, `[1.0,"\u00e9"]`: `[1,"é"]`,
	} {
		if got := Stringify([]byte(in)); got != want {
			t.Errorf("Stringify(%s) = %s, want %s", in, got, want)
		}
	}
}
