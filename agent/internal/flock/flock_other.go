//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package flock

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// tryLock fails: this system has no flock(2), and a lock that does not
// exclude anyone would be worse than a clear error.
func tryLock(*os.File) (bool, error) {
	return false, fmt.Errorf("file locks are not implemented on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}
