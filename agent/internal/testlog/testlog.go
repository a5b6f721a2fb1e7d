// Package testlog holds what tests use to read logs and a child process's
// output while they are still being written.
package testlog

import (
	"bytes"
	"sync"
)

// Buffer collects output, such as a logger's or a child process's, and is
// safe for concurrent use: a test may read it while a goroutine writes it.
// The zero value is empty and ready.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
