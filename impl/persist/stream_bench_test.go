package persist

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

// BenchmarkStreamedStep: one turn of durable streaming, 500 chunks then
// the assistant message and the turn's end, under each sync policy, for
// the file stores. SyncMessages makes every message durable at its append
// and should cost close to SyncOnTurnEnd (issue 18: within 2x), far below
// SyncEveryAppend.
func BenchmarkStreamedStep(b *testing.B) {
	type open func(b *testing.B, dir string, p SyncPolicy) Store
	stores := []struct {
		name string
		open open
	}{
		{"jsonl", func(b *testing.B, dir string, p SyncPolicy) Store {
			st, err := OpenJSONL(context.Background(), filepath.Join(dir, "s.jsonl"), hdr("s"), WithSync(p))
			if err != nil {
				b.Fatal(err)
			}
			return st
		}},
	}
	if SQLiteAvailable {
		stores = append(stores, struct {
			name string
			open open
		}{"sqlite", func(b *testing.B, dir string, p SyncPolicy) Store {
			st, err := OpenSQLite(context.Background(), filepath.Join(dir, "s.db"), hdr("s"), WithSQLiteSync(p))
			if err != nil {
				b.Fatal(err)
			}
			return st
		}})
	}
	for _, st := range stores {
		for _, p := range []SyncPolicy{SyncOnTurnEnd, SyncMessages, SyncEveryAppend} {
			b.Run(st.name+"/"+p.String(), func(b *testing.B) {
				b.ReportAllocs()
				s, _, err := Resume(context.Background(), st.open(b, b.TempDir(), p), clock())
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close(context.Background())
				turn := 0
				for b.Loop() {
					turn++
					tn := fmt.Sprint(turn)
					s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: raw(`{"turn":` + tn + `,"trigger":{"kind":"message"}}`)})
					for range 500 {
						if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeAssistantChunk, Data: raw(`{"turn":` + tn + `,"step":1,"chunk":{"type":"text-delta","text":"token "}}`)}); err != nil {
							b.Fatal(err)
						}
					}
					s.Append(context.Background(), event.Raw{Type: event.TypeAssistantMessage, Data: raw(`{"turn":` + tn + `,"step":1,"content":[{"type":"text","text":"done"}]}`)}, event.Intent{Op: event.Append()})
					if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTurnEnd, Data: raw(`{"turn":` + tn + `,"reason":{"kind":"completed"}}`)}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkStreamedBatch: the same turn with its step (500 chunks and
// the assistant message) appended as one AppendBatch: one sync for the
// file stores under SyncEveryAppend, one transaction for Postgres, every
// event durable when the batch returns (STORE-17). "appends" is the same
// step one Append at a time, for the ratio.
func BenchmarkStreamedBatch(b *testing.B) {
	type open func(b *testing.B, dir string) Store
	stores := []struct {
		name string
		open open
	}{
		{"jsonl", func(b *testing.B, dir string) Store {
			st, err := OpenJSONL(context.Background(), filepath.Join(dir, "s.jsonl"), hdr("s"))
			if err != nil {
				b.Fatal(err)
			}
			return st
		}},
	}
	if SQLiteAvailable {
		stores = append(stores, struct {
			name string
			open open
		}{"sqlite", func(b *testing.B, dir string) Store {
			st, err := OpenSQLite(context.Background(), filepath.Join(dir, "s.db"), hdr("s"))
			if err != nil {
				b.Fatal(err)
			}
			return st
		}})
	}
	if url := os.Getenv("SURFACE_PG_URL"); url != "" {
		stores = append(stores, struct {
			name string
			open open
		}{"postgres", func(b *testing.B, dir string) Store {
			st, err := OpenPostgres(context.Background(), url, hdr(filepath.Base(dir)), WithPostgresSchema("bench_batch"))
			if err != nil {
				b.Fatal(err)
			}
			return st
		}})
	}
	for _, st := range stores {
		for _, batch := range []bool{false, true} {
			name := st.name + "/appends"
			if batch {
				name = st.name + "/batch"
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				s, _, err := Resume(context.Background(), st.open(b, b.TempDir()), clock())
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close(context.Background())
				turn := 0
				for b.Loop() {
					turn++
					tn := fmt.Sprint(turn)
					s.Append(context.Background(), event.Raw{Type: event.TypeTurnStart, Data: raw(`{"turn":` + tn + `,"trigger":{"kind":"message"}}`)})
					chunk := raw(`{"turn":` + tn + `,"step":1,"chunk":{"type":"text-delta","text":"token "}}`)
					msg := raw(`{"turn":` + tn + `,"step":1,"content":[{"type":"text","text":"done"}]}`)
					if batch {
						_, err := s.AppendBatch(context.Background(), func(session.Tx) ([]session.Draft, error) {
							drafts := make([]session.Draft, 0, 501)
							for range 500 {
								drafts = append(drafts, session.Draft{Type: event.TypeAssistantChunk, Data: chunk})
							}
							return append(drafts, session.Draft{Type: event.TypeAssistantMessage, Data: msg, Intent: &event.Intent{Op: event.Append()}}), nil
						})
						if err != nil {
							b.Fatal(err)
						}
					} else {
						for range 500 {
							if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeAssistantChunk, Data: chunk}); err != nil {
								b.Fatal(err)
							}
						}
						s.Append(context.Background(), event.Raw{Type: event.TypeAssistantMessage, Data: msg}, event.Intent{Op: event.Append()})
					}
					if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTurnEnd, Data: raw(`{"turn":` + tn + `,"reason":{"kind":"completed"}}`)}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkGroupCommit: a streamed turn of 500 chunks, appended one by one,
// committed in groups (SyncGroup, the default window) beside the same
// turn on a store that never syncs (SyncNever), interleaved: per
// operation, one turn on each. Group commit syncs the turn's end (and any
// window that fills or times out): the ratio is what durability costs a
// streamed turn. Issue 32 asks for at most 2x on JSONL and SQLite.
func BenchmarkGroupCommit(b *testing.B) {
	ctx := context.Background()
	type opener func(dir string, group bool) (Store, error)
	stores := []struct {
		name string
		open opener
	}{{"jsonl", func(dir string, group bool) (Store, error) {
		opt := WithSync(SyncNever)
		if group {
			opt = WithSyncWindow(0, 0)
		}
		return OpenJSONL(ctx, filepath.Join(dir, "s.jsonl"), hdr("s"), opt)
	}}}
	if SQLiteAvailable {
		stores = append(stores, struct {
			name string
			open opener
		}{"sqlite", func(dir string, group bool) (Store, error) {
			opt := WithSQLiteSync(SyncNever)
			if group {
				opt = WithSQLiteSyncWindow(0, 0)
			}
			return OpenSQLite(ctx, filepath.Join(dir, "s.db"), hdr("s"), opt)
		}})
	}
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			b.ReportAllocs()
			sessions := make([]*Session, 2)
			for i, group := range []bool{false, true} {
				store, err := st.open(b.TempDir(), group)
				if err != nil {
					b.Fatal(err)
				}
				s, _, err := Resume(ctx, store, clock())
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close(ctx)
				sessions[i] = s
			}
			turnOn := func(s *Session, turn int) {
				tn := fmt.Sprint(turn)
				s.Append(ctx, event.Raw{Type: event.TypeTurnStart, Data: raw(`{"turn":` + tn + `,"trigger":{"kind":"message"}}`)})
				for range 500 {
					if _, err := s.Append(ctx, event.Raw{Type: event.TypeAssistantChunk, Data: raw(`{"turn":` + tn + `,"step":1,"chunk":{"type":"text-delta","text":"token "}}`)}); err != nil {
						b.Fatal(err)
					}
				}
				s.Append(ctx, event.Raw{Type: event.TypeAssistantMessage, Data: raw(`{"turn":` + tn + `,"step":1,"content":[{"type":"text","text":"done"}]}`)}, event.AppendIntent())
				if _, err := s.Append(ctx, event.Raw{Type: event.TypeTurnEnd, Data: raw(`{"turn":` + tn + `,"reason":{"kind":"completed"}}`)}); err != nil {
					b.Fatal(err)
				}
			}
			var never, group time.Duration
			turn := 0
			for b.Loop() {
				turn++
				t0 := time.Now()
				turnOn(sessions[0], turn)
				t1 := time.Now()
				turnOn(sessions[1], turn)
				group += time.Since(t1)
				never += t1.Sub(t0)
			}
			b.ReportMetric(float64(never.Microseconds())/float64(turn), "never-µs/turn")
			b.ReportMetric(float64(group.Microseconds())/float64(turn), "group-µs/turn")
			b.ReportMetric(float64(group)/float64(never), "group/never")
		})
	}
}
