// Package flock takes exclusive, advisory locks on files, so that two
// processes (or two owners in one process) never use the same folder at
// once: the agent's data folder, or a table folder being written.
//
// A lock is flock(2) on a lock file, taken without waiting: a second
// [Acquire] of the same file fails at once with a [*HeldError] that names the
// holder, which the holder wrote into the lock file. flock locks belong to
// an open file description, so two Acquires in one process conflict too, and
// the kernel releases a lock when its holder exits, even on SIGKILL: there is
// never a stale lock to clean up. The lock file itself is never deleted
// (deleting it would let a third process lock a new file while the second
// still waits on the old one).
//
// Limits: flock works between processes on one machine. On NFS, Linux
// emulates it with byte-range locks, which do not conflict within one
// process; other network file systems may not lock at all.
package flock

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// Lock is a held lock. Its methods are not safe for concurrent use.
type Lock struct {
	f *os.File
}

// HeldError is returned by [Acquire] when another owner holds the lock.
type HeldError struct {
	// Path is the lock file.
	Path string
	// Holder describes the holder, as it wrote itself into the lock file:
	// its owner description, pid, host and since when it holds the lock.
	// It is empty when the holder has not written it yet.
	Holder string
}

// Error names the lock file and its holder.
func (e *HeldError) Error() string {
	return fmt.Sprintf("%s is locked by %s", e.Path, e.HolderOrUnknown())
}

// HolderOrUnknown returns Holder, or a phrase saying it is not known yet.
func (e *HeldError) HolderOrUnknown() string {
	if e.Holder == "" {
		return "another process or owner that has not written its name yet"
	}
	return e.Holder
}

// Acquire takes the lock on file path, creating the file with permission
// perm if needed, and writes into it who holds it: owner (e.g. `pipeline
// "orders", table main.sales.orders`; may be empty), the pid, the host and
// the time. It does not wait: if another owner holds the lock it returns a
// [*HeldError].
func Acquire(path, owner string, perm os.FileMode) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, perm)
	if err != nil {
		return nil, fmt.Errorf("opening lock file: %w", err)
	}
	held, err := tryLock(f)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if held {
		_ = f.Close()
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%w (reading the holder: %w)", &HeldError{Path: path}, err)
		}
		return nil, &HeldError{Path: path, Holder: strings.TrimSpace(string(data))}
	}
	l := &Lock{f: f}
	if err := l.writeHolder(owner); err != nil {
		_ = l.Release()
		return nil, fmt.Errorf("writing the holder into %s: %w", path, err)
	}
	return l, nil
}

// writeHolder replaces the lock file's content with one line naming this
// process and owner.
func (l *Lock) writeHolder(owner string) error {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	who := fmt.Sprintf("pid %d on host %s, since %s", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	if owner != "" {
		who = owner + " (" + who + ")"
	}
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err = l.f.WriteAt([]byte(who+"\n"), 0)
	return err
}

// Release releases the lock. It may be called more than once; later calls
// do nothing. The lock file stays.
func (l *Lock) Release() error {
	if l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	// The descriptor is the only one on its open file description (Go
	// opens files close-on-exec), so closing it releases the lock.
	if err := f.Close(); err != nil {
		return fmt.Errorf("releasing lock %s: %w", f.Name(), err)
	}
	return nil
}
