package surfaceanthropic

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/surfacelog/surface/impl/providers/convo"
)

// Stream assembles a streamed Messages API response from its events, as
// the API sends them (message_start, content_block_start,
// content_block_delta, content_block_stop, message_delta, message_stop),
// into the message the API would have returned whole: text, thinking and
// its signature (signature_delta), tool input (input_json_delta),
// compaction content, citations. Reply then decodes it as Reply decodes a
// whole response. The zero Stream is ready to use.
type Stream struct {
	msg    map[string]json.RawMessage
	blocks []map[string]any
	inputs []bytes.Buffer // partial_json per block
	usage  map[string]json.RawMessage
	err    error
}

// Add adds one event: an SDK event (anthropic.MessageStreamEventUnion or
// the beta one, by its RawJSON), or the event's JSON.
func (s *Stream) Add(event json.RawMessage) error {
	if s.err != nil {
		return s.err
	}
	var e struct {
		Type         string                     `json:"type"`
		Message      map[string]json.RawMessage `json:"message"`
		Index        int                        `json:"index"`
		ContentBlock map[string]any             `json:"content_block"`
		Delta        map[string]json.RawMessage `json:"delta"`
		Usage        map[string]json.RawMessage `json:"usage"`
		Context      json.RawMessage            `json:"context_management"`
	}
	d := json.NewDecoder(bytes.NewReader(event))
	d.UseNumber()
	if err := d.Decode(&e); err != nil {
		return s.fail(fmt.Errorf("surfaceanthropic: a stream event that is not JSON: %w", err))
	}
	switch e.Type {
	case "message_start":
		s.msg = e.Message
		s.usage = map[string]json.RawMessage{}
		if u, ok := e.Message["usage"]; ok {
			_ = json.Unmarshal(u, &s.usage)
		}
	case "content_block_start":
		for len(s.blocks) <= e.Index {
			s.blocks = append(s.blocks, nil)
			s.inputs = append(s.inputs, bytes.Buffer{})
		}
		s.blocks[e.Index] = e.ContentBlock
	case "content_block_delta":
		if e.Index >= len(s.blocks) || s.blocks[e.Index] == nil {
			return s.fail(fmt.Errorf("surfaceanthropic: a delta for block %d, which did not start", e.Index))
		}
		b := s.blocks[e.Index]
		var kind string
		_ = json.Unmarshal(e.Delta["type"], &kind)
		str := func(name string) string {
			var v string
			_ = json.Unmarshal(e.Delta[name], &v)
			return v
		}
		switch kind {
		case "text_delta":
			prev, _ := b["text"].(string)
			b["text"] = prev + str("text")
		case "thinking_delta":
			prev, _ := b["thinking"].(string)
			b["thinking"] = prev + str("thinking")
		case "signature_delta":
			prev, _ := b["signature"].(string)
			b["signature"] = prev + str("signature")
		case "input_json_delta":
			s.inputs[e.Index].WriteString(str("partial_json"))
		case "citations_delta":
			var c any
			_ = json.Unmarshal(e.Delta["citation"], &c)
			cs, _ := b["citations"].([]any)
			b["citations"] = append(cs, c)
		case "compaction_delta":
			if v, ok := e.Delta["content"]; ok && string(v) != "null" {
				prev, _ := b["content"].(string)
				b["content"] = prev + str("content")
			}
			if v, ok := e.Delta["encrypted_content"]; ok && string(v) != "null" {
				b["encrypted_content"] = str("encrypted_content")
			}
		default:
			return s.fail(fmt.Errorf("surfaceanthropic: a %q delta, which this stream does not know", kind))
		}
	case "content_block_stop":
		if e.Index < len(s.blocks) && s.inputs[e.Index].Len() > 0 {
			s.blocks[e.Index]["input"] = json.RawMessage(s.inputs[e.Index].Bytes())
		}
	case "message_delta":
		if s.msg == nil {
			return s.fail(fmt.Errorf("surfaceanthropic: message_delta before message_start"))
		}
		for k, v := range e.Delta {
			s.msg[k] = v
		}
		for k, v := range e.Usage {
			s.usage[k] = v
		}
		if len(e.Context) > 0 {
			s.msg["context_management"] = e.Context
		}
	case "message_stop", "ping":
	case "error":
		return s.fail(fmt.Errorf("surfaceanthropic: the stream reported an error: %s", event))
	default:
		return s.fail(fmt.Errorf("surfaceanthropic: a %q stream event, which this stream does not know", e.Type))
	}
	return nil
}

func (s *Stream) fail(err error) error {
	s.err = err
	return err
}

// AddEvent adds an SDK event.
func (s *Stream) AddEvent(e anthropic.MessageStreamEventUnion) error {
	return s.Add(json.RawMessage(e.RawJSON()))
}

// AddBetaEvent adds a beta SDK event.
func (s *Stream) AddBetaEvent(e anthropic.BetaRawMessageStreamEventUnion) error {
	return s.Add(json.RawMessage(e.RawJSON()))
}

// JSON is the message as the API would have returned it whole.
func (s *Stream) JSON() (json.RawMessage, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.msg == nil {
		return nil, fmt.Errorf("surfaceanthropic: the stream has no message_start")
	}
	out := map[string]json.RawMessage{}
	for k, v := range s.msg {
		out[k] = v
	}
	content := make([]json.RawMessage, 0, len(s.blocks))
	for i, b := range s.blocks {
		if b == nil {
			return nil, fmt.Errorf("surfaceanthropic: block %d never started", i)
		}
		raw, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		content = append(content, raw)
	}
	out["content"], _ = json.Marshal(content)
	out["usage"], _ = json.Marshal(s.usage)
	return json.Marshal(out)
}

// Reply decodes the assembled message (ReplyJSON).
func (s *Stream) Reply() (convo.Reply, error) {
	raw, err := s.JSON()
	if err != nil {
		return convo.Reply{}, err
	}
	return ReplyJSON(raw)
}
