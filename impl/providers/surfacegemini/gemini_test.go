package surfacegemini_test

import (
	"encoding/json"
	"testing"

	"google.golang.org/genai"
	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/providers/convo"
	"github.com/surfacelog/surface/impl/providers/internal/gen"
	"github.com/surfacelog/surface/impl/providers/surfacegemini"
	"github.com/surfacelog/surface/impl/view"
)

var adapter = gen.Adapter{
	Request: func(msgs view.Messages) (any, []convo.Violation, error) {
		c, err := surfacegemini.Contents(msgs)
		return c, surfacegemini.Validate(c), err
	},
	Respond: func(r convo.Reply) []byte {
		var parts []any
		for _, b := range r.Blocks {
			switch b.Type {
			case convo.Text:
				parts = append(parts, map[string]any{"text": b.Text})
			case convo.Reasoning:
				parts = append(parts, map[string]any{"text": b.Text, "thought": true})
			case convo.ToolCall:
				parts = append(parts, map[string]any{"functionCall": map[string]any{"id": b.ID, "name": b.Name, "args": json.RawMessage(b.Arguments)}})
			}
		}
		out, _ := json.Marshal(map[string]any{"modelVersion": "gemini-test",
			"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP"}},
			"usageMetadata": map[string]any{"promptTokenCount": r.Usage.InputTokens, "candidatesTokenCount": r.Usage.OutputTokens}})
		return out
	},
	Decode: func(b []byte) (convo.Reply, error) {
		var r genai.GenerateContentResponse
		if err := json.Unmarshal(b, &r); err != nil {
			return convo.Reply{}, err
		}
		return surfacegemini.Reply(&r)
	},
	Carries: func(r convo.Reply) []convo.Block { return r.Blocks },
}

// TestRequestsPassValidate: over random agent sessions, the contents pass
// Validate and keep every call and result, each result naming its call's
// function.
func TestRequestsPassValidate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { gen.CheckSessions(t, adapter) })
	rapid.Check(t, func(t *rapid.T) {
		s := gen.Session(t)
		want := gen.CountsOf(s.Messages())
		contents, err := surfacegemini.Contents(s.Messages())
		if err != nil {
			t.Fatal(err)
		}
		var got gen.Counts
		for _, c := range contents {
			for _, p := range c.Parts {
				if p.FunctionCall != nil {
					got.Calls++
				}
				if p.FunctionResponse != nil {
					got.Results++
					if p.FunctionResponse.Name == "" {
						t.Fatalf("a function response without its function's name")
					}
				}
			}
		}
		if got.Calls != want.Calls || got.Results != want.Results {
			t.Fatalf("contents %+v, the messages %+v", got, want)
		}
	})
}

// TestRoundTrip: response -> events -> request keeps the content.
func TestRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { gen.CheckRoundTrip(t, adapter) })
}

// TestValidateCatches: each rule, broken on purpose.
func TestValidateCatches(t *testing.T) {
	user := func(p ...*genai.Part) *genai.Content { return &genai.Content{Role: "user", Parts: p} }
	model := func(p ...*genai.Part) *genai.Content { return &genai.Content{Role: "model", Parts: p} }
	txt := func(s string) *genai.Part { return &genai.Part{Text: s} }
	call := func(id, name string) *genai.Part {
		return &genai.Part{FunctionCall: &genai.FunctionCall{ID: id, Name: name, Args: map[string]any{}}}
	}
	res := func(id, name string) *genai.Part {
		return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: id, Name: name, Response: map[string]any{"output": "ok"}}}
	}
	cases := []struct {
		name     string
		contents []*genai.Content
		rule     string
	}{
		{"ok", []*genai.Content{user(txt("q")), model(call("a", "read")), user(res("a", "read"), txt("x")), model(txt("done"))}, ""},
		{"model first", []*genai.Content{model(txt("q"))}, "first_user"},
		{"two users", []*genai.Content{user(txt("q")), user(txt("q"))}, "alternation"},
		{"no parts", []*genai.Content{user()}, "empty_content"},
		{"wrong name", []*genai.Content{user(txt("q")), model(call("a", "read")), user(res("a", "grep"))}, "name"},
		{"result after text", []*genai.Content{user(txt("q")), model(call("a", "read")), user(txt("x"), res("a", "read"))}, "results_first"},
		{"unanswered", []*genai.Content{user(txt("q")), model(call("a", "read")), user(txt("x"))}, "call_without_result"},
		{"stray", []*genai.Content{user(txt("q")), model(call("a", "read")), user(res("a", "read"), res("b", "read"))}, "result_without_call"},
		{"twice", []*genai.Content{user(txt("q")), model(call("a", "read")), user(res("a", "read"), res("a", "read"))}, "duplicate_result"},
		{"a system role", []*genai.Content{{Role: "system", Parts: []*genai.Part{txt("q")}}}, "roles"},
		{"an empty text", []*genai.Content{user(txt("q")), model(txt(""))}, "empty_text"},
		{"a signed empty text", []*genai.Content{user(txt("q")), model(&genai.Part{Text: "", ThoughtSignature: []byte{1}}, txt("a"))}, ""},
		{"an empty part", []*genai.Content{user(txt("q")), model(&genai.Part{})}, "empty_text"},
		{"one call id twice", []*genai.Content{user(txt("q")), model(call("a", "read"), call("a", "grep")), user(res("a", "read"))}, "duplicate_call"},
		{"one call id in two steps", []*genai.Content{user(txt("q")), model(call("a", "read")), user(res("a", "read")), model(call("a", "read")), user(res("a", "read"))}, "duplicate_call"},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		v := surfacegemini.Validate(c.contents)
		found := false
		for _, x := range v {
			found = found || x.Rule == c.rule
		}
		if c.rule == "" && len(v) > 0 || c.rule != "" && !found {
			t.Errorf("%s: violations %v, want %q", c.name, v, c.rule)
		}
		covered[c.rule] = found
	}
	// A member the SDK's Part has no field for reaches only the JSON.
	for _, x := range surfacegemini.ValidateJSON([]byte(`[{"role":"user","parts":[{"text":"q","videoHint":1}]}]`)) {
		covered[x.Rule] = covered[x.Rule] || x.Rule == "unknown_part"
	}
	for _, r := range surfacegemini.Rules {
		if !covered[r] {
			t.Errorf("no case breaks rule %s", r)
		}
	}
}
