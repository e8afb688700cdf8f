//go:build unix

package conformance

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup makes cmd the leader of a new process group, so that the
// testee and everything it starts can be signalled together.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends sig to the process group led by pid.
func signalGroup(pid int, sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		s = syscall.SIGKILL
	}
	return syscall.Kill(-pid, s)
}

// groupAlive reports whether a process of the group led by pid is left.
func groupAlive(pid int) bool { return syscall.Kill(-pid, 0) == nil }
