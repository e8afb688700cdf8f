package session_test

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/internal/traffic"
)

// TestFirstAppendAfterSeedDoesNotCopy: a seeded session has room to grow,
// so its first appends allocate what a steady append does (the event's
// compacted data and the folded node), never a copy of the log. With
// 20,000 events a copy is megabytes; the bound is a few kilobytes. It
// fails when Seed, SeedJSON or SeedLog leave the log at its exact length.
func TestFirstAppendAfterSeedDoesNotCopy(t *testing.T) {
	log, err := traffic.Log(20_000)
	if err != nil {
		t.Fatal(err)
	}
	lines := make([]json.RawMessage, len(log))
	for i := range log {
		if lines[i], err = json.Marshal(log[i]); err != nil {
			t.Fatal(err)
		}
	}
	seeds := map[string]func() (*session.Session, error){
		"Seed":     func() (*session.Session, error) { return session.Seed(log) },
		"SeedJSON": func() (*session.Session, error) { return session.SeedJSON(lines) },
		"SeedLog": func() (*session.Session, error) {
			var d event.Decoder
			for _, l := range lines {
				if err := d.Decode(l); err != nil {
					return nil, err
				}
			}
			return session.SeedLog(d.Log())
		},
	}
	for name, seed := range seeds {
		t.Run(name, func(t *testing.T) {
			s, err := seed()
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for i := 0; i < 16; i++ {
				if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: []byte(`{"todos":[]}`)}); err != nil {
					t.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			if got := after.TotalAlloc - before.TotalAlloc; got > 16<<10 {
				t.Errorf("16 appends after a seed of %d events allocated %d bytes: the log was copied", len(log), got)
			}
		})
	}
}

// TestAppendAllocations: an append allocates the compact copy of its data,
// the box of the event.Data it was given, and nothing else but its share
// of the log's growth. It fails when the
// event escapes to the heap on its way through validation, or when
// checking the data allocates a list of its members.
func TestAppendAllocations(t *testing.T) {
	s := session.New()
	var data any = json.RawMessage(`{"todos":[{"content":"a","status":"pending"}]}`)
	got := testing.AllocsPerRun(1000, func() {
		if _, err := s.Append(context.Background(), event.Raw{Type: event.TypeTodoWrite, Data: data}); err != nil {
			t.Fatal(err)
		}
	})
	if got > 2 {
		t.Errorf("an append allocates %v times; want 2 (its compact data, and the event.Data holding its data)", got)
	}
}
