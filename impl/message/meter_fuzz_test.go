package message

import (
	"encoding/json"
	"testing"
)

// FuzzMeter: the one-pass meter counts what the straightforward one does
// (meter_ref_test.go), for any block that is JSON: text with escapes,
// astral characters, lone and paired surrogates, control characters and
// invalid UTF-8; tool calls with string and object arguments; results
// nesting blocks; numbers JavaScript writes differently; whitespace
// inside and outside strings; members repeated, escaped or missing.
func FuzzMeter(f *testing.F) {
	for _, s := range []string{
		`{"type":"text","text":"abcde"}`,
		`{ "type" : "text", "text" : "a b\tc\nd" }`,
		`{"type":"text","text":"😀\ud83d\ude00\ud800x\udc00\u00e9\"\\\/\b\f\n\r\t\u0001"}`,
		`{"type":"reasoning","text":"abcd","native":{"signature":"s"}}`,
		`{"type":"tool-call","id":"c","name":"read","arguments":"{\"p\":1}"}`,
		`{"type":"tool-call","id":"c","name":"r\u00e9ad","arguments":{"p":1.50,"q":[1e2,-0,123456789012345678901,"\u2028"]}}`,
		`{"type":"tool-result","toolCallId":"c","content":[{"type":"text","text":"abcd"},{"type":"image","data":"x"}],"isError":false}`,
		`{"type":"tool-result","content":{"not":"a list"}}`,
		`{"type":"image","n":1.50,"m":1e2,"d":"\u00e9"}`,
		`{"type":"tool-call","name":"n","arguments":{"a":[0.000001,0.0000001,123456789012345.5,12345678901234.5,-0.0,-0,1.25e3,0.1,100.25,1E400,0.30000000000000004]}}`,
		`{"t\u0079pe":"text","text":"escaped key"}`,
		`{"type":"text","type":"image","text":"first wins"}`,
		`{"type":"text","text":5}`,
		`{"type":"compaction","text":"summary","native":{"type":"compaction","encrypted_content":"xyz"}}`,
		`{"type":"text"}`,
		`"a string block"`,
		`[1,2,{"a":"b"}]`,
		`{}`,
		"{\"type\":\"text\",\"text\":\"\xff\xfe invalid\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		m := Message{Content: []json.RawMessage{b}}
		if got, want := EstimateTokens(m), refEstimate(m); got != want {
			t.Fatalf("one pass %d, straightforward %d, for %s", got, want, b)
		}
	})
}
