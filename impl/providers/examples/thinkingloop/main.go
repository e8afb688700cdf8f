// Command thinkingloop runs the tool loop of a thinking model against
// each provider, with recorded replies and no network: a prompt, a reply
// that thinks and calls a tool (Anthropic's signed thinking, OpenAI's
// encrypted reasoning, DeepSeek's reasoning_content, Gemini's thought
// signature), the tool run and its result appended, then the second
// request, which must carry what the provider wants back, and the
// answer. It stores the session in a JSONL file and resumes it between
// the two requests, as a harness that restarts would. It exits 1 when a
// second request lacks what its provider needs or breaks its rules.
//
//	(cd impl/providers && go run ./examples/thinkingloop)
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/providers/convo"
	"github.com/surfacelog/surface/impl/providers/surfaceanthropic"
	"github.com/surfacelog/surface/impl/providers/surfacegemini"
	"github.com/surfacelog/surface/impl/providers/surfaceopenai"
)

// A provider: how its recorded replies decode, how its next request is
// built and checked, and what that request must carry.
type provider struct {
	name    string
	replies [2]string // the recorded replies: a thought and a call, then the answer
	decode  func(raw []byte) (convo.Reply, error)
	request func(s *persist.Session) (body []byte, violations int, err error)
	carries []string // what the second request must hold, as the first reply gave it
}

func main() {
	log.SetFlags(0)
	dir, err := os.MkdirTemp("", "thinkingloop")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	failed := false
	for _, p := range providers() {
		if err := run(dir, p); err != nil {
			fmt.Printf("%-10s FAIL: %v\n", p.name, err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

func run(dir string, p provider) error {
	ctx := context.Background()
	path := filepath.Join(dir, p.name+".jsonl")
	open := func() (*persist.Session, error) {
		st, err := persist.OpenJSONL(ctx, path, persist.Header{ID: p.name})
		if err != nil {
			return nil, err
		}
		s, _, err := persist.Resume(ctx, st)
		return s, err
	}
	s, err := open()
	if err != nil {
		return err
	}
	text := func(t string) []json.RawMessage {
		return []json.RawMessage{json.RawMessage(`{"type":"text","text":"` + t + `"}`)}
	}
	turn := s.NextTurn()
	s.Append(ctx, event.TurnStartData{Turn: turn, Trigger: json.RawMessage(`{"kind":"message"}`)})
	s.Append(ctx, event.UserMessageData{Content: text("What does a.go export?"), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())
	// Step 1: the model thinks and calls a tool.
	r, err := p.decode([]byte(p.replies[0]))
	if err != nil {
		return fmt.Errorf("reply 1: %w", err)
	}
	s.Append(ctx, event.StepStartData{Turn: turn, Step: 1})
	out, err := r.Append(ctx, s.Session, turn, 1)
	if err != nil {
		return err
	}
	for _, c := range out[1:] {
		var d event.ToolCallData
		_ = json.Unmarshal(c.Data, &d)
		if _, err := s.Append(ctx, event.ToolResultData{Turn: turn, Step: 1, CallID: d.CallID, Content: text("package a; func F() int")}, event.AppendIntent(c.Seq)); err != nil {
			return err
		}
	}
	s.Append(ctx, event.StepEndData{Turn: turn, Step: 1})
	if err := s.Close(ctx); err != nil { // a restart between the steps
		return err
	}
	if s, err = open(); err != nil {
		return err
	}
	defer s.Close(ctx)
	// Step 2: the request that must carry the thought back.
	body, violations, err := p.request(s)
	if err != nil {
		return fmt.Errorf("request 2: %w", err)
	}
	if violations > 0 {
		return fmt.Errorf("request 2 breaks %d of the provider's rules: %s", violations, body)
	}
	for _, c := range p.carries {
		if !strings.Contains(string(body), c) {
			return fmt.Errorf("request 2 lacks %s: %s", c, body)
		}
	}
	r, err = p.decode([]byte(p.replies[1]))
	if err != nil {
		return fmt.Errorf("reply 2: %w", err)
	}
	s.Append(ctx, event.StepStartData{Turn: turn, Step: 2})
	if _, err := r.Append(ctx, s.Session, turn, 2); err != nil {
		return err
	}
	s.Append(ctx, event.StepEndData{Turn: turn, Step: 2})
	s.Append(ctx, event.TurnEndData{Turn: turn, Reason: json.RawMessage(`{"kind":"completed"}`)})
	fmt.Printf("%-10s ok: %d events; the second request (%d bytes) carried %s back\n", p.name, s.Len(), len(body), strings.Join(p.carries, ", "))
	return nil
}

func providers() []provider {
	return []provider{
		{
			name: "anthropic",
			replies: [2]string{
				`{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5-20251101","content":[{"type":"thinking","thinking":"I should read a.go.","signature":"EqQBCkYIBxgCKkDsig1"},{"type":"tool_use","id":"toolu_01","name":"read","input":{"path":"a.go"}}],"stop_reason":"tool_use","usage":{"input_tokens":50,"output_tokens":30}}`,
				`{"id":"msg_2","type":"message","role":"assistant","model":"claude-opus-4-5-20251101","content":[{"type":"thinking","thinking":"F is exported.","signature":"EqQBCkYIBxgCKkDsig2"},{"type":"text","text":"a.go exports F."}],"stop_reason":"end_turn","usage":{"input_tokens":90,"output_tokens":12}}`,
			},
			decode: func(raw []byte) (convo.Reply, error) {
				var m anthropic.Message
				if err := json.Unmarshal(raw, &m); err != nil {
					return convo.Reply{}, err
				}
				return surfaceanthropic.Reply(&m)
			},
			request: func(s *persist.Session) ([]byte, int, error) {
				p, err := surfaceanthropic.Messages(s.Messages(), surfaceanthropic.ForModel("claude-opus-4-5"))
				if err != nil {
					return nil, 0, err
				}
				b, _ := json.Marshal(anthropic.MessageNewParams{Model: "claude-opus-4-5", MaxTokens: 1024, Messages: p})
				return b, len(surfaceanthropic.Validate(p)), nil
			},
			carries: []string{`"signature":"EqQBCkYIBxgCKkDsig1"`},
		},
		{
			name: "openai",
			replies: [2]string{
				`{"id":"resp_1","object":"response","created_at":1,"model":"gpt-5.1","status":"completed","output":[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAAABencrypted1"},{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read","arguments":"{\"path\":\"a.go\"}","status":"completed"}],"usage":{"input_tokens":50,"output_tokens":30,"input_tokens_details":{"cached_tokens":0},"output_tokens_details":{"reasoning_tokens":20},"total_tokens":80}}`,
				`{"id":"resp_2","object":"response","created_at":2,"model":"gpt-5.1","status":"completed","output":[{"type":"message","id":"msg_2","role":"assistant","status":"completed","phase":"final_answer","content":[{"type":"output_text","text":"a.go exports F.","annotations":[]}]}],"usage":{"input_tokens":90,"output_tokens":12,"input_tokens_details":{"cached_tokens":64},"output_tokens_details":{"reasoning_tokens":0},"total_tokens":102}}`,
			},
			decode: func(raw []byte) (convo.Reply, error) {
				var r responses.Response
				if err := json.Unmarshal(raw, &r); err != nil {
					return convo.Reply{}, err
				}
				return surfaceopenai.ResponsesReply(&r)
			},
			request: func(s *persist.Session) ([]byte, int, error) {
				in, err := surfaceopenai.ResponsesInput(s.Messages(), surfaceopenai.ForModel("gpt-5.1"))
				if err != nil {
					return nil, 0, err
				}
				b, _ := json.Marshal(responses.ResponseNewParams{Model: "gpt-5.1", Input: responses.ResponseNewParamsInputUnion{OfInputItemList: in},
					Include: []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}, Store: openai.Bool(false)})
				return b, len(surfaceopenai.ValidateResponses(in)), nil
			},
			carries: []string{`"encrypted_content":"gAAAAABencrypted1"`, `"id":"rs_1"`},
		},
		{
			name: "deepseek",
			replies: [2]string{
				`{"id":"c1","object":"chat.completion","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"reasoning_content":"I should read a.go.","tool_calls":[{"id":"call_00","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.go\"}"}}]}}],"usage":{"prompt_tokens":50,"completion_tokens":30,"total_tokens":80}}`,
				`{"id":"c2","object":"chat.completion","created":2,"model":"deepseek-reasoner","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"a.go exports F.","reasoning_content":"F is exported."}}],"usage":{"prompt_tokens":90,"completion_tokens":12,"total_tokens":102}}`,
			},
			decode: func(raw []byte) (convo.Reply, error) {
				var c openai.ChatCompletion
				if err := json.Unmarshal(raw, &c); err != nil {
					return convo.Reply{}, err
				}
				return surfaceopenai.ChatReply(&c, surfaceopenai.WithDialect(surfaceopenai.DeepSeekChat))
			},
			request: func(s *persist.Session) ([]byte, int, error) {
				ds := surfaceopenai.WithDialect(surfaceopenai.DeepSeekChat)
				m, err := surfaceopenai.ChatMessages(s.Messages(), ds)
				if err != nil {
					return nil, 0, err
				}
				b, _ := json.Marshal(openai.ChatCompletionNewParams{Model: "deepseek-reasoner", Messages: m})
				return b, len(surfaceopenai.ValidateChat(m, ds)), nil
			},
			carries: []string{`"reasoning_content":"I should read a.go."`, `"content":""`},
		},
		{
			name: "gemini",
			replies: [2]string{
				`{"modelVersion":"gemini-3-pro-preview","responseId":"r1","candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"read","args":{"path":"a.go"}},"thoughtSignature":"Q2lzaWcx"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":50,"candidatesTokenCount":30,"totalTokenCount":80}}`,
				`{"modelVersion":"gemini-3-pro-preview","responseId":"r2","candidates":[{"content":{"role":"model","parts":[{"text":"a.go exports F."},{"text":"","thoughtSignature":"Q2lzaWcy"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":90,"candidatesTokenCount":12,"totalTokenCount":102}}`,
			},
			decode: func(raw []byte) (convo.Reply, error) {
				var r genai.GenerateContentResponse
				if err := json.Unmarshal(raw, &r); err != nil {
					return convo.Reply{}, err
				}
				return surfacegemini.Reply(&r)
			},
			request: func(s *persist.Session) ([]byte, int, error) {
				c, err := surfacegemini.Contents(s.Messages(), surfacegemini.ForModel("gemini-3-pro"))
				if err != nil {
					return nil, 0, err
				}
				b, _ := json.Marshal(c)
				return b, len(surfacegemini.Validate(c)), nil
			},
			carries: []string{`"thoughtSignature":"Q2lzaWcx"`},
		},
	}
}
