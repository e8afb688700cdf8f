// Package surfacegemini maps a session's messages to the contents of a
// Gemini request (google.golang.org/genai), checks them against Gemini's
// rules (Validate), and maps a response, whole or streamed, back to the
// events a session appends (Reply, Stream).
//
// Gemini's roles are user and model; neighbouring messages of one role
// are merged, with the function responses first. A function response
// must name its function, so the adapter carries each call's name to its
// result; its response object is {"output": text} or, for a failed
// result, {"error": text}. A part that carried a thought signature, or is
// a thought, a server tool's call or response, or code execution, is kept
// verbatim in the log (spec §14, PROV-1) and sent back to Gemini as it
// came, on exactly the part it came with: a signature-only part (empty
// text) included. Gemini 3 answers 400 when a function call's signature
// is missing. Reasoning without Gemini's signature is left out. Images are
// inline data (base64 decoded) or file data (a URL).
package surfacegemini

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"google.golang.org/genai"

	"github.com/surfacelog/surface/impl/providers/convo"
	"github.com/surfacelog/surface/impl/view"
)

// Option configures a request mapping.
type Option func(*convo.Target)

// ForModel names the model the request goes to: a thought signature
// issued by a model of another family is not sent back (PROV-2).
func ForModel(model string) Option { return func(t *convo.Target) { t.Model = model } }

// Contents returns the contents of a GenerateContent request for msgs
// (s.Messages()).
func Contents(msgs view.Messages, opts ...Option) ([]*genai.Content, error) {
	ms, err := convo.Decode(msgs)
	if err != nil {
		return nil, err
	}
	return FromConvo(ms, opts...)
}

// FromConvo maps decoded messages.
func FromConvo(ms []convo.Message, opts ...Option) ([]*genai.Content, error) {
	t := convo.Target{Provider: convo.Google}
	for _, o := range opts {
		o(&t)
	}
	calls := map[string]callInfo{} // call id -> its name, and whether Gemini named it
	var kept []convo.Message
	for _, m := range ms {
		var blocks []convo.Block
		for _, b := range m.Blocks {
			if b.Type == convo.ToolCall {
				info := callInfo{name: b.Name, id: b.ID}
				if t.Replays(b.Native) {
					var p struct {
						FunctionCall *struct {
							ID string `json:"id"`
						} `json:"functionCall"`
					}
					if json.Unmarshal(b.Native.Item, &p) == nil && p.FunctionCall != nil && p.FunctionCall.ID == "" {
						info.id = "" // Gemini named none: its response names none either
					}
				}
				calls[b.ID] = info
			}
			switch {
			case t.Replays(b.Native):
				blocks = append(blocks, b)
			case b.Type == convo.Reasoning, b.Type == convo.ProviderItem && b.Text == "", b.Type == convo.Text && b.Text == "":
				// unsigned reasoning, another provider's item with no portable
				// part, an empty text block (the API refuses it): nothing to send
			case b.Type == convo.ProviderItem:
				blocks = append(blocks, convo.Block{Type: convo.Text, Text: b.Text})
			default:
				if b.Native != nil && b.Type != convo.Text && b.Type != convo.ToolCall && b.Type != convo.Image {
					continue // another provider's kind of block
				}
				b.Native = nil
				blocks = append(blocks, b)
			}
		}
		if len(blocks) > 0 {
			m.Blocks = blocks
			kept = append(kept, m)
		}
	}
	var out []*genai.Content
	for _, m := range convo.Merge(kept) {
		c := &genai.Content{Role: genai.RoleUser}
		if m.Role == "assistant" {
			c.Role = genai.RoleModel
		}
		for _, b := range m.Blocks {
			p, err := part(b, calls)
			if err != nil {
				return nil, fmt.Errorf("surfacegemini: message of nodes %v: %w", m.Seqs, err)
			}
			c.Parts = append(c.Parts, p)
		}
		out = append(out, c)
	}
	return out, nil
}

type callInfo struct{ name, id string }

func part(b convo.Block, calls map[string]callInfo) (*genai.Part, error) {
	if b.Native != nil {
		var p genai.Part
		if err := json.Unmarshal(b.Native.Item, &p); err != nil {
			return nil, fmt.Errorf("a native part: %v", err)
		}
		return &p, nil
	}
	switch b.Type {
	case convo.Text:
		return &genai.Part{Text: b.Text}, nil
	case convo.Image:
		if b.URL != "" {
			return &genai.Part{FileData: &genai.FileData{FileURI: b.URL, MIMEType: b.MediaType}}, nil
		}
		data, err := base64.StdEncoding.DecodeString(b.Data)
		if err != nil {
			return nil, fmt.Errorf("image data: %v", err)
		}
		return &genai.Part{InlineData: &genai.Blob{Data: data, MIMEType: b.MediaType}}, nil
	case convo.ToolCall:
		var args map[string]any
		if err := json.Unmarshal([]byte(b.Arguments), &args); err != nil {
			return nil, fmt.Errorf("tool call %q: %v", b.ID, err)
		}
		return &genai.Part{FunctionCall: &genai.FunctionCall{ID: b.ID, Name: b.Name, Args: args}}, nil
	case convo.ToolResult:
		key := "output"
		if b.IsError {
			key = "error"
		}
		call, ok := calls[b.ToolCallID]
		if !ok {
			call = callInfo{id: b.ToolCallID}
		}
		return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: call.id, Name: call.name, Response: map[string]any{key: convo.ResultText(b)}}}, nil
	}
	return nil, fmt.Errorf("a %s block has no Gemini form", b.Type)
}

// Reply decodes a GenerateContent response (its first candidate), part
// by part: function calls, thoughts (as reasoning), text, and each part
// that carries what no library block holds (a thought signature, a
// thought, a server tool's call or response, code execution) kept whole
// (PROV-1), a signature-only part as a provider item. A call without an
// id keeps none: Reply.Append gives it one unique in the session, and the
// request sends its response without an id, as Gemini pairs them then.
func Reply(resp *genai.GenerateContentResponse) (convo.Reply, error) {
	raw, err := json.Marshal(resp)
	if err != nil {
		return convo.Reply{}, fmt.Errorf("surfacegemini: %w", err)
	}
	return ReplyJSON(raw)
}

// ReplyJSON decodes a GenerateContent response from its JSON, as the API
// sent it, so that each part is kept as it came (members the SDK does
// not know yet included).
func ReplyJSON(raw []byte) (convo.Reply, error) {
	var resp struct {
		ModelVersion string `json:"modelVersion"`
		ResponseID   string `json:"responseId"`
		Candidates   []struct {
			FinishReason string `json:"finishReason"`
			Content      *struct {
				Parts []json.RawMessage `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
		UsageMetadata *genai.GenerateContentResponseUsageMetadata `json:"usageMetadata"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return convo.Reply{}, fmt.Errorf("surfacegemini: the response is not a GenerateContent response: %w", err)
	}
	r := convo.Reply{Provider: convo.Google, Model: resp.ModelVersion}
	if len(resp.Candidates) == 0 || resp.Candidates[0].Content == nil {
		return convo.Reply{}, fmt.Errorf("surfacegemini: the response has no candidate")
	}
	cand := resp.Candidates[0]
	r.StopReason = cand.FinishReason
	for i, item := range cand.Content.Parts {
		var p genai.Part
		if string(item) == "null" {
			return convo.Reply{}, fmt.Errorf("surfacegemini: part %d is null", i)
		}
		if err := json.Unmarshal(item, &p); err != nil {
			return convo.Reply{}, fmt.Errorf("surfacegemini: part %d: %v", i, err)
		}
		signed := len(p.ThoughtSignature) > 0
		server := p.ToolCall != nil || p.ToolResponse != nil || p.ExecutableCode != nil || p.CodeExecutionResult != nil
		var n *convo.Native
		if signed || p.Thought || server || p.FunctionCall != nil {
			n = &convo.Native{Provider: convo.Google, Model: resp.ModelVersion, Opaque: signed, Item: append(json.RawMessage(nil), item...)}
		}
		switch {
		case p.FunctionCall != nil:
			args, err := json.Marshal(p.FunctionCall.Args)
			if err != nil {
				return convo.Reply{}, fmt.Errorf("surfacegemini: part %d: %v", i, err)
			}
			if p.FunctionCall.Args == nil {
				args = []byte("{}")
			}
			r.Blocks = append(r.Blocks, convo.Block{Type: convo.ToolCall, ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Arguments: string(args), Native: n})
		case server:
			r.Blocks = append(r.Blocks, convo.Block{Type: convo.ProviderItem, Native: n})
		case p.Thought:
			r.Blocks = append(r.Blocks, convo.Block{Type: convo.Reasoning, Text: p.Text, Native: n})
		case p.Text != "":
			r.Blocks = append(r.Blocks, convo.Block{Type: convo.Text, Text: p.Text, Native: n})
		case signed:
			r.Blocks = append(r.Blocks, convo.Block{Type: convo.ProviderItem, Native: n})
		default:
			return convo.Reply{}, fmt.Errorf("surfacegemini: part %d has nothing the session records", i)
		}
	}
	if u := resp.UsageMetadata; u != nil {
		cached := int64(u.CachedContentTokenCount)
		r.Usage = &convo.Usage{InputTokens: int64(u.PromptTokenCount) - cached, OutputTokens: int64(u.CandidatesTokenCount), CacheReadTokens: cached, ReasoningTokens: int64(u.ThoughtsTokenCount)}
	}
	if resp.ResponseID != "" {
		r.Response, _ = json.Marshal(map[string]string{"id": resp.ResponseID})
	}
	return r, nil
}

// Stream assembles a streamed GenerateContent response from its chunks
// (each a GenerateContentResponse): the parts of the first candidate in
// order, neighbouring plain text parts (no signature, both thoughts or
// neither) joined, every other part kept as it came, a signature-only
// part included; the last finish reason, usage and model version. The
// zero Stream is ready to use.
type Stream struct {
	resp *genai.GenerateContentResponse
}

// Add adds one chunk.
func (s *Stream) Add(chunk *genai.GenerateContentResponse) {
	if chunk == nil {
		return
	}
	if s.resp == nil {
		s.resp = &genai.GenerateContentResponse{}
	}
	if chunk.ModelVersion != "" {
		s.resp.ModelVersion = chunk.ModelVersion
	}
	if chunk.ResponseID != "" {
		s.resp.ResponseID = chunk.ResponseID
	}
	if chunk.UsageMetadata != nil {
		s.resp.UsageMetadata = chunk.UsageMetadata
	}
	if len(chunk.Candidates) == 0 || chunk.Candidates[0] == nil {
		return
	}
	c := chunk.Candidates[0]
	if len(s.resp.Candidates) == 0 {
		s.resp.Candidates = []*genai.Candidate{{Content: &genai.Content{Role: genai.RoleModel}}}
	}
	acc := s.resp.Candidates[0]
	if c.FinishReason != "" {
		acc.FinishReason = c.FinishReason
	}
	if c.Content == nil {
		return
	}
	for _, p := range c.Content.Parts {
		if p == nil {
			continue
		}
		n := len(acc.Content.Parts)
		if n > 0 && plainText(acc.Content.Parts[n-1]) && plainText(p) && acc.Content.Parts[n-1].Thought == p.Thought {
			acc.Content.Parts[n-1].Text += p.Text
			continue
		}
		cp := *p
		acc.Content.Parts = append(acc.Content.Parts, &cp)
	}
}

// plainText reports whether p is only text (a thought or not), with no
// signature.
func plainText(p *genai.Part) bool {
	q := *p
	q.Text, q.Thought = "", false
	b, _ := json.Marshal(&q)
	return p.Text != "" && string(b) == "{}"
}

// Response is the assembled response.
func (s *Stream) Response() *genai.GenerateContentResponse { return s.resp }

// Reply decodes the assembled response (Reply).
func (s *Stream) Reply() (convo.Reply, error) {
	if s.resp == nil {
		return convo.Reply{}, fmt.Errorf("surfacegemini: the stream has no chunk")
	}
	return Reply(s.resp)
}
