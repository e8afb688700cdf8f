package surfacegemini_test

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"testing"

	"google.golang.org/genai"
	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/providers/internal/gen"
	"github.com/surfacelog/surface/impl/providers/surfacegemini"
)

// geminiResponse draws a GenerateContent response as Gemini 3 documents
// it: thought parts (with a signature or not), text parts, parallel
// function calls where only the first carries a thought signature (ids
// given or not), code execution parts, and a last part that carries only
// a signature (empty text); some parts with a member the API may add.
func geminiResponse(t *rapid.T) []byte {
	sig := func(label string) string {
		return base64.StdEncoding.EncodeToString(rapid.SliceOfN(rapid.Byte(), 1, 300).Draw(t, label))
	}
	var parts []map[string]any
	for range rapid.IntRange(0, 2).Draw(t, "thoughts") {
		p := map[string]any{"thought": true, "text": "think " + gen.Text(t, "thought")}
		if rapid.Bool().Draw(t, "thoughtSig") {
			p["thoughtSignature"] = sig("tsig")
		}
		parts = append(parts, p)
	}
	if rapid.IntRange(0, 3).Draw(t, "code") == 0 {
		parts = append(parts, map[string]any{"executableCode": map[string]any{"language": "PYTHON", "code": "print(1)"}},
			map[string]any{"codeExecutionResult": map[string]any{"outcome": "OUTCOME_OK", "output": "1\n"}})
	}
	if rapid.Bool().Draw(t, "text") {
		p := map[string]any{"text": "answer " + gen.Text(t, "say")}
		if rapid.IntRange(0, 2).Draw(t, "textSig") == 0 {
			p["thoughtSignature"] = sig("xsig")
		}
		parts = append(parts, p)
	}
	ids := rapid.Bool().Draw(t, "ids")
	for i := range rapid.IntRange(0, 3).Draw(t, "calls") {
		fc := map[string]any{"name": "read", "args": map[string]any{"path": "a.go", "n": i}}
		if ids {
			fc["id"] = "fc-" + rapid.StringMatching(`[a-z0-9]{6}`).Draw(t, "fid")
		}
		p := map[string]any{"functionCall": fc}
		if i == 0 {
			p["thoughtSignature"] = sig("fsig")
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 || rapid.IntRange(0, 3).Draw(t, "sigOnly") == 0 {
		if len(parts) == 0 {
			parts = append(parts, map[string]any{"text": "done"})
		}
		parts = append(parts, map[string]any{"text": "", "thoughtSignature": sig("lsig")})
	}
	for i := range parts {
		gen.Extra(t, parts[i], "extra")
	}
	return gen.JSON(map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 40, "candidatesTokenCount": rapid.IntRange(1, 50).Draw(t, "out"), "thoughtsTokenCount": 7, "cachedContentTokenCount": 8, "totalTokenCount": 90},
		"modelVersion":  "gemini-3-pro-preview", "responseId": "resp-rt",
	})
}

// TestProviderItemsRoundTrip: PROV-1, PROV-2. A Gemini 3 response decoded
// by the SDK's response type, through Reply, appended (calls without ids
// get ids unique in the session), stored in a JSONL file, resumed, and
// mapped to the next request: every part comes back on the model's
// content, in its place, its thought signature on exactly the part it came
// with (a signature-only part included), value for value but for members
// the SDK's Part has no field for (as the SDK writes a part: an empty
// text left out); an id-less call goes back without an
// id and its response names none either (Gemini pairs them by name); the
// contents pass Validate.
func TestProviderItemsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	counts := map[string]int{}
	rapid.Check(t, func(t *rapid.T) {
		raw := geminiResponse(t)
		var resp genai.GenerateContentResponse
		if err := json.Unmarshal(raw, &resp); err != nil {
			t.Fatal(err)
		}
		r, err := surfacegemini.Reply(&resp)
		if err != nil {
			t.Fatalf("reply: %v", err)
		}
		s := gen.Through(t, dir, r)
		defer s.Close(t.Context())
		contents, err := surfacegemini.Contents(s.Messages(), surfacegemini.ForModel("gemini-3-pro"))
		if err != nil {
			t.Fatal(err)
		}
		if v := surfacegemini.Validate(contents); len(v) > 0 {
			t.Fatalf("violations %v in %s", v, gen.JSON(contents))
		}
		var wire []struct {
			Role  string            `json:"role"`
			Parts []json.RawMessage `json:"parts"`
		}
		_ = json.Unmarshal(gen.JSON(contents), &wire)
		var orig struct {
			Candidates []struct {
				Content struct {
					Parts []json.RawMessage `json:"parts"`
				} `json:"content"`
			} `json:"candidates"`
		}
		_ = json.Unmarshal(raw, &orig)
		want := orig.Candidates[0].Content.Parts
		model := slices.IndexFunc(wire, func(c struct {
			Role  string            `json:"role"`
			Parts []json.RawMessage `json:"parts"`
		}) bool {
			return c.Role == "model"
		})
		if model < 0 || len(wire[model].Parts) != len(want) {
			t.Fatalf("the model's content %s, its reply %s", gen.JSON(contents), raw)
		}
		for i, p := range want {
			got := wire[model].Parts[i]
			if !gen.SameJSON(got, sdkForm(p)) {
				t.Fatalf("part %d sent back as %s, it came as %s", i, got, p)
			}
			for _, k := range gen.Members(p) {
				counts[k]++
			}
		}
		// The responses to id-less calls name no id.
		var calls, responses []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		}
		for _, c := range wire {
			for _, p := range c.Parts {
				var x struct {
					FunctionCall *struct {
						ID   string `json:"id"`
						Name string `json:"name"`
					} `json:"functionCall"`
					FunctionResponse *struct {
						ID   string `json:"id"`
						Name string `json:"name"`
					} `json:"functionResponse"`
				}
				_ = json.Unmarshal(p, &x)
				if x.FunctionCall != nil {
					calls = append(calls, *x.FunctionCall)
				}
				if x.FunctionResponse != nil {
					responses = append(responses, *x.FunctionResponse)
				}
			}
		}
		if len(calls) != len(responses) {
			t.Fatalf("%d calls, %d responses", len(calls), len(responses))
		}
		for i := range calls {
			if calls[i] != responses[i] {
				t.Fatalf("call %+v answered as %+v", calls[i], responses[i])
			}
			if calls[i].ID == "" {
				counts["id-less call"]++
			}
		}
	})
	t.Logf("part members round-tripped: %v", counts)
	for _, k := range []string{"thought", "thoughtSignature", "functionCall", "executableCode", "codeExecutionResult", "id-less call"} {
		if counts[k] == 0 {
			t.Errorf("no %s drawn", k)
		}
	}
}

// TestStreamRoundTrip: a response streamed a part per chunk (and a text
// part cut in two) assembled by Stream decodes to the reply the whole
// response gives once its neighbouring plain parts (text without a
// signature, both thoughts or neither: a stream cannot tell where one
// ended) are joined; every signed part, call and code part on its own.
func TestStreamRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		raw := geminiResponse(t)
		var resp genai.GenerateContentResponse
		_ = json.Unmarshal(raw, &resp)
		var joined []*genai.Part
		for _, p := range resp.Candidates[0].Content.Parts {
			plain := func(q *genai.Part) bool {
				return q.Text != "" && len(q.ThoughtSignature) == 0 && q.FunctionCall == nil && q.ExecutableCode == nil && q.CodeExecutionResult == nil
			}
			if n := len(joined); n > 0 && plain(joined[n-1]) && plain(p) && joined[n-1].Thought == p.Thought {
				j := *joined[n-1]
				j.Text += p.Text
				joined[n-1] = &j
				continue
			}
			joined = append(joined, p)
		}
		wholeResp := resp
		wholeResp.Candidates = []*genai.Candidate{{Content: &genai.Content{Role: "model", Parts: joined}, FinishReason: resp.Candidates[0].FinishReason}}
		whole, err := surfacegemini.Reply(&wholeResp)
		if err != nil {
			t.Fatal(err)
		}
		var st surfacegemini.Stream
		for i, p := range resp.Candidates[0].Content.Parts {
			pieces := []*genai.Part{p}
			if p.Text != "" && len(p.ThoughtSignature) == 0 && p.FunctionCall == nil {
				r := []rune(p.Text)
				a, b := *p, *p
				a.Text, b.Text = string(r[:len(r)/2]), string(r[len(r)/2:])
				pieces = []*genai.Part{&a, &b}
			}
			for _, piece := range pieces {
				c := &genai.GenerateContentResponse{ModelVersion: resp.ModelVersion, Candidates: []*genai.Candidate{{Content: &genai.Content{Role: "model", Parts: []*genai.Part{piece}}}}}
				if i == len(resp.Candidates[0].Content.Parts)-1 {
					c.Candidates[0].FinishReason = resp.Candidates[0].FinishReason
					c.UsageMetadata, c.ResponseID = resp.UsageMetadata, resp.ResponseID
				}
				st.Add(c)
			}
		}
		streamed, err := st.Reply()
		if err != nil {
			t.Fatal(err)
		}
		if len(streamed.Blocks) != len(whole.Blocks) {
			t.Fatalf("%d blocks streamed, %d whole", len(streamed.Blocks), len(whole.Blocks))
		}
		for i, w := range whole.Blocks {
			g := streamed.Blocks[i]
			if g.Type != w.Type || g.Text != w.Text || g.ID != w.ID || (w.Native != nil) != (g.Native != nil) ||
				w.Native != nil && !gen.SameJSON(g.Native.Item, sdkForm(w.Native.Item)) {
				t.Fatalf("block %d streamed %+v, whole %+v", i, g, w)
			}
		}
	})
}

// sdkForm is a part as the SDK writes it (what goes on the wire through
// genai): members it has no field for dropped, an empty text left out.
func sdkForm(raw []byte) []byte {
	var p genai.Part
	if err := json.Unmarshal(raw, &p); err != nil {
		return raw
	}
	return gen.JSON(&p)
}
