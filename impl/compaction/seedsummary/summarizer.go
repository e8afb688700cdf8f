package seedsummary

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"unicode"

	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
)

// SystemPrompt is the system prompt of the seed system's summarisation
// request (compact-basic at b736889ac7), byte for byte.
const SystemPrompt = "You are a compaction engine for an AI coding assistant. Condense the conversation transcript into a structured checkpoint that lets another model resume the work with no loss of essential context.\n\n" +
	"Output EXACTLY the Markdown structure below: keep every section, in order. Use terse bullets, not prose paragraphs. Write \"(none)\" for an empty section — never drop a section.\n\n" +
	"## Primary Request and Intent\n- [the user's original and evolving goals; quote verbatim where the exact wording matters]\n\n" +
	"## Key Technical Concepts\n- [technologies, frameworks, patterns, and conventions in play]\n\n" +
	"## Files and Code\n- [exact path: why it matters, key changes or snippets]\n\n" +
	"## Errors and Fixes\n- [error: how it was resolved, plus any related user feedback]\n\n" +
	"## Pending Tasks\n- [explicitly requested work not yet completed]\n\n" +
	"## Current Work\n- [precisely what was in progress at this checkpoint]\n\n" +
	"## Next Step\n- [the single next action, directly in line with the most recent request, or \"(none)\"]\n\n" +
	"## Critical Context\n- [decisions and their rationale, constraints, user preferences, open questions, data needed to continue]\n\n" +
	"Rules:\n" +
	"- Preserve exact file paths, commands, error strings, identifiers, and function signatures.\n" +
	"- Capture user feedback and explicit instructions faithfully, especially corrections.\n" +
	"- Do NOT mention this summarization process or that the context was compacted.\n" +
	"- If the transcript already contains a <compacted-summary> block, it is a PRIOR checkpoint. Do not copy it forward verbatim: preserve still-true facts, drop stale ones, and merge newer information into a single consolidated summary under the same structure."

// DefaultMaxTokens is the seed system's default generation cap of the
// summarisation call.
const DefaultMaxTokens = 8192

// Request is what the summariser asks of the model: the seed system's
// generate options.
type Request struct {
	// Provider and Model name the model asked (Config, or the session's
	// last request header).
	Provider, Model string
	// System is SystemPrompt.
	System string
	// Messages is one user message with one text block:
	// "Summarize this conversation history:\n\n" + transcript + "\n\nSummary:".
	Messages []message.Message
	// MaxTokens is the generation cap.
	MaxTokens int64
	// SessionID is Config.SessionID.
	SessionID string
}

// Model streams the model's reply to a request: it calls yield with each
// chunk, in order, and returns when the stream ends. An error it returns
// (or one yield returns, which it should return) fails the summary with
// that error's text, as a thrown stream error fails the seed system's.
type Model func(ctx context.Context, req Request, yield func(Chunk) error) error

// Config configures the summariser.
type Config struct {
	// Provider and Model name the model to ask. Without a Provider, the
	// provider and model of the config of the session's last
	// request/header (data.header.config) are asked, then DefaultProvider
	// and DefaultModel; with none of them the summary fails, as the seed
	// system's does (RequestFor).
	Provider, Model string
	// DefaultProvider and DefaultModel are the agent's own target, the
	// last resort (the seed system's agent options).
	DefaultProvider, DefaultModel string
	// MaxTokens is the generation cap (0: DefaultMaxTokens).
	MaxTokens int64
	// SessionID is passed in the request.
	SessionID string
}

// The seed system's error texts (its end event records them).
const (
	errNoTarget   = "no provider/model available for summarization: set both BasicCompactConfig summarization fields, route one request, or set both AgentOptions fields"
	errAborted    = "summarization stream aborted"
	errMaxTokens  = "summarization truncated at the token cap (incomplete checkpoint)"
	errNoText     = "summarization produced no text summary content"
	userPrefix    = "Summarize this conversation history:\n\n"
	userSuffix    = "\n\nSummary:"
	textBlockType = "text"
)

// Error is a summary failure the seed system reports with a code besides
// its text: ABORTED, MAX_TOKENS, or the code of an error finish.
type Error struct {
	Message string
	Code    string
}

func (e *Error) Error() string { return e.Message }

// Summarizer returns the seed system's default summariser over model, for
// compaction.Compact and its kin. Its summary is the text blocks of the
// reply; its Meta names the model asked and the generation cap.
func Summarizer(model Model, cfg Config) compaction.Summarizer {
	return func(ctx context.Context, op *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
		events := op.Session().Events()
		return Summarize(ctx, model, cfg, events, Transcript(events, op.Shadowed))
	}
}

// Summarize runs the seed system's summarisation of a transcript: the
// request (RequestFor), the streamed reply, and the checks of the reply.
// events is the log, read for its last request/header when cfg names no
// model.
func Summarize(ctx context.Context, model Model, cfg Config, events []event.Event, transcript string) ([]json.RawMessage, compaction.Meta, error) {
	req, err := RequestFor(cfg, events, transcript)
	if err != nil {
		return nil, compaction.Meta{}, err
	}
	var a Assembler
	err = model(ctx, req, func(c Chunk) error { return a.Push(c) })
	if err != nil {
		return nil, compaction.Meta{}, err
	}
	if err := finishError(a.Finish()); err != nil {
		return nil, compaction.Meta{}, err
	}
	blocks, err := a.Blocks()
	if err != nil {
		return nil, compaction.Meta{}, err
	}
	var summary []json.RawMessage
	some := false
	for _, b := range blocks {
		var blk struct {
			Type json.RawMessage `json:"type"`
			Text json.RawMessage `json:"text"`
		}
		_ = json.Unmarshal(b, &blk)
		if len(blk.Type) == 0 || blk.Type[0] != '"' || jsString(blk.Type) != textBlockType {
			continue
		}
		summary = append(summary, b)
		if some {
			continue // some() stops at the first block with text
		}
		text, err := textOf(blk.Text)
		if err != nil {
			return nil, compaction.Meta{}, err
		}
		some = strings.TrimFunc(text, jsSpace) != ""
	}
	if !some {
		return nil, compaction.Meta{}, errors.New(errNoText)
	}
	max := req.MaxTokens
	return summary, compaction.Meta{Provider: req.Provider, Model: req.Model, MaxTokens: &max}, nil
}

// RequestFor is the request the summariser sends for a transcript. The
// model asked is, as the seed system resolves it: Config's, when it names
// a provider (its model then as given, even empty); else the config of the
// log's last request/header, when it has one (its provider and model as
// they are there); else Config's defaults, when both are named; else none,
// and the summary fails.
func RequestFor(cfg Config, events []event.Event, transcript string) (Request, error) {
	provider, model := cfg.Provider, cfg.Model
	if provider == "" {
		var ok bool
		if provider, model, ok = lastHeaderTarget(events); !ok {
			provider, model = cfg.DefaultProvider, cfg.DefaultModel
			if provider == "" || model == "" {
				return Request{}, errors.New(errNoTarget)
			}
		}
	}
	max := cfg.MaxTokens
	if max == 0 {
		max = DefaultMaxTokens
	}
	user := json.RawMessage(`{"type":"text","text":` + message.QuoteJS(userPrefix+transcript+userSuffix) + `}`)
	return Request{
		Provider: provider, Model: model, System: SystemPrompt,
		Messages:  []message.Message{{Role: message.RoleUser, Content: []json.RawMessage{user}}},
		MaxTokens: max, SessionID: cfg.SessionID,
	}, nil
}

// lastHeaderTarget is the provider and model of the config of the log's
// last request/header (strings, or ""), and whether it has a config.
func lastHeaderTarget(events []event.Event) (string, string, bool) {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type != event.TypeRequestHeader {
			continue
		}
		var d struct {
			Header struct {
				Config map[string]any `json:"config"`
			} `json:"header"`
		}
		if json.Unmarshal(events[i].Data, &d) != nil || d.Header.Config == nil {
			return "", "", false
		}
		p, _ := d.Header.Config["provider"].(string)
		m, _ := d.Header.Config["model"].(string)
		return p, m, true
	}
	return "", "", false
}

// finishError is the seed system's failure for a finish reason, or nil.
func finishError(reason json.RawMessage) error {
	var f struct {
		Kind    json.RawMessage `json:"kind"`
		Message json.RawMessage `json:"message"`
		Code    json.RawMessage `json:"code"`
	}
	_ = json.Unmarshal(reason, &f)
	switch jsString(f.Kind) {
	case "error":
		e := &Error{}
		if len(f.Message) > 0 {
			e.Message = jsString(f.Message)
		}
		if len(f.Code) > 0 {
			e.Code = jsString(f.Code)
		}
		return e
	case "aborted":
		return &Error{Message: errAborted, Code: "ABORTED"}
	case "max-tokens":
		return &Error{Message: errMaxTokens, Code: "MAX_TOKENS"}
	}
	return nil
}

// textOf is a text block's text, or the error JavaScript throws reading
// trim() of what is there instead.
func textOf(v json.RawMessage) (string, error) {
	switch {
	case len(v) == 0:
		return "", errors.New("Cannot read properties of undefined (reading 'trim')")
	case string(v) == "null":
		return "", errors.New("Cannot read properties of null (reading 'trim')")
	case v[0] != '"':
		return "", errors.New("block.text.trim is not a function")
	}
	return jsString(v), nil
}

// jsSpace is JavaScript's white space and line terminators (what trim()
// removes).
func jsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return unicode.Is(unicode.Zs, r) // U+2000 to U+200A among them
}
