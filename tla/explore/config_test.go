package explore

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadConfigEdges: the constants of an MC*.cfg as TLC reads them, and
// the configs TLC would refuse or that name nothing to check refused here
// too: a call id of 0 or below (the spec's ids are positive), no
// MaxEvents, no Calls, no Bug, no INVARIANTS. Sections after INVARIANTS end
// the list; comments and blank lines do not.
func TestReadConfigEdges(t *testing.T) {
	const body = "SPECIFICATION Spec\nINVARIANTS\n    TypeOK\n    \\* a comment\n\n    SURF14_Coverage\nPROPERTIES\n    Live\nCHECK_DEADLOCK FALSE\n"
	for _, c := range []struct {
		name, text string
		calls      []int
		ok         bool
	}{
		{"one call", "CONSTANTS\n MaxEvents = 3\n Calls = {1}\n Bug = \"none\"\n" + body, []int{1}, true},
		{"two calls", "CONSTANTS\n MaxEvents = 4\n Calls = { 1, 2 }\n Bug = \"reversed_range\"\n" + body, []int{1, 2}, true},
		{"no calls", "CONSTANTS\n MaxEvents = 2\n Calls = {}\n Bug = \"none\"\n" + body, nil, true},
		{"call id 0", "CONSTANTS\n MaxEvents = 3\n Calls = {0}\n Bug = \"none\"\n" + body, nil, false},
		{"call id -1", "CONSTANTS\n MaxEvents = 3\n Calls = {1, -1}\n Bug = \"none\"\n" + body, nil, false},
		{"call id x", "CONSTANTS\n MaxEvents = 3\n Calls = {x}\n Bug = \"none\"\n" + body, nil, false},
		{"no MaxEvents", "CONSTANTS\n Calls = {1}\n Bug = \"none\"\n" + body, nil, false},
		{"no Calls", "CONSTANTS\n MaxEvents = 3\n Bug = \"none\"\n" + body, nil, false},
		{"no Bug", "CONSTANTS\n MaxEvents = 3\n Calls = {1}\n" + body, nil, false},
		{"no INVARIANTS", "CONSTANTS\n MaxEvents = 3\n Calls = {1}\n Bug = \"none\"\nSPECIFICATION Spec\nPROPERTIES\n    Live\n", nil, false},
	} {
		path := filepath.Join(t.TempDir(), "MC.cfg")
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := ReadConfig(path)
		if (err == nil) != c.ok {
			t.Errorf("%s: err %v, want ok %v", c.name, err, c.ok)
			continue
		}
		if !c.ok {
			if !strings.Contains(err.Error(), path) {
				t.Errorf("%s: %v does not name the file", c.name, err)
			}
			continue
		}
		if !slices.Equal(cfg.Calls, c.calls) || !slices.Equal(cfg.Invariants, []string{"TypeOK", "SURF14_Coverage"}) || !slices.Equal(cfg.Properties, []string{"Live"}) {
			t.Errorf("%s: %+v", c.name, cfg)
		}
	}
	if _, err := ReadConfig(filepath.Join(t.TempDir(), "missing.cfg")); err == nil {
		t.Error("a missing file read")
	}
}

// TestExplorerNoticesAModelThatDisagrees: the cross-check of the spec's
// functions against model/ reports a disagreement (ModelAgreement) when
// the model says otherwise, here a model taught to reject the first user
// message the spec accepts; the same run with the model as it is agrees.
func TestExplorerNoticesAModelThatDisagrees(t *testing.T) {
	cfg := Config{MaxEvents: 2, Calls: []int{1}, Bug: "none", Invariants: []string{"TypeOK"}}
	if res := Explore(cfg, Options{}); res.Violation != "" {
		t.Fatalf("the model as it is: %s %s", res.Violation, res.Detail)
	}
	x := &explorer{cfg: cfg, model: newOracle()}
	x.model.derived[logKey([]Event{ev("user", appendOp, nil, 0)})] = nil // the model rejects it
	res := x.run()
	if res.Violation != "ModelAgreement" || !strings.Contains(res.Detail, "AppendUser: the spec says valid=true, model/ says false") {
		t.Fatalf("a model that rejects a valid first message: %q %s", res.Violation, res.Detail)
	}
}
