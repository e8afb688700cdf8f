package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestTable: the table has a row per workload and provider, each with the
// baseline beside it.
func TestTable(t *testing.T) {
	var b bytes.Buffer
	if err := run(&b); err != nil {
		t.Fatal(err)
	}
	rows := strings.Count(b.String(), "| watermarks+pinned |")
	if rows != 12 {
		t.Errorf("%d rows, want 12 (4 workloads x 3 providers):\n%s", rows, b.String())
	}
}
