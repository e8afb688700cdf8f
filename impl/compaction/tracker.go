package compaction

import (
	"encoding/json"
	"runtime"
	"sync"
	"weak"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/session"
)

// tracker is what compaction needs to know about one session, kept up to
// date by folding the log's new events (delta processing, like the
// surface itself): the open turn, the open compaction (COMP-2), and the
// tool-pairing balance of every surface cut (COMP-4). Appends cost O(1)
// amortised each, and so does a replace that cannot change the balances
// after it: one whose edges are balanced cuts and whose new node neither
// calls nor answers (a compaction), or a tool/result replacing one with the
// same callId (a prune). Any other replace makes the pairing stale, and the
// next query rebuilds it from the surface in O(surface).
type tracker struct {
	mu        sync.Mutex
	processed int // log events folded

	turn json.RawMessage // the open turn's number, nil when none is open
	// turns counts the turn/start events folded; turnOf, indexed by seq
	// (4 bytes an event: seqs are the log's indexes), is the ordinal of
	// the turn each surface node belongs to: the turns count when it was
	// appended, or for a replacement the turn of the first node it
	// shadowed (so the surface stays grouped by turn, COMP-10). See turnAt.
	turns  int32
	turnOf []int32

	open *bracket // the open compaction, or nil

	// held says the last assistant/message records a reply on history its
	// provider holds (PROV-5); provCompactions are the seqs of the
	// assistant messages that hold a provider's compaction (PROV-3), in
	// log order.
	held            bool
	provCompactions []int64

	// Pairing, valid for the current surface unless stale. Entries of
	// nodes that a replace shadowed are dropped with it (or at the next
	// rebuild); whether a node is on the surface is the session's answer.
	stale   bool
	before  map[int64]int32 // unanswered calls crossing the cut before each node
	after   map[int64]int32 // ... and the cut after it
	pending map[string]int  // unanswered call ids after the last node, with multiplicity
	npend   int32
}

// bracket is an open compaction: its start event.
type bracket struct {
	typ  event.Type // compact/start or compaction/start
	seq  int64
	data []byte
	id   string // compactionId (compaction/*)
}

var trackers sync.Map // weak.Pointer[session.Session] -> *tracker

// trackerOf returns the tracker of s, made on first use and dropped when s
// is garbage collected.
func trackerOf(s *session.Session) *tracker {
	key := weak.Make(s)
	if t, ok := trackers.Load(key); ok {
		return t.(*tracker)
	}
	t, loaded := trackers.LoadOrStore(key, newTracker())
	if !loaded {
		runtime.AddCleanup(s, func(k weak.Pointer[session.Session]) { trackers.Delete(k) }, key)
	}
	return t.(*tracker)
}

func newTracker() *tracker {
	return &tracker{before: map[int64]int32{}, after: map[int64]int32{}, pending: map[string]int{}}
}

// sync folds the events of the log that tx shows and the tracker has not
// seen, and rebuilds the pairing when a replace made it stale. The caller
// holds t.mu.
func (t *tracker) sync(tx session.Tx) {
	log := tx.Events()
	for ; t.processed < len(log); t.processed++ {
		t.fold(tx, &log[t.processed])
	}
	if t.stale {
		t.rebuild(tx)
	}
}

func (t *tracker) fold(tx session.Tx, e *event.Event) {
	switch e.Type {
	case event.TypeTurnStart:
		t.turn, _ = event.ObjectMember(e.Data, "turn")
		t.turns++
	case event.TypeTurnEnd:
		t.turn = nil
	case event.TypeCompactStart, event.TypeCompactionStart:
		t.open = &bracket{typ: e.Type, seq: e.Seq, data: e.Data, id: event.StringMember(e.Data, "compactionId")}
	case event.TypeCompactEnd:
		if t.open != nil && t.open.typ == event.TypeCompactStart {
			t.open = nil
		}
	case event.TypeCompactionEnd:
		if t.open != nil && t.open.typ == event.TypeCompactionStart && t.open.id == event.StringMember(e.Data, "compactionId") {
			t.open = nil
		}
	}
	if e.Type == event.TypeAssistantMessage {
		t.held = message.ProviderHolds(e.Data)
		content, _ := event.ObjectMember(e.Data, "content")
		if _, compaction := message.ProviderItems(rawBlocks(content)); compaction {
			t.provCompactions = append(t.provCompactions, e.Seq)
		}
	}
	if !event.IsSurface(e.Type) {
		return
	}
	turn := t.turns
	if e.Op.Kind == event.OpReplace {
		turn = t.turnAt(e.Op.Start)
	}
	if n := int(e.Seq) + 1; n > len(t.turnOf) {
		t.turnOf = append(t.turnOf, make([]int32, n-len(t.turnOf))...)
	}
	t.turnOf[e.Seq] = turn
	if t.stale {
		return
	}
	if e.Op.Kind == event.OpReplace {
		t.replace(tx, e)
		return
	}
	t.node(e)
}

// turnAt is the turn ordinal of surface node seq (see turnOf).
func (t *tracker) turnAt(seq int64) int32 {
	if seq < 0 || seq >= int64(len(t.turnOf)) {
		return 0
	}
	return t.turnOf[seq]
}

// replace folds a replace: in O(|sources|) when it cannot change the
// balances after it, else by marking the pairing stale.
func (t *tracker) replace(tx session.Tx, e *event.Event) {
	log := tx.Events()
	b, okB := t.before[e.Op.Start]
	a, okA := t.after[e.Op.End]
	// A replacement between two balanced cuts leaves them balanced unless
	// it makes a call of its own (an assistant message); a tool/result
	// there answers nothing, as no call is pending.
	neutral := okB && okA && b == 0 && a == 0 && e.Type != event.TypeAssistantMessage
	prune := okB && okA && e.Op.Start == e.Op.End && e.Type == event.TypeToolResult && log[e.Op.Start].Type == event.TypeToolResult &&
		event.StringMember(log[e.Op.Start].Data, "callId") == event.StringMember(e.Data, "callId")
	if !neutral && !prune {
		t.stale = true
		return
	}
	// The sources cover the shadowed nodes (SURF-14); drop those no longer
	// on the surface.
	for _, src := range e.Sources {
		if _, on := tx.Position(src); !on {
			delete(t.before, src)
			delete(t.after, src)
		}
	}
	t.before[e.Seq], t.after[e.Seq] = b, a
}

// node adds surface node e after the last one.
func (t *tracker) node(e *event.Event) {
	t.before[e.Seq] = t.npend
	switch e.Type {
	case event.TypeAssistantMessage:
		for _, id := range event.ToolCallIDs(e.Data) {
			t.pending[id]++
			t.npend++
		}
	case event.TypeToolResult:
		if id := event.StringMember(e.Data, "callId"); t.pending[id] > 0 {
			t.pending[id]--
			t.npend--
		}
	}
	t.after[e.Seq] = t.npend
}

// rebuild recomputes the pairing from the current surface.
func (t *tracker) rebuild(tx session.Tx) {
	clear(t.before)
	clear(t.after)
	clear(t.pending)
	t.npend, t.stale = 0, false
	log := tx.Events()
	for _, seq := range tx.Surface().All() {
		t.node(&log[seq])
	}
}

// onSurface reports whether seq is a surface node, from the session.
func onSurface(tx session.Tx, seq int64) bool {
	_, ok := tx.Position(seq)
	return ok
}

// Estimator estimates the tokens of a message, for the token budget of a
// selection and the shadowedTokenCount of the records (COMP-5).
type Estimator func(message.Message) int

// EstimateTokens is the default Estimator (COMP-5): a quarter of the
// bytes of the message's content blocks, rounded up (message.EstimateTokens).
func EstimateTokens(m message.Message) int { return message.EstimateTokens(m) }

// rawBlocks is the elements of a JSON array of blocks.
func rawBlocks(content []byte) []json.RawMessage {
	els := event.ArrayElements(content)
	out := make([]json.RawMessage, len(els))
	for i, e := range els {
		out[i] = e
	}
	return out
}

// providerHead is the surface position after the last node on the
// surface that holds a provider's compaction (PROV-4), 0 when there is
// none: a library compaction's range starts there or later.
func (t *tracker) providerHead(tx session.Tx) int {
	for i := len(t.provCompactions) - 1; i >= 0; i-- {
		if pos, on := tx.Position(t.provCompactions[i]); on {
			return pos + 1
		}
	}
	return 0
}
