package seedsummary_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/compaction/seedsummary"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/session"
)

type streamCase struct {
	Name      string            `json:"name"`
	Provider  string            `json:"provider"`
	Model     string            `json:"model"`
	MaxTokens int64             `json:"maxTokens"`
	SessionID string            `json:"sessionId"`
	Header    json.RawMessage   `json:"header"`
	Agent     map[string]string `json:"agent"`
	Text      *string           `json:"text"`
	Chunks    []json.RawMessage `json:"chunks"`
	Want      struct {
		Request *struct {
			Provider  string          `json:"provider"`
			Model     string          `json:"model"`
			Messages  json.RawMessage `json:"messages"`
			System    string          `json:"system"`
			MaxTokens int64           `json:"maxTokens"`
			SessionID string          `json:"sessionId"`
		} `json:"request"`
		Result *struct {
			Summary   []json.RawMessage `json:"summary"`
			Provider  string            `json:"provider"`
			Model     string            `json:"model"`
			MaxTokens int64             `json:"maxTokens"`
		} `json:"result"`
		Error *string `json:"error"`
		Code  string  `json:"code"`
	} `json:"want"`
}

// TestSeedStreams replays streams recorded through the seed system's own
// summariser (testdata/seed_stream.json): the request, the summary blocks
// byte for byte (as JSON.stringify writes them), the target and cap, and
// every failure's text and code are the seed system's.
func TestSeedStreams(t *testing.T) {
	b, err := os.ReadFile("testdata/seed_stream.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []streamCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) < 25 {
		t.Fatalf("%d cases", len(doc.Cases))
	}
	for _, c := range doc.Cases {
		t.Run(c.Name, func(t *testing.T) {
			cfg := seedsummary.Config{Provider: c.Provider, Model: c.Model, MaxTokens: c.MaxTokens, SessionID: c.SessionID,
				DefaultProvider: c.Agent["provider"], DefaultModel: c.Agent["model"]}
			if cfg.SessionID == "" {
				cfg.SessionID = "sid"
			}
			var events []event.Event
			if c.Header != nil {
				events = append(events, event.Event{Type: event.TypeRequestHeader, Data: json.RawMessage(`{"header":` + string(c.Header) + `}`)})
			}
			text := "T"
			if c.Text != nil {
				text = *c.Text
			}
			var sent *seedsummary.Request
			model := func(ctx context.Context, req seedsummary.Request, yield func(seedsummary.Chunk) error) error {
				sent = &req
				for _, ch := range c.Chunks {
					var th struct {
						Throw *string `json:"__throw"`
					}
					if json.Unmarshal(ch, &th) == nil && th.Throw != nil {
						return errors.New(*th.Throw)
					}
					if err := yield(ch); err != nil {
						return err
					}
				}
				return nil
			}
			summary, meta, err := seedsummary.Summarize(context.Background(), model, cfg, events, text)
			w := c.Want
			switch {
			case w.Request == nil && sent != nil:
				t.Fatalf("a request was sent: %+v", sent)
			case w.Request != nil:
				if sent == nil {
					t.Fatal("no request sent")
				}
				type wire struct {
					Role    string            `json:"role"`
					Content []json.RawMessage `json:"content"`
				}
				var ws []wire
				for _, m := range sent.Messages {
					ws = append(ws, wire{string(m.Role), m.Content})
				}
				msgs, _ := json.Marshal(ws)
				var wantMsgs, gotMsgs any
				_ = json.Unmarshal(w.Request.Messages, &wantMsgs)
				_ = json.Unmarshal(msgs, &gotMsgs)
				if d := cmp.Diff(wantMsgs, gotMsgs); d != "" {
					t.Errorf("request messages (-seed +ours):\n%s", d)
				}
				if sent.Provider != w.Request.Provider || sent.Model != w.Request.Model || sent.System != w.Request.System ||
					sent.MaxTokens != w.Request.MaxTokens || sent.SessionID != w.Request.SessionID {
					t.Errorf("request %q %q max %d session %q, the seed's %q %q max %d session %q (system equal: %v)", sent.Provider, sent.Model, sent.MaxTokens, sent.SessionID,
						w.Request.Provider, w.Request.Model, w.Request.MaxTokens, w.Request.SessionID, sent.System == w.Request.System)
				}
			}
			if w.Error != nil {
				var se *seedsummary.Error
				code := ""
				if errors.As(err, &se) {
					code = se.Code
				}
				if err == nil || err.Error() != *w.Error || code != w.Code {
					t.Fatalf("error %v (code %q), the seed's %q (code %q)", err, code, *w.Error, w.Code)
				}
				return
			}
			if err != nil {
				t.Fatalf("error %v, the seed succeeded", err)
			}
			if len(summary) != len(w.Result.Summary) {
				t.Fatalf("%d blocks, the seed's %d", len(summary), len(w.Result.Summary))
			}
			for i := range summary {
				// The recorded JSON was re-written by the recorder: compare
				// ours as JSON.stringify writes it with the seed's value,
				// and ours byte for byte with a re-stringified seed block.
				if want := seedsummary.Stringify(w.Result.Summary[i]); string(summary[i]) != want {
					t.Errorf("block %d: %s, the seed's %s", i, summary[i], want)
				}
			}
			if meta.Provider != w.Result.Provider || meta.Model != w.Result.Model || meta.MaxTokens == nil || *meta.MaxTokens != w.Result.MaxTokens {
				t.Errorf("meta %+v, the seed's %+v", meta, w.Result)
			}
		})
	}
}

// TestSummarizerFailureRecorded: a reply that stopped at its cap, was
// aborted, errored or held no text aborts the compaction; its end event
// records the seed system's text, and the error says it once with its
// code reachable by errors.As.
func TestSummarizerFailureRecorded(t *testing.T) {
	for _, c := range []struct{ finish, text, code string }{
		{`{"kind":"max-tokens"}`, "summarization truncated at the token cap (incomplete checkpoint)", "MAX_TOKENS"},
		{`{"kind":"aborted"}`, "summarization stream aborted", "ABORTED"},
		{`{"kind":"error","message":"overloaded","code":"529"}`, "overloaded", "529"},
		{`{"kind":"stop"}`, "summarization produced no text summary content", ""},
	} {
		s, _ := session.SeedJSON([]json.RawMessage{
			json.RawMessage(`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"trigger":{"kind":"message"}}}`),
			json.RawMessage(`{"type":"user/message","seq":1,"time":1,"data":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}`),
		})
		model := func(ctx context.Context, req seedsummary.Request, yield func(seedsummary.Chunk) error) error {
			if c.code != "" {
				_ = yield(seedsummary.Chunk(`{"type":"text-delta","index":0,"text":"partial"}`))
			}
			return yield(seedsummary.Chunk(`{"type":"finish","reason":` + c.finish + `}`))
		}
		_, err := compaction.Compact(context.Background(), s, 1, 1, seedsummary.Summarizer(model, seedsummary.Config{Provider: "p", Model: "m"}))
		var se *seedsummary.Error
		if err == nil || strings.Count(err.Error(), c.text) != 1 || c.code != "" && (!errors.As(err, &se) || se.Code != c.code) {
			t.Fatalf("%s: %v", c.finish, err)
		}
		end := s.Events()[s.Len()-1]
		if end.Type != event.TypeCompactEnd || string(end.Data) != `{"turn":1,"error":`+message.QuoteJS(c.text)+`}` {
			t.Fatalf("%s: the end event %s %s", c.finish, end.Type, end.Data)
		}
	}
}
