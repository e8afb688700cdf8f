package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestReportAgreesWithObserver: what the example prints per turn (prunes,
// compactions) adds up to what its observer recorded after the resume,
// so the narration cannot claim a prune or a compaction that did not
// happen, or hide one that did.
func TestReportAgreesWithObserver(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "agent")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-dir", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("the example failed: %v\n%s", err, out)
	}
	pruned := 0
	for _, m := range regexp.MustCompile(`pruned (\d+) answered tool results: (\d+) -> (\d+) tokens`).FindAllSubmatch(out, -1) {
		n, _ := strconv.Atoi(string(m[1]))
		before, _ := strconv.Atoi(string(m[2]))
		after, _ := strconv.Atoi(string(m[3]))
		if n == 0 || after >= before {
			t.Errorf("a prune line that says nothing was saved: %s", m[0])
		}
		pruned += n
	}
	compacted := len(regexp.MustCompile(`compacted \d+ nodes into a summary`).FindAll(out, -1))
	m := regexp.MustCompile(`observed after the resume: .* (\d+) prunes, (\d+) compactions committed`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no observer summary:\n%s", out)
	}
	if got, _ := strconv.Atoi(string(m[1])); got != pruned {
		t.Errorf("the turns report %d prunes, the observer %d:\n%s", pruned, got, out)
	}
	if got, _ := strconv.Atoi(string(m[2])); got != compacted {
		t.Errorf("the turns report %d compactions, the observer %d:\n%s", compacted, got, out)
	}
	if pruned == 0 || compacted == 0 {
		t.Errorf("the example shows %d prunes and %d compactions: it should show both:\n%s", pruned, compacted, out)
	}
	// The user's steering message is typed once, while tools run, and held
	// until their results are in.
	if n := len(regexp.MustCompile(`steering typed mid-step; appended at once: false`).FindAll(out, -1)); n != 1 {
		t.Errorf("steering typed %d times (want once, held):\n%s", n, out)
	}
	if m := regexp.MustCompile(`(\d+) store writes \((\d+) synced\)`).FindSubmatch(out); m == nil {
		t.Errorf("no store writes reported:\n%s", out)
	} else if writes, _ := strconv.Atoi(string(m[1])); true {
		synced, _ := strconv.Atoi(string(m[2]))
		if synced <= 0 || synced > writes {
			t.Errorf("%d of %d store writes synced", synced, writes)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "session.jsonl")); err != nil {
		t.Errorf("the session file is not in -dir: %v", err)
	}
	// Without -dir the example makes (and removes) a directory of its own.
	if out, err := exec.Command(bin).CombinedOutput(); err != nil {
		t.Errorf("the example without -dir: %v\n%s", err, out)
	}
}
