//go:build unix

package testtool

import (
	"os"
	"syscall"
)

// lock takes an exclusive lock of the file at path (created if need be), waiting for it,
// and returns its release. The lock goes with the process, so a test killed while it holds
// it does not leave it taken.
func lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
