package table_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
)

func TestCollectGarbage(t *testing.T) {
	dir := t.TempDir()
	clk := &clock{now: time.Now()}
	tb := openTable(t, dir, table.Options{GCGrace: time.Hour, Now: clk.Now})
	committed := writeFile(t, tb, 0, 2)
	mustCommit(t, tb, table.Commit{Schema: testFields, Files: []table.AddFile{committed}})
	uncommitted := writeFile(t, tb, 2, 4) // closed but not yet committed
	inFlight, err := tb.NewFile(testParquet)
	if err != nil {
		t.Fatal(err)
	}
	defer inFlight.Abort()

	// What a crashed run (or another agent) left behind.
	old, recent := clk.now.Add(-2*time.Hour), clk.now.Add(-time.Minute)
	files := map[string]time.Time{
		"part-00000-old-c000.snappy.parquet":          old,
		"part-00000-recent-c000.snappy.parquet":       recent,
		"_tmp/part-00000-old.parquet.tmp":             old,
		"_tmp/part-00000-recent.parquet.tmp":          recent,
		"_delta_log/.00000000000000000001.x.json.tmp": old,
		"README.md": old, // not a data file: never touched
	}
	for name, mtime := range files {
		touch(t, filepath.Join(dir, name), mtime)
	}
	for _, name := range []string{committed.Path, uncommitted.Path, "_delta_log/" + logName(0)} {
		touch(t, filepath.Join(dir, name), old)
	}
	inFlightTmp := filepath.Join(dir, "_tmp", inFlight.Name()+".tmp")
	touch(t, inFlightTmp, old)

	removed, err := tb.CollectGarbage()
	if err != nil {
		t.Fatal(err)
	}
	gone := []string{"part-00000-old-c000.snappy.parquet", "_tmp/part-00000-old.parquet.tmp", "_delta_log/.00000000000000000001.x.json.tmp"}
	if removed != len(gone) {
		t.Errorf("removed %d files, want %d", removed, len(gone))
	}
	for _, name := range gone {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s survived: %v", name, err)
		}
	}
	kept := []string{"part-00000-recent-c000.snappy.parquet", "_tmp/part-00000-recent.parquet.tmp", "README.md",
		committed.Path, uncommitted.Path, "_delta_log/" + logName(0), inFlightTmp[len(dir)+1:]}
	for _, name := range kept {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
	}

	// A new process (no pending files) with grace 0 removes everything
	// unreferenced, but never a committed file.
	if _, err := openTable(t, dir, table.Options{}).CollectGarbage(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, uncommitted.Path)); !os.IsNotExist(err) {
		t.Errorf("uncommitted file survived a grace-0 collection: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, committed.Path)); err != nil {
		t.Errorf("committed file removed: %v", err)
	}
}

func touch(t *testing.T, name string, mtime time.Time) {
	t.Helper()
	if _, err := os.Stat(name); os.IsNotExist(err) {
		if err := os.WriteFile(name, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(name, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}
