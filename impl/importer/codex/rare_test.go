package codex_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/importer"
	"github.com/surfacelog/surface/impl/importer/codex"
)

// importLines imports a rollout given as lines; it fails the test when the
// import does.
func importLines(t *testing.T, lines ...string) (*codex.File, *importer.Log) {
	t.Helper()
	f, err := codex.Parse(strings.NewReader(strings.Join(lines, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := codex.Import(f)
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	return f, l
}

const (
	meta   = `{"timestamp":"2026-02-23T12:00:00.000Z","type":"session_meta","payload":{"id":"x","timestamp":"2026-02-23T11:00:00.000Z","cwd":"/p"}}`
	prompt = `{"timestamp":"2026-02-23T12:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"q"}]}}`
)

func item(payload string) string {
	return `{"timestamp":"2026-02-23T12:00:02.000Z","type":"response_item","payload":` + payload + `}`
}

// natives are the native members of the blocks of the imported messages,
// in order.
func natives(t *testing.T, l *importer.Log) []map[string]any {
	var out []map[string]any
	for _, m := range messagesOf(t, l) {
		for _, b := range m.content {
			if n, ok := event.ObjectMember(b, "native"); ok {
				var v map[string]any
				json.Unmarshal(n, &v)
				out = append(out, v)
			}
		}
	}
	return out
}

// TestRareValues varies what one fixture never does: the opaque flag of
// each item kind, the model named by turn_context (and kept when a
// turn_context names none), the header's time from the meta or the line,
// a developer message with an image, an output without output, rollbacks
// of 0 and of more turns than there are, a compaction before any turn,
// replacement_history null beside absent, the legacy budget at its edge,
// the torn-line note.
func TestRareValues(t *testing.T) {
	ctx := `{"timestamp":"2026-02-23T12:00:01.500Z","type":"turn_context","payload":{"model":"gpt-5.2-codex"}}`
	noModel := `{"timestamp":"2026-02-23T12:00:01.600Z","type":"turn_context","payload":{"cwd":"/p"}}`
	_, l := importLines(t, meta, prompt, ctx, noModel,
		item(`{"type":"reasoning","summary":[{"type":"summary_text","text":"a"},{"type":"summary_text","text":"b"}]}`),
		item(`{"type":"reasoning","summary":[],"encrypted_content":"E"}`),
		item(`{"type":"web_search_call","status":"completed"}`),
		item(`{"type":"compaction","encrypted_content":"C"}`),
		item(`{"type":"image_generation_call","id":"ig","status":"completed","result":"R"}`),
		item(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"x"}],"phase":"final_answer"}`),
	)
	want := []struct {
		opaque bool
		typ    string
	}{{false, "reasoning"}, {true, "reasoning"}, {false, "web_search_call"}, {true, "compaction"}, {false, "image_generation_call"}, {false, "message"}}
	ns := natives(t, l)
	if len(ns) != len(want) {
		t.Fatalf("%d native blocks, want %d", len(ns), len(want))
	}
	for i, w := range want {
		opaque, _ := ns[i]["opaque"].(bool)
		item, _ := ns[i]["item"].(map[string]any)
		if opaque != w.opaque || item["type"] != w.typ || ns[i]["model"] != "gpt-5.2-codex" || ns[i]["provider"] != "openai" {
			t.Errorf("native %d: %v, want opaque %v, a %s, model gpt-5.2-codex", i, ns[i], w.opaque, w.typ)
		}
	}
	if ms := messagesOf(t, l); !strings.Contains(string(ms[1].content[0]), `"text":"a\n\nb"`) {
		t.Errorf("reasoning summaries: %s", ms[1].content[0])
	}
	// No turn_context at all: no model in native.
	_, l = importLines(t, meta, prompt, item(`{"type":"reasoning","summary":[],"encrypted_content":"E"}`))
	if ns := natives(t, l); len(ns) != 1 || ns[0]["model"] != nil {
		t.Errorf("without turn_context: %v", ns)
	}
	// The header's time: the meta's, or the line's when the meta has none.
	if f, _ := importLines(t, meta, prompt); mustHeader(t, f).CreatedAt != importer.Millis("2026-02-23T11:00:00.000Z") {
		t.Errorf("createdAt from the meta: %d", mustHeader(t, f).CreatedAt)
	}
	if f, _ := importLines(t, strings.Replace(meta, `"timestamp":"2026-02-23T11:00:00.000Z",`, "", 1), prompt); mustHeader(t, f).CreatedAt != importer.Millis("2026-02-23T12:00:00.000Z") {
		t.Errorf("createdAt from the line: %d", mustHeader(t, f).CreatedAt)
	}
	// A developer message with an image: its text block holds the text only.
	_, l = importLines(t, meta, item(`{"type":"message","role":"developer","content":[{"type":"input_text","text":"t"},{"type":"input_image","image_url":"u"}]}`), prompt)
	if ms := messagesOf(t, l); !strings.HasPrefix(string(ms[0].content[0]), `{"type":"text","text":"t","native"`) {
		t.Errorf("developer with an image: %s", ms[0].content[0])
	}
	// An output without output: an empty result, nothing dropped.
	_, l = importLines(t, meta, prompt, item(`{"type":"function_call","name":"f","arguments":"{}","call_id":"c"}`), item(`{"type":"function_call_output","call_id":"c"}`))
	if ms := messagesOf(t, l); len(ms) != 3 {
		t.Errorf("an output without output: %d messages", len(ms))
	}
	// An output before any call of its turn (no step open yet) is still a
	// result, not dropped.
	_, l = importLines(t, meta, prompt, item(`{"type":"function_call_output","call_id":"z","output":"stray"}`))
	if ms := messagesOf(t, l); len(ms) != 2 || !strings.Contains(string(ms[1].content[0]), "stray") {
		t.Errorf("an output with no step open: %d messages", len(ms))
	}
	// Rollbacks of 0, and of more turns than there are.
	rb := func(n string) string {
		return `{"timestamp":"2026-02-23T12:00:03.000Z","type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":` + n + `}}`
	}
	for _, c := range []struct {
		n    string
		msgs int
	}{{"0", 2}, {"-1", 2}, {"1", 0}, {"5", 0}} {
		_, l = importLines(t, meta, prompt, item(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a"}]}`), rb(c.n))
		if ms := messagesOf(t, l); len(ms) != c.msgs {
			t.Errorf("rollback of %s: %d messages, want %d", c.n, len(ms), c.msgs)
		}
	}
	// A compaction before any turn; replacement_history null is a legacy
	// compaction, as an absent one is.
	for _, c := range []string{
		`{"timestamp":"2026-02-23T12:00:00.500Z","type":"compacted","payload":{"message":"s","replacement_history":[]}}`,
		`{"timestamp":"2026-02-23T12:00:00.500Z","type":"compacted","payload":{"message":"s","replacement_history":null}}`,
		`{"timestamp":"2026-02-23T12:00:00.500Z","type":"compacted","payload":{"message":"s"}}`,
	} {
		f, l := importLines(t, meta, c, prompt)
		if fs := codex.Check(f); len(fs) != 0 {
			t.Errorf("%s: %v", c, fs)
		}
		legacy := !strings.Contains(c, "[]")
		if ms := messagesOf(t, l); legacy != (len(ms) == 2) {
			t.Errorf("%s: %d messages (legacy: the summary and the prompt)", c, len(ms))
		}
	}
	// The legacy budget at its edge: 15,000 estimated tokens kept, 15,001 refused.
	for _, c := range []struct {
		bytes int
		ok    bool
	}{{60000, true}, {60001, false}} {
		p := `{"timestamp":"2026-02-23T12:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"` + strings.Repeat("x", c.bytes) + `"}]}}`
		f, _ := codex.Parse(strings.NewReader(meta + "\n" + p + "\n" + `{"timestamp":"2026-02-23T12:00:03.000Z","type":"compacted","payload":{"message":"s"}}` + "\n"))
		if _, err := codex.Import(f); (err == nil) != c.ok {
			t.Errorf("a legacy compaction over %d bytes: %v", c.bytes, err)
		}
	}
	// The torn-line note, and none without a torn line.
	f, _ := codex.Parse(strings.NewReader(meta + "\n" + prompt + "\n{\"timest"))
	l, _ = codex.Import(f)
	if len(l.Notes) != 1 || !strings.Contains(l.Notes[0].Detail, "torn last line of 8 bytes") {
		t.Errorf("notes %v", l.Notes)
	}
	f, _ = codex.Parse(strings.NewReader(meta + "\n" + prompt + "\n"))
	if l, _ = codex.Import(f); len(l.Notes) != 0 {
		t.Errorf("notes without a torn line: %v", l.Notes)
	}
}

func mustHeader(t *testing.T, f *codex.File) struct{ CreatedAt int64 } {
	h, err := codex.Header(f)
	if err != nil {
		t.Fatal(err)
	}
	return struct{ CreatedAt int64 }{h.CreatedAt}
}

// TestSteps: the calls of one response and their outputs are one step; the
// response after the outputs begins the next; a call left open keeps its
// step open for the next response.
func TestSteps(t *testing.T) {
	_, l := importLines(t, meta, prompt,
		item(`{"type":"function_call","name":"f","arguments":"{}","call_id":"a"}`),
		item(`{"type":"function_call","name":"f","arguments":"{}","call_id":"b"}`),
		item(`{"type":"function_call_output","call_id":"a","output":"1"}`),
		item(`{"type":"function_call_output","call_id":"b","output":"2"}`),
		item(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"x"}]}`),
		item(`{"type":"function_call","name":"f","arguments":"{}","call_id":"c"}`),
		item(`{"type":"function_call","name":"f","arguments":"{}","call_id":"d"}`),
		item(`{"type":"function_call_output","call_id":"c","output":"3"}`),
		item(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"y"}]}`),
		item(`{"type":"function_call_output","call_id":"d","output":"4"}`),
	)
	var steps []int64
	for _, e := range l.Events {
		if e.Type == event.TypeAssistantMessage || e.Type == event.TypeToolResult {
			var d struct{ Step int64 }
			json.Unmarshal(e.Data, &d)
			steps = append(steps, d.Step)
		}
	}
	want := []int64{1, 1, 1, 1, 2, 2, 2, 2, 2, 2}
	if len(steps) != len(want) {
		t.Fatalf("steps %v, want %v", steps, want)
	}
	for i := range want {
		if steps[i] != want[i] {
			t.Fatalf("steps %v, want %v", steps, want)
		}
	}
}
