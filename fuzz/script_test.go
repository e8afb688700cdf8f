package fuzz

import (
	"os/exec"
	"strings"
	"testing"
)

// TestFuzzScriptTellsFlakesFromFindings: scripts/fuzz.sh retries the Go
// fuzzing engine's bare deadline error, and fails on anything that shows
// a finding, a failing t.Error report included.
func TestFuzzScriptTellsFlakesFromFindings(t *testing.T) {
	cases := []struct {
		name, out string
		flake     bool
	}{
		{"bare deadline", "--- FAIL: FuzzData (5.01s)\n    context deadline exceeded\nFAIL\n", true},
		{"failing input", "--- FAIL: FuzzData (0.20s)\n    context deadline exceeded\n    Failing input written to testdata/fuzz/FuzzData/abc\nFAIL\n", false},
		{"a test's report", "--- FAIL: FuzzData (0.20s)\n    --- FAIL: FuzzData (0.00s)\n        fuzz_test.go:42: impl and model disagree\n    context deadline exceeded\nFAIL\n", false},
		{"panic", "panic: boom\ncontext deadline exceeded\n", false},
		{"other failure", "--- FAIL: FuzzData\n    fuzz_test.go:9: wrong\n", false},
	}
	for _, c := range cases {
		cmd := exec.Command("bash", "../scripts/fuzz.sh", "--is-flake")
		cmd.Stdin = strings.NewReader(c.out)
		err := cmd.Run()
		if got := err == nil; got != c.flake {
			t.Errorf("%s: flake = %v, want %v", c.name, got, c.flake)
		}
	}
}
