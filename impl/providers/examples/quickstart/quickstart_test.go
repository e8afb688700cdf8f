package quickstart_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/providers/convo"
	"github.com/surfacelog/surface/impl/providers/examples/quickstart"
	"github.com/surfacelog/surface/impl/providers/surfaceanthropic"
	"github.com/surfacelog/surface/impl/providers/surfacegemini"
	"github.com/surfacelog/surface/impl/providers/surfaceopenai"
	"github.com/surfacelog/surface/impl/session"
)

// fake answers as Claude would: a tool call to a prompt, then the answer
// once the result is in; it fails the request given by failAt.
type fake struct {
	calls, requests, failAt int
}

func (f *fake) New(_ context.Context, p anthropic.MessageNewParams, _ ...option.RequestOption) (*anthropic.Message, error) {
	f.requests++
	if f.requests == f.failAt {
		return nil, errors.New("overloaded")
	}
	var last []struct {
		Type string `json:"type"`
	}
	raw, _ := json.Marshal(p.Messages[len(p.Messages)-1])
	var msg struct {
		Content *[]struct {
			Type string `json:"type"`
		} `json:"content"`
	}
	msg.Content = &last
	_ = json.Unmarshal(raw, &msg)
	body := `{"type":"text","text":"done"}`
	stop := "end_turn"
	if len(last) == 0 || last[len(last)-1].Type != "tool_result" { // a prompt (after a crashed turn's results, perhaps)
		f.calls++
		body = fmt.Sprintf(`{"type":"text","text":"Reading."},{"type":"tool_use","id":"toolu_%d","name":"read","input":{"path":"a.go"}}`, f.calls)
		stop = "tool_use"
	}
	var m anthropic.Message
	err := json.Unmarshal([]byte(`{"id":"msg","type":"message","role":"assistant","model":"claude-sonnet-4-5","stop_reason":"`+stop+`","content":[`+body+`],"usage":{"input_tokens":10,"output_tokens":5}}`), &m)
	return &m, err
}

var tools = []convo.Tool{{Name: "read", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}}

func run(name, args string) (string, bool) {
	if name != "read" {
		return "no such tool", true
	}
	return "package a", false
}

// TestQuickStartTwice: the quick start run twice on one file, then a run
// whose second request fails (the turn is left open, as a crash leaves
// it), then once more (resume closes that turn first). Every run computes
// its turn and steps; the log loads in strict mode and every request it
// makes passes all four validators; its call ids are unique.
func TestQuickStartTwice(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "session.jsonl")
	model := &fake{}
	for i, failAt := range []int{0, 0, 2, 0} {
		model.failAt = model.requests + failAt
		if failAt == 0 {
			model.failAt = -1
		}
		err := quickstart.Turn(ctx, path, fmt.Sprintf("question %d", i+1), model, tools, run)
		if (err != nil) != (failAt != 0) {
			t.Fatalf("run %d: %v", i+1, err)
		}
	}
	st, err := persist.OpenJSONL(ctx, path, persist.Header{ID: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	s, rep, err := persist.Resume(ctx, st, session.WithStrict())
	if err != nil || len(rep.Closers) != 0 {
		t.Fatalf("the log in strict mode: %v, %d closers", err, len(rep.Closers))
	}
	defer s.Close(ctx)
	if n := s.NextTurn(); n != 5 {
		t.Fatalf("four runs made turns up to %d", n-1)
	}
	ids := map[string]bool{}
	for _, e := range s.Events() {
		if e.Type == "tool/call" {
			var d struct{ CallID string }
			_ = json.Unmarshal(e.Data, &d)
			if ids[d.CallID] {
				t.Fatalf("call id %q twice", d.CallID)
			}
			ids[d.CallID] = true
		}
	}
	if len(ids) != 4 {
		t.Fatalf("%d calls, want one a run", len(ids))
	}
	msgs := s.Messages()
	a, err := surfaceanthropic.Messages(msgs)
	if err != nil {
		t.Fatal(err)
	}
	r, err := surfaceopenai.ResponsesInput(msgs)
	if err != nil {
		t.Fatal(err)
	}
	c, err := surfaceopenai.ChatMessages(msgs)
	if err != nil {
		t.Fatal(err)
	}
	g, err := surfacegemini.Contents(msgs)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string][]convo.Violation{
		"anthropic": surfaceanthropic.Validate(a),
		"responses": surfaceopenai.ValidateResponses(r),
		"chat":      surfaceopenai.ValidateChat(c),
		"gemini":    surfacegemini.Validate(g),
	} {
		if len(v) > 0 {
			t.Errorf("%s: %v", name, v)
		}
	}
}

// TestReadmeQuickStart: the README's quick start is Turn, as compiled
// and run here.
func TestReadmeQuickStart(t *testing.T) {
	readme, err := os.ReadFile("../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("quickstart.go")
	if err != nil {
		t.Fatal(err)
	}
	code := string(src)
	fn := code[strings.Index(code, "// Turn runs one turn"):]
	if !strings.Contains(string(readme), fn) {
		t.Errorf("README.md does not hold quickstart.Turn as its quick start; it should read:\n%s", fn)
	}
}
