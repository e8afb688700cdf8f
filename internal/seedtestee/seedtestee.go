// Package seedtestee finds the seed system's own code for tests that
// check a claim against it: the TypeScript of toninfo/deepseek-harness at
// b736889ac7, bundled and installed by ../shared/tools/seed-testee (never
// copied into this project). Under CI=true a missing seed testee fails the
// test; elsewhere it skips it.
package seedtestee

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
)

// Seed is an installed seed testee.
type Seed struct {
	// Node is the Node.js binary the seed testee runs (22.13 or later).
	Node string
	// Bundle is the seed system's b736889ac7 code, one ES module
	// (dist/all-b736.mjs); its bare imports resolve where it is.
	Bundle string
}

var (
	once   sync.Once
	found  Seed
	reason string
)

var ready = regexp.MustCompile(`ready: SEED=b736, node \S+ \(([^)]+)\), adapter (\S+)`)

// Find returns the installed seed testee, installing it the first time
// (npm into a cache outside the project), or skips t (fails it under
// CI=true) when there is none.
func Find(t testing.TB) Seed {
	t.Helper()
	once.Do(func() {
		run := os.Getenv("SEED_TESTEE")
		if run == "" {
			root, err := moduleRoot()
			if err != nil {
				reason = err.Error()
				return
			}
			run = filepath.Join(root, "..", "shared", "tools", "seed-testee", "run")
		}
		if _, err := os.Stat(run); err != nil {
			reason = "no seed testee at " + run + " (set SEED_TESTEE)"
			return
		}
		var stderr bytes.Buffer
		cmd := exec.Command(run, "--install")
		cmd.Env = append(os.Environ(), "SEED=b736")
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			reason = "seed testee install: " + err.Error() + ": " + stderr.String()
			return
		}
		m := ready.FindStringSubmatch(stderr.String())
		if m == nil {
			reason = "seed testee install said no ready line: " + stderr.String()
			return
		}
		found = Seed{Node: m[1], Bundle: filepath.Join(filepath.Dir(m[2]), "dist", "all-b736.mjs")}
		if _, err := os.Stat(found.Bundle); err != nil {
			reason = "no seed bundle: " + err.Error()
		}
	})
	if reason != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the seed testee is needed under CI: %s", reason)
		}
		t.Skip(reason)
	}
	return found
}

// Run runs a Node script (an ES module of this project's testdata) with the
// seed's Node, the bundle's path in SEED_BUNDLE, stdin as given; it
// returns stdout.
func (s Seed) Run(t testing.TB, script string, stdin []byte) []byte {
	t.Helper()
	cmd := exec.Command(s.Node, script)
	cmd.Env = append(os.Environ(), "SEED_BUNDLE="+s.Bundle)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, errb.String())
	}
	return out.Bytes()
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(b, []byte("module github.com/surfacelog/surface\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}
