package compaction_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/internal/traffic"
)

// sessionOf returns a session seeded with n events of realistic traffic
// (turns with tool calls and results, and the traffic's own compaction
// replaces), with a turn open for compact/* records.
func sessionOf(b *testing.B, n int) *session.Session {
	log, err := traffic.Log(n)
	if err != nil {
		b.Fatal(err)
	}
	s, err := session.Seed(log)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: json.RawMessage(`{"turn":999999,"trigger":{"kind":"message"}}`)}); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkBeginCommit: Begin and Commit of a compaction of k = 100 nodes
// in a session of 1e5 (and 1e3) events: k user messages are appended
// (untimed) and compacted. The cost depends on k, not on the session.
func BenchmarkBeginCommit(b *testing.B) {
	user := json.RawMessage(`{"content":[{"type":"text","text":"a question about the code"}],"source":{"kind":"user"}}`)
	summary := []json.RawMessage{json.RawMessage(`{"type":"text","text":"summary"}`)}
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("k=100/events=%d", n), func(b *testing.B) {
			s := sessionOf(b, n)
			compaction.BalancedAfter(s, s.Surface().At(0)) // the first query folds the seeded log
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				first, last := appendUsers(b, s, user, 100)
				b.StartTimer()
				op, err := compaction.Begin(context.Background(), s, first, last)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := op.Commit(context.Background(), summary, compaction.Meta{Provider: "p", Model: "m"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCompactPerNode: Begin and Commit of a compaction of k = 100
// user messages of 400 characters each (realistic prompts, which the
// token meter reads whole), in a session of 1e5 events; reported per
// folded node (ns/node), the figure issue 32 bounds at 2 µs.
func BenchmarkCompactPerNode(b *testing.B) {
	text := strings.Repeat("Please read the file and explain what the function does, line by line. ", 6)[:400]
	user := json.RawMessage(`{"content":[{"type":"text","text":"` + text + `"}],"source":{"kind":"user"}}`)
	summary := []json.RawMessage{json.RawMessage(`{"type":"text","text":"summary"}`)}
	s := sessionOf(b, 100_000)
	compaction.BalancedAfter(s, s.Surface().At(0))
	b.ReportAllocs()
	var took time.Duration
	for b.Loop() {
		first, last := appendUsers(b, s, user, 100)
		start := time.Now()
		op, err := compaction.Begin(context.Background(), s, first, last)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := op.Commit(context.Background(), summary, compaction.Meta{Provider: "p", Model: "m"}); err != nil {
			b.Fatal(err)
		}
		took += time.Since(start)
	}
	b.ReportMetric(float64(took.Nanoseconds())/float64(b.N)/100, "ns/node")
}

// BenchmarkPairingQuery: the balance of a cut after an append (the
// incremental case), and after a replace (the first query rebuilds from
// the surface; the next ones are O(1)).
func BenchmarkPairingQuery(b *testing.B) {
	user := json.RawMessage(`{"content":[],"source":{"kind":"user"}}`)
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("append+query/events=%d", n), func(b *testing.B) {
			s := sessionOf(b, n)
			compaction.BalancedAfter(s, s.Surface().At(0)) // the first query folds the seeded log
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				e, _ := s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: user}, event.Intent{Op: event.Append()})
				if ok, on := compaction.BalancedAfter(s, e.Seq); !ok || !on {
					b.Fatal("unbalanced")
				}
			}
		})
		b.Run(fmt.Sprintf("query/events=%d", n), func(b *testing.B) {
			s := sessionOf(b, n)
			head := s.Surface().At(0)
			compaction.BalancedBefore(s, head)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				compaction.BalancedBefore(s, head)
			}
		})
	}
}

// appendUsers appends k user messages with data user to s and returns the
// seqs of the first and the last.
func appendUsers(b *testing.B, s *session.Session, user json.RawMessage, k int) (first, last int64) {
	for j := 0; j < k; j++ {
		e, err := s.Append(context.Background(), event.Raw{Type: event.TypeUserMessage, Data: user}, event.Intent{Op: event.Append()})
		if err != nil {
			b.Fatal(err)
		}
		if j == 0 {
			first = e.Seq
		}
		last = e.Seq
	}
	return first, last
}
