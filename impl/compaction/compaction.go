package compaction

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/observe"
	"github.com/surfacelog/surface/impl/session"
)

// Vocabulary says which records a compaction writes (COMP-1).
type Vocabulary int

const (
	// CompactEvents writes the seed system's compact/start,
	// compact/summary and compact/end (its b736889ac7 vocabulary, the
	// default). They record the open turn, so one must be open
	// (compaction.no_turn).
	CompactEvents Vocabulary = iota
	// CompactionEvents writes compaction/start, compaction/summary and
	// compaction/end with a compactionId; outside a turn, turn is null.
	CompactionEvents
)

// Option configures Begin.
type Option func(*options)

type options struct {
	vocabulary Vocabulary
	id         string
	snap       bool
	estimate   Estimator
	unframed   bool
	unchecked  bool
	concurrent bool
	opaque     bool
}

// The framing of a summary in the user/message that replaces the range
// (COMP-11), as the seed system writes it: a text block with the
// preamble, two newlines and the opening tag; the summary's blocks; a text
// block with the closing tag. The summary record keeps the summary as
// given.
const (
	CheckpointPreamble = "This is an automatically generated checkpoint condensing an earlier span of the conversation to free up context. Treat the captured context as established background and build on it without restating it. Continue the task directly from the messages that follow, without acknowledging this checkpoint."
	SummaryOpenTag     = "<compacted-summary>"
	SummaryCloseTag    = "</compacted-summary>"
)

// WithoutFraming makes Commit write the summary's blocks as they are in
// the replacing user/message, without the seed system's preamble and tags
// (COMP-11). The seed system always frames.
func WithoutFraming() Option { return func(o *options) { o.unframed = true } }

// WithoutSizeCheck makes Commit accept a summary message whose estimate is
// not smaller than the shadowed nodes' (COMP-11). The seed system always
// checks.
func WithoutSizeCheck() Option { return func(o *options) { o.unchecked = true } }

// WithConcurrentAppends lets other events be appended between Begin and
// Commit of a CompactEvents compaction: Commit then checks only that the
// shadowed nodes are still the range (compaction.range_changed). Without
// it, a CompactEvents commit after any other append since the start event
// ends the compaction with the seed system's error "compaction: session
// log changed during summarization" and returns compaction.log_changed
// (COMP-5), as the seed system's b736889ac7 commit does. The
// CompactionEvents vocabulary always allows them, as the seed system's
// later versions do.
func WithConcurrentAppends() Option { return func(o *options) { o.concurrent = true } }

// WithOpaqueItems says the summariser handles providers' opaque items
// (PROV-4: signatures, encrypted content, redacted thinking, a provider's
// compaction): a range that holds them may be folded. Without it, Begin
// refuses such a range with compaction.opaque_items, and a selection
// (BeginSelected, CompactSelected) stops before the first of them. The
// items of closed turns are usually safe to fold: Anthropic and OpenAI
// ignore the reasoning of earlier turns.
func WithOpaqueItems() Option { return func(o *options) { o.opaque = true } }

// LogChangedText is the end event's error of a CompactEvents commit after
// another append (COMP-5): the seed system's text.
const LogChangedText = "compaction: session log changed during summarization"

// WithVocabulary chooses the records' vocabulary (default CompactEvents).
func WithVocabulary(v Vocabulary) Option { return func(o *options) { o.vocabulary = v } }

// WithID sets the compactionId of the CompactionEvents vocabulary (default: one
// made from the start event's seq, "c" + seq).
func WithID(id string) Option { return func(o *options) { o.id = id } }

// WithSnap makes Begin shrink a range whose edges split a tool call from
// its result to the nearest balanced cuts inside it (COMP-4), instead of
// refusing it with compaction.unbalanced.
func WithSnap() Option { return func(o *options) { o.snap = true } }

// WithEstimator sets the token estimator of the shadowedTokenCount
// (default EstimateTokens).
func WithEstimator(e Estimator) Option { return func(o *options) { o.estimate = e } }

func optionsOf(opts []Option) options {
	o := options{estimate: EstimateTokens}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// SummarySource is the source of the user/message that carries a summary.
var SummarySource = json.RawMessage(`{"kind":"plugin","plugin":"compact"}`)

// Operation is a compaction between Begin and Commit or Abort: its lock is
// taken (the start event is in the log), and the shadowed nodes are known.
// An Operation is safe for concurrent use; Commit and Abort finish it once.
type Operation struct {
	s    *session.Session
	opts options

	// StartSeq is the seq of the start event.
	StartSeq int64
	// Start and End are the range, as node seqs: the first and the last
	// shadowed node (a surface-position span: Start may be numerically
	// greater than End after earlier replaces).
	Start, End int64
	// Shadowed are the seqs of the shadowed nodes, in surface order.
	Shadowed []int64
	// Messages are the messages of the shadowed nodes, in order: what the
	// summariser reads.
	Messages []message.Message
	// TokenCount is the estimated tokens of Messages (shadowedTokenCount).
	TokenCount int

	// Selection is what the policy chose, for an Operation begun by
	// BeginSelected.
	Selection Selection

	turn json.RawMessage // the start event's turn (a number, or null)
	id   string          // compactionId (CompactionEvents vocabulary)

	mu       sync.Mutex
	finished bool

	// With an observer (session.WithObserver): when Begin was called, how
	// long it waited for the compaction lock, and the session's tokens
	// then.
	began        time.Time
	lockWait     time.Duration
	tokensBefore int
}

// Session is the session the compaction belongs to.
func (op *Operation) Session() *session.Session { return op.s }

// report tells the session's observer, if any, that op ended.
func (op *Operation) report(ctx context.Context, outcome string, err error) {
	obs := op.s.Observer()
	if obs == nil {
		return
	}
	obs.Compaction(ctx, observe.Compaction{Timing: observe.Since(op.began), StartSeq: op.StartSeq, Outcome: outcome, Nodes: len(op.Shadowed),
		TokensBefore: op.tokensBefore, TokensAfter: op.s.Tokens(), LockWait: op.lockWait, Err: err})
}

// Begin starts a compaction of the surface nodes from start through end
// (inclusive, in surface order) of s (COMP-3): it checks the range as a
// replace would (replace.start_not_on_surface, replace.end_not_on_surface,
// replace.reversed), that its edges split no tool call from its result
// (compaction.unbalanced, or shrinks the range with WithSnap), that no
// compaction is open (compaction.locked) and, for the CompactEvents vocabulary,
// that a turn is open (compaction.no_turn); then it appends the start
// event, which holds the lock until Commit or Abort appends the end event.
// The checks and the append are one step: no other append comes between.
//
// ctx is checked before anything is appended: a cancelled context begins
// nothing.
func Begin(ctx context.Context, s *session.Session, start, end int64, opts ...Option) (*Operation, error) {
	return begin(ctx, s, opts, func(t *tracker, tx session.Tx, o options) (int, int, error) {
		return t.checkRange(tx, start, end, o.snap)
	})
}

// begin begins a compaction of the range that choose picks, under the
// session's write lock: choose sees the state the start event is appended
// to, so no other append comes between the choice and the lock (COMP-3).
func begin(ctx context.Context, s *session.Session, opts []Option, choose func(*tracker, session.Tx, options) (int, int, error)) (*Operation, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o := optionsOf(opts)
	op := &Operation{s: s, opts: o, StartSeq: -1}
	if s.Observer() != nil {
		op.began, op.tokensBefore = time.Now(), s.Tokens()
	}
	t := trackerOf(s)
	t.mu.Lock()
	defer t.mu.Unlock()
	if s.Observer() != nil {
		op.lockWait = time.Since(op.began)
	}
	_, err := s.AppendBatch(ctx, func(tx session.Tx) ([]session.Draft, error) {
		t.sync(tx)
		if t.held {
			return nil, heldErr()
		}
		first, last, err := choose(t, tx, o)
		if err != nil {
			return nil, err
		}
		if !o.opaque {
			if at, ok := firstOpaque(tx, first, last); ok {
				return nil, event.Errorf(event.CodeCompactionOpaqueItems, -1, "node %d holds a provider's opaque item (a signature, encrypted content, a provider compaction), which a summary cannot carry: fold it only with a summariser that handles them (WithOpaqueItems)", at)
			}
		}
		if t.open != nil {
			return nil, event.Errorf(event.CodeCompactionLocked, -1, "the compaction started at %d is still open", t.open.seq)
		}
		seqs := tx.Surface()
		op.Start, op.End = seqs.At(first), seqs.At(last)
		seqs.Range(first, last+1, func(seq int64, m message.Message) bool {
			op.Shadowed = append(op.Shadowed, seq)
			if m.Role != "" {
				op.Messages = append(op.Messages, m)
				op.TokenCount += o.estimate(m)
			}
			return true
		})
		op.StartSeq = int64(tx.Len())
		return []session.Draft{op.startDraft(t.turn)}, op.turnErr(t.turn)
	})
	if err != nil {
		op.StartSeq = -1
		op.report(ctx, "failed", err)
		return nil, err
	}
	t.sync2(s)
	return op, nil
}

// sync2 folds the events appended since the last sync (the caller's own).
func (t *tracker) sync2(s *session.Session) {
	_, _ = s.AppendBatch(context.Background(), func(tx session.Tx) ([]session.Draft, error) {
		t.sync(tx)
		return nil, nil
	})
}

// checkRange validates [start, end] and returns the surface positions of
// its first and last node, shrunk to balanced cuts when snap is set.
func (t *tracker) checkRange(tx session.Tx, start, end int64, snap bool) (int, int, error) {
	i, ok := tx.Position(start)
	if !ok {
		return 0, 0, event.Errorf(event.CodeReplaceStartNotOnSurface, -1, "range start %d is not on the surface", start)
	}
	j, ok := tx.Position(end)
	if !ok {
		return 0, 0, event.Errorf(event.CodeReplaceEndNotOnSurface, -1, "range end %d is not on the surface", end)
	}
	if i > j {
		return 0, 0, event.Errorf(event.CodeReplaceReversed, -1, "range start %d comes after end %d on the surface", start, end)
	}
	if head := t.providerHead(tx); i < head {
		return 0, 0, event.Errorf(event.CodeCompactionProviderCompacted, -1, "the range starts at %d, at or before node %d, which holds a provider's compaction: the provider already folded what comes before it", start, tx.Surface().At(head-1))
	}
	if t.before[start] == 0 && t.after[end] == 0 {
		return i, j, nil
	}
	if !snap {
		return 0, 0, event.Errorf(event.CodeCompactionUnbalanced, -1, "the range %d..%d would split a tool call from its result (unanswered calls cross its edges: %d before, %d after)", start, end, t.before[start], t.after[end])
	}
	var seqs []int64 // the range's seqs, by position from i
	tx.Surface().Range(i, j+1, func(seq int64, _ message.Message) bool {
		seqs = append(seqs, seq)
		return true
	})
	lo, hi := 0, len(seqs)-1
	for lo <= hi && t.before[seqs[lo]] != 0 {
		lo++
	}
	for hi >= lo && t.after[seqs[hi]] != 0 {
		hi--
	}
	i, j = i+lo, i+hi
	if i > j {
		return 0, 0, event.Errorf(event.CodeCompactionNothingToCompact, -1, "no balanced cuts inside %d..%d", start, end)
	}
	return i, j, nil
}

// turnErr is compaction.no_turn when the CompactEvents vocabulary has no turn to
// record.
func (op *Operation) turnErr(turn json.RawMessage) error {
	if op.opts.vocabulary == CompactEvents && turn == nil {
		return event.Errorf(event.CodeCompactionNoTurn, -1, "the compact/* records name the open turn, and no turn is open (use WithVocabulary(CompactionEvents) between turns)")
	}
	return nil
}

func (op *Operation) startDraft(turn json.RawMessage) session.Draft {
	op.turn = turn
	if op.opts.vocabulary == CompactEvents {
		return session.Draft{Type: event.TypeCompactStart, Data: json.RawMessage(`{"turn":` + string(turn) + `}`)}
	}
	if op.turn == nil {
		op.turn = json.RawMessage("null")
	}
	op.id = op.opts.id
	if op.id == "" {
		op.id = "c" + strconv.FormatInt(op.StartSeq, 10)
	}
	return session.Draft{Type: event.TypeCompactionStart, Data: json.RawMessage(`{"compactionId":` + message.QuoteJS(op.id) + `,"turn":` + string(op.turn) + `}`)}
}

// Meta describes the summariser of a Commit (COMP-5).
type Meta struct {
	// Provider and Model name the model that wrote the summary.
	Provider, Model string
	// MaxTokens is the generation cap of the summarise call, when one
	// applied.
	MaxTokens *int64
	// Usage and RawOutput are recorded by the CompactionEvents vocabulary only:
	// the summariser's token usage (an object) and its raw output blocks.
	Usage     json.RawMessage
	RawOutput []json.RawMessage
}

// Result is what a committed compaction appended.
type Result struct {
	// StartSeq, SummarySeq, ReplaceSeq and EndSeq are the seqs of the
	// start event, the summary record, the replacing user/message and the
	// end event.
	StartSeq, SummarySeq, ReplaceSeq, EndSeq int64
	// Start, End and Shadowed are the range and the shadowed seqs.
	Start, End int64
	Shadowed   []int64
	// TokenCount is the shadowedTokenCount recorded.
	TokenCount int
	// Selection is what the policy chose (CompactSelected).
	Selection Selection
}

func (op *Operation) finish() error {
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.finished {
		return event.Errorf(event.CodeCompactionFinished, -1, "the compaction started at %d was already committed or aborted", op.StartSeq)
	}
	op.finished = true
	return nil
}

// Commit ends the compaction with summary (content blocks) replacing the
// shadowed nodes (COMP-5): it appends, with nothing in between, the
// summary record, a user/message carrying summary that replaces the range
// with sourceEventSeqs exactly [StartSeq, the record's seq, Shadowed...],
// and the end event. Summary blocks that are not valid content blocks are
// refused (event.data_invalid) with nothing appended and the operation
// still open. When the shadowed nodes are no longer the range they were at
// Begin (another replace touched them), it appends the end event with the
// error "compaction.range_changed" instead and returns that code.
//
// The user/message carries the summary framed as the seed system frames
// it (COMP-11: Frame), and a summary message whose estimate is not smaller
// than the shadowed nodes' (TokenCount) is refused: the end event records
// "summary is not smaller than the shadowed content (F estimated framed
// tokens >= N)" and Commit returns compaction.not_smaller.
//
// opts may turn the framing or the size check off for this commit
// (WithoutFraming, WithoutSizeCheck), over the options given to Begin.
func (op *Operation) Commit(ctx context.Context, summary []json.RawMessage, meta Meta, opts ...Option) (Result, error) {
	if err := op.stillOpen(); err != nil {
		return Result{}, err
	}
	// A summary providers would refuse (COMP-9), or blocks that no record
	// could hold, are refused before anything is appended; the operation
	// stays open.
	if err := CheckSummary(summary); err != nil {
		return Result{}, err
	}
	if err := checkData(op.summaryType(), op.summaryData(summary, meta)); err != nil {
		return Result{}, fmt.Errorf("compaction started at %d: the summary record: %w", op.StartSeq, err)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if err := op.finish(); err != nil {
		return Result{}, err
	}
	t := trackerOf(op.s)
	t.mu.Lock()
	defer t.mu.Unlock()
	res := Result{StartSeq: op.StartSeq, Start: op.Start, End: op.End, Shadowed: op.Shadowed, TokenCount: op.TokenCount}
	o := op.opts
	for _, f := range opts {
		f(&o)
	}
	// The blocks as the log will hold them (compact), which is what the
	// size check measures.
	content := make([]json.RawMessage, len(summary))
	for i, b := range summary {
		var buf bytes.Buffer
		if json.Compact(&buf, b) != nil {
			content[i] = b // refused by the record's check already
			continue
		}
		content[i] = buf.Bytes()
	}
	if !o.unframed {
		content = Frame(content)
	}
	events, err := op.s.AppendBatch(ctx, func(tx session.Tx) ([]session.Draft, error) {
		t.sync(tx)
		if err := t.endedElsewhere(op); err != nil {
			return nil, err
		}
		if o.vocabulary == CompactEvents && !o.concurrent && int64(tx.Len()) != op.StartSeq+1 {
			return nil, event.Errorf(event.CodeCompactionLogChanged, -1, "session log changed during summarization: %d events appended since the compaction began at %d", int64(tx.Len())-op.StartSeq-1, op.StartSeq)
		}
		if !sameRange(tx, op.Shadowed) {
			return nil, event.Errorf(event.CodeCompactionRangeChanged, -1, "the nodes %d..%d changed since the compaction began at %d", op.Start, op.End, op.StartSeq)
		}
		if !o.unchecked {
			// COMP-11: the summary message must be smaller than what it
			// shadows, by the same estimate.
			framed := o.estimate(message.Message{Role: message.RoleUser, Content: content})
			if framed >= op.TokenCount {
				return nil, event.Errorf(event.CodeCompactionNotSmaller, -1, "summary is not smaller than the shadowed content (%d estimated framed tokens >= %d)", framed, op.TokenCount)
			}
		}
		next := int64(tx.Len())
		res.SummarySeq, res.ReplaceSeq, res.EndSeq = next, next+1, next+2
		sources := append([]int64{op.StartSeq, res.SummarySeq}, op.Shadowed...)
		return []session.Draft{
			{Type: op.summaryType(), Data: op.summaryData(summary, meta)},
			{Type: event.TypeUserMessage, Data: userMessage(content), Intent: &event.Intent{Op: event.Replace(op.Start, op.End), Sources: sources}},
			op.endDraft(""),
		}, nil
	})
	t.sync2(op.s)
	switch {
	case err == nil:
		op.report(ctx, "committed", nil)
		return res, nil
	case errors.Is(err, event.CodeCompactionFinished):
		// Ended by something else: its end event is in the log.
	case len(events) < 3:
		// Not all of it was appended: release the lock. With the replace
		// in the log the compaction happened; without it, it failed.
		why := string(event.CodeOf(err)) // the rejection's stable code
		var ee *event.Error
		switch {
		case errors.As(err, &ee) && ee.Code == event.CodeCompactionNotSmaller:
			why = ee.Detail // the seed system's own text (COMP-11)
		case errors.As(err, &ee) && ee.Code == event.CodeCompactionLogChanged:
			why = LogChangedText // the seed system's own text (COMP-5)
		}
		if why == "" {
			why = err.Error()
		}
		if len(events) == 2 {
			why = ""
		}
		_, _ = op.s.AppendBatch(ctx, func(tx session.Tx) ([]session.Draft, error) {
			return []session.Draft{op.endDraft(why)}, nil
		})
		t.sync2(op.s)
		op.report(ctx, "failed", err)
	}
	return Result{}, err
}

// Abort ends the compaction without a replace: it appends the end event
// with cause's message as its error (COMP-6).
func (op *Operation) Abort(cause error) error {
	if err := op.finish(); err != nil {
		return err
	}
	msg := "aborted"
	if cause != nil && cause.Error() != "" {
		msg = cause.Error()
	}
	t := trackerOf(op.s)
	t.mu.Lock()
	defer t.mu.Unlock()
	_, err := op.s.AppendBatch(context.Background(), func(tx session.Tx) ([]session.Draft, error) {
		t.sync(tx)
		if err := t.endedElsewhere(op); err != nil {
			return nil, err
		}
		return []session.Draft{op.endDraft(msg)}, nil
	})
	t.sync2(op.s)
	if err == nil {
		op.report(context.Background(), "aborted", cause)
	}
	return err
}

// stillOpen is compaction.finished when op was committed or aborted, or
// when its compaction was ended by something else (AbortOpen, a repair).
func (op *Operation) stillOpen() error {
	op.mu.Lock()
	finished := op.finished
	op.mu.Unlock()
	if finished {
		return event.Errorf(event.CodeCompactionFinished, -1, "the compaction started at %d was already committed or aborted", op.StartSeq)
	}
	t := trackerOf(op.s)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sync2(op.s)
	if err := t.endedElsewhere(op); err != nil {
		op.mu.Lock()
		op.finished = true
		op.mu.Unlock()
		return err
	}
	return nil
}

// endedElsewhere is compaction.finished when the open compaction of the
// log is not op's: something else appended its end event (COMP-5).
func (t *tracker) endedElsewhere(op *Operation) error {
	if t.open == nil || t.open.seq != op.StartSeq {
		return event.Errorf(event.CodeCompactionFinished, -1, "the compaction started at %d was ended by something else (an abort of the lock, a repair)", op.StartSeq)
	}
	return nil
}

// sameRange reports whether shadowed are still consecutive surface nodes,
// in that order: O(k + log n).
func sameRange(tx session.Tx, shadowed []int64) bool {
	first, ok := tx.Position(shadowed[0])
	seqs := tx.Surface()
	if !ok || first+len(shadowed) > seqs.Len() {
		return false
	}
	same, k := true, 0
	seqs.Range(first, first+len(shadowed), func(seq int64, _ message.Message) bool {
		same = same && seq == shadowed[k]
		k++
		return same
	})
	return same
}

func (op *Operation) endType() event.Type {
	if op.opts.vocabulary == CompactEvents {
		return event.TypeCompactEnd
	}
	return event.TypeCompactionEnd
}

func (op *Operation) summaryType() event.Type {
	if op.opts.vocabulary == CompactEvents {
		return event.TypeCompactSummary
	}
	return event.TypeCompactionSummary
}

// endDraft is the end event, with errText when not "".
func (op *Operation) endDraft(errText string) session.Draft {
	data := `{"turn":` + string(op.turn)
	if op.opts.vocabulary == CompactionEvents {
		data = `{"compactionId":` + message.QuoteJS(op.id) + `,"turn":` + string(op.turn)
	}
	if errText != "" {
		data += `,"error":` + message.QuoteJS(errText)
	}
	return session.Draft{Type: op.endType(), Data: json.RawMessage(data + "}")}
}

// summaryData is the data of the summary record (COMP-5).
func (op *Operation) summaryData(summary []json.RawMessage, meta Meta) json.RawMessage {
	var b []byte
	b = append(b, '{')
	if op.opts.vocabulary == CompactionEvents {
		b = append(append(append(b, `"compactionId":`...), message.QuoteJS(op.id)...), ',')
	}
	b = append(b, `"summary":`...)
	b = appendBlocks(b, summary)
	b = append(b, `,"shadowedRange":{"start":`...)
	b = strconv.AppendInt(b, op.Start, 10)
	b = append(b, `,"end":`...)
	b = strconv.AppendInt(b, op.End, 10)
	b = append(b, `},"shadowedSeqs":[`...)
	for k, seq := range op.Shadowed {
		if k > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, seq, 10)
	}
	b = append(b, `],"shadowedTokenCount":`...)
	b = strconv.AppendInt(b, int64(op.TokenCount), 10)
	b = append(append(append(append(b, `,"provider":`...), message.QuoteJS(meta.Provider)...), `,"model":`...), message.QuoteJS(meta.Model)...)
	if meta.MaxTokens != nil {
		b = strconv.AppendInt(append(b, `,"maxTokens":`...), *meta.MaxTokens, 10)
	}
	if op.opts.vocabulary == CompactionEvents {
		if meta.Usage != nil {
			b = append(append(b, `,"usage":`...), meta.Usage...)
		}
		if meta.RawOutput != nil {
			b = appendBlocks(append(b, `,"rawOutput":`...), meta.RawOutput)
		}
	}
	return append(b, '}')
}

func appendBlocks(b []byte, blocks []json.RawMessage) []byte {
	b = append(b, '[')
	for k, blk := range blocks {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, blk...)
	}
	return append(b, ']')
}

// Frame returns the content of the user/message that carries summary, as
// the seed system frames it (COMP-11): the preamble and opening tag, the
// summary's blocks, the closing tag.
func Frame(summary []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(summary)+2)
	out = append(out, json.RawMessage(`{"type":"text","text":`+message.QuoteJS(CheckpointPreamble+"\n\n"+SummaryOpenTag)+`}`))
	out = append(out, summary...)
	return append(out, json.RawMessage(`{"type":"text","text":`+message.QuoteJS(SummaryCloseTag)+`}`))
}

// userMessage is the data of the user/message that carries a summary.
func userMessage(content []json.RawMessage) json.RawMessage {
	b := appendBlocks([]byte(`{"content":`), content)
	return append(append(append(b, `,"source":`...), SummarySource...), '}')
}

// checkData checks data against SURF-4 and SURF-5 for an event of type t,
// as an append would. The error names no seq: the event is not in the log.
func checkData(t event.Type, data json.RawMessage) error {
	e := event.Event{Type: t, Data: data}
	if event.IsSurface(t) {
		e.Op = event.Append()
	}
	if err := event.Check(&e, 0); err != nil {
		err.Seq, err.Index = -1, -1
		return err
	}
	return nil
}

// CheckSummary is compaction.summary_invalid when providers would refuse
// summary as the content of a user message (COMP-9): an empty list, a
// tool-call or tool-result block, or a block that is not text (with a
// string text) or image. Commit checks it; a summariser can check first.
func CheckSummary(summary []json.RawMessage) error {
	bad := func(format string, args ...any) error {
		return event.Errorf(event.CodeCompactionSummaryInvalid, -1, "the summary "+format, args...)
	}
	if len(summary) == 0 {
		return bad("is empty")
	}
	for k, b := range summary {
		var blk map[string]any
		if json.Unmarshal(b, &blk) != nil {
			return bad("block %d is not a JSON object", k)
		}
		switch blk["type"] {
		case "text":
			if _, ok := blk["text"].(string); !ok {
				return bad("block %d is a text block without a string text", k)
			}
		case "image":
		case "tool-call", "tool-result":
			return bad("block %d is a %v block: a summary makes no tool call and answers none", k, blk["type"])
		default:
			return bad("block %d has type %v: only text and image blocks are accepted", k, blk["type"])
		}
	}
	return nil
}

// Summarizer writes the summary of the shadowed messages of a compaction.
// It should return when ctx is done (Compact then aborts the compaction).
type Summarizer func(ctx context.Context, op *Operation) (summary []json.RawMessage, meta Meta, err error)

// Compact is Begin, the summariser, then Commit. It never leaves the lock
// held: on every failure after Begin it aborts the compaction (the end
// event records why) and returns the failure: the summariser's error, a
// summary Commit refuses, a cancelled ctx, or a panic of the summariser
// (aborted, then panicking again with the same value). Its errors say
// they come from compaction and keep their codes for errors.Is.
func Compact(ctx context.Context, s *session.Session, start, end int64, summarize Summarizer, opts ...Option) (Result, error) {
	op, err := Begin(ctx, s, start, end, opts...)
	if err != nil {
		return Result{}, fmt.Errorf("compaction of %d..%d: %w", start, end, err)
	}
	return op.run(ctx, summarize)
}

// run summarises and commits op, aborting it on every failure.
func (op *Operation) run(ctx context.Context, summarize Summarizer) (res Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			_ = op.Abort(fmt.Errorf("the summariser panicked: %v", r))
			panic(r)
		}
	}()
	fail := func(why error) (Result, error) {
		err := fmt.Errorf("compaction started at %d: %w", op.StartSeq, why)
		if why.Error() == "" {
			// No dangling ": " after an error without a message.
			err = fmt.Errorf("compaction started at %d: the summariser failed with an empty error%w", op.StartSeq, why)
		}
		if aerr := op.Abort(why); aerr != nil && !errors.Is(aerr, event.CodeCompactionFinished) {
			return Result{}, errors.Join(err, aerr)
		}
		return Result{}, err
	}
	summary, meta, err := summarize(ctx, op)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return fail(err)
	}
	res, err = op.Commit(ctx, summary, meta)
	if err != nil {
		return fail(err) // Abort is compaction.finished when Commit ended it
	}
	return res, nil
}

// InProgress reports the seq of the start event of the compaction open
// in s (COMP-2), and whether one is open.
func InProgress(s *session.Session) (startSeq int64, open bool) {
	t := trackerOf(s)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sync2(s)
	if t.open == nil {
		return -1, false
	}
	return t.open.seq, true
}

// AbortOpen ends the compaction open in s, whoever began it (an Operation
// lost to a bug, or a start event a crash left in the log), by appending
// its end event with cause as the error (COMP-6). Unlike Session.Repair it
// touches nothing else: a turn in progress stays open. It returns the seq
// of the start event it ended; with no compaction open it appends nothing
// and returns -1.
func AbortOpen(s *session.Session, cause error) (int64, error) {
	msg := "aborted"
	if cause != nil && cause.Error() != "" {
		msg = cause.Error()
	}
	t := trackerOf(s)
	t.mu.Lock()
	defer t.mu.Unlock()
	ended := int64(-1)
	_, err := s.AppendBatch(context.Background(), func(tx session.Tx) ([]session.Draft, error) {
		t.sync(tx)
		if t.open == nil {
			return nil, nil
		}
		ended = t.open.seq
		turn, ok := event.ObjectMember(t.open.data, "turn")
		if !ok {
			turn = []byte("null")
		}
		op := &Operation{opts: options{vocabulary: CompactEvents}, turn: turn}
		if t.open.typ == event.TypeCompactionStart {
			op.opts.vocabulary, op.id = CompactionEvents, t.open.id
		}
		return []session.Draft{op.endDraft(msg)}, nil
	})
	t.sync2(s)
	if err != nil {
		return -1, err
	}
	return ended, nil
}

// heldErr is compaction.provider_history (PROV-5).
func heldErr() error {
	return event.Errorf(event.CodeCompactionProviderHistory, -1, "the provider holds this session's history (the last reply was made on a conversation or a previous response it keeps): a compaction or prune here would never reach the model")
}

// firstOpaque is the seq of the first node in the surface positions
// [first, last] that holds an opaque provider item (PROV-4).
func firstOpaque(tx session.Tx, first, last int) (int64, bool) {
	var at int64
	found := false
	tx.Surface().Range(first, last+1, func(seq int64, m message.Message) bool {
		if opaque, _ := message.ProviderItems(m.Content); opaque {
			at, found = seq, true
			return false
		}
		return true
	})
	return at, found
}
