package persist

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/surfacelog/surface/impl/event"
)

// countingFile counts the syncs of a JSONL store's file.
type countingFile struct {
	File
	syncs int
}

func (f *countingFile) Sync() error { f.syncs++; return f.File.Sync() }

// TestSyncMessages: STORE-11. Under SyncMessages a streamed chunk is not
// synced; every other event is synced before its append returns.
func TestSyncMessages(t *testing.T) {
	var cf *countingFile
	st, err := OpenJSONL(context.Background(), filepath.Join(t.TempDir(), "s.jsonl"), hdr("x"), WithSync(SyncMessages), WithFile(func(f File) File { cf = &countingFile{File: f}; return cf }))
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := Resume(context.Background(), st, clock())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	steps := []struct {
		ty     event.Type
		data   string
		intent *event.Intent
		synced bool
	}{
		{event.TypeTurnStart, turnOpen, nil, true},
		{event.TypeUserMessage, userData, &event.Intent{Op: event.Append()}, true},
		{event.TypeStepStart, `{"turn":1,"step":1}`, nil, true},
		{event.TypeAssistantChunk, `{"turn":1,"step":1,"chunk":{"type":"text-delta","text":"a"}}`, nil, false},
		{event.TypeAssistantChunk, `{"turn":1,"step":1,"chunk":{"type":"text-delta","text":"b"}}`, nil, false},
		{event.TypeAssistantMessage, `{"turn":1,"step":1,"content":[{"type":"text","text":"ab"}]}`, &event.Intent{Op: event.Append(), Sources: []int64{3, 4}}, true},
		{event.TypeStepEnd, `{"turn":1,"step":1}`, nil, true},
		{event.TypeTurnEnd, `{"turn":1,"reason":{"kind":"completed"}}`, nil, true},
	}
	for _, st := range steps {
		before := cf.syncs
		if _, err := s.Append(context.Background(), event.Raw{Type: st.ty, Data: raw(st.data)}, st.intent.Value()); err != nil {
			t.Fatal(err)
		}
		if synced := cf.syncs > before; synced != st.synced {
			t.Errorf("%s: synced %v, want %v", st.ty, synced, st.synced)
		}
	}
}
