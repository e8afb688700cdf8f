//go:build unix

package persist

import (
	"errors"
	"os"
	"syscall"

	"github.com/surfacelog/surface/impl/event"
)

// lockFile takes an exclusive, non-blocking lock on f (STORE-4): flock,
// which the kernel releases when the holder dies, and which two opens in
// one process also contend for.
func lockFile(f *os.File, what string) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return event.Errorf(event.CodePersistLocked, -1, "%s is open by another writer", what)
		}
		return ioError(err, "lock %s", what)
	}
	return nil
}

// syncDir makes a new directory entry next to path durable.
func syncDir(path string) error {
	d, err := os.Open(dirOf(path))
	if err != nil {
		return ioError(err, "open the directory of %s", path)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return ioError(err, "sync the directory of %s", path)
	}
	return nil
}
