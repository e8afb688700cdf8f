//go:build !unix

package conformance

import (
	"os"
	"os/exec"
)

// ownGroup does nothing where there are no process groups: the testee
// alone is signalled.
func ownGroup(cmd *exec.Cmd) {}

// signalGroup kills the process pid (other signals cannot be sent here).
func signalGroup(pid int, sig os.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// groupAlive cannot be asked here; the caller waits for the process.
func groupAlive(pid int) bool { return false }
