package message_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/message"
)

// TestMeter: EstimateTokens is the seed system's token meter (COMP-5,
// seed-system-formats A2): 4 per message, ceil(len/4)+4 per text block
// with len in UTF-16 units, tool calls by name and arguments, results by
// their content, other blocks by their JSON text as JavaScript writes it.
func TestMeter(t *testing.T) {
	msg := func(blocks ...string) message.Message {
		m := message.Message{}
		for _, b := range blocks {
			m.Content = append(m.Content, json.RawMessage(b))
		}
		return m
	}
	preamble := "This is an automatically generated checkpoint condensing an earlier span of the conversation to free up context. Treat the captured context as established background and build on it without restating it. Continue the task directly from the messages that follow, without acknowledging this checkpoint."
	open, _ := json.Marshal(preamble + "\n\n<compacted-summary>")
	cases := []struct {
		name string
		m    message.Message
		want int
	}{
		{"empty", msg(), 4},
		{"text", msg(`{"type":"text","text":"abcde"}`), 4 + 2 + 4},
		{"text, not compact", msg(`{ "type" : "text", "text" : "abcde" }`), 4 + 2 + 4},
		{"astral counts two units", msg(`{"type":"text","text":"😀😀😀"}`), 4 + 2 + 4},
		{"escapes count as characters", msg(`{"type":"text","text":"\u00e9\n"}`), 4 + 1 + 4},
		{"reasoning", msg(`{"type":"reasoning","text":"abcd"}`), 4 + 1 + 4},
		{"tool call, string arguments", msg(`{"type":"tool-call","id":"c","name":"read","arguments":"{\"p\":1}"}`), 4 + 1 + 2 + 4},
		{"tool call, object arguments", msg(`{"type":"tool-call","id":"c","name":"read","arguments":{"p":1}}`), 4 + 1 + 2 + 4},
		{"tool result", msg(`{"type":"tool-result","toolCallId":"c","content":[{"type":"text","text":"abcd"}],"isError":false}`), 4 + (1 + 4) + 4},
		// JSON.stringify writes {"type":"image","n":1.5,"m":100,"d":"é"}: 38 units.
		{"other block, as JavaScript writes it", msg(`{"type":"image","n":1.50,"m":1e2,"d":"\u00e9"}`), 4 + 10 + 4},
		// The framing alone: the preamble block (321 units), the closing tag, the role.
		{"framing", msg(`{"type":"text","text":`+string(open)+`}`, `{"type":"text","text":"</compacted-summary>"}`), 98},
	}
	if len(preamble) != 300 {
		t.Fatalf("preamble %d chars", len(preamble))
	}
	for _, c := range cases {
		if got := message.EstimateTokens(c.m); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	for lit, want := range map[string]string{"1.50": "1.5", "1e2": "100", "1e21": "1e+21", "1e-7": "1e-7", "0.000001": "0.000001", "-2.5e-8": "-2.5e-8", "123456789012345678901": "123456789012345680000", "0.0": "0"} {
		if got := message.JSNumber([]byte(lit)); got != want {
			t.Errorf("JSNumber(%s) = %s, want %s", lit, got, want)
		}
	}
	_ = strings.Repeat
}
