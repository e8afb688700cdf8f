package session_test

import (
	"flag"
	"os"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/surfacelog/surface/impl/event"
	"github.com/surfacelog/surface/internal/ops"
)

// TestMain raises rapid's defaults to 1000 checks of about 40 steps each
// (-rapid.checks, -rapid.steps or RAPID_CHECKS, RAPID_STEPS change them).
func TestMain(m *testing.M) {
	flag.Parse()
	ops.SetRapidDefaults(1000, 40)
	os.Exit(m.Run())
}

// TestStateMachine drives random Append (valid and invalid), Replace
// (valid, overlapping, nested, head, tail, whole surface, reversed,
// off-surface, incomplete sources), Seed (events and wire form, intact or
// broken), Fork and Provenance against the model, and bursts of appends
// and replaces with no query in between, comparing the outcome of
// every step (error code, appended event, provenance) and the whole state
// (log, surface, messages) with go-cmp. Failing cases are saved by rapid
// under testdata/rapid and replayed on every run.
//
// Rules exercised: SURF-1 SURF-2 SURF-3 SURF-4 SURF-5 SURF-6 SURF-7 SURF-8
// SURF-9 SURF-10 SURF-11 SURF-12 SURF-13 SURF-14 SURF-15 SURF-16 SURF-17
// SURF-18 SURF-19 SURF-20 SURF-21 SURF-22 SURF-23 SURF-24 SURF-25.
func TestStateMachine(t *testing.T) {
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
		appendStep := func(t *rapid.T) { step(ops.GenAppend(ops.Rapid{T: t}, state())) }
		replaceStep := func(t *rapid.T) { step(ops.GenReplace(ops.Rapid{T: t}, state())) }
		// Repeat picks actions uniformly: listing one several times weights it.
		t.Repeat(map[string]func(*rapid.T){
			"append":     appendStep,
			"append2":    appendStep,
			"append3":    appendStep,
			"append4":    appendStep,
			"replace":    replaceStep,
			"replace2":   replaceStep,
			"seed":       func(t *rapid.T) { step(ops.GenSeed(ops.Rapid{T: t}, state())) },
			"fork":       func(t *rapid.T) { step(ops.GenFork(ops.Rapid{T: t}, state())) },
			"provenance": func(t *rapid.T) { step(ops.GenProvenance(ops.Rapid{T: t}, state())) },
			// Several appends and replaces with no query of the
			// implementation in between, then one comparison: the
			// derived view must be the fold of all of them.
			"burst": func(t *rapid.T) {
				for n := rapid.IntRange(2, 8).Draw(t, "burst"); n > 0; n-- {
					var s ops.Step
					if rapid.Bool().Draw(t, "burstReplace") {
						s = ops.GenReplace(ops.Rapid{T: t}, state())
					} else {
						s = ops.GenAppend(ops.Rapid{T: t}, state())
					}
					if d := p.StepQuiet(s); d != "" {
						t.Fatal(d)
					}
				}
				if d := p.Compare(); d != "" {
					t.Fatal(d)
				}
			},
			"": func(t *rapid.T) {},
		})
	})
	// Every error code must come up (and agree with the model) in a
	// default-sized run.
	if checks >= 500 {
		for _, c := range event.Codes() {
			if strings.HasPrefix(string(c), "persist.") || strings.HasPrefix(string(c), "vocabulary.") || strings.HasPrefix(string(c), "compaction.") || strings.HasPrefix(string(c), "strict.") ||
				strings.HasPrefix(string(c), "released.") || strings.HasPrefix(string(c), "convert.") || strings.HasPrefix(string(c), "import.") {
				continue // store errors: impl/persist; registration: TestVocabulary; compaction: impl/compaction; strict mode: TestStrictMode and the strict vectors; released files: impl/released; conversion: impl/convert; other harnesses' logs: impl/importer
			}
			if produced[string(c)] == 0 {
				t.Errorf("no step produced %s", c)
			}
		}
	}
	t.Logf("outcomes over %d checks: %v", checks, produced)
}
