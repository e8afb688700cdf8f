//go:build linux

package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestStopEndsRestartedTestees: a runner stopping (SIGTERM forwarded by
// Stop) while it restarts a testee leaves no process behind, whenever the
// signal comes: before a start, during the handshake of a restart, or
// while a testee answers. The testee crashes on every step, so the loop
// below restarts it again and again; each start leaves a child (sleep)
// running and takes a varying moment to answer the handshake. After Stop,
// the loop goes on for a while as a runner on its way out would, and
// every testee and child ever started must be gone.
func TestStopEndsRestartedTestees(t *testing.T) {
	t.Parallel()
	total := 0
	for round := 0; round < 10; round++ {
		dir := t.TempDir()
		pids := filepath.Join(dir, "pids")
		testee := fmt.Sprintf(`sleep 300 & echo "$$ $!" >> '%s'; read req; sleep 0.0%d; echo '{"type":"hello","protocol":%d}'
while read req; do case "$req" in *reset*) echo '{"type":"ok"}';; *step*) exit 3;; *bye*) exit 0;; esac; done`, pids, round, ProtocolVersion)
		x := &Exec{Command: testee, Log: &strings.Builder{}}
		var quit sync.WaitGroup
		stop := make(chan struct{})
		quit.Add(1)
		go func() { // the runner: reset, a step that crashes the testee, again
			defer quit.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if x.Reset() == nil {
					x.Do(Step{})
				}
			}
		}()
		time.Sleep(time.Duration(5+round*17) * time.Millisecond)
		x.Stop(syscall.SIGTERM, 200*time.Millisecond)
		// A runner exits right after Stop; here the loop keeps going a
		// moment, as a restart under way would, and what runs then is
		// what an exiting runner would have left behind.
		time.Sleep(300 * time.Millisecond)
		b, _ := os.ReadFile(pids)
		var left []int
		started := 0
		for _, field := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(field)
			if err != nil {
				continue
			}
			started++
			if running(pid) {
				left = append(left, pid)
			}
		}
		close(stop)
		quit.Wait()
		x.Close()
		if len(left) > 0 {
			t.Errorf("round %d: processes %v of testees were running after Stop", round, left)
		}
		total += started
	}
	if total == 0 {
		t.Fatal("no testee started in any round")
	}
	t.Logf("%d testees (each with a child) started over 10 rounds", total/2)
}

// running reports whether process pid is running (not ended, not a
// zombie waiting to be reaped).
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

// openDescriptors counts this process's open file descriptors.
func openDescriptors(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(entries)
}

// TestExecLeavesNoDescriptors: every way a testee's life ends closes the
// pipes the runner made for it: an answered run and a crash (restarted),
// a command that does not start, a handshake in a foreign protocol, a
// request that times out, and starts refused after Stop, many of them (a
// runner on its way out retries in a loop). Not parallel, so the count of
// this process's descriptors is the runner's alone.
func TestExecLeavesNoDescriptors(t *testing.T) {
	crashing := fmt.Sprintf(`read req; echo '{"type":"hello","protocol":%d}'
while read req; do case "$req" in *reset*) echo '{"type":"ok"}';; *step*) exit 3;; *bye*) exit 0;; esac; done`, ProtocolVersion)
	cases := []struct {
		name string
		x    *Exec
		runs int
	}{
		{"crash and restart", &Exec{Command: crashing}, 6},
		{"no such command", &Exec{Argv: []string{filepath.Join(t.TempDir(), "absent")}}, 3},
		{"foreign handshake", &Exec{Command: `read req; echo '{"type":"hello","protocol":0}'; sleep 30`}, 3},
		{"timeout", &Exec{Command: `sleep 30`, Timeout: 50 * time.Millisecond, StartTimeout: 50 * time.Millisecond}, 3},
	}
	exercise := func(x *Exec, runs int) {
		x.Log = &strings.Builder{}
		for i := 0; i < runs; i++ {
			if x.Reset() == nil {
				x.Do(Step{})
			}
		}
	}
	exercise(&Exec{Command: crashing}, 1) // the runtime's own descriptors, opened once
	before := openDescriptors(t)
	for _, c := range cases {
		exercise(c.x, c.runs)
		x := c.x
		x.Stop(syscall.SIGTERM, 100*time.Millisecond)
		for i := 0; i < 300; i++ { // refused starts
			if err := x.Reset(); err == nil {
				t.Fatalf("%s: a start after Stop was let through", c.name)
			}
		}
		x.Close()
		if after := openDescriptors(t); after > before {
			t.Errorf("%s: %d descriptors open after the runner ended its testees, %d before", c.name, after, before)
		}
	}
	// A run that ends as a runner's normal end does: Close, no Stop.
	x := &Exec{Command: crashing}
	exercise(x, 4)
	x.Close()
	if after := openDescriptors(t); after > before {
		t.Errorf("closed run: %d descriptors open, %d before", after, before)
	}
}
