//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary act as the conformance command, so that a
// test can signal a real runner process.
func TestMain(m *testing.M) {
	if os.Getenv("SURFACE_RUN_CLI") == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestRunnerForwardsSignals: SIGINT or SIGTERM sent to the runner reaches
// the testee's process group (a testee and a child of it, both hanging),
// and the runner exits after them with 128 + the signal's number.
func TestRunnerForwardsSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			pidFile, childFile := filepath.Join(dir, "pid"), filepath.Join(dir, "child")
			// A testee that never answers the handshake and has a child.
			testee := `sleep 300 & echo $! > '` + childFile + `'; echo $$ > '` + pidFile + `.tmp'; mv '` + pidFile + `.tmp' '` + pidFile + `'; wait`
			runner := exec.Command(os.Args[0], "run", "--exec", testee)
			runner.Env = append(os.Environ(), "SURFACE_RUN_CLI=1")
			var out strings.Builder
			runner.Stderr = &out
			if err := runner.Start(); err != nil {
				t.Fatal(err)
			}
			defer runner.Process.Kill()
			pid := waitPid(t, pidFile)
			child := waitPid(t, childFile)
			if err := runner.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- runner.Wait() }()
			select {
			case <-done:
			case <-time.After(2 * time.Minute):
				t.Fatalf("the runner did not exit after %v:\n%s", sig, out.String())
			}
			if code := runner.ProcessState.ExitCode(); code != 128+int(sig) {
				t.Errorf("exit status %d, want %d\n%s", code, 128+int(sig), out.String())
			}
			for _, p := range []int{pid, child} {
				if !gone(p) {
					syscall.Kill(p, syscall.SIGKILL)
					t.Errorf("process %d of the testee's group outlived the runner", p)
				}
			}
		})
	}
}

// waitPid reads a pid a testee wrote to path.
func waitPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// gone reports whether process pid has ended (an orphan is reaped by
// init, which can take a moment).
func gone(pid int) bool {
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}
