package message

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// BenchmarkMeter: the one-pass meter beside the straightforward one,
// interleaved (each iteration measures both, so a busy machine slows both
// alike), on the messages an agent keeps: a 400-character text with a
// newline and an accent, a tool call with object arguments, a tool result
// of a file. It reports ns per message for each and their ratio.
func BenchmarkMeter(b *testing.B) {
	text := strings.Repeat("Lorem ipsum dolor sit amet, é ", 13) + "\n" + strings.Repeat("x", 10)
	q, _ := json.Marshal(text)
	file, _ := json.Marshal(strings.Repeat("func F() int { return 41 }\n", 15))
	msgs := map[string]Message{
		"text400":  {Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":` + string(q) + `}`)}},
		"toolcall": {Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"Reading it."}`), json.RawMessage(`{"type":"tool-call","id":"toolu_01","name":"read","arguments":{"path":"internal/a/b.go","lines":[1,200],"follow":true}}`)}},
		"result":   {Content: []json.RawMessage{json.RawMessage(`{"type":"tool-result","toolCallId":"toolu_01","content":[{"type":"text","text":` + string(file) + `}],"isError":false}`)}},
	}
	for name, m := range msgs {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var fast, ref time.Duration
			n := 0
			for b.Loop() {
				t0 := time.Now()
				a := EstimateTokens(m)
				t1 := time.Now()
				c := refEstimate(m)
				t2 := time.Now()
				if a != c {
					b.Fatalf("%d != %d", a, c)
				}
				fast += t1.Sub(t0)
				ref += t2.Sub(t1)
				n++
			}
			b.ReportMetric(float64(fast.Nanoseconds())/float64(n), "onepass-ns/msg")
			b.ReportMetric(float64(ref.Nanoseconds())/float64(n), "ref-ns/msg")
			b.ReportMetric(float64(fast)/float64(ref), "onepass/ref")
		})
	}
}

// TestMeterAllocatesNothing: the one-pass meter allocates nothing for the
// blocks an agent keeps (text, a tool call with object arguments, a
// result holding blocks).
func TestMeterAllocatesNothing(t *testing.T) {
	m := Message{Content: []json.RawMessage{
		json.RawMessage(`{"type":"text","text":"é and more"}`),
		json.RawMessage(`{"type":"tool-call","id":"c","name":"read","arguments":{"path":"a.go","n":[1,2.5]}}`),
		json.RawMessage(`{"type":"tool-result","toolCallId":"c","content":[{"type":"text","text":"x"}],"isError":false}`),
	}}
	if n := testing.AllocsPerRun(100, func() { EstimateTokens(m) }); n != 0 {
		t.Errorf("the meter allocates %v times a message", n)
	}
}
