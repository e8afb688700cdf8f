package convert_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/surfacelog/surface/impl/convert"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/persist"
	"github.com/surfacelog/surface/impl/released"
	"github.com/surfacelog/surface/impl/session"
)

// Example hands a session made here to the released seed system: convert
// its events, write them as a released .jsonl.zstd where the released
// store looks for it, and read the file back by the released rules. The
// released messages carry ids and sources; their content is this
// library's.
func Example() {
	ctx := context.Background()
	s := session.New()
	ap := event.AppendIntent()
	s.Append(ctx, event.Raw{Type: event.TypeTurnStart, Data: json.RawMessage(`{"turn":1,"trigger":{"kind":"message"}}`)})
	s.Append(ctx, event.Raw{Type: event.TypeUserMessage, Data: json.RawMessage(`{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}`)}, ap)
	s.Append(ctx, event.Raw{Type: event.TypeContextMessage, Data: json.RawMessage(`{"content":[{"type":"text","text":"cwd is /w"}],"source":{"kind":"env"}}`)}, ap)
	s.Append(ctx, event.Raw{Type: event.TypeAssistantMessage, Data: json.RawMessage(`{"turn":1,"step":1,"content":[{"type":"text","text":"hello"}],"provenance":{"provider":"p","model":"m"}}`)}, ap)
	s.Append(ctx, event.Raw{Type: event.TypeTurnEnd, Data: json.RawMessage(`{"turn":1,"reason":{"kind":"completed"}}`)})

	header := persist.Header{ID: "s1", CreatedAt: 1767225600000, Cwd: "/w"}
	events, err := convert.ToReleased(header.ID, s.Events(), convert.Options{})
	if err != nil {
		fmt.Println(err) // convert.not_convertible names the event
		return
	}
	h := convert.HeaderToReleased(header)
	file, _ := released.Encode(h, [][]event.Event{events}, true)
	path, _ := released.Path("/home/me/.sessions", h, true)
	fmt.Println(path)

	log, _ := released.Read(file)
	checked, err := released.Check(log)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range checked.Messages {
		fmt.Println(string(m))
	}
	// Output:
	// /home/me/.sessions/--w--/s1/session.jsonl.zstd
	// {"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"},"id":"legacy-message:s1:1","role":"user"}
	// {"content":[{"type":"text","text":"<context source=\"env\">"},{"type":"text","text":"cwd is /w"},{"type":"text","text":"</context>"}],"source":{"kind":"env"},"id":"legacy-message:s1:2","role":"user"}
	// {"id":"legacy-message:s1:3","role":"assistant","content":[{"type":"text","text":"hello"}],"source":{"provider":"p","model":"m","kind":"model"}}
}
