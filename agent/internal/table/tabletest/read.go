package tabletest

import (
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
)

// ReadTable reads the rows of the table in dir, checking that its folder
// holds exactly the log's files, and returns them with the log's offsets.
func ReadTable[R any](t *testing.T, dir string) ([]R, table.Snapshot) {
	t.Helper()
	snap, err := table.ReadSnapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, files := ReadRows[R](t, dir)
	if files != snap.NumFiles {
		t.Fatalf("%s: %d files in the folder, %d in the log", dir, files, snap.NumFiles)
	}
	return out, snap
}

// ReadRows reads the rows of every data file in the folder dir, and
// returns them with the number of files.
func ReadRows[R any](t *testing.T, dir string) ([]R, int) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	var out []R
	for _, f := range files {
		rows, err := parquet.ReadFile[R](f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, rows...)
	}
	return out, len(files)
}
