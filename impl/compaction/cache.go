package compaction

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/session"
)

// Watermarks is a compaction trigger that keeps a provider's prompt cache
// (the prefix of the request the provider has seen before, billed at about
// a tenth of the input price). Every compaction changes the prompt from the
// first folded node on, so the cache is lost from there once per
// compaction; a trigger that folds just enough to fit (TargetTokens at the
// budget) fires again a few requests later. Watermarks compacts only when
// the session's tokens pass High, and then folds down to Low, so the next
// compaction is (High-Low) tokens of new history away.
//
// The trade-offs: a lower Low means rarer compactions (fewer cache resets,
// fewer summariser calls) but a shorter verbatim history after each; High
// near the context window means the most history verbatim but the largest
// prompts. Use it with WithPinnedHead so that the head before the folded
// range stays cached too, and with PruneKept so that prunes happen in the
// compaction's own reset.
type Watermarks struct {
	High, Low int
	// Estimate is the estimator of the policy (nil: the selection's).
	Estimate Estimator
}

// Due says whether the session's tokens (Session.Tokens) passed High.
func (w Watermarks) Due(s *session.Session) bool { return s.Tokens() > w.High }

// Policy is the selection policy of a due compaction: fold down to Low.
func (w Watermarks) Policy() Policy { return TargetTokens(w.Low, w.Estimate) }

// Compact compacts s down to Low (CompactSelected with Policy and opts),
// and when what it may fold by opts would leave the session over High (the
// open turn alone is that large), folds into the open turn too, at any
// balanced node (WithOpenTurn, WithNodeCuts): otherwise the next request
// would trigger another compaction, which could fold only the summary just
// written, a reset of the cache for nothing. The model then sees the open
// turn's question only in the summary; pin the first prompt
// (WithPinnedHead) to keep the task verbatim.
func (w Watermarks) Compact(ctx context.Context, s *session.Session, summarize Summarizer, opts []SelectOption, beginOpts ...Option) (Result, error) {
	sel, err := Select(s, w.Policy(), opts...)
	if err != nil || sel.TokensKept > w.High {
		opts = append(slices.Clip(opts), WithOpenTurn(), WithNodeCuts())
	}
	return CompactSelected(ctx, s, w.Policy(), summarize, opts, beginOpts...)
}

// PruneKept prunes, right after a compaction, the tool results after its
// summary that the model has answered (an assistant message follows them;
// the open turn's included) and whose message is estimated at minTokens or
// more: the compaction changed the prompt from its summary on already, so
// these prunes cost the prompt cache nothing more (a prune on its own
// changes the prompt from the pruned node on: one more cache reset).
// content gives a pruned result's new content (nil: the default note). It
// returns what it pruned.
func PruneKept(s *session.Session, res Result, minTokens int, estimate Estimator, content func(seq int64) []json.RawMessage) ([]PruneResult, error) {
	if estimate == nil {
		estimate = EstimateTokens
	}
	summary, on := s.Position(res.ReplaceSeq)
	if !on {
		return nil, nil
	}
	answered := answeredResults(s.Events(), s.Surface(), summary+1, minTokens, estimate, nil)
	var out []PruneResult
	for _, seq := range answered {
		c := prunedNote
		if content != nil {
			c = content(seq)
		}
		p, err := PruneToolResult(s, seq, c)
		if err != nil {
			return out, err
		}
		out = append(out, p)
	}
	return out, nil
}

// prunedNote is PruneKept's default content of a pruned result.
var prunedNote = []json.RawMessage{json.RawMessage(`{"type":"text","text":"[tool result pruned to save context]"}`)}

// CacheCost is a provider's price of a cached input token, read and
// written, relative to an uncached one: Anthropic {0.1, 1.25} (a
// five-minute cache write costs 1.25x), OpenAI and Gemini {0.1, 1} (their
// caching is implicit and writes cost nothing more).
type CacheCost struct{ Read, Write float64 }

// PruneWorth says whether pruning the tool result at seq down to newTokens
// pays for the prompt cache it destroys, over the next requests requests:
// the pruned tokens, read from the cache at Read each request, are saved
// every request; every node from seq to the tail, read at Read before,
// has to be written again once at Write. A prune the harness cannot
// afford to wait for (the prompt would overflow) does not ask.
func PruneWorth(s *session.Session, seq int64, newTokens, requests int, c CacheCost) bool {
	pos, on := s.Position(seq)
	if !on {
		return false
	}
	sf := s.Surface()
	var tail, pruned int
	first := true
	sf.Range(pos, sf.Len(), func(_ int64, m message.Message) bool {
		if m.Role != "" {
			n := EstimateTokens(m)
			if first {
				pruned = max(n-newTokens, 0)
			}
			tail += n
		}
		first = false
		return true
	})
	saved := float64(pruned) * c.Read * float64(requests)
	destroyed := float64(tail) * (c.Write - c.Read)
	return saved > destroyed
}

// StableHead is the seq of the last node of the head pin keeps
// (WithPinnedHead): the end of the part of the prompt that never changes,
// where a provider's cache breakpoint belongs (surfaceanthropic.WithCache).
// ok is false when pin keeps no node.
func StableHead(s *session.Session, pin Pin) (seq int64, ok bool) {
	sf, log := s.Surface(), s.Events()
	n := 0
	if pin&PinContext != 0 {
		for n < sf.Len() && log[sf.At(n)].Type == event.TypeContextMessage {
			n++
		}
	}
	if pin&PinFirstPrompt != 0 && n < sf.Len() && log[sf.At(n)].Type == event.TypeUserMessage {
		n++
	}
	if n == 0 {
		return -1, false
	}
	return sf.At(n - 1), true
}
