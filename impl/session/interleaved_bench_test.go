package session_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/session"
)

// pair times two ways of doing one thing in the same loop, one right after
// the other (a busy machine slows both alike), and reports each one's
// ns per operation and their ratio b/a: the figure to compare between
// commits, rather than either time alone.
func pair(b *testing.B, nameA, nameB string, a, c func(i int)) {
	b.ReportAllocs()
	var ta, tb time.Duration
	n := 0
	for b.Loop() {
		t0 := time.Now()
		a(n)
		t1 := time.Now()
		c(n)
		tb += time.Since(t1)
		ta += t1.Sub(t0)
		n++
	}
	b.ReportMetric(float64(ta.Nanoseconds())/float64(n), nameA+"-ns/op")
	b.ReportMetric(float64(tb.Nanoseconds())/float64(n), nameB+"-ns/op")
	b.ReportMetric(float64(tb)/float64(ta), nameB+"/"+nameA)
}

// BenchmarkStrictAppend: the cost of strict mode, interleaved with the
// same traffic without it: per operation, one turn (a prompt, a call, its
// tool/call and result, the turn's end) on a loose session, then the same
// turn on a strict one.
func BenchmarkStrictAppend(b *testing.B) {
	ctx := context.Background()
	loose, strict := session.New(), session.New(session.WithStrict())
	turnOf := func(s *session.Session) func(i int) {
		return func(i int) {
			n := int64(i + 1)
			id := "c" + strconv.Itoa(i)
			s.Append(ctx, event.TurnStartData{Turn: n, Trigger: json.RawMessage(`{"kind":"message"}`)})
			s.Append(ctx, event.UserMessageData{Content: event.Text("hi"), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())
			s.Append(ctx, event.StepStartData{Turn: n, Step: 1})
			s.Append(ctx, event.AssistantMessageData{Turn: n, Step: 1, Content: []json.RawMessage{json.RawMessage(`{"type":"tool-call","id":"` + id + `","name":"read","arguments":{"p":1}}`)}}, event.AppendIntent())
			c, _ := s.Append(ctx, event.ToolCallData{Turn: n, Step: 1, CallID: id, Name: "read", Arguments: `{"p":1}`})
			s.Append(ctx, event.ToolResultData{Turn: n, Step: 1, CallID: id, Content: event.Text("ok")}, event.AppendIntent(c.Seq))
			s.Append(ctx, event.StepEndData{Turn: n, Step: 1})
			if _, err := s.Append(ctx, event.TurnEndData{Turn: n, Reason: json.RawMessage(`{"kind":"completed"}`)}); err != nil {
				b.Fatal(err)
			}
		}
	}
	pair(b, "loose", "strict", turnOf(loose), turnOf(strict))
}

// BenchmarkTokens: the token count of 10k messages kept as the log grows
// (Tokens after an append), interleaved with a rescan that runs the meter
// over every message.
func BenchmarkTokens(b *testing.B) {
	ctx := context.Background()
	s := session.New()
	for range 10_000 {
		s.Append(ctx, event.UserMessageData{Content: event.Text("some words here, and a few more of them"), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent())
	}
	var sink int
	pair(b, "kept", "rescan", func(int) {
		s.Append(ctx, event.TodoWriteData{Todos: []json.RawMessage{}})
		sink += s.Tokens()
	}, func(int) {
		n := 0
		for _, m := range s.Messages().All() {
			n += message.EstimateTokens(m)
		}
		sink += n
	})
}
