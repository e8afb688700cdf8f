//go:build windows

package persist

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"

	"github.com/surfacelog/surface/impl/event"
)

// lockFile takes an exclusive, non-blocking lock on f (STORE-4):
// LockFileEx over the whole file, which Windows releases when the holder
// dies, and which two handles in one process also contend for.
func lockFile(f *os.File, what string) error {
	var ol windows.Overlapped
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, ^uint32(0), ^uint32(0), &ol)
	if err != nil {
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
			return event.Errorf(event.CodePersistLocked, -1, "%s is open by another writer", what)
		}
		return ioError(err, "lock %s", what)
	}
	return nil
}

// syncDir does nothing on Windows: a directory cannot be opened for a
// sync there, and NTFS journals its directory entries.
func syncDir(path string) error { return nil }
