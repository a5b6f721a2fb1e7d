package table_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
)

// ourName returns the n-th name shaped like the data files this package
// writes.
func ourName(n int) string {
	return fmt.Sprintf("part-00000-tributary-%08x-0000-4000-8000-000000000000-c000.snappy.parquet", n)
}

// logTemp, checkpointTemp and lastCheckpointTemp are names shaped like
// this package's temporary log files.
func logTemp(v int) string {
	return fmt.Sprintf(".%020d.00000000-0000-4000-8000-000000000000.json.tmp", v)
}

func checkpointTemp(v int) string {
	return fmt.Sprintf(".%020d.00000000-0000-4000-8000-000000000000.checkpoint.parquet.tmp", v)
}

const lastCheckpointTemp = "._last_checkpoint.00000000-0000-4000-8000-000000000000.tmp"

func TestCollectGarbage(t *testing.T) {
	dir := t.TempDir()
	clk := &clock{now: time.Now()}
	tb := openTable(t, dir, table.Options{Now: clk.Now}) // the default grace: an hour
	committed := writeFile(t, tb, 0, 2)
	mustCommit(t, tb, table.Commit{Schema: testFields, Files: []table.AddFile{committed}})
	uncommitted := writeFile(t, tb, 2, 4) // closed but not yet committed
	inFlight, err := tb.NewFile(testParquet)
	if err != nil {
		t.Fatal(err)
	}

	// What a crashed run left behind, and what others put there.
	old, recent := clk.now.Add(-2*time.Hour), clk.now.Add(-59*time.Minute)
	ours := map[string]time.Time{
		ourName(1):                         old,
		ourName(2):                         recent,
		"_tmp/" + ourName(3) + ".tmp":      old,
		"_tmp/" + ourName(4) + ".tmp":      recent,
		"_delta_log/" + logTemp(1):         old,
		"_delta_log/" + logTemp(2):         recent,
		"_delta_log/" + checkpointTemp(10): old,
		"_delta_log/" + lastCheckpointTemp: old,
		uncommitted.Path:                   old,
		"_tmp/" + inFlight.Name() + ".tmp": old,
	}
	foreign := map[string]time.Time{
		"README.md":                 old,
		"data.parquet":              old,
		"part-00000-x-c000.parquet": old,
		// Spark's and delta-rs's names: a long OPTIMIZE may commit it later.
		"part-00000-0000000a-0000-4000-8000-000000000000-c000.snappy.parquet": old,
		"_tmp/other.tmp":              old,
		"_delta_log/.other.json.tmp":  old,
		"_delta_log/_last_checkpoint": old,
		"year=2024/" + ourName(5):     old,
		"_delta_log/" + logName(0):    old,
		committed.Path:                old,
	}
	if err := os.Mkdir(filepath.Join(dir, "year=2024"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, mtime := range ours {
		touch(t, filepath.Join(dir, name), mtime)
	}
	for name, mtime := range foreign {
		touch(t, filepath.Join(dir, name), mtime)
	}

	removed, err := tb.CollectGarbage()
	if err != nil {
		t.Fatal(err)
	}
	gone := []string{ourName(1), "_tmp/" + ourName(3) + ".tmp", "_delta_log/" + logTemp(1),
		"_delta_log/" + checkpointTemp(10), "_delta_log/" + lastCheckpointTemp}
	if removed != len(gone) {
		t.Errorf("removed %d files, want %d", removed, len(gone))
	}
	checkGone(t, dir, gone...)
	// Younger than the grace, or still this Table's: kept.
	checkKept(t, dir, ourName(2), "_tmp/"+ourName(4)+".tmp", "_delta_log/"+logTemp(2),
		uncommitted.Path, "_tmp/"+inFlight.Name()+".tmp")
	for name := range foreign {
		checkKept(t, dir, name)
	}

	// The next run, days later, collects everything of ours no commit
	// added, and still nothing of anyone else's.
	inFlight.Abort()
	tb.Close()
	clk.now = clk.now.Add(100 * time.Hour)
	if removed, err := openTable(t, dir, table.Options{Now: clk.Now}).CollectGarbage(); err != nil || removed != 4 {
		t.Errorf("second collection = %d, %v; want 4 files", removed, err)
	}
	checkGone(t, dir, ourName(2), "_tmp/"+ourName(4)+".tmp", "_delta_log/"+logTemp(2), uncommitted.Path)
	for name := range foreign {
		checkKept(t, dir, name)
	}
}

// TestCollectGarbageForeignTable appends to a table another engine created:
// its files are named like ours, but garbage collection deletes nothing.
func TestCollectGarbageForeignTable(t *testing.T) {
	dir := writeForeignTable(t, `{"minReaderVersion":1,"minWriterVersion":2}`, `{}`)
	clk := &clock{now: time.Now()}
	tb := openTable(t, dir, table.Options{Now: clk.Now})
	mustCommit(t, tb, table.Commit{Files: []table.AddFile{writeFile(t, tb, 0, 2)}, Txns: map[string]int64{"t/a/0": 2}})
	uncommitted := writeFile(t, tb, 2, 4)
	old := clk.now.Add(-2 * time.Hour)
	names := []string{ourName(1), "_tmp/" + ourName(2) + ".tmp", "_delta_log/" + logTemp(1), uncommitted.Path}
	for _, name := range names {
		touch(t, filepath.Join(dir, name), old)
	}
	tb.Close()
	clk.now = clk.now.Add(100 * time.Hour)
	if removed, err := openTable(t, dir, table.Options{Now: clk.Now}).CollectGarbage(); err != nil || removed != 0 {
		t.Errorf("CollectGarbage = %d, %v; want nothing deleted", removed, err)
	}
	checkKept(t, dir, names...)
}

func checkGone(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s survived: %v", name, err)
		}
	}
}

func checkKept(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
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
