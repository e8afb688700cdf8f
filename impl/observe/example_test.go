package observe_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/observe"
	"github.com/surfacelog/surface/impl/session"
)

// A session that logs its appends with log/slog. The handler here drops
// the times and durations so that the output is the same on every run.
func ExampleLogger() {
	ctx := context.Background()
	stable := func(_ []string, a slog.Attr) slog.Attr {
		switch a.Key {
		case slog.TimeKey, "duration", "lock_wait", "write":
			return slog.Attr{}
		}
		return a
	}
	log := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: stable}))
	s := session.New(session.WithObserver(observe.Logger(log)))
	s.Append(ctx, event.TurnStartData{Turn: 1, Trigger: json.RawMessage(`{"kind":"message"}`)})
	s.Append(ctx, event.TurnStartData{Turn: 2, Trigger: json.RawMessage(`{"kind":"message"}`)})                             // refused in strict mode only: accepted here
	s.Append(ctx, event.Raw{Type: event.TypeUserMessage, Data: json.RawMessage(`{"content":[],"source":{"kind":"user"}}`)}) // no marker: refused
	// Output:
	// level=DEBUG msg="surface append" type=turn/start seq=0 events=1
	// level=DEBUG msg="surface append" type=turn/start seq=1 events=1
	// level=WARN msg="surface append" type=user/message seq=2 events=0 error="surface.op_missing: event 2: user/message is surface-eligible and needs a surfaceOp marker"
}
