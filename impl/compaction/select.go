package compaction

import (
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/session"
)

// Range is a proposed compaction range: the first and last node seqs.
type Range struct{ Start, End int64 }

// Policy chooses what to keep verbatim at the tail of the surface; the
// rest, from the head, is what a compaction folds (COMP-8).
type Policy interface {
	// keepFrom returns the position of the first node to keep, given the
	// surface's messages in order (nil for a node without one).
	keepFrom(nodes []message.Message) int
}

type keepLast int

func (k keepLast) keepFrom(nodes []message.Message) int { return max(len(nodes)-int(k), 0) }

// KeepLast keeps the last n surface nodes.
func KeepLast(n int) Policy { return keepLast(max(n, 0)) }

type keepTokens struct {
	budget   int
	estimate Estimator
}

func (k keepTokens) keepFrom(nodes []message.Message) int {
	total := 0
	for i := len(nodes) - 1; i >= 0; i-- {
		if nodes[i].Role != "" {
			total += k.estimate(nodes[i])
		}
		if total >= k.budget {
			return i
		}
	}
	return 0
}

// KeepTokens keeps the shortest tail of the surface whose messages are
// estimated at budget tokens or more (estimate nil: EstimateTokens).
func KeepTokens(budget int, estimate Estimator) Policy {
	if estimate == nil {
		estimate = EstimateTokens
	}
	return keepTokens{budget: budget, estimate: estimate}
}

// Select proposes the range a compaction under policy folds: from the
// surface's head to the node before the first kept one, moved back to
// the nearest cut that no unanswered tool call crosses (COMP-4, COMP-8),
// so it never folds a pending call or splits a call from its result. When
// nothing is left to fold it returns compaction.nothing_to_compact. It
// costs O(surface).
func Select(s *session.Session, policy Policy) (Range, error) {
	t := trackerOf(s)
	t.mu.Lock()
	defer t.mu.Unlock()
	var r Range
	var serr error
	_, _ = s.AppendBatch(func(tx session.Tx) ([]session.Draft, error) {
		t.sync(tx)
		seqs := tx.Surface()
		nodes := make([]message.Message, 0, seqs.Len())
		order := make([]int64, 0, seqs.Len())
		seqs.Range(0, seqs.Len(), func(seq int64, m message.Message) bool {
			nodes, order = append(nodes, m), append(order, seq)
			return true
		})
		keep := policy.keepFrom(nodes)
		for keep > 0 && t.after[order[keep-1]] != 0 {
			keep--
		}
		if keep == 0 {
			serr = event.Errorf(event.CodeCompactionNothingToCompact, -1, "the policy keeps every node, or no cut before the kept ones is balanced")
			return nil, nil
		}
		r = Range{Start: order[0], End: order[keep-1]}
		return nil, nil
	})
	return r, serr
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
	_, _ = s.AppendBatch(func(tx session.Tx) ([]session.Draft, error) {
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
