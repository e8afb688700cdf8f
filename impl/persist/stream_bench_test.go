package persist

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/surfacelog/surface/impl/event"
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
			st, err := OpenJSONL(filepath.Join(dir, "s.jsonl"), hdr("s"), WithSync(p))
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
			st, err := OpenSQLite(filepath.Join(dir, "s.db"), hdr("s"), WithSQLiteSync(p))
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
				s, _, err := Resume(st.open(b, b.TempDir(), p), clock())
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				turn := 0
				for b.Loop() {
					turn++
					tn := fmt.Sprint(turn)
					s.Append(event.TypeTurnStart, raw(`{"turn":`+tn+`,"trigger":{"kind":"message"}}`), nil)
					for range 500 {
						if _, err := s.Append(event.TypeAssistantChunk, raw(`{"turn":`+tn+`,"step":1,"chunk":{"type":"text-delta","text":"token "}}`), nil); err != nil {
							b.Fatal(err)
						}
					}
					s.Append(event.TypeAssistantMessage, raw(`{"turn":`+tn+`,"step":1,"content":[{"type":"text","text":"done"}]}`), &event.Intent{Op: event.Append()})
					if _, err := s.Append(event.TypeTurnEnd, raw(`{"turn":`+tn+`,"reason":{"kind":"completed"}}`), nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
