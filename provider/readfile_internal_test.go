//go:build unix

package provider

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadModuleFileBounds checks that a file attribute reads only regular
// files of at most maxModuleFileSize bytes, and says why otherwise: a named
// pipe would block the plan and a device or a huge file would fill memory.
func TestReadModuleFileBounds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sized := func(name string, size int64) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(size); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "schema.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"at the limit", sized("max.ddl", maxModuleFileSize), ""},
		{"over the limit", sized("big.ddl", maxModuleFileSize+1), "it is larger than 4 MiB, the most the provider reads; check the path"},
		{"directory", dir, "it is a directory, not a regular file; give the path of a file"},
		{"named pipe", fifo, "it is a named pipe (FIFO), not a regular file"},
		{"device", "/dev/zero", "it is a device, not a regular file"},
		{"missing", filepath.Join(dir, "missing.ddl"), "no such file or directory. A relative path is resolved against"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := readModuleFile(tc.path, "schema file", "schema.ddl")
			if tc.want == "" {
				if err != nil || len(b) != maxModuleFileSize {
					t.Fatalf("read %d bytes, err %v; want %d bytes", len(b), err, maxModuleFileSize)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "cannot read the schema file "+tc.path) {
				t.Errorf("err = %v, want one on %s saying %q", err, tc.path, tc.want)
			}
		})
	}
}
