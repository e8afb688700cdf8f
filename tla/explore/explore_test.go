package explore

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// expected is one entry of counts.json: what TLC found for a config.
type expected struct {
	Distinct  int    `json:"distinct"`
	Generated int    `json:"generated"`
	Digest    string `json:"digest"`
	Violation string `json:"violation"` // for a config with a planted bug
	Witness   string `json:"witness"`   // for a reachability config: the witness it reaches
}

func readCounts(t *testing.T) map[string]expected {
	b, err := os.ReadFile("../counts.json")
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	delete(raw, "$comment")
	c := map[string]expected{}
	for k, v := range raw {
		var e expected
		if err := json.Unmarshal(v, &e); err != nil {
			t.Fatal(err)
		}
		c[k] = e
	}
	return c
}

func config(t *testing.T, name string) Config {
	cfg, err := ReadConfig("../" + name + ".cfg")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestExplorerMatchesTLC walks every model config's state space with the
// actions of Surface.tla, checks its invariants and properties, checks
// that the spec's acceptance, fold, pairing and closers agree with
// model/'s on every state, and finds exactly the states TLC found: as
// many distinct and generated, and the same set (digest).
func TestExplorerMatchesTLC(t *testing.T) {
	n := 0
	for name, w := range readCounts(t) {
		if w.Violation != "" || w.Witness != "" {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			cfg := config(t, name)
			if cfg.Bug != "none" {
				t.Fatalf("Bug = %q in a config without a violation", cfg.Bug)
			}
			r := Explore(cfg, Options{})
			if r.Violation != "" {
				t.Fatalf("%s: %s", r.Violation, r.Detail)
			}
			t.Logf("%d distinct states, %d generated, digest %s (TLC: %d, %d, %s)", r.Distinct, r.Generated, r.Digest, w.Distinct, w.Generated, w.Digest)
			if r.Distinct != w.Distinct || r.Generated != w.Generated || r.Digest != w.Digest {
				t.Fatalf("the Go explorer found %d distinct / %d generated states (digest %s), TLC %d / %d (%s): the spec and the explorer have drifted apart",
					r.Distinct, r.Generated, r.Digest, w.Distinct, w.Generated, w.Digest)
			}
		})
	}
	if n < 2 {
		t.Fatalf("counts.json has %d model configs", n)
	}
}

// TestExplorerCatchesPlantedBugs: every bug Surface.tla can plant has a
// config, and the explorer, planting the same bug, reports the violation
// TLC reports for it.
func TestExplorerCatchesPlantedBugs(t *testing.T) {
	counts := readCounts(t)
	for _, bug := range Bugs {
		name := "MCBug_" + bug
		w, ok := counts[name]
		if !ok || w.Violation == "" {
			t.Fatalf("counts.json has no violation for %s", name)
		}
		cfg := config(t, name)
		if cfg.Bug != bug {
			t.Fatalf("%s plants %q", name, cfg.Bug)
		}
		r := Explore(cfg, Options{})
		if r.Violation != w.Violation {
			t.Errorf("%s: the explorer reports %q, TLC %q", name, r.Violation, w.Violation)
		}
		t.Logf("%s: %s after %d states\n%s", bug, r.Violation, r.Distinct, r.Detail)
	}
	spec, err := os.ReadFile("../Surface.tla")
	if err != nil {
		t.Fatal(err)
	}
	for _, bug := range Bugs {
		if !strings.Contains(string(spec), `Bug = "`+bug+`"`) {
			t.Errorf("Surface.tla does not plant %q", bug)
		}
	}
}

// declarative names the invariants and properties that restate a rule
// without the actions' operators (Surface.tla, "The rules said a second
// time").
func declarative(name string) bool { return strings.HasSuffix(name, "Decl") }

// bugsOnlyDeclarativeCatch are the planted bugs that break an operator an
// action and its operational check share: only a declarative restatement
// can catch them.
var bugsOnlyDeclarativeCatch = []string{
	"commit_without_lock", "commit_keeps_lock", "abort_leaves_summary", "balanced_with_one_open",
	"step_crosses_turns", "step_end_keeps_calls", "result_clears_first_registration",
	"commit_ends_twice", "commit_end_late", "step_in_ended_turn",
}

// TestDeclarativeChecksAreNeeded: each bug in bugsOnlyDeclarativeCatch
// passes every operational invariant and property at its config's bounds
// (the whole state space is walked without a violation), and is caught as
// soon as the declarative ones are checked (TestExplorerCatchesPlantedBugs).
func TestDeclarativeChecksAreNeeded(t *testing.T) {
	for _, bug := range bugsOnlyDeclarativeCatch {
		cfg := config(t, "MCBug_"+bug)
		cfg.Invariants = slices.DeleteFunc(slices.Clone(cfg.Invariants), declarative)
		cfg.Properties = slices.DeleteFunc(slices.Clone(cfg.Properties), declarative)
		if r := Explore(cfg, Options{}); r.Violation != "" {
			t.Errorf("%s: an operational check already reports %s: the planted bug does not show what the declarative checks add", bug, r.Violation)
		} else {
			t.Logf("%s: passes every operational check (%d states)", bug, r.Distinct)
		}
	}
}

// TestReachability: at the MCReach_* bounds the explorer, like TLC, reaches
// each state its witness names (a multi-node commit, a commit over an
// earlier replacement, a commit folding a call with its result), with every
// real invariant and property holding on the way.
func TestReachability(t *testing.T) {
	n := 0
	for name, w := range readCounts(t) {
		if w.Witness == "" {
			continue
		}
		n++
		cfg := config(t, name)
		if cfg.Bug != "none" || cfg.Invariants[len(cfg.Invariants)-1] != w.Witness {
			t.Fatalf("%s: Bug %q, last invariant %q; want none and %s", name, cfg.Bug, cfg.Invariants[len(cfg.Invariants)-1], w.Witness)
		}
		r := Explore(cfg, Options{})
		if r.Violation != w.Witness {
			t.Errorf("%s: the explorer reports %q (%s), want the witness %s", name, r.Violation, r.Detail, w.Witness)
		}
		t.Logf("%s: reached after %d states: %s", name, r.Distinct, r.Detail)
	}
	if n < 3 {
		t.Fatalf("counts.json has %d reachability configs", n)
	}
}

// TestExplorerCatchesBrokenSemantics: a half-open replace in the
// step-by-step surface is caught by the invariants (SURF-15, SURF-25),
// and, with no invariant but TypeOK left, by the comparison with model/;
// a deliberately false invariant is reported.
func TestExplorerCatchesBrokenSemantics(t *testing.T) {
	cfg := config(t, "MCSmall")
	r := Explore(cfg, Options{HalfOpen: true})
	if !slices.Contains([]string{"SURF15_NoResurrection", "SURF25_SurfaceIsFold", "SURF14_23_Lineage"}, r.Violation) {
		t.Fatalf("half-open replace not caught by an invariant: %q", r.Violation)
	}
	bare := cfg
	bare.Invariants, bare.Properties = []string{"TypeOK"}, nil
	if r := Explore(bare, Options{HalfOpen: true}); r.Violation != "ModelAgreement" {
		t.Fatalf("half-open replace not caught by model/: %q", r.Violation)
	}
	r = Explore(cfg, Options{ExtraInvariant: func(s *State) string {
		if len(s.Surface) >= 2 {
			return "FalseInvariant_SurfaceBelowTwo"
		}
		return ""
	}})
	if r.Violation != "FalseInvariant_SurfaceBelowTwo" {
		t.Fatalf("false invariant not caught: %q", r.Violation)
	}
	bad := cfg
	bad.Invariants = append(slices.Clone(cfg.Invariants), "NoSuchInvariant")
	if r := Explore(bad, Options{}); r.Violation != "UnknownInvariant_NoSuchInvariant" {
		t.Fatalf("an invariant the explorer does not know was not reported: %q", r.Violation)
	}
}

// TestDumpCanonical: a state as TLC dumps it (fields in TLC's order,
// records over several lines) parses to the explorer's canonical form of
// the same state, and malformed dumps are refused.
func TestDumpCanonical(t *testing.T) {
	dump := `State 1:
/\ surface = <<0, 2>>
/\ log = << [ t |-> "user",
     op |-> [kind |-> "append", start |-> 0, end |-> 0],
     src |-> {},
     call |-> 0 ],
   [ t |-> "asst",
     op |-> [kind |-> "append", start |-> 0, end |-> 0],
     src |-> {},
     call |-> 2 ],
   [t |-> "summary", op |-> [kind |-> "replace", start |-> 1, end |-> 1], src |-> {1}, call |-> 0] >>
/\ crashed = FALSE
/\ shadowed = {1}

State 2:
/\ surface = <<>>
/\ log = <<>>
/\ crashed = TRUE
/\ shadowed = {}
`
	got, err := ParseDump(dump)
	if err != nil {
		t.Fatal(err)
	}
	want := []State{
		{Log: []Event{ev("user", appendOp, nil, 0), ev("asst", appendOp, nil, 2), ev("summary", Op{Kind: "replace", Start: 1, End: 1}, []int64{1}, 0)}, Surface: []int64{0, 2}, Shadowed: []int64{1}},
		{Log: []Event{}, Surface: []int64{}, Shadowed: []int64{}, Crashed: true},
	}
	if len(got) != len(want) {
		t.Fatalf("%d states parsed", len(got))
	}
	for i := range want {
		if got[i] != want[i].Canonical() {
			t.Errorf("state %d:\n got %s\nwant %s", i+1, got[i], want[i].Canonical())
		}
	}
	for _, bad := range []string{"State 1:\n/\\ log = <<1,", "State 1:\n/\\ log = [a |-> ]", "State 1:\n/\\ x = @", "State 1:\nnothing"} {
		if _, err := ParseDump(bad); err == nil {
			t.Errorf("ParseDump accepted %q", bad)
		}
	}
}
