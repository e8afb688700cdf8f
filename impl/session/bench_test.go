package session_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/internal/traffic"
	"github.com/surfacelog/surface/model"
)

// Benchmarks of the delta design (SURF-26) against the model, side by
// side in one run, at session sizes of 1e3 to 1e6 events of realistic
// traffic (chunks, messages, tool calls and results, a compaction replace
// every 3000 events). cmd/benchreport turns the output into a table and a
// plot. Run: go test ./impl/session -run '^$' -bench . -benchmem

var sizes = []int{1_000, 10_000, 100_000, 1_000_000}

var (
	logsMu sync.Mutex
	logs   = map[int][]event.Event{}
)

// logOf returns a valid, balanced log of about n events of traffic.
func logOf(b *testing.B, n int) []event.Event {
	logsMu.Lock()
	defer logsMu.Unlock()
	if l, ok := logs[n]; ok {
		return l
	}
	s := session.New()
	if err := traffic.New(s).Append(n); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Repair(); err != nil {
		b.Fatal(err)
	}
	logs[n] = s.Events()
	return logs[n]
}

var (
	sidesMu sync.Mutex
	sides   = map[string]any{}
)

// side returns a session of the given kind seeded with the log of n
// events, built once per process (benchmark functions run several times).
func side(b *testing.B, kind string, n int) (traffic.Session, func() int) {
	sidesMu.Lock()
	defer sidesMu.Unlock()
	key := fmt.Sprint(kind, n)
	if s, ok := sides[key]; ok {
		return sideFuncs(s)
	}
	var s any
	var err error
	if kind == "impl" {
		s, err = session.Seed(logOf(b, n))
	} else {
		s, err = model.SeedSession(logOf(b, n), func() int64 { return 0 })
	}
	if err != nil {
		b.Fatal(err)
	}
	sides[key] = s
	return sideFuncs(s)
}

func sideFuncs(s any) (traffic.Session, func() int) {
	switch s := s.(type) {
	case *session.Session:
		return s, func() int { return len(s.Messages()) }
	case *model.Session:
		return s, func() int { return len(s.Messages()) }
	}
	panic("unknown side")
}

// BenchmarkAppendDerive: append one event of traffic, then derive the
// messages, as an agent loop does before each model call.
func BenchmarkAppendDerive(b *testing.B) {
	for _, kind := range []string{"impl", "model"} {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/%d", kind, n), func(b *testing.B) {
				s, derive := side(b, kind, n)
				g := traffic.New(s)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := g.Next(); err != nil {
						b.Fatal(err)
					}
					derive()
				}
			})
		}
	}
}

// BenchmarkDerive: derive the messages with no new events.
func BenchmarkDerive(b *testing.B) {
	for _, kind := range []string{"impl", "model"} {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/%d", kind, n), func(b *testing.B) {
				_, derive := side(b, kind, n)
				derive()
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					derive()
				}
			})
		}
	}
}

// BenchmarkReplace: replace a range of k surface nodes by one node whose
// sources cover them. The k nodes are appended (untimed) before each
// replace; only the replace and the derive after it are timed.
func BenchmarkReplace(b *testing.B) {
	user := []byte(`{"content":[{"type":"text","text":"x"}],"source":{"kind":"user"}}`)
	for _, kind := range []string{"impl", "model"} {
		for _, n := range sizes {
			for _, k := range []int{1, 100, 10_000} {
				if kind == "model" && (n > 100_000 || k > 100) {
					continue // minutes per operation; the shape is clear from the smaller ones
				}
				b.Run(fmt.Sprintf("%s/%d/k=%d", kind, n, k), func(b *testing.B) {
					s, derive := side(b, kind, n)
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						b.StopTimer()
						var first, last int64
						sources := make([]int64, 0, k)
						for j := 0; j < k; j++ {
							e, err := s.Append(event.TypeUserMessage, user, &event.Intent{Op: event.Append()})
							if err != nil {
								b.Fatal(err)
							}
							if j == 0 {
								first = e.Seq
							}
							last = e.Seq
							sources = append(sources, e.Seq)
						}
						derive()
						b.StartTimer()
						if _, err := s.Append(event.TypeContextMessage, []byte(`{"content":[],"source":{"kind":"prune"}}`), &event.Intent{Op: event.Replace(first, last), Sources: sources}); err != nil {
							b.Fatal(err)
						}
						derive()
					}
				})
			}
		}
	}
}

// BenchmarkSeed: build a session from a stored log (resume), every rule
// checked, then derive its messages.
func BenchmarkSeed(b *testing.B) {
	for _, kind := range []string{"impl", "model"} {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/%d", kind, n), func(b *testing.B) {
				log := logOf(b, n)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if kind == "impl" {
						s, err := session.Seed(log)
						if err != nil {
							b.Fatal(err)
						}
						s.Messages()
					} else {
						s, err := model.SeedSession(log, nil)
						if err != nil {
							b.Fatal(err)
						}
						s.Messages()
					}
				}
			})
		}
	}
}

// BenchmarkFork: fork at the last turn/end, then derive the child's
// messages.
func BenchmarkFork(b *testing.B) {
	for _, kind := range []string{"impl", "model"} {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/%d", kind, n), func(b *testing.B) {
				log := logOf(b, n)
				boundary := int64(len(log) - 1) // logOf ends on a turn/end
				var fork func() (func() int, error)
				if kind == "impl" {
					s, _ := session.Seed(log)
					fork = func() (func() int, error) {
						c, err := s.Fork(boundary)
						if err != nil {
							return nil, err
						}
						return func() int { return len(c.Messages()) }, nil
					}
				} else {
					s, _ := model.SeedSession(log, nil)
					fork = func() (func() int, error) {
						c, err := s.Fork(boundary)
						if err != nil {
							return nil, err
						}
						return func() int { return len(c.Messages()) }, nil
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					d, err := fork()
					if err != nil {
						b.Fatal(err)
					}
					d()
				}
			})
		}
	}
}
