package table

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// TestLocalTempNames checks that the temporary names of the local store are
// the ones garbage collection and Open recognise.
func TestLocalTempNames(t *testing.T) {
	data := newDataFileName("snappy")
	if got := tempName(data); got != tmpDir+"/"+data+".tmp" || !isTempDataFile(strings.TrimPrefix(got, tmpDir+"/")) {
		t.Errorf("tempName(%s) = %s, want %s/%[1]s.tmp", data, got, tmpDir)
	}
	for _, name := range []string{logPath(3), logDir + "/" + checkpointName(10), logDir + "/" + lastCheckpointFile} {
		got := tempName(name)
		base, ok := strings.CutPrefix(got, logDir+"/")
		if !ok || !isLogTemp(base) {
			t.Errorf("tempName(%s) = %s: not a temporary log file name", name, got)
		}
	}
}

// TestLocalChecksumSideFiles checks that replacing or deleting a file drops
// the checksum file Hadoop's local file system keeps next to it: Spark
// leaves ._last_checkpoint.crc after a checkpoint, and a stale one makes
// every later Spark read log a checksum error and retry.
func TestLocalChecksumSideFiles(t *testing.T) {
	dir := t.TempDir()
	s := newLocalStore(dir, DefaultFileMode)
	name := logDir + "/" + lastCheckpointFile
	side := filepath.Join(dir, logDir, "."+lastCheckpointFile+".crc")
	if err := os.MkdirAll(filepath.Join(dir, logDir), 0o755); err != nil {
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
	entry := logPath(3)
	entrySide := filepath.Join(dir, logDir, "."+path.Base(entry)+".crc")
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
