package persist

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
)

// powerFile records, for a JSONL store, how many of the file's bytes a
// sync has made durable: what a power cut keeps.
type powerFile struct {
	File
	mu      sync.Mutex
	size    int64 // bytes written
	written int64 // bytes written through WriteAt (the header aside, written when the file was made)
	durable int64 // bytes covered by the last sync
	syncs   atomic.Int64
}

func (f *powerFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	f.mu.Lock()
	f.size = max(f.size, off+int64(n))
	f.written += int64(n)
	f.mu.Unlock()
	return n, err
}

func (f *powerFile) Sync() error {
	err := f.File.Sync()
	if err == nil {
		f.mu.Lock()
		f.durable = f.size
		f.mu.Unlock()
		f.syncs.Add(1)
	}
	return err
}

func (f *powerFile) Truncate(size int64) error {
	err := f.File.Truncate(size)
	f.mu.Lock()
	f.size = size
	f.durable = min(f.durable, size)
	f.mu.Unlock()
	return err
}

func (f *powerFile) durableBytes() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.durable
}

func chunk(turn int) event.Raw {
	return event.Raw{Type: event.TypeAssistantChunk, Data: raw(fmt.Sprintf(`{"turn":%d,"step":1,"chunk":{"type":"text-delta","text":"token "}}`, turn))}
}

// TestGroupCommitSyncs (SyncGroup): streamed chunks appended one by one
// are written without a sync while the window is open; a turn/end, a batch
// of several events, Sync and Close sync at once; a window closes by its
// bytes, or by its delay (waited for, not timed).
func TestGroupCommitSyncs(t *testing.T) {
	ctx := context.Background()
	open := func(t *testing.T, delay time.Duration, bytes int64) (*Session, *powerFile) {
		var pf *powerFile
		st, err := OpenJSONL(ctx, filepath.Join(t.TempDir(), "s.jsonl"), hdr("s"), WithSyncWindow(delay, bytes),
			WithFile(func(f File) File { pf = &powerFile{File: f}; return pf }))
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := Resume(ctx, st, clock())
		if err != nil {
			t.Fatal(err)
		}
		return s, pf
	}
	t.Run("turn end and batches", func(t *testing.T) {
		s, pf := open(t, time.Hour, 1<<40)
		defer s.Close(ctx)
		s.Append(ctx, event.TurnStartData{Turn: 1, Trigger: raw(`{"kind":"message"}`)})
		for range 500 {
			if _, err := s.Append(ctx, chunk(1)); err != nil {
				t.Fatal(err)
			}
		}
		if n := pf.syncs.Load(); n != 0 {
			t.Fatalf("%d syncs while the window is open", n)
		}
		if _, err := s.Append(ctx, event.TurnEndData{Turn: 1, Reason: raw(`{"kind":"completed"}`)}); err != nil {
			t.Fatal(err)
		}
		if n := pf.syncs.Load(); n != 1 || pf.durableBytes() != pf.size {
			t.Fatalf("after the turn/end: %d syncs, %d of %d bytes durable", n, pf.durableBytes(), pf.size)
		}
		s.Append(ctx, event.TurnStartData{Turn: 2, Trigger: raw(`{"kind":"message"}`)})
		if _, err := s.AppendBatch(ctx, func(session.Tx) ([]session.Draft, error) {
			return []session.Draft{{Type: event.TypeAssistantChunk, Data: raw(`{"turn":2,"step":1,"chunk":{}}`)}, {Type: event.TypeAssistantChunk, Data: raw(`{"turn":2,"step":1,"chunk":{}}`)}}, nil
		}); err != nil {
			t.Fatal(err)
		}
		if n := pf.syncs.Load(); n != 2 {
			t.Fatalf("a batch of two: %d syncs", n)
		}
		s.Append(ctx, chunk(2))
		if err := s.Store.Sync(ctx); err != nil || pf.durableBytes() != pf.size {
			t.Fatalf("Sync: %v, %d of %d bytes durable", err, pf.durableBytes(), pf.size)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		s, pf := open(t, time.Hour, 4096)
		defer s.Close(ctx)
		s.Append(ctx, event.TurnStartData{Turn: 1, Trigger: raw(`{"kind":"message"}`)})
		for range 500 {
			s.Append(ctx, chunk(1))
			if pf.size-pf.durableBytes() > 4096 {
				t.Fatalf("%d bytes unsynced, the window holds 4096", pf.size-pf.durableBytes())
			}
		}
		if n := pf.syncs.Load(); n < 5 || n > 20 {
			t.Fatalf("%d syncs for about 50 KB in windows of 4 KB", n)
		}
	})
	t.Run("default bytes", func(t *testing.T) {
		// A window of 0 or fewer bytes is the default (1 MiB): 500 chunks
		// (about 50 KB) fit in it, and nothing syncs until the turn ends.
		for _, bytes := range []int64{0, -1} {
			s, pf := open(t, time.Hour, bytes)
			s.Append(ctx, event.TurnStartData{Turn: 1, Trigger: raw(`{"kind":"message"}`)})
			for range 500 {
				s.Append(ctx, chunk(1))
			}
			if n := pf.syncs.Load(); n != 0 || pf.size < 40<<10 || pf.size > DefaultSyncBytes {
				t.Fatalf("a window of %d bytes: %d syncs for %d bytes", bytes, n, pf.size)
			}
			s.Append(ctx, event.TurnEndData{Turn: 1, Reason: raw(`{"kind":"completed"}`)})
			if n := pf.syncs.Load(); n != 1 {
				t.Fatalf("a window of %d bytes: %d syncs after the turn/end", bytes, n)
			}
			s.Close(ctx)
		}
	})
	t.Run("a window filled exactly", func(t *testing.T) {
		// Measure what the turn/start and one chunk write, then fill a
		// window of exactly the turn/start and two chunks: the second
		// chunk closes it, the first does not.
		s, pf := open(t, time.Hour, 1<<40)
		s.Append(ctx, event.TurnStartData{Turn: 1, Trigger: raw(`{"kind":"message"}`)})
		start := pf.written
		s.Append(ctx, chunk(1))
		line := pf.written - start
		s.Close(ctx)
		s, pf = open(t, time.Hour, start+2*line)
		defer s.Close(ctx)
		s.Append(ctx, event.TurnStartData{Turn: 1, Trigger: raw(`{"kind":"message"}`)})
		s.Append(ctx, chunk(1))
		if n := pf.syncs.Load(); n != 0 {
			t.Fatalf("one byte short of the window: %d syncs", n)
		}
		s.Append(ctx, chunk(1))
		if n := pf.syncs.Load(); n != 1 || pf.durableBytes() != pf.size {
			t.Fatalf("the window filled exactly: %d syncs", n)
		}
	})
	t.Run("delay", func(t *testing.T) {
		s, pf := open(t, 5*time.Millisecond, 1<<40)
		s.Append(ctx, event.TurnStartData{Turn: 1, Trigger: raw(`{"kind":"message"}`)})
		s.Append(ctx, chunk(1))
		for deadline := time.Now().Add(30 * time.Second); pf.durableBytes() != pf.size; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the window's delay passed and nothing synced")
			}
		}
		s.Append(ctx, chunk(1))
		if err := s.Close(ctx); err != nil || pf.durableBytes() != pf.size {
			t.Fatalf("Close: %v, %d of %d bytes durable", err, pf.durableBytes(), pf.size)
		}
	})
}

// TestGroupCommitPowerCut (SyncGroup): random traffic (chunks, messages,
// turn ends, batches, syncs) on a JSONL store committing in groups, then a
// power cut: the file keeps what the last sync covered and any part of
// what followed. Reopened, it holds a prefix of what was acknowledged that
// reaches at least the last sync (the loss is within the open window),
// a torn last line is quarantined and cut, and the store appends again.
func TestGroupCommitPowerCut(t *testing.T) {
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		dir, err := os.MkdirTemp("", "powercut")
		if err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "s.jsonl")
		var pf *powerFile
		st, err := OpenJSONL(ctx, path, hdr("s"), WithSyncWindow(time.Hour, rapid.Int64Range(200, 5000).Draw(rt, "bytes")),
			WithFile(func(f File) File { pf = &powerFile{File: f}; return pf }))
		if err != nil {
			rt.Fatal(err)
		}
		if fi, err := os.Stat(path); err == nil {
			pf.size, pf.durable = fi.Size(), fi.Size() // the header: written and synced at create
		}
		s, _, err := Resume(ctx, st, clock())
		if err != nil {
			rt.Fatal(err)
		}
		acked := 0         // events acknowledged
		durableEvents := 0 // events the last sync covered
		note := func(n int) {
			acked += n
			if pf.durableBytes() == pf.size {
				durableEvents = acked
			}
		}
		turn := 0
		for n := rapid.IntRange(1, 60).Draw(rt, "steps"); n > 0; n-- {
			switch rapid.IntRange(0, 9).Draw(rt, "what") {
			case 0:
				turn++
				s.Append(ctx, event.TurnStartData{Turn: int64(turn), Trigger: raw(`{"kind":"message"}`)})
				note(1)
			case 1:
				if turn > 0 {
					s.Append(ctx, event.TurnEndData{Turn: int64(turn), Reason: raw(`{"kind":"completed"}`)})
					note(1)
				}
			case 2:
				out, err := s.AppendBatch(ctx, func(session.Tx) ([]session.Draft, error) {
					return []session.Draft{{Type: event.TypeTodoWrite, Data: raw(`{"todos":[]}`)}, {Type: event.TypeTodoWrite, Data: raw(`{"todos":[]}`)}}, nil
				})
				if err != nil {
					rt.Fatal(err)
				}
				note(len(out))
			case 3:
				s.Store.Sync(ctx)
				note(0)
			default:
				if _, err := s.Append(ctx, chunk(max(turn, 1))); err != nil {
					rt.Fatal(err)
				}
				note(1)
			}
		}
		written := s.Events()
		durable := pf.durableBytes()
		cut := durable + rapid.Int64Range(0, pf.size-durable).Draw(rt, "kept")
		s.Store.(*JSONL).osFile.Close() // the power goes: no close, no sync
		detach(s.Store)
		if err := os.Truncate(path, cut); err != nil {
			rt.Fatal(err)
		}
		st2, err := OpenJSONL(ctx, path, hdr("s"))
		if err != nil {
			rt.Fatalf("reopen after the cut: %v", err)
		}
		defer st2.Close(ctx)
		got := st2.Events()
		if len(got) < durableEvents || len(got) > acked {
			rt.Fatalf("%d events after the cut; %d were durable, %d acknowledged", len(got), durableEvents, acked)
		}
		for i := range got {
			if string(got[i].Data) != string(written[i].Data) || got[i].Type != written[i].Type {
				rt.Fatalf("event %d changed by the cut", i)
			}
		}
		s2, _, err := Resume(ctx, st2, clock())
		if err != nil {
			rt.Fatalf("resume after the cut: %v", err)
		}
		if _, err := s2.Append(ctx, event.TodoWriteData{Todos: []json.RawMessage{}}); err != nil {
			rt.Fatalf("append after the cut: %v", err)
		}
		if _, _, torn, err := ReadJSONL(path); err != nil || torn != 0 {
			rt.Fatalf("after the first append the file is torn (%d bytes) or unreadable: %v", torn, err)
		}
	})
}

// TestGroupWindowDefaults: a window's delay and bytes are kept when
// positive, and each falls back to its default on its own when 0 or
// negative (the other kept as given).
func TestGroupWindowDefaults(t *testing.T) {
	for _, c := range []struct {
		delay     time.Duration
		bytes     int64
		wantDelay time.Duration
		wantBytes int64
	}{
		{5 * time.Millisecond, 10, 5 * time.Millisecond, 10},
		{time.Nanosecond, 1, time.Nanosecond, 1},
		{0, 10, DefaultSyncDelay, 10},
		{-time.Second, 10, DefaultSyncDelay, 10},
		{5 * time.Millisecond, 0, 5 * time.Millisecond, DefaultSyncBytes},
		{5 * time.Millisecond, -1, 5 * time.Millisecond, DefaultSyncBytes},
		{0, 0, DefaultSyncDelay, DefaultSyncBytes},
	} {
		g := newGroupCommit(c.delay, c.bytes)
		if g.delay != c.wantDelay || g.bytes != c.wantBytes {
			t.Errorf("window (%v, %d): (%v, %d), want (%v, %d)", c.delay, c.bytes, g.delay, g.bytes, c.wantDelay, c.wantBytes)
		}
	}
}
