package cachesim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/surfacelog/surface/impl/compaction"
	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/impl/message"
	"github.com/surfacelog/surface/impl/session"
)

// Workload is a synthetic long coding session.
type Workload struct {
	Name string
	Seed uint64
	// Turns is the number of user turns; Steps the most model calls of a
	// turn; Calls the most tool calls of a step.
	Turns, Steps, Calls int
	// ResultTokens bounds a tool result's size; PromptTokens a prompt's.
	ResultTokens, PromptTokens [2]int
	// ContextTokens is the context the session begins with (instructions,
	// project notes); SystemTokens the system prompt and tools every
	// request puts first.
	ContextTokens, SystemTokens int
	// PauseEvery turns on average, the user pauses for Pause (longer than
	// the caches' lifetime).
	PauseEvery int
	Pause      time.Duration
	// Steering is the chance that the user steers during a step.
	Steering float64
}

// Workloads are the report's sessions: long coding sessions of 50 to 300
// turns, with many tool calls and large results, steering, and pauses
// longer than a cache's lifetime.
var Workloads = []Workload{
	{Name: "coding-120", Seed: 1, Turns: 120, Steps: 6, Calls: 3, ResultTokens: [2]int{200, 6000}, PromptTokens: [2]int{30, 400}, ContextTokens: 3000, SystemTokens: 6000, PauseEvery: 15, Pause: 20 * time.Minute, Steering: 0.05},
	{Name: "tool-heavy-60", Seed: 2, Turns: 60, Steps: 10, Calls: 3, ResultTokens: [2]int{1000, 8000}, PromptTokens: [2]int{30, 300}, ContextTokens: 4000, SystemTokens: 8000, PauseEvery: 10, Pause: 30 * time.Minute, Steering: 0.1},
	{Name: "marathon-300", Seed: 3, Turns: 300, Steps: 4, Calls: 2, ResultTokens: [2]int{100, 4000}, PromptTokens: [2]int{20, 600}, ContextTokens: 2000, SystemTokens: 5000, PauseEvery: 25, Pause: 45 * time.Minute, Steering: 0.05},
	{Name: "long-prompts-50", Seed: 4, Turns: 50, Steps: 3, Calls: 2, ResultTokens: [2]int{500, 3000}, PromptTokens: [2]int{1000, 4000}, ContextTokens: 1500, SystemTokens: 3000, PauseEvery: 8, Pause: 10 * time.Minute, Steering: 0},
}

// Window is the largest prompt a request may send (a request over it is an
// overflow), Budget the prompt size the policies keep under.
const (
	Window = 128000
	Budget = 100000
)

// Policy is what a harness does before each request to keep the prompt
// under the budget.
type Policy interface {
	Name() string
	// Before compacts or prunes s before a request; it reports whether it
	// compacted and how many results it pruned.
	Before(ctx context.Context, s *session.Session, sum compaction.Summarizer) (compacted bool, pruned int, err error)
	// Pinned is the number of head messages the policy never changes (the
	// adapter's stable-head breakpoint goes after them).
	Pinned(s *session.Session) int
}

// Base is the head-anchored policy of the guide: when the session is over
// the budget, prune every tool result ProposePrunes lists, then, if still
// over, compact with TargetTokens(budget).
type Base struct{ Budget, PruneMin int }

func (Base) Name() string { return "head-anchored" }

func (p Base) Before(ctx context.Context, s *session.Session, sum compaction.Summarizer) (bool, int, error) {
	if s.Tokens() <= p.Budget {
		return false, 0, nil
	}
	n := 0
	for _, seq := range compaction.ProposePrunes(s, p.PruneMin, nil) {
		if _, err := compaction.PruneToolResult(s, seq, note); err != nil {
			return false, n, err
		}
		n++
	}
	if s.Tokens() <= p.Budget {
		return false, n, nil
	}
	_, err := compaction.CompactSelected(ctx, s, compaction.TargetTokens(p.Budget, nil), sum, nil, compaction.WithVocabulary(compaction.CompactionEvents))
	return err == nil, n, err
}

func (Base) Pinned(*session.Session) int { return 0 }

// CacheAware is the documented cache-keeping policy: compaction only past
// the high watermark, down to the low one, the head (context and first
// prompt) pinned, and prunes done only right after a compaction, after
// its summary (compaction.PruneKept), so they cost no reset of their own.
type CacheAware struct {
	compaction.Watermarks
	PruneMin int
}

func (CacheAware) Name() string { return "watermarks+pinned" }

var pin = compaction.WithPinnedHead(compaction.PinContext | compaction.PinFirstPrompt)

func (p CacheAware) Before(ctx context.Context, s *session.Session, sum compaction.Summarizer) (bool, int, error) {
	if !p.Due(s) {
		return false, 0, nil
	}
	res, err := p.Compact(ctx, s, sum, []compaction.SelectOption{pin}, compaction.WithVocabulary(compaction.CompactionEvents))
	if err != nil {
		return false, 0, err
	}
	pr, err := compaction.PruneKept(s, res, p.PruneMin, nil, func(int64) []json.RawMessage { return note })
	return true, len(pr), err
}

func (CacheAware) Pinned(s *session.Session) int { return pinnedCount(s) }

// Gated is CacheAware plus prunes between compactions, each only when
// compaction.PruneWorth says it pays for the cache it destroys over the
// next Requests requests (priced at Anthropic's cache, the dearest to
// write): a prune of its own is one more reset, taken only when it saves
// more than it costs.
type Gated struct {
	CacheAware
	Requests int
}

func (Gated) Name() string { return "watermarks+gated-prunes" }

func (p Gated) Before(ctx context.Context, s *session.Session, sum compaction.Summarizer) (bool, int, error) {
	if p.Due(s) {
		return p.CacheAware.Before(ctx, s, sum)
	}
	n := 0
	for _, seq := range compaction.ProposePrunes(s, p.PruneMin, nil) {
		if !compaction.PruneWorth(s, seq, 10, p.Requests, compaction.CacheCost{Read: Anthropic.Read, Write: Anthropic.Write}) {
			continue
		}
		if _, err := compaction.PruneToolResult(s, seq, note); err != nil {
			return false, n, err
		}
		n++
	}
	return false, n, nil
}

// pinnedCount is the number of head nodes WithPinnedHead(PinContext|PinFirstPrompt) keeps.
func pinnedCount(s *session.Session) int {
	sf, log := s.Surface(), s.Events()
	n := 0
	for n < sf.Len() && log[sf.At(n)].Type == event.TypeContextMessage {
		n++
	}
	if n < sf.Len() && log[sf.At(n)].Type == event.TypeUserMessage {
		n++
	}
	return n
}

var note = []json.RawMessage{json.RawMessage(`{"type":"text","text":"[tool result pruned to save context]"}`)}

// Result is one row of the report.
type Result struct {
	Workload, Provider, Policy string
	Requests                   int
	Input, Read, Written       int64
	// Cost is the effective input cost in base-price tokens.
	Cost float64
	// Resets counts requests whose prompt does not begin with the whole
	// previous prompt (the prefix changed before its tail); PruneResets
	// those of them that followed prunes without a compaction.
	Resets, PruneResets, Compactions, Prunes int
	Overflows, LargestPrompt                 int
}

// CachedFraction is the share of input tokens read from the cache.
func (r Result) CachedFraction() float64 { return float64(r.Read) / float64(max(r.Input, 1)) }

// ResetsPerCompaction is Resets / Compactions.
func (r Result) ResetsPerCompaction() float64 {
	return float64(r.Resets) / float64(max(r.Compactions, 1))
}

// Run plays workload w under policy p, sending every request to a cache of
// each model, and returns a result per model.
func Run(w Workload, p Policy, models []Model) ([]Result, error) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(w.Seed, 99))
	clock := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	s := session.New(session.WithClock(func() int64 { return clock.UnixMilli() }))
	caches := make([]*Cache, len(models))
	out := make([]Result, len(models))
	for i, m := range models {
		caches[i] = NewCache(m)
		out[i] = Result{Workload: w.Name, Provider: m.Name, Policy: p.Name()}
	}
	between := func(b [2]int) int { return b[0] + r.IntN(b[1]-b[0]+1) }
	text := func(tokens int) []json.RawMessage { return event.Text(strings.Repeat("x", tokens*4-14)) }
	summarize := func(_ context.Context, op *compaction.Operation) ([]json.RawMessage, compaction.Meta, error) {
		return text(1500), compaction.Meta{Provider: "sim", Model: "summariser"}, nil
	}
	if _, err := s.Append(ctx, event.ContextMessageData{Content: text(w.ContextTokens), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent()); err != nil {
		return nil, err
	}
	var prev []int64
	compactedSince, prunedSince := false, 0
	request := func() error {
		compacted, pruned, err := p.Before(ctx, s, summarize)
		if err != nil && !errors.Is(err, event.CodeCompactionNothingToCompact) && !errors.Is(err, event.CodeCompactionNotSmaller) {
			return err
		}
		if compacted {
			compactedSince = true
			for i := range out {
				out[i].Compactions++
			}
		}
		if pruned > 0 {
			prunedSince += pruned
			for i := range out {
				out[i].Prunes += pruned
			}
		}
		prompt := []Msg{{ID: -1, Tokens: w.SystemTokens, Breakpoint: true}}
		ids := []int64{}
		sf := s.Surface()
		sf.Range(0, sf.Len(), func(seq int64, m message.Message) bool {
			if m.Role != "" {
				prompt = append(prompt, Msg{ID: seq, Tokens: compaction.EstimateTokens(m)})
				ids = append(ids, seq)
			}
			return true
		})
		if k := p.Pinned(s); k > 0 && k < len(prompt) {
			prompt[k].Breakpoint = true // the end of the stable head
		}
		prompt[len(prompt)-1].Breakpoint = true
		reset := len(prev) > len(ids) || !equal(prev, ids[:len(prev)])
		for i, c := range caches {
			b := c.Request(prompt, clock)
			o := &out[i]
			o.Requests++
			o.Input += int64(b.Input)
			o.Read += int64(b.Read)
			o.Written += int64(b.Written)
			o.Cost += b.Cost
			o.LargestPrompt = max(o.LargestPrompt, b.Input)
			if b.Input > Window {
				o.Overflows++
			}
			if reset {
				o.Resets++
				if !compactedSince && prunedSince > 0 {
					o.PruneResets++
				}
			}
		}
		prev, compactedSince, prunedSince = ids, false, 0
		clock = clock.Add(time.Duration(5+r.IntN(25)) * time.Second)
		return nil
	}
	for t := 0; t < w.Turns; t++ {
		if w.PauseEvery > 0 && r.IntN(w.PauseEvery) == 0 {
			clock = clock.Add(w.Pause)
		}
		turn := s.NextTurn()
		s.Append(ctx, event.TurnStartData{Turn: turn, Trigger: json.RawMessage(`{"kind":"message"}`)})
		if _, err := s.Append(ctx, event.UserMessageData{Content: text(between(w.PromptTokens)), Source: json.RawMessage(`{"kind":"user"}`)}, event.AppendIntent()); err != nil {
			return nil, err
		}
		steps := 1 + r.IntN(w.Steps)
		for step := int64(1); step <= int64(steps); step++ {
			s.Append(ctx, event.StepStartData{Turn: turn, Step: step})
			if err := request(); err != nil {
				return nil, fmt.Errorf("%s turn %d: %w", w.Name, turn, err)
			}
			calls := 0
			if int(step) < steps {
				calls = 1 + r.IntN(w.Calls)
			}
			content := text(20 + r.IntN(300))
			for c := 0; c < calls; c++ {
				content = append(content, json.RawMessage(fmt.Sprintf(`{"type":"tool-call","id":"c%d_%d_%d","name":"run","arguments":"{}"}`, turn, step, c)))
			}
			a, err := s.Append(ctx, event.AssistantMessageData{Turn: turn, Step: step, Content: content}, event.AppendIntent())
			if err != nil {
				return nil, err
			}
			for c := 0; c < calls; c++ {
				clock = clock.Add(time.Duration(1+r.IntN(20)) * time.Second)
				if _, err := s.Append(ctx, event.ToolResultData{Turn: turn, Step: step, CallID: fmt.Sprintf("c%d_%d_%d", turn, step, c), Content: text(between(w.ResultTokens))}, event.AppendIntent(a.Seq)); err != nil {
					return nil, err
				}
			}
			if w.Steering > 0 && r.Float64() < w.Steering {
				s.SteerWhenBalanced(event.SteeringMessageData{Turn: turn, Content: text(30), Source: json.RawMessage(`{"kind":"user"}`)})
			}
			s.Append(ctx, event.StepEndData{Turn: turn, Step: step})
		}
		s.Append(ctx, event.TurnEndData{Turn: turn, Reason: json.RawMessage(`{"kind":"completed"}`)})
	}
	return out, nil
}

func equal(a, b []int64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Policies are the report's policies: the baseline first.
func Policies() []Policy {
	return []Policy{
		Base{Budget: Budget, PruneMin: 1000},
		CacheAware{Watermarks: compaction.Watermarks{High: Budget, Low: 20000}, PruneMin: 1000},
		Gated{CacheAware: CacheAware{Watermarks: compaction.Watermarks{High: Budget, Low: 20000}, PruneMin: 1000}, Requests: 30},
	}
}

// Report runs every workload (Workloads, or those given) under every
// policy and returns the rows.
func Report(workloads ...Workload) ([]Result, error) {
	if len(workloads) == 0 {
		workloads = Workloads
	}
	var out []Result
	for _, w := range workloads {
		for _, p := range Policies() {
			rs, err := Run(w, p, Models)
			if err != nil {
				return nil, err
			}
			out = append(out, rs...)
		}
	}
	return out, nil
}
