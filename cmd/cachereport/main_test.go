package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/surfacelog/surface/impl/compaction/cachesim"
)

// TestTable: the table has a row per workload, provider and policy but
// the baseline, each with the baseline beside it (one short workload: the
// full report is cachesim's TestAcceptance).
func TestTable(t *testing.T) {
	var b bytes.Buffer
	w := cachesim.Workloads[3]
	w.Turns = 20
	if err := run(&b, []cachesim.Workload{w}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"| watermarks+pinned |", "| watermarks+gated-prunes |"} {
		if n := strings.Count(b.String(), p); n != 3 {
			t.Errorf("%d rows of %s, want 3 (one per provider):\n%s", n, p, b.String())
		}
	}
	if strings.Contains(b.String(), "| head-anchored |") {
		t.Errorf("the baseline has a row of its own:\n%s", b.String())
	}
}
