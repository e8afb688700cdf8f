package surfaceanthropic_test

import (
	"encoding/json"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/providers/convo"
	"github.com/surfacelog/surface/impl/providers/internal/gen"
	"github.com/surfacelog/surface/impl/providers/surfaceanthropic"
)

// TestBodyKept: over random agent sessions and random tools, the request
// body (MessageNewParams, and BetaMessageNewParams from BetaMessages and
// BetaTools) decoded with the SDK's own request type and encoded again is
// the same JSON value; every tool is declared with its name, description
// and schema as written.
func TestBodyKept(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := gen.Session(t)
		tools := gen.Tools(t)
		msgs, err := surfaceanthropic.Messages(s.Messages())
		if err != nil {
			t.Fatal(err)
		}
		tp, err := surfaceanthropic.Tools(tools)
		if err != nil {
			t.Fatal(err)
		}
		body := gen.JSON(anthropic.MessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 1024, Messages: msgs, Tools: tp})
		gen.CheckBodyKept(t, body, func(b []byte) (any, error) {
			var p anthropic.MessageNewParams
			return p, json.Unmarshal(b, &p)
		})
		checkTools(t, body, tools)

		beta, err := surfaceanthropic.BetaMessages(s.Messages())
		if err != nil {
			t.Fatal(err)
		}
		btp, err := surfaceanthropic.BetaTools(tools)
		if err != nil {
			t.Fatal(err)
		}
		body = gen.JSON(anthropic.BetaMessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 1024, Messages: beta, Tools: btp})
		gen.CheckBodyKept(t, body, func(b []byte) (any, error) {
			var p anthropic.BetaMessageNewParams
			return p, json.Unmarshal(b, &p)
		})
		checkTools(t, body, tools)
	})
}

func checkTools(t *rapid.T, body []byte, tools []convo.Tool) {
	var b struct{ Tools []json.RawMessage }
	_ = json.Unmarshal(body, &b)
	gen.CheckTools(t, tools, b.Tools, func(raw json.RawMessage) (string, string, json.RawMessage) {
		var d struct {
			Name, Description string
			InputSchema       json.RawMessage `json:"input_schema"`
		}
		_ = json.Unmarshal(raw, &d)
		return d.Name, d.Description, d.InputSchema
	})
}
