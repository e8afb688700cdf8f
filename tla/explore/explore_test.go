package explore

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

type counts map[string]struct {
	Distinct  int `json:"distinct"`
	Generated int `json:"generated"`
}

func readCounts(t *testing.T) counts {
	b, err := os.ReadFile("../counts.json")
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	delete(raw, "$comment")
	c := counts{}
	for k, v := range raw {
		var e struct {
			Distinct  int `json:"distinct"`
			Generated int `json:"generated"`
		}
		if err := json.Unmarshal(v, &e); err != nil {
			t.Fatal(err)
		}
		c[k] = e
	}
	return c
}

// TestExplorerMatchesTLC walks every MC config's state space with the
// model's semantics, checks the invariants of Surface.tla (SURF-14,
// SURF-15, SURF-25, REP-3, REP-5, append-only) and finds exactly the
// distinct states (and generated states) that TLC found.
func TestExplorerMatchesTLC(t *testing.T) {
	want := readCounts(t)
	if len(want) < 2 {
		t.Fatalf("counts.json has %d configs", len(want))
	}
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			cfg, err := ReadConfig("../" + name + ".cfg")
			if err != nil {
				t.Fatal(err)
			}
			r := Explore(cfg, Options{})
			if r.Violation != "" {
				t.Fatalf("violation: %s", r.Violation)
			}
			t.Logf("%s: %d distinct states, %d generated (TLC: %d, %d)", name, r.Distinct, r.Generated, w.Distinct, w.Generated)
			if r.Distinct != w.Distinct || r.Generated != w.Generated {
				t.Fatalf("the Go explorer found %d distinct / %d generated states, TLC %d / %d: the spec and the explorer have drifted apart",
					r.Distinct, r.Generated, w.Distinct, w.Generated)
			}
		})
	}
}

// TestExplorerCatchesBrokenSemantics: a half-open replace in the
// step-by-step surface leaves a shadowed node on the surface (SURF-15,
// and so SURF-25), and a deliberately false invariant is reported.
func TestExplorerCatchesBrokenSemantics(t *testing.T) {
	cfg, _ := ReadConfig("../MCSmall.cfg")
	if r := Explore(cfg, Options{HalfOpen: true}); !strings.Contains(r.Violation, "SURF15_NoResurrection") && !strings.Contains(r.Violation, "SURF25_SurfaceIsFold") {
		t.Fatalf("half-open replace not caught: %q", r.Violation)
	}
	r := Explore(cfg, Options{ExtraInvariant: func(s *State) string {
		if len(s.Surface) >= 2 {
			return "FalseInvariant_SurfaceBelowTwo"
		}
		return ""
	}})
	if !strings.Contains(r.Violation, "FalseInvariant_SurfaceBelowTwo") {
		t.Fatalf("false invariant not caught: %q", r.Violation)
	}
}
