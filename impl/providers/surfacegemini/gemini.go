// Package surfacegemini maps a session's messages to the contents of a
// Gemini request (google.golang.org/genai), checks them against Gemini's
// rules (Validate), and maps a response back to the events a session
// appends (Reply).
//
// Gemini's roles are user and model; neighbouring messages of one role
// are merged, with the function responses first. A function response
// must name its function, so the adapter carries each call's name to its
// result; its response object is {"output": text} or, for a failed
// result, {"error": text}. Reasoning blocks are left out (Gemini replays
// thoughts only with its signatures). Images are inline data (base64
// decoded) or file data (a URL).
package surfacegemini

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"google.golang.org/genai"

	"github.com/surfacelog/surface/impl/providers/convo"
	"github.com/surfacelog/surface/impl/view"
)

// Contents returns the contents of a GenerateContent request for msgs
// (s.Messages()).
func Contents(msgs view.Messages) ([]*genai.Content, error) {
	ms, err := convo.Decode(msgs)
	if err != nil {
		return nil, err
	}
	return FromConvo(ms)
}

// FromConvo maps decoded messages.
func FromConvo(ms []convo.Message) ([]*genai.Content, error) {
	names := map[string]string{} // call id -> function name
	var kept []convo.Message
	for _, m := range ms {
		var blocks []convo.Block
		for _, b := range m.Blocks {
			if b.Type == convo.ToolCall {
				names[b.ID] = b.Name
			}
			if b.Type != convo.Reasoning {
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
			p, err := part(b, names)
			if err != nil {
				return nil, fmt.Errorf("surfacegemini: message of nodes %v: %w", m.Seqs, err)
			}
			c.Parts = append(c.Parts, p)
		}
		out = append(out, c)
	}
	return out, nil
}

func part(b convo.Block, names map[string]string) (*genai.Part, error) {
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
		return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: b.ToolCallID, Name: names[b.ToolCallID], Response: map[string]any{key: convo.ResultText(b)}}}, nil
	}
	return nil, fmt.Errorf("a %s block has no Gemini form", b.Type)
}

// Reply decodes a GenerateContent response (its first candidate): text
// parts, thought parts (as reasoning) and function calls. A call without
// an id gets one from its position ("call-N"), since the session pairs
// results by id.
func Reply(resp *genai.GenerateContentResponse) (convo.Reply, error) {
	r := convo.Reply{Provider: "google", Model: resp.ModelVersion}
	if len(resp.Candidates) == 0 || resp.Candidates[0].Content == nil {
		return convo.Reply{}, fmt.Errorf("surfacegemini: the response has no candidate")
	}
	cand := resp.Candidates[0]
	r.StopReason = string(cand.FinishReason)
	for i, p := range cand.Content.Parts {
		switch {
		case p.FunctionCall != nil:
			args, err := json.Marshal(p.FunctionCall.Args)
			if err != nil {
				return convo.Reply{}, fmt.Errorf("surfacegemini: part %d: %v", i, err)
			}
			if p.FunctionCall.Args == nil {
				args = []byte("{}")
			}
			id := p.FunctionCall.ID
			if id == "" {
				id = fmt.Sprintf("call-%d", i)
			}
			r.Blocks = append(r.Blocks, convo.Block{Type: convo.ToolCall, ID: id, Name: p.FunctionCall.Name, Arguments: string(args)})
		case p.Thought:
			r.Blocks = append(r.Blocks, convo.Block{Type: convo.Reasoning, Text: p.Text})
		case p.Text != "":
			r.Blocks = append(r.Blocks, convo.Block{Type: convo.Text, Text: p.Text})
		default:
			return convo.Reply{}, fmt.Errorf("surfacegemini: part %d has nothing the session records", i)
		}
	}
	if u := resp.UsageMetadata; u != nil {
		cached := int64(u.CachedContentTokenCount)
		r.Usage = &convo.Usage{InputTokens: int64(u.PromptTokenCount) - cached, OutputTokens: int64(u.CandidatesTokenCount), CacheReadTokens: cached, ReasoningTokens: int64(u.ThoughtsTokenCount)}
	}
	return r, nil
}
