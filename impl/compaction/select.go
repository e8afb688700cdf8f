package compaction

import (
	"context"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/session"
	"github.com/surfacelog/surface/impl/view"
)

// Range is a proposed compaction range: the first and last node seqs.
type Range struct{ Start, End int64 }

// Selection is what a policy chose: the range to fold, from the head of
// the surface, and what it leaves.
type Selection struct {
	Range
	// Folded is the number of surface nodes in the range.
	Folded int
	// TokensBefore is the estimated tokens of the whole surface, and
	// TokensKept those of the nodes after the range (the summary not
	// counted).
	TokensBefore, TokensKept int
	// OverBudget is set by TargetTokens when even folding everything the
	// options allow keeps more than the budget (the open turn alone is over
	// it, say): the range is then the most that may be folded.
	OverBudget bool
}

// Policy chooses what to keep verbatim at the tail of the surface; the
// rest, from the head, is what a compaction folds (COMP-8, COMP-10).
type Policy interface {
	// cut returns the first position to keep among the allowed cuts (an
	// ascending list of positions, each a balanced cut), or 0 to fold
	// nothing.
	cut(v *selectView, cuts []int) (keep int, overBudget bool)
}

// selectView is the surface as a policy sees it.
type selectView struct {
	seqs   []int64
	tokens []int // estimated tokens per node (0 for a node without a message)
	turn   []int32
	open   int32 // ordinal of the open turn, -1 when none is open
	msgs   []message.Message
	events []*event.Event
	// head is the first position a range may start at: after the last
	// node holding a provider's compaction (PROV-4); the nodes before it
	// stay.
	head int
}

// tokensWith is the tokens per node by estimate (nil: the selection's).
func (v *selectView) tokensWith(estimate Estimator) []int {
	if estimate == nil {
		return v.tokens
	}
	out := make([]int, len(v.seqs))
	for i, m := range v.msgs {
		if m.Role != "" {
			out[i] = message.Tokens(v.events[i], m, estimate)
		}
	}
	return out
}

// lastAtMost is the largest cut ≤ pos, or 0.
func lastAtMost(cuts []int, pos int) int {
	keep := 0
	for _, c := range cuts {
		if c <= pos {
			keep = c
		}
	}
	return keep
}

type keepLast int

func (k keepLast) cut(v *selectView, cuts []int) (int, bool) {
	return lastAtMost(cuts, len(v.seqs)-int(k)), false
}

// KeepLast keeps at least the last n surface nodes.
func KeepLast(n int) Policy { return keepLast(max(n, 0)) }

type keepTurns int

func (k keepTurns) cut(v *selectView, cuts []int) (int, bool) {
	// The first node of each complete turn, from the tail: keep the last
	// k of them (the open turn is never counted, and never folded unless
	// the options allow it).
	seen, pos := 0, len(v.seqs)
	for i := len(v.seqs) - 1; i >= 0; i-- {
		if v.turn[i] == v.open { // never when no turn is open (open -1)
			pos = i
			continue
		}
		if i == 0 || v.turn[i-1] != v.turn[i] {
			if seen == int(k) {
				break
			}
			seen++
			pos = i
		}
	}
	if seen < int(k) {
		pos = 0
	}
	return lastAtMost(cuts, pos), false
}

// KeepTurns keeps the last n complete turns (and the open turn) verbatim,
// and folds the turns before them.
func KeepTurns(n int) Policy { return keepTurns(max(n, 0)) }

type keepTokens struct {
	budget   int
	target   bool
	estimate Estimator
}

func (k keepTokens) cut(v *selectView, cuts []int) (int, bool) {
	tokens := v.tokensWith(k.estimate)
	suffix := make([]int, len(v.seqs)+1)
	for i := len(v.seqs) - 1; i >= 0; i-- {
		suffix[i] = suffix[i+1] + tokens[i]
	}
	if !k.target {
		// At least budget tokens kept: the shortest tail that reaches it.
		pos := 0
		for i := len(v.seqs) - 1; i >= 0; i-- {
			if suffix[i] >= k.budget {
				pos = i
				break
			}
		}
		return lastAtMost(cuts, pos), false
	}
	pinned := suffix[0] - suffix[v.head] // the nodes before head stay
	if suffix[0] <= k.budget {
		return 0, false // it fits already
	}
	for _, c := range cuts {
		if suffix[c]+pinned <= k.budget {
			return c, false
		}
	}
	if len(cuts) == 0 {
		return 0, true
	}
	return cuts[len(cuts)-1], true
}

// KeepTokens keeps at least budget estimated tokens verbatim: the shortest
// tail of the surface that reaches the budget (COMP-8); estimate nil is
// the selection's estimator. It is a minimum kept, not a ceiling: for a
// budget of the whole request, use TargetTokens.
func KeepTokens(budget int, estimate Estimator) Policy {
	return keepTokens{budget: budget, estimate: estimate}
}

// TargetTokens (estimate nil: the selection's estimator) folds as little as it can, and as much as it takes, to bring
// the estimated tokens of the surface after the range to at most budget:
// whole turns by default. When even the most the options allow to fold
// leaves more (the open turn alone is over the budget), it folds that much
// and says so in Selection.OverBudget. When the surface fits already it
// folds nothing (compaction.nothing_to_compact).
func TargetTokens(budget int, estimate Estimator) Policy {
	return keepTokens{budget: budget, target: true, estimate: estimate}
}

// SelectOption configures Select.
type SelectOption func(*selectOptions)

type selectOptions struct {
	nodeCuts, openTurn, opaque bool
	pin                        Pin
	estimate                   Estimator
}

// Pin says which head of the surface a selection never folds (WithPinnedHead).
type Pin uint8

const (
	// PinContext pins the context messages the surface begins with
	// (instructions, project files): the part of the prompt that never
	// changes.
	PinContext Pin = 1 << iota
	// PinFirstPrompt pins, after them, the session's first user message
	// (the task) too.
	PinFirstPrompt
)

// WithPinnedHead keeps the head of the surface that pin names out of every
// range: a compaction then folds what follows it, so the pinned head (with
// the system prompt and tools a request puts before it) stays the same
// prefix of every request, and a provider's prompt cache keeps it across
// compactions. The cost: the pinned nodes are never summarised, so they
// count against the budget for good.
func WithPinnedHead(pin Pin) SelectOption { return func(o *selectOptions) { o.pin = pin } }

// WithNodeCuts lets a selection cut between any two nodes whose cut is
// balanced, not only between turns (COMP-8's node-level selection).
func WithNodeCuts() SelectOption { return func(o *selectOptions) { o.nodeCuts = true } }

// WithOpenTurn lets a selection fold into the open turn: its prompt and
// what followed it. Without it no policy folds the open turn, so the
// model always sees the question it is answering.
func WithOpenTurn() SelectOption { return func(o *selectOptions) { o.openTurn = true } }

// WithOpaqueSelection lets a selection fold nodes that hold providers'
// opaque items (PROV-4); without it a selection stops before the first of
// them. BeginSelected and CompactSelected with WithOpaqueItems imply it.
func WithOpaqueSelection() SelectOption { return func(o *selectOptions) { o.opaque = true } }

// WithSelectEstimator sets the estimator of the token policies (default
// EstimateTokens); an assistant message that recorded its provider's
// usage is counted by that (UsageTokens) whatever the estimator.
func WithSelectEstimator(e Estimator) SelectOption {
	return func(o *selectOptions) { o.estimate = e }
}

// Select proposes the range a compaction under policy folds: from the
// surface's head to the node before the first kept one (COMP-8, COMP-10).
// By default it cuts only where a turn begins and never folds the open
// turn (its prompt and everything after it); WithNodeCuts and WithOpenTurn
// lift each. Every cut is balanced (COMP-4): a selection never folds a
// pending tool call or splits a call from its result. When nothing is
// left to fold it returns compaction.nothing_to_compact. It costs
// O(surface). To choose and begin with no append in between, use
// BeginSelected or CompactSelected.
func Select(s *session.Session, policy Policy, opts ...SelectOption) (Selection, error) {
	t := trackerOf(s)
	t.mu.Lock()
	defer t.mu.Unlock()
	var sel Selection
	var serr error
	_, _ = s.AppendBatch(context.Background(), func(tx session.Tx) ([]session.Draft, error) {
		t.sync(tx)
		sel, _, _, serr = t.choose(tx, policy, opts)
		return nil, nil
	})
	return sel, serr
}

// choose runs policy over the current surface and returns the selection
// and its first and last positions.
func (t *tracker) choose(tx session.Tx, policy Policy, opts []SelectOption) (Selection, int, int, error) {
	o := selectOptions{estimate: EstimateTokens}
	for _, f := range opts {
		f(&o)
	}
	log := tx.Events()
	surface := tx.Surface()
	v := &selectView{open: -1}
	if t.turn != nil {
		v.open = t.turns
	}
	sel := Selection{}
	surface.Range(0, surface.Len(), func(seq int64, m message.Message) bool {
		n := 0
		if m.Role != "" {
			n = message.Tokens(&log[seq], m, o.estimate)
		}
		v.seqs, v.tokens, v.turn = append(v.seqs, seq), append(v.tokens, n), append(v.turn, t.turnAt(seq))
		v.msgs, v.events = append(v.msgs, m), append(v.events, &log[seq])
		sel.TokensBefore += n
		return true
	})
	limit := len(v.seqs)
	if !o.openTurn {
		for i, tn := range v.turn {
			if tn == v.open {
				limit = i
				break
			}
		}
	}
	v.head = t.providerHead(tx)
	if o.pin != 0 {
		v.head = max(v.head, pinned(log, v.seqs, o.pin))
	}
	if !o.opaque {
		for i := v.head; i < limit; i++ {
			if opaque, _ := message.ProviderItems(v.msgs[i].Content); opaque {
				limit = i // never fold a provider's opaque item (PROV-4)
				break
			}
		}
	}
	var cuts []int
	for c := v.head + 1; c <= limit; c++ {
		if t.after[v.seqs[c-1]] != 0 {
			continue // unbalanced
		}
		if o.nodeCuts || c == limit || c == len(v.seqs) || v.turn[c] != v.turn[c-1] {
			cuts = append(cuts, c)
		}
	}
	keep, over := policy.cut(v, cuts)
	if keep == 0 {
		return sel, 0, 0, event.Errorf(event.CodeCompactionNothingToCompact, -1, "nothing to fold: the policy keeps every node, or no allowed cut before the kept ones is balanced")
	}
	sel.Range = Range{Start: v.seqs[v.head], End: v.seqs[keep-1]}
	sel.Folded, sel.OverBudget = keep-v.head, over
	for _, n := range v.tokens[keep:] {
		sel.TokensKept += n
	}
	for _, n := range v.tokens[:v.head] {
		sel.TokensKept += n
	}
	return sel, v.head, keep - 1, nil
}

// pinned is the number of head nodes pin keeps: the leading context
// messages, and with PinFirstPrompt the first user message after them.
func pinned(log []event.Event, seqs []int64, pin Pin) int {
	n := 0
	if pin&PinContext != 0 {
		for n < len(seqs) && log[seqs[n]].Type == event.TypeContextMessage {
			n++
		}
	}
	if pin&PinFirstPrompt != 0 && n < len(seqs) && log[seqs[n]].Type == event.TypeUserMessage {
		n++
	}
	return n
}

// UsageTokens is message.UsageTokens: the output tokens an
// assistant/message's data records in its usage.
func UsageTokens(data []byte) (int, bool) { return message.UsageTokens(data) }

// BeginSelected chooses a range by policy (as Select does) and begins its
// compaction (as Begin does) in one step under the session's write lock:
// no append comes between the choice and the start event, so concurrent
// appenders never make it fail. The Operation's Selection says what was
// chosen.
func BeginSelected(ctx context.Context, s *session.Session, policy Policy, opts []SelectOption, beginOpts ...Option) (*Operation, error) {
	var sel Selection
	op, err := begin(ctx, s, beginOpts, func(t *tracker, tx session.Tx, o options) (int, int, error) {
		var first, last int
		var err error
		if o.opaque {
			opts = append(opts[:len(opts):len(opts)], WithOpaqueSelection())
		}
		sel, first, last, err = t.choose(tx, policy, opts)
		return first, last, err
	})
	if op != nil {
		op.Selection = sel
	}
	return op, err
}

// CompactSelected is BeginSelected, then the summariser and Commit as in
// Compact: the one call an agent makes when its context grows too large.
// Like Compact it never leaves the lock held.
func CompactSelected(ctx context.Context, s *session.Session, policy Policy, summarize Summarizer, opts []SelectOption, beginOpts ...Option) (Result, error) {
	op, err := BeginSelected(ctx, s, policy, opts, beginOpts...)
	if err != nil {
		return Result{}, err
	}
	res, err := op.run(ctx, summarize)
	res.Selection = op.Selection
	return res, err
}

// ProposePrunes proposes the tool results worth pruning: tool/result nodes
// on the surface whose message is estimated at minTokens or more, that the
// model has already answered (an assistant message follows them on the
// surface) and that lie before the open turn. They are in surface order;
// prune each with PruneToolResult.
func ProposePrunes(s *session.Session, minTokens int, estimate Estimator) []int64 {
	if estimate == nil {
		estimate = EstimateTokens
	}
	t := trackerOf(s)
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []int64
	_, _ = s.AppendBatch(context.Background(), func(tx session.Tx) ([]session.Draft, error) {
		t.sync(tx)
		out = answeredResults(tx.Events(), tx.Surface(), 0, minTokens, estimate, func(seq int64) bool {
			return t.turn != nil && t.turnAt(seq) == t.turns // the open turn
		})
		return nil, nil
	})
	return out
}

// answeredResults are the tool/result nodes of surface from position
// from on, up to the first node stop says ends the scan, whose message is
// estimated at minTokens or more and that an assistant message follows
// (the model has read them).
func answeredResults(log []event.Event, surface view.Seqs, from, minTokens int, estimate Estimator, stop func(seq int64) bool) []int64 {
	var out, candidates []int64
	surface.Range(from, surface.Len(), func(seq int64, m message.Message) bool {
		if stop != nil && stop(seq) {
			return false
		}
		switch log[seq].Type {
		case event.TypeToolResult:
			if m.Role != "" && estimate(m) >= minTokens {
				candidates = append(candidates, seq)
			}
		case event.TypeAssistantMessage:
			if m.Role != "" {
				out, candidates = append(out, candidates...), candidates[:0]
			}
		}
		return true
	})
	return out
}

// BalancedBefore reports whether no unanswered tool call crosses the cut
// just before node seq (COMP-4); ok is false when seq is not on the
// surface. O(1) amortised: the balances are kept as events are appended
// and rebuilt after a replace.
func BalancedBefore(s *session.Session, seq int64) (balanced, ok bool) {
	return balance(s, seq, false)
}

// BalancedAfter reports whether no unanswered tool call crosses the cut
// just after node seq (COMP-4); ok is false when seq is not on the surface.
func BalancedAfter(s *session.Session, seq int64) (balanced, ok bool) {
	return balance(s, seq, true)
}

func balance(s *session.Session, seq int64, after bool) (balanced, ok bool) {
	t := trackerOf(s)
	t.mu.Lock()
	defer t.mu.Unlock()
	_, _ = s.AppendBatch(context.Background(), func(tx session.Tx) ([]session.Draft, error) {
		t.sync(tx)
		if ok = onSurface(tx, seq); ok {
			if after {
				balanced = t.after[seq] == 0
			} else {
				balanced = t.before[seq] == 0
			}
		}
		return nil, nil
	})
	return balanced, ok
}
