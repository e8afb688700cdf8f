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
