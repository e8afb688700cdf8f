package seedtestee

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestChildFind is run as a child process by TestFindWithoutATestee (it
// calls Find under the environment the parent gives it); run directly it
// finds the installed testee, when there is one, and runs a script with it.
func TestChildFind(t *testing.T) {
	s := Find(t)
	if c := os.Getenv("SEEDTESTEE_CHILD"); c != "" && c != "found" {
		return
	}
	if s.Node == "" || !strings.HasSuffix(s.Bundle, filepath.Join("dist", "all-b736.mjs")) {
		t.Fatalf("found %+v", s)
	}
	if _, err := os.Stat(s.Bundle); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "echo.mjs")
	if err := os.WriteFile(script, []byte(`process.stdout.write(process.env.SEED_BUNDLE ? "bundle " : "none "); process.stdin.pipe(process.stdout)`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := string(s.Run(t, script, []byte("in"))); out != "bundle in" {
		t.Fatalf("script printed %q", out)
	}
}

// TestFindWithoutATestee: a SEED_TESTEE that names nothing skips the test
// that needs the testee, saying where it looked; under CI=true it fails it
// instead.
func TestFindWithoutATestee(t *testing.T) {
	if os.Getenv("SEEDTESTEE_CHILD") != "" {
		t.Skip("the parent's check")
	}
	// Where the testee is installed, CI=true finds it (a found testee
	// is not taken for a missing one).
	if root, err := moduleRoot(); err == nil {
		if _, err := os.Stat(filepath.Join(root, "..", "shared", "tools", "seed-testee", "run")); err == nil {
			cmd := exec.Command(os.Args[0], "-test.run=^TestChildFind$", "-test.v")
			cmd.Env = append(os.Environ(), "SEEDTESTEE_CHILD=found", "SEED_TESTEE=", "CI=true")
			if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS: TestChildFind") {
				t.Errorf("the installed testee under CI: %v\n%s", err, out)
			}
		}
	}
	missing := filepath.Join(t.TempDir(), "no-such-run")
	for _, ci := range []string{"", "true"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildFind$", "-test.v")
		cmd.Env = append(os.Environ(), "SEEDTESTEE_CHILD=1", "SEED_TESTEE="+missing, "CI="+ci)
		out, err := cmd.CombinedOutput()
		said := strings.Contains(string(out), "no seed testee at "+missing)
		if ci == "" && (err != nil || !strings.Contains(string(out), "--- SKIP: TestChildFind") || !said) {
			t.Errorf("without CI: %v\n%s", err, out)
		}
		if ci == "true" && (err == nil || !strings.Contains(string(out), "--- FAIL: TestChildFind") || !said) {
			t.Errorf("under CI: %v\n%s", err, out)
		}
	}
}

// TestModuleRoot: found from a package directory below it.
func TestModuleRoot(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if rel, err := filepath.Rel(root, wd); err != nil || rel != filepath.Join("internal", "seedtestee") {
		t.Fatalf("root %s from %s", root, wd)
	}
}
