// Package quickstart is the README's quick start: one turn of an agent on
// Claude, stored in a JSONL file, in strict mode. Its test runs it twice
// on one file and checks the log passes strict mode and every provider's
// validator.
package quickstart

import (
	"context"
	"encoding/json"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/providers/convo"
	"github.com/surfacelog/surface/impl/providers/surfaceanthropic"
	"github.com/surfacelog/surface/impl/session"
)

// Model is what Turn asks for a reply: &client.Messages of an
// anthropic.Client.
type Model interface {
	New(ctx context.Context, params anthropic.MessageNewParams, opts ...option.RequestOption) (*anthropic.Message, error)
}

// Turn runs one turn: the prompt, then a model call per step until the
// model answers without calling a tool; run runs a tool and says whether
// it failed.
func Turn(ctx context.Context, path, prompt string, model Model, tools []convo.Tool, run func(name, args string) (string, bool)) (err error) {
	st, err := persist.OpenJSONL(ctx, path, persist.Header{ID: "demo"})
	if err != nil {
		return err
	}
	s, _, err := persist.Resume(ctx, st, session.WithStrict()) // checks the log, closes a crashed turn
	if err != nil {
		st.Close(ctx)
		return err
	}
	defer func() {
		if cerr := s.Close(ctx); err == nil {
			err = cerr
		}
	}()
	declared, err := surfaceanthropic.Tools(tools)
	if err != nil {
		return err
	}
	n := s.NextTurn()
	if _, err := s.Append(ctx, event.TurnStartData{Turn: n, Trigger: json.RawMessage(`{"kind":"message"}`)}); err != nil {
		return err
	}
	if _, err := s.Append(ctx, event.UserMessageData{Content: event.Text(prompt), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent()); err != nil {
		return err
	}
	for step := int64(1); ; step++ {
		if _, err := s.Append(ctx, event.StepStartData{Turn: n, Step: step}); err != nil {
			return err
		}
		msgs, err := surfaceanthropic.Messages(s.Messages())
		if err != nil {
			return err
		}
		resp, err := model.New(ctx, anthropic.MessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 4096, Messages: msgs, Tools: declared})
		if err != nil {
			return err
		}
		reply, err := surfaceanthropic.Reply(resp)
		if err != nil {
			return err
		}
		if _, err := reply.Append(ctx, s.Session, n, step); err != nil {
			return err
		}
		for _, c := range s.PendingCalls() {
			out, failed := run(c.Name, c.ArgumentsText())
			result := event.ToolResultData{Turn: n, Step: step, CallID: c.ID, Content: event.Text(out), IsError: failed}
			if _, err := s.Append(ctx, result, event.AppendIntent(c.CallSeq)); err != nil {
				return err
			}
		}
		if _, err := s.Append(ctx, event.StepEndData{Turn: n, Step: step}); err != nil {
			return err
		}
		if len(reply.Calls()) == 0 {
			break
		}
	}
	_, err = s.Append(ctx, event.TurnEndData{Turn: n, Reason: json.RawMessage(`{"kind":"completed"}`)})
	return err
}
