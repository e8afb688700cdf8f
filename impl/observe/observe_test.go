package observe_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/observe"
)

// TestLogger: appends and store writes are debug records, the rest info,
// failures warn; a level the handler does not enable writes nothing.
func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	info := observe.Logger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	ctx := context.Background()
	info.Append(ctx, observe.Append{Type: event.TypeUserMessage, Seq: 3, Events: 1})
	info.StoreWrite(ctx, observe.StoreWrite{Store: "jsonl", Seq: 3, Events: 1, Synced: true, Sync: time.Millisecond})
	if buf.Len() != 0 {
		t.Fatalf("debug records written at info level: %s", buf.String())
	}
	info.Append(ctx, observe.Append{Type: event.TypeUserMessage, Seq: 4, Err: errors.New("disk full")})
	info.Compaction(ctx, observe.Compaction{Outcome: "committed", StartSeq: 7, Nodes: 5, TokensBefore: 900, TokensAfter: 200})
	info.Prune(ctx, observe.Prune{Seq: 9, TokensBefore: 900, TokensAfter: 400})
	info.Repair(ctx, observe.Repair{Closers: 2})
	info.Resume(ctx, observe.Resume{Store: "sqlite", Events: 10})
	info.Fork(ctx, observe.Fork{Store: "jsonl", Boundary: 9, Events: 10})
	out := buf.String()
	for _, want := range []string{
		`level=WARN msg="surface append" type=user/message seq=4`, `error="disk full"`,
		`level=INFO msg="surface compaction" outcome=committed start_seq=7 nodes=5 tokens_before=900 tokens_after=200`,
		`msg="surface prune" seq=9`, `msg="surface repair" closers=2`, `msg="surface resume" store=sqlite events=10`,
		`msg="surface fork" store=jsonl boundary=9 events=10`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	buf.Reset()
	debug := observe.Logger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	debug.Append(ctx, observe.Append{Type: event.TypeUserMessage, Seq: 3, Events: 1, LockWait: time.Microsecond})
	debug.StoreWrite(ctx, observe.StoreWrite{Store: "jsonl", Seq: 3, Events: 1, Synced: true})
	if out := buf.String(); !strings.Contains(out, `level=DEBUG msg="surface append" type=user/message seq=3 events=1`) || !strings.Contains(out, `msg="surface store write" store=jsonl seq=3 events=1 synced=true`) {
		t.Fatalf("debug records:\n%s", out)
	}
}

// TestMulti: every record reaches every observer; nil ones are skipped.
func TestMulti(t *testing.T) {
	var a, b observe.Recorder
	m := observe.Multi(&a, nil, &b)
	ctx := context.Background()
	m.Append(ctx, observe.Append{Seq: 1})
	m.StoreWrite(ctx, observe.StoreWrite{Seq: 1})
	m.Compaction(ctx, observe.Compaction{StartSeq: 2})
	m.Prune(ctx, observe.Prune{Seq: 3})
	m.Repair(ctx, observe.Repair{Closers: 1})
	m.Resume(ctx, observe.Resume{Events: 4})
	m.Fork(ctx, observe.Fork{Events: 5})
	for _, r := range []*observe.Recorder{&a, &b} {
		if len(r.Appends) != 1 || len(r.StoreWrites) != 1 || len(r.Compactions) != 1 || len(r.Prunes) != 1 || len(r.Repairs) != 1 || len(r.Resumes) != 1 || len(r.Forks) != 1 {
			t.Fatalf("a record was not passed on: %+v", r)
		}
	}
	a.Reset()
	if len(a.Appends) != 0 || len(b.Appends) != 1 {
		t.Fatal("Reset")
	}
}
