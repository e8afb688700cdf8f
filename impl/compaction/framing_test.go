package compaction_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/session"
)

// TestFramedCommit: COMP-11. By default the replacing user/message
// carries the summary between the seed system's preamble and tags, the
// record keeps it unframed, and a summary message that is not smaller
// than what it shadows (>=, by the same estimate) ends the compaction
// with the seed system's text and compaction.not_smaller, replacing
// nothing. WithoutFraming and WithoutSizeCheck turn each off.
func TestFramedCommit(t *testing.T) {
	long := strings.Repeat("x", 708)
	setup := func() (*session.Session, int64) {
		s := session.New()
		s.Append(context.Background(), event.TurnStartData{Turn: 1, Trigger: json.RawMessage(`{"kind":"message"}`)})
		q, _ := s.Append(context.Background(), event.UserMessageData{Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"` + long + `"}`)}, Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())
		return s, q.Seq
	}
	summary := func(n int) []json.RawMessage {
		return []json.RawMessage{json.RawMessage(`{"type":"text","text":"` + strings.Repeat("y", n) + `"}`)}
	}
	// The node: 4 + ceil(708/4) + 4 = 185 tokens. Framing: 98, plus
	// ceil(n/4) + 4 for the summary: n = 332 gives exactly 185.
	s, q := setup()
	op, err := compaction.Begin(context.Background(), s, q, q)
	if err != nil || op.TokenCount != 185 {
		t.Fatalf("begin: %v, %d tokens", err, op.TokenCount)
	}
	_, err = op.Commit(context.Background(), summary(332), compaction.Meta{Provider: "p", Model: "m"})
	end := s.Events()[s.Len()-1]
	if !errors.Is(err, event.CodeCompactionNotSmaller) || end.Type != event.TypeCompactEnd ||
		string(end.Data) != `{"turn":1,"error":"summary is not smaller than the shadowed content (185 estimated framed tokens >= 185)"}` {
		t.Fatalf("equal estimate: %v, %s %s", err, end.Type, end.Data)
	}
	if _, ok := s.Position(q); !ok {
		t.Fatal("a refused summary replaced the node")
	}
	// One character less is still 185 (ceil); 328 is one token less.
	op, err = compaction.Begin(context.Background(), s, q, q)
	if err != nil {
		t.Fatalf("the lock was not released: %v", err)
	}
	res, err := op.Commit(context.Background(), summary(328), compaction.Meta{Provider: "p", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	log := s.Events()
	var rec struct{ Summary []json.RawMessage }
	json.Unmarshal(log[res.SummarySeq].Data, &rec)
	msg, _ := message.FromEvent(&log[res.ReplaceSeq])
	if len(rec.Summary) != 1 || len(msg.Content) != 3 ||
		string(msg.Content[0]) != `{"type":"text","text":"`+compaction.CheckpointPreamble+`\n\n<compacted-summary>"}` ||
		string(msg.Content[1]) != string(summary(328)[0]) || string(msg.Content[2]) != `{"type":"text","text":"</compacted-summary>"}` {
		t.Fatalf("record %s, message %s", rec.Summary, msg.Content)
	}
	if got := message.EstimateTokens(msg); got != 184 {
		t.Fatalf("framed message: %d tokens, want 184", got)
	}
	// The opt-outs.
	for _, c := range []struct {
		name   string
		opts   []compaction.Option
		blocks int
		err    error
	}{
		{"unframed, checked: 4+4+84 < 185", []compaction.Option{compaction.WithoutFraming()}, 1, nil},
		{"framed, unchecked", []compaction.Option{compaction.WithoutSizeCheck()}, 3, nil},
	} {
		s, q := setup()
		op, _ := compaction.Begin(context.Background(), s, q, q)
		res, err := op.Commit(context.Background(), summary(332), compaction.Meta{Provider: "p", Model: "m"}, c.opts...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		msg, _ := message.FromEvent(&s.Events()[res.ReplaceSeq])
		if len(msg.Content) != c.blocks {
			t.Fatalf("%s: %d blocks", c.name, len(msg.Content))
		}
	}
	if compaction.Frame(nil) == nil || len(compaction.Frame(summary(1))) != 3 || len(compaction.CheckpointPreamble) != 300 {
		t.Fatal("Frame")
	}
}
