package pgtest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestChildURL is run as a child by TestURLWithoutAServer: it asks for
// the URL under the environment the parent gives it.
func TestChildURL(t *testing.T) {
	if os.Getenv("PGTEST_CHILD") == "" {
		t.Skip("the parent's check")
	}
	if got := URL(t); got != os.Getenv("SURFACE_PG_URL") {
		t.Fatalf("URL() = %q", got)
	}
}

// TestURLWithoutAServer: with SURFACE_PG_URL the test gets it; without,
// the test is skipped, or failed under CI=true.
func TestURLWithoutAServer(t *testing.T) {
	if os.Getenv("PGTEST_CHILD") != "" {
		t.Skip("the parent's check")
	}
	for _, c := range []struct{ url, ci, want string }{
		{"postgres://x@/db", "", "--- PASS: TestChildURL"},
		{"postgres://x@/db", "true", "--- PASS: TestChildURL"},
		{"", "", "--- SKIP: TestChildURL"},
		{"", "true", "--- FAIL: TestChildURL"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildURL$", "-test.v")
		cmd.Env = append(os.Environ(), "PGTEST_CHILD=1", "SURFACE_PG_URL="+c.url, "CI="+c.ci)
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), c.want) {
			t.Errorf("url %q, CI %q: want %q\n%s", c.url, c.ci, c.want, out)
		}
	}
	if a, b := Schema("s"), Schema("s"); a == b || !strings.HasPrefix(a, "s_") {
		t.Errorf("schemas %q and %q", a, b)
	}
}
