package storage

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"testing"
)

// TestLocalChecksumSideFiles checks that replacing or deleting a file drops
// the checksum file Hadoop's local file system keeps next to it: Spark
// leaves ._last_checkpoint.crc after a checkpoint, and a stale one makes
// every later Spark read log a checksum error and retry.
func TestLocalChecksumSideFiles(t *testing.T) {
	dir := t.TempDir()
	s := newLocal(dir, 0o640)
	name := "_delta_log/_last_checkpoint"
	side := filepath.Join(dir, "_delta_log", "._last_checkpoint.crc")
	if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(dir, filepath.FromSlash(name)), side} {
		if err := os.WriteFile(f, []byte("spark's"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Put(name, []byte(`{"version":10}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(side); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after put, %s: %v, want it gone", side, err)
	}
	if got, err := s.Read(name); err != nil || string(got) != `{"version":10}` {
		t.Errorf("read = %q, %v", got, err)
	}

	// A put of a file with no side file, and a remove, work the same.
	if err := s.Put(name, []byte(`{"version":20}`)); err != nil {
		t.Fatal(err)
	}
	entry := "_delta_log/00000000000000000003.json"
	entrySide := filepath.Join(dir, "_delta_log", "."+path.Base(entry)+".crc")
	for _, f := range []string{filepath.Join(dir, filepath.FromSlash(entry)), entrySide} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Remove(entry); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(entrySide); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after remove, %s: %v, want it gone", entrySide, err)
	}
}
