package conformance

import (
	"strings"
	"testing"
)

// TestSignatureNamesTheMember: a failure whose outcome is right but whose
// details differ (a seed rejected at another index) names the member that
// differs instead of reading "want X, got X".
func TestSignatureNamesTheMember(t *testing.T) {
	three, four := 3, 4
	want := Result{Error: "seq.not_contiguous", Index: &three}
	got := Result{Error: "seq.not_contiguous", Index: &four}
	sig := signature(2, "seed", want, got)
	if !strings.Contains(sig, "want seq.not_contiguous, got seq.not_contiguous (index differ)") {
		t.Fatalf("signature %q", sig)
	}
	if sig := signature(2, "seed", want, Result{}); strings.Contains(sig, "differ") {
		t.Fatalf("different outcomes: %q", sig)
	}
	surface := []int64{1}
	if d := differing(Result{Surface: &surface}, Result{}); len(d) != 1 || d[0] != "surface" {
		t.Fatalf("a member only one side has: %v", d)
	}
}
