package explore

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// weakenings are edits that weaken a declarative invariant of Surface.tla
// at its edge, as a careless edit of the spec might: each keeps the
// invariant true of every gross bug and lets one edge through.
// PROV4_SummaryAfterProviderDecl has no edge of its own to weaken here: a
// provider compaction replaces the whole surface, so at most one is on it,
// as its first node, and "no provider compaction among a summary's
// sources" and "not its first source" are the same in every state.
var weakenings = []struct {
	name, invariant, old, new string
}{
	{"a second compaction end let through", "COMP2_BracketsDecl",
		`\E i \in 1..k - 1 : log[i].t = "cstart" /\ NoneBetween(log, i, k, {"cstart", "cend"})`,
		`\E i \in 1..k - 1 : log[i].t = "cstart" /\ NoneBetween(log, i, k, {"cstart"})`},
	{"an end that comes later rather than at once", "COMP5_CommitEndsDecl",
		`k < Len(log) /\ log[k + 1].t = "cend"`,
		`k < Len(log) /\ \E j \in k + 1..Len(log) : log[j].t = "cend"`},
	{"one open call too many at a cut", "COMP4_BalancedDecl",
		`CountIn(l, s, j, k, "asst", c) =< CountIn(l, s, j, k, "result", c)`,
		`CountIn(l, s, j, k, "asst", c) =< CountIn(l, s, j, k, "result", c) + 1`},
	{"a step start after its turn's end", "REP2_StepsDecl",
		`/\ log[i].t = "tstart" /\ NoneBetween(log, i, k, {"tstart", "tend"})`,
		`/\ log[i].t = "tstart" /\ NoneBetween(log, i, k, {"tstart"})`},
	{"a result from an ended step", "REP3_ResultsAnswerDecl",
		`/\ NoneBetween(log, i, k, {"tstart", "tend", "send"})
            /\ \A m \in i + 1..k - 1 : ~(log[m].t = "result"`,
		`/\ NoneBetween(log, i, k, {"tstart", "tend"})
            /\ \A m \in i + 1..k - 1 : ~(log[m].t = "result"`},
	{"a recovery one result short", "REP_RecoveryDecl",
		`IN /\ {cl[i].call : i \in results} = want
           /\ Cardinality(results) = Cardinality(want)`,
		`IN /\ {cl[i].call : i \in results} \subseteq want
           /\ Cardinality(results) <= Cardinality(want)`},
}

// TestTLCNoticesWeakenedInvariants: the TLA+ text, not a Go copy of it,
// is what the planted bugs test. Each edit above weakens one declarative
// invariant at its edge; with it, TLC must miss at least one planted bug
// that counts.json says that invariant catches, so TestTLCPlantedBugs
// (run by CI's TLA step) fails on a spec weakened that way. The edits
// must apply to the spec as it is (a stale edit fails).
func TestTLCNoticesWeakenedInvariants(t *testing.T) {
	jar := needTLC(t)
	spec, err := os.ReadFile("../Surface.tla")
	if err != nil {
		t.Fatal(err)
	}
	counts := readCounts(t)
	for _, w := range weakenings {
		t.Run(w.invariant, func(t *testing.T) {
			if strings.Count(string(spec), w.old) != 1 {
				t.Fatalf("the edit %q no longer applies to Surface.tla (it must match once)", w.name)
			}
			var configs []string
			for name, e := range counts {
				if e.Violation == w.invariant {
					configs = append(configs, name)
				}
			}
			sort.Strings(configs)
			if len(configs) == 0 {
				t.Fatalf("no planted bug is caught by %s", w.invariant)
			}
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "Surface.tla"), []byte(strings.Replace(string(spec), w.old, w.new, 1)), 0o644)
			var missed []string
			for _, name := range configs {
				cfg, err := os.ReadFile(filepath.Join("..", name+".cfg"))
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(dir, name+".cfg"), cfg, 0o644)
				out, err := tlc(t, jar, dir, name+".cfg", "Surface.tla", "-workers", "1")
				if strings.Contains(out, "Parse Error") || strings.Contains(out, "Semantic error") {
					t.Fatalf("the weakened spec does not parse:\n%s", tail(out))
				}
				if err == nil || !regexp.MustCompile(`Error: (Invariant|Action property) `+w.invariant+` is violated`).MatchString(out) {
					missed = append(missed, name)
				}
			}
			if len(missed) == 0 {
				t.Errorf("weakened (%s), %s still catches every planted bug of %v: no bug sits at this edge", w.name, w.invariant, configs)
			} else {
				t.Logf("weakened (%s): TLC misses %v, so the planted-bug check fails", w.name, missed)
			}
		})
	}
}
