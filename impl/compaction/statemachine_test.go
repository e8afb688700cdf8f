package compaction_test

import (
	"flag"
	"os"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/internal/ops"
)

// TestMain raises rapid's defaults (RAPID_CHECKS / -rapid.checks change them).
func TestMain(m *testing.M) {
	flag.Parse()
	ops.SetRapidDefaults(400, 60)
	os.Exit(m.Run())
}

// TestCompactionStateMachine drives Begin, Commit, Abort, PruneToolResult,
// Select and the balance queries of package compaction, and the same
// operations of the model (which computes every rule by rescanning the
// log), in lockstep with appends (tool calls and results, turns, any event),
// replaces, crashes in the middle of a compaction (the compactor forgets
// its operation, or the session is reloaded from its log) and repairs; it
// compares every step's outcome (error code, events appended, range,
// balance) and the whole state.
//
// Rules exercised: COMP-1 COMP-2 COMP-3 COMP-4 COMP-5 COMP-6 COMP-7 COMP-8
// REP-6 PROV-3 PROV-4 PROV-5 PROV-6 (replies with providers' items: opaque
// and not, a provider's compaction, a response record holding the history
// or not).
func TestCompactionStateMachine(t *testing.T) {
	produced := map[string]int{}
	checks := 0
	rapid.Check(t, func(t *rapid.T) {
		p := ops.NewPair()
		checks++
		defer func() {
			for c, n := range p.Codes {
				produced[c] += n
			}
		}()
		step := func(s ops.Step) {
			if d := p.Step(s); d != "" {
				t.Fatal(d)
			}
		}
		state := p.ModelState
		gen := func(g func(ops.Chooser, ops.State) ops.Step) func(*rapid.T) {
			return func(t *rapid.T) { step(g(ops.Rapid{T: t}, state())) }
		}
		t.Repeat(map[string]func(*rapid.T){
			"traffic":  gen(ops.GenToolTraffic),
			"traffic2": gen(ops.GenToolTraffic),
			"traffic3": gen(ops.GenToolTraffic),
			"append":   gen(ops.GenAppend),
			"replace":  gen(ops.GenReplace),
			"begin":    gen(ops.GenBegin),
			"begin2":   gen(ops.GenBegin),
			"commit":   gen(ops.GenCommit),
			"commit2":  gen(ops.GenCommit),
			"abort":    gen(ops.GenAbort),
			"prune":    gen(ops.GenPrune),
			"select":   gen(ops.GenSelect),
			"provider": gen(ops.GenProviderReply),
			"opaque":   gen(ops.GenBeginOpaque),
			"select2":  gen(ops.GenSelectOpaque),
			"balance":  gen(ops.GenBalance),
			"forget":   func(t *rapid.T) { step(ops.Step{Kind: ops.KindForget}) },
			"reload":   func(t *rapid.T) { step(ops.Step{Kind: ops.KindReload}) },
			"repair":   func(t *rapid.T) { step(ops.Step{Kind: ops.KindRepair}) },
			"":         func(t *rapid.T) {},
		})
	})
	if checks >= 200 {
		for _, c := range event.Codes() {
			if strings.HasPrefix(string(c), "compaction.") && produced[string(c)] == 0 {
				t.Errorf("no step produced %s", c)
			}
		}
	}
	t.Logf("outcomes over %d checks: %v", checks, produced)
}

// TestCompactionStrict runs the compaction machine in strict mode, with
// harness traffic aimed at the strict rules (ops.GenStrictStep) beside
// tool traffic and raw replaces, against the model in strict mode. What
// a compaction writes (a summary, a prune's result, their ends) is never
// refused by a strict rule: COMP-4's balanced ranges keep every call with
// its result, as STRICT-7 asks.
func TestCompactionStrict(t *testing.T) {
	written := map[ops.Kind]int{} // compaction steps that wrote
	property := func(t *rapid.T) {
		p := ops.NewStrictPair()
		step := func(s ops.Step) {
			before, ok := strictCodes(p.Codes), p.Codes[""]
			if d := p.Step(s); d != "" {
				t.Fatal(d)
			}
			switch s.Kind {
			case ops.KindBegin, ops.KindCommit, ops.KindAbort, ops.KindPrune:
				if strictCodes(p.Codes) != before {
					t.Fatalf("a %s was refused by a strict rule: %v", s.Kind, p.Codes)
				}
				if p.Codes[""] > ok {
					written[s.Kind]++
				}
			}
		}
		state := p.ModelState
		gen := func(g func(ops.Chooser, ops.State) ops.Step) func(*rapid.T) {
			return func(t *rapid.T) { step(g(ops.Rapid{T: t}, state())) }
		}
		t.Repeat(map[string]func(*rapid.T){
			"strict":  gen(ops.GenStrictStep),
			"strict2": gen(ops.GenStrictStep),
			"traffic": gen(ops.GenToolTraffic),
			"replace": gen(ops.GenReplace),
			"begin":   gen(ops.GenBegin),
			"begin2":  gen(ops.GenBegin),
			"commit":  gen(ops.GenCommit),
			"commit2": gen(ops.GenCommit),
			"abort":   gen(ops.GenAbort),
			"prune":   gen(ops.GenPrune),
			"select":  gen(ops.GenSelect),
			"forget":  func(t *rapid.T) { step(ops.Step{Kind: ops.KindForget}) },
			"reload":  func(t *rapid.T) { step(ops.Step{Kind: ops.KindReload}) },
			"repair":  func(t *rapid.T) { step(ops.Step{Kind: ops.KindRepair}) },
			"":        func(t *rapid.T) {},
		})
	}
	rapid.Check(t, property)
	// A short run (-short or few checks) may see no writing prune; more
	// runs, each with a seed of its own, until both kinds wrote.
	for round := 0; round < 8 && (written[ops.KindCommit] == 0 || written[ops.KindPrune] == 0); round++ {
		rapid.Check(t, property)
	}
	for _, k := range []ops.Kind{ops.KindCommit, ops.KindPrune} {
		if written[k] == 0 {
			t.Errorf("no %s wrote anything in strict mode: the check above saw nothing", k)
		}
	}
	t.Logf("compaction steps that wrote: %v", written)
}

// strictCodes counts the strict codes among codes.
func strictCodes(codes map[string]int) int {
	n := 0
	for c, k := range codes {
		if strings.HasPrefix(c, "strict.") {
			n += k
		}
	}
	return n
}
