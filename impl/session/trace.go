package session

import (
	"encoding/json"
	"io"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
)

// WithTrace makes the session write an NDJSON trace of its actions and the
// surface after each, for trace validation against tla/TraceSurface.tla.
// Each accepted event is one "append" line; a seed ends with a "seed" line
// and a repair with a "repair" line that counts the closers it appended.
// Events are abstracted as the TLA+ spec sees them: t is summary (a
// user/message whose source is the compaction plugin's), user (any other
// message node but the two below), asst, result, call (tool/call),
// tstart, tend, sstart, send (step/start, step/end), cstart, cend (the
// start and end of a compaction, either vocabulary), pcomp (an assistant
// message holding a provider's compaction and no call) or other; call numbers
// tool-call ids in order of first appearance, and ncalls counts the tool
// calls of an assistant message (the spec's registers at most one). With
// no trace (the default) the cost is one nil check per append.
func WithTrace(w io.Writer) Option {
	return func(c *config) { c.trace = &tracer{w: w, calls: map[string]int{}} }
}

type tracer struct {
	w     io.Writer
	calls map[string]int
	err   error
}

// TraceLine is one line of a trace (WithTrace): the action ("append",
// "seed" or "repair"), for an append the event as the TLA+ spec sees it,
// for a repair the number of closers it appended, and the surface after
// it. tla/explore reads traces with it.
type TraceLine struct {
	Action  string  `json:"action"`
	T       string  `json:"t"`
	Op      string  `json:"op"`
	Start   int64   `json:"start"`
	End     int64   `json:"end"`
	Src     []int64 `json:"src"`
	Call    int     `json:"call"`
	NCalls  int     `json:"ncalls"`
	Closers int     `json:"closers"`
	Surface []int64 `json:"surface"`
}

func (t *tracer) callID(id string) int {
	if n, ok := t.calls[id]; ok {
		return n
	}
	t.calls[id] = len(t.calls) + 1
	return t.calls[id]
}

func (t *tracer) write(l TraceLine) {
	if t.err != nil {
		return
	}
	if l.Op == "" {
		l.Op = "none"
	}
	if l.Src == nil {
		l.Src = []int64{}
	}
	if l.Surface == nil {
		l.Surface = []int64{}
	}
	b, _ := json.Marshal(l)
	_, t.err = t.w.Write(append(b, '\n'))
}

func (t *tracer) event(e *event.Event, surface []int64) {
	l := TraceLine{Action: "append", Src: e.Sources, Surface: surface, Op: "none"}
	switch e.Op.Kind {
	case event.OpAppend:
		l.Op = "append"
	case event.OpReplace:
		l.Op, l.Start, l.End = "replace", e.Op.Start, e.Op.End
	}
	switch e.Type {
	case event.TypeAssistantMessage:
		l.T = "asst"
		ids := event.ToolCallIDs(e.Data)
		if l.NCalls = len(ids); l.NCalls > 0 {
			l.Call = t.callID(ids[0])
		} else if providerCompaction(e.Data) {
			l.T = "pcomp"
		}
	case event.TypeToolResult:
		l.T, l.Call = "result", t.callID(event.StringMember(e.Data, "callId"))
	case event.TypeToolCall:
		l.T, l.Call = "call", t.callID(event.StringMember(e.Data, "callId"))
	case event.TypeTurnStart:
		l.T = "tstart"
	case event.TypeTurnEnd:
		l.T = "tend"
	case event.TypeStepStart:
		l.T = "sstart"
	case event.TypeStepEnd:
		l.T = "send"
	case event.TypeCompactStart, event.TypeCompactionStart:
		l.T = "cstart"
	case event.TypeCompactEnd, event.TypeCompactionEnd:
		l.T = "cend"
	case event.TypeUserMessage:
		l.T = "user"
		if raw, _ := event.ObjectMember(e.Data, "source"); isCompactionSource(raw) {
			l.T = "summary"
		}
	default:
		l.T = "other"
		if event.IsSurface(e.Type) {
			l.T = "user"
		}
	}
	t.write(l)
}

// traceEvent records the event just committed. Caller holds s.mu.
func (s *Session) traceEvent(e *event.Event) {
	if err := s.mgr.Sync(s.log); err != nil {
		return
	}
	s.cfg.trace.event(e, s.surfaceNow())
}

// surfaceNow lists the surface by walking the list. Caller holds s.mu.
func (s *Session) surfaceNow() []int64 {
	out := make([]int64, 0, s.mgr.Len())
	for n := s.mgr.Head(); n != nil; n = n.Next() {
		out = append(out, n.Seq())
	}
	return out
}

// providerCompaction reports whether an assistant/message's data holds a
// provider's compaction item (PROV-3).
func providerCompaction(data []byte) bool {
	content, _ := event.ObjectMember(data, "content")
	els := event.ArrayElements(content)
	blocks := make([]json.RawMessage, len(els))
	for i, b := range els {
		blocks[i] = b
	}
	_, compaction := message.ProviderItems(blocks)
	return compaction
}

// isCompactionSource reports whether a user/message source is the one a
// compaction summary carries ({"kind":"plugin","plugin":"compact"}).
func isCompactionSource(raw []byte) bool {
	kind, _ := event.ObjectMember(raw, "kind")
	plugin, _ := event.ObjectMember(raw, "plugin")
	return string(kind) == `"plugin"` && string(plugin) == `"compact"`
}
