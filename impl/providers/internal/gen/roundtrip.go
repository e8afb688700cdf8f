package gen

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"

	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/providers/convo"
	"github.com/surfacelog/surface/impl/session"
)

var files atomic.Int64

// Through puts a decoded reply where a harness puts it, and reads it back
// as a resumed harness would: a strict session in a JSONL store (a turn,
// its prompt, a step), the reply appended (Reply.Append), a result for
// each of its tool calls, the step and turn ended; the store closed, then
// opened again and resumed. It returns the resumed session.
func Through(t *rapid.T, dir string, r convo.Reply) *persist.Session {
	ctx := context.Background()
	path := filepath.Join(dir, fmt.Sprintf("s%d.jsonl", files.Add(1)))
	st, err := persist.OpenJSONL(ctx, path, persist.Header{ID: "rt"})
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := persist.Resume(ctx, st, session.WithStrict())
	if err != nil {
		t.Fatal(err)
	}
	must := func(_ any, err error) {
		if err != nil {
			t.Fatalf("harness: %v", err)
		}
	}
	must(s.Append(ctx, event.TurnStartData{Turn: 1, Trigger: json.RawMessage(`{"kind":"message"}`)}))
	must(s.Append(ctx, event.UserMessageData{Content: []json.RawMessage{text("go")}, Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent()))
	must(s.Append(ctx, event.StepStartData{Turn: 1, Step: 1}))
	out, err := r.Append(ctx, s.Session, 1, 1)
	must(out, err)
	for _, c := range out {
		if c.Type != event.TypeToolCall {
			continue
		}
		var d event.ToolCallData
		_ = json.Unmarshal(c.Data, &d)
		must(s.Append(ctx, event.ToolResultData{Turn: 1, Step: 1, CallID: d.CallID, Content: []json.RawMessage{text("ok")}}, event.AppendIntent(c.Seq)))
	}
	must(s.Append(ctx, event.StepEndData{Turn: 1, Step: 1}))
	must(s.Append(ctx, event.TurnEndData{Turn: 1, Reason: json.RawMessage(`{"kind":"completed"}`)}))
	must(s.Append(ctx, event.TurnStartData{Turn: 2, Trigger: json.RawMessage(`{"kind":"message"}`)}))
	must(s.Append(ctx, event.UserMessageData{Content: []json.RawMessage{text("and then?")}, Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent()))
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st, err = persist.OpenJSONL(ctx, path, persist.Header{ID: "rt"})
	if err != nil {
		t.Fatal(err)
	}
	resumed, _, err := persist.Resume(ctx, st, session.WithStrict())
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	return resumed
}

// Canonical is the JSON value of raw, written with sorted members and no
// whitespace, numbers as written: two texts are Canonical-equal when they
// are the same JSON value.
func Canonical(raw []byte) string {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return "!" + string(raw)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// SameJSON reports whether a and b are the same JSON value.
func SameJSON(a, b []byte) bool { return Canonical(a) == Canonical(b) }

// Without returns the JSON object raw without the named members.
func Without(raw []byte, members ...string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	for _, k := range members {
		delete(m, k)
	}
	out, _ := json.Marshal(m)
	return out
}

// Members returns the member names of the JSON object raw.
func Members(raw []byte) []string {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Opaque draws an opaque payload: base64 of random bytes, sometimes long,
// sometimes with the characters a careless copy would escape or trim.
func Opaque(t *rapid.T, label string) string {
	b := rapid.SliceOfN(rapid.Byte(), 1, 600).Draw(t, label)
	s := base64.StdEncoding.EncodeToString(b)
	switch rapid.IntRange(0, 5).Draw(t, label+"_form") {
	case 0:
		return s + "==" // padding a decoder might drop
	case 1:
		return strings.ReplaceAll(s, "A", "+/")
	}
	return s
}

// Text draws a text, sometimes empty, sometimes with characters JSON must
// escape.
func Text(t *rapid.T, label string) string {
	return rapid.SampledFrom([]string{"", "ok", "checking a.go", "line1\nline2", `say "hi" \ back`, "ünïcødé ✓ 🙂", "<b>&amp;</b>", "\u2028"}).Draw(t, label)
}

// Extra sometimes adds a member the provider may add tomorrow to an item:
// an item must come back with it.
func Extra(t *rapid.T, item map[string]any, label string) bool {
	if rapid.IntRange(0, 5).Draw(t, label) != 0 {
		return false
	}
	item["zz_future_member"] = map[string]any{"kept": true, "n": 1.5}
	return true
}

// JSON marshals v (maps and slices of JSON values).
func JSON(v any) []byte {
	out, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return out
}

// Equal reports whether two Go values are deeply equal (for the helpers'
// callers that compare decoded structures).
func Equal(a, b any) bool { return reflect.DeepEqual(a, b) }
