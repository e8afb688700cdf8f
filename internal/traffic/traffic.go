// Package traffic produces realistic session traffic for benchmarks and
// crash tests: turns of a user message, streamed chunks, assistant
// messages with tool calls, tool calls and results, and a compaction (a
// replace of most of the surface by a summary) every few thousand events.
package traffic

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/impl/view"
)

var (
	logsMu sync.Mutex
	logs   = map[int][]event.Event{}
)

// Log returns a valid log of n events of traffic, with its last turn
// closed by repair (so a few events more than n, and resuming it changes
// nothing). Logs are built once per size and shared: do not change them.
func Log(n int) ([]event.Event, error) {
	logsMu.Lock()
	defer logsMu.Unlock()
	if l, ok := logs[n]; ok {
		return l, nil
	}
	s := session.New()
	if err := New(s).Append(n); err != nil {
		return nil, err
	}
	if _, err := s.Repair(context.Background()); err != nil {
		return nil, err
	}
	logs[n] = s.Events()
	return logs[n], nil
}

// Session is what traffic appends to: model.Session, or an
// impl/session.Session or a durable session wrapped by New. Its Surface
// method returns a []int64 (the model) or a view.Seqs (the
// implementation).
type Session interface {
	Append(t event.Type, data any, intent *event.Intent) (event.Event, error)
}

// live is a session of the library (impl/session, impl/persist) seen as a
// Session.
type live interface {
	Append(ctx context.Context, data event.Data, intent ...event.Intent) (event.Event, error)
	Surface() view.Seqs
}

// Live is a session of the library seen as a Session (Of makes one).
type Live struct{ S live }

// Append appends as session.Session.Append does.
func (l Live) Append(t event.Type, data any, intent *event.Intent) (event.Event, error) {
	// A call through the interface would put the intent on the heap: a
	// harness holds its session as what it is, and so does this one; and
	// JSON text goes in as a harness relaying a stream sends it, with
	// AppendRaw (no event.Raw to box).
	if s, ok := l.S.(*session.Session); ok {
		if r, ok := data.(json.RawMessage); ok {
			return s.AppendRaw(context.Background(), t, r, intent.Value())
		}
		return s.Append(context.Background(), event.Raw{Type: t, Data: data}, intent.Value())
	}
	return l.S.Append(context.Background(), event.Raw{Type: t, Data: data}, intent.Value())
}

// Surface is the session's surface.
func (l Live) Surface() view.Seqs { return l.S.Surface() }

// surfaceOf returns the surface seqs of s.
func surfaceOf(s Session) []int64 {
	switch s := s.(type) {
	case interface{ Surface() []int64 }:
		return s.Surface()
	case interface{ Surface() view.Seqs }:
		return s.Surface().Slice()
	}
	panic("traffic: the session has no Surface method")
}

// CompactEvery is the number of events between compactions.
const CompactEvery = 3000

// Generator appends traffic one event at a time.
type Generator struct {
	s        Session
	script   []func() (event.Event, error)
	turn     int
	n        int
	lastComp int
	chunks   []int64
	callSeq  int64
}

// New returns a generator appending to s: a Session, or a session of the
// library (anything with its Append and Surface).
func New(s any) *Generator { return &Generator{s: Of(s)} }

// Of is s as a Session: a Session as it is, a session of the library
// (anything with its Append and Surface) behind the old-style Append the
// generator uses.
func Of(s any) Session {
	switch s := s.(type) {
	case Session:
		return s
	case live:
		return Live{s}
	}
	panic(fmt.Sprintf("traffic: cannot append to a %T", s))
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func (g *Generator) app(t event.Type, data string, intent *event.Intent) func() (event.Event, error) {
	return func() (event.Event, error) { return g.s.Append(t, raw(data), intent) }
}

// Next appends one event.
func (g *Generator) Next() (event.Event, error) {
	if len(g.script) == 0 {
		g.plan()
	}
	f := g.script[0]
	g.script = g.script[1:]
	e, err := f()
	g.n++
	return e, err
}

// Append appends n events.
func (g *Generator) Append(n int) error {
	for i := 0; i < n; i++ {
		if _, err := g.Next(); err != nil {
			return err
		}
	}
	return nil
}

// plan scripts the next turn.
func (g *Generator) plan() {
	g.turn++
	tn := strconv.Itoa(g.turn)
	ts := `{"turn":` + tn + `,"step":`
	add := func(f func() (event.Event, error)) { g.script = append(g.script, f) }
	add(g.app(event.TypeTurnStart, `{"turn":`+tn+`,"trigger":{"kind":"message","source":{"kind":"user"}}}`, nil))
	add(g.app(event.TypeUserMessage, `{"content":[{"type":"text","text":"Please look at file `+tn+` and fix the failing test."}],"source":{"kind":"user"}}`, &event.Intent{Op: event.Append()}))
	for step := 1; step <= 2; step++ {
		sn := strconv.Itoa(step)
		add(g.app(event.TypeStepStart, ts+sn+`}`, nil))
		add(func() (event.Event, error) {
			g.chunks = g.chunks[:0]
			return g.s.Append(event.TypeRequestHeader, raw(`{"header":{"config":{"provider":"p","model":"m"}},"reason":"change"}`), nil)
		})
		for c := 0; c < 4; c++ {
			add(func() (event.Event, error) {
				e, err := g.s.Append(event.TypeAssistantChunk, raw(ts+sn+`,"chunk":{"type":"text-delta","delta":"some streamed text "}}`), nil)
				g.chunks = append(g.chunks, e.Seq)
				return e, err
			})
		}
		callID := "call-" + tn + "-" + sn
		if step == 1 {
			add(func() (event.Event, error) {
				return g.s.Append(event.TypeAssistantMessage, raw(ts+sn+`,"content":[{"type":"text","text":"Let me read it."},{"type":"tool-call","id":"`+callID+`","name":"read","arguments":"{\"path\":\"f.go\"}"}],"usage":{"input":1200,"output":40}}`),
					&event.Intent{Op: event.Append(), Sources: append([]int64(nil), g.chunks...)})
			})
			add(func() (event.Event, error) {
				e, err := g.s.Append(event.TypeToolCall, raw(ts+sn+`,"callId":"`+callID+`","name":"read","arguments":"{\"path\":\"f.go\"}"}`), nil)
				g.callSeq = e.Seq
				return e, err
			})
			add(func() (event.Event, error) {
				return g.s.Append(event.TypeToolResult, raw(ts+sn+`,"callId":"`+callID+`","content":[{"type":"text","text":"package f\n\nfunc F() int { return 41 }\n"}],"isError":false}`),
					&event.Intent{Op: event.Append(), Sources: []int64{g.callSeq}})
			})
		} else {
			add(func() (event.Event, error) {
				return g.s.Append(event.TypeAssistantMessage, raw(ts+sn+`,"content":[{"type":"text","text":"Fixed: F now returns 42."}]}`),
					&event.Intent{Op: event.Append(), Sources: append([]int64(nil), g.chunks...)})
			})
		}
		add(g.app(event.TypeStepEnd, ts+sn+`}`, nil))
	}
	if g.n-g.lastComp >= CompactEvery {
		add(g.compact)
	}
	add(g.app(event.TypeTurnEnd, `{"turn":`+tn+`,"reason":{"kind":"completed"}}`, nil))
}

// compact replaces all but the last 8 surface nodes by a summary.
func (g *Generator) compact() (event.Event, error) {
	g.lastComp = g.n
	surface := surfaceOf(g.s)
	if len(surface) < 10 {
		return g.s.Append(event.TypeTodoWrite, raw(`{"todos":[]}`), nil)
	}
	shadowed := surface[:len(surface)-8]
	return g.s.Append(event.TypeContextMessage, raw(`{"content":[{"type":"text","text":"Summary of the conversation so far."}],"source":{"kind":"compaction"}}`),
		&event.Intent{Op: event.Replace(shadowed[0], shadowed[len(shadowed)-1]), Sources: append([]int64(nil), shadowed...)})
}
