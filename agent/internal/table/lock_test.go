package table_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
)

func TestOpenLocksTheFolder(t *testing.T) {
	dir := t.TempDir()
	owner := `pipeline "orders", table main.sales.orders`
	tb, err := table.Open(dir, table.Options{Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	mustCommit(t, tb, table.Commit{Schema: testFields, Txns: map[string]int64{"a": 1}})
	lock, err := os.ReadFile(filepath.Join(dir, "_tributary.lock"))
	if err != nil {
		t.Fatal(err)
	}
	pid := fmt.Sprintf("pid %d on host ", os.Getpid())
	if !strings.HasPrefix(string(lock), owner+" ("+pid) {
		t.Errorf("lock file = %q, want the owner, pid and host", lock)
	}

	// A second writer, here in the same process, is refused at once.
	_, err = table.Open(dir, table.Options{Owner: "second"})
	var locked *table.LockedError
	if !errors.As(err, &locked) || locked.Dir != dir || !strings.HasPrefix(locked.Holder, owner) {
		t.Fatalf("second Open error = %v, want LockedError naming %q", err, owner)
	}
	for _, want := range []string{dir, owner, pid, "stop that pipeline or agent"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// Reading needs no lock.
	if s, err := table.ReadSnapshot(dir); err != nil || s.Version != 0 {
		t.Errorf("ReadSnapshot while locked = %+v, %v", s, err)
	}

	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tb.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if s := tb.Snapshot(); s.Version != 0 {
		t.Errorf("Snapshot after Close = %+v", s)
	}
	for name, call := range map[string]func() error{
		"Commit":         func() error { _, err := tb.Commit(table.Commit{Txns: map[string]int64{"b": 1}}); return err },
		"NewFile":        func() error { _, err := tb.NewFile(testParquet); return err },
		"CollectGarbage": func() error { _, err := tb.CollectGarbage(); return err },
	} {
		if err := call(); err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("%s after Close: %v, want an error saying the table is closed", name, err)
		}
	}
	openTable(t, dir, table.Options{Owner: "second"})
}

// markTemp is the temporary name of table.FirstFileMark on local disk.
const markTemp = "_delta_log/..00000000-0000-4000-8000-000000000000.tributary-first-file.tmp"

// TestOpenRefusesForeignData opens folders holding various things but no
// log: only this package's own leftovers (of a writer killed before the
// table's first commit, which marked its first data file) are accepted,
// and a refused folder is left as it was.
func TestOpenRefusesForeignData(t *testing.T) {
	tests := []struct {
		name  string
		files []string // relative to the folder; a trailing / makes a folder
		found []string // what the error lists; nil when Open succeeds
	}{
		{name: "missing folder"},
		{name: "empty folder", files: []string{}},
		{name: "empty log and a lock", files: []string{"_delta_log/", "_tributary.lock"}},
		{name: "a first commit that crashed", files: []string{"_delta_log/" + logTemp(0), "_tmp/" + ourName(1) + ".tmp"}},
		{name: "parquet files", files: []string{"a.parquet", "b.parquet"}, found: []string{"a.parquet", "b.parquet"}},
		{name: "a first data file that was never committed", files: []string{table.FirstFileMark, ourName(1), "year=2024/month=1/" + ourName(2)}},
		{name: "the mark being written", files: []string{markTemp}},
		{name: "a data file beside the mark being written", files: []string{markTemp, ourName(1)}, found: []string{ourName(1)}},
		{name: "data files of ours without the mark: a table whose log was deleted", files: []string{ourName(1), "year=2024/" + ourName(2)},
			found: []string{ourName(1), "year=2024/" + ourName(2)}},
		{name: "a partition folder", files: []string{"year=2024/"}},
		{name: "Spark's data files", files: []string{"part-00000-0000000a-0000-4000-8000-000000000000-c000.snappy.parquet"},
			found: []string{"part-00000-0000000a-0000-4000-8000-000000000000-c000.snappy.parquet"}},
		{name: "another tool's file in a partition folder", files: []string{table.FirstFileMark, "year=2024/" + ourName(1), "year=2024/a.parquet"},
			found: []string{"year=2024/a.parquet"}},
		{name: "a folder", files: []string{"data/"}, found: []string{"data"}},
		{name: "a hidden file", files: []string{".DS_Store"}, found: []string{".DS_Store"}},
		{name: "a log without entries", files: []string{"_delta_log/_last_checkpoint"}, found: []string{"_delta_log/_last_checkpoint"}},
		{name: "another tool's temporary file", files: []string{"_tmp/x.tmp"}, found: []string{"_tmp/x.tmp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tbl")
			if tt.files != nil {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, name := range tt.files {
				path := filepath.Join(dir, name)
				if strings.HasSuffix(name, "/") {
					if err := os.MkdirAll(path, 0o755); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := listTree(t, dir)
			_, readErr := table.ReadSnapshot(dir)
			tb, err := table.Open(dir, table.Options{})
			if tt.found == nil {
				if err != nil || readErr != nil {
					t.Fatalf("Open: %v; ReadSnapshot: %v", err, readErr)
				}
				tb.Close()
				return
			}
			var notTable *table.NotTableError
			if !errors.As(err, &notTable) || notTable.Dir != dir || !reflect.DeepEqual(notTable.Found, tt.found) {
				t.Fatalf("Open error = %v, want NotTableError listing %v", err, tt.found)
			}
			for _, want := range []string{dir, tt.found[0], "not a Tributary table", "choose another destination table name, or empty the folder"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if !errors.As(readErr, &notTable) {
				t.Errorf("ReadSnapshot error = %v, want NotTableError", readErr)
			}
			if after := listTree(t, dir); !slices.Equal(after, before) {
				t.Errorf("a refused Open changed the folder from %v to %v", before, after)
			}
		})
	}
}

// TestOpenAfterCrashedFirstCommit collects what a writer left behind when
// it crashed before its first commit, once it is older than the grace.
func TestOpenAfterCrashedFirstCommit(t *testing.T) {
	dir := t.TempDir()
	leftovers := []string{"_delta_log/" + logTemp(0), "_tmp/" + ourName(1) + ".tmp"}
	clk := &clock{now: time.Now()}
	for _, name := range leftovers {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		touch(t, filepath.Join(dir, name), clk.now.Add(-2*table.DefaultGCGrace))
	}
	if n, err := openTable(t, dir, table.Options{Now: clk.Now}).CollectGarbage(); err != nil || n != len(leftovers) {
		t.Fatalf("CollectGarbage = %d, %v; want %d", n, err, len(leftovers))
	}
	checkGone(t, dir, leftovers...)
}

func TestErrNotTableListsAFew(t *testing.T) {
	err := &table.NotTableError{Dir: "/d", Found: []string{"a", "b", "c", "d", "e"}}
	if got := err.Error(); !strings.Contains(got, "(a, b, c and 2 more, but no Delta log)") {
		t.Errorf("error = %q", got)
	}
}

// listTree lists everything under dir, or nil if it does not exist.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(path string, _ os.DirEntry, err error) error {
		names = append(names, path)
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return names
}

// TestOpenAfterCrashBeforeFirstCommit reopens a new table whose writer was
// killed between its first data file and its first commit: the file is in
// the folder (closed) or still under its temporary name (in flight), and
// no log names it. The folder is the writer's own table, not foreign data;
// its next commit creates the table, and garbage collection takes the
// orphans once they are older than the grace.
func TestOpenAfterCrashBeforeFirstCommit(t *testing.T) {
	for _, tt := range []struct {
		name        string
		partitioned bool
		closed      bool
	}{
		{name: "closed file", closed: true},
		{name: "file in flight"},
		{name: "closed partitioned file", partitioned: true, closed: true},
		{name: "partitioned file in flight", partitioned: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			clk := &clock{now: time.Now()}
			opts := table.Options{Now: clk.Now}
			tb, err := table.Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			if tt.partitioned {
				ps, err := rows.Schema(partFields)
				if err != nil {
					t.Fatal(err)
				}
				fw, err := tb.NewPartitionFile(ps, []table.PartitionValue{{Column: "country", Value: "nl"}, {Column: "day", Value: "2024-01-02"}})
				if err != nil {
					t.Fatal(err)
				}
				if tt.closed {
					if _, err := fw.Close(); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				fw, err := tb.NewFile(testParquet)
				if err != nil {
					t.Fatal(err)
				}
				if err := writeRows(fw, []parquet.Row{testRow(1, "a", 1)}); err != nil {
					t.Fatal(err)
				}
				if tt.closed {
					if _, err := fw.Close(); err != nil {
						t.Fatal(err)
					}
				}
			}
			tb.Close() // the kill: the lock goes with the process, nothing is committed
			left := listTree(t, dir)
			if _, err := os.Stat(filepath.Join(dir, table.FirstFileMark)); err != nil {
				t.Fatalf("the first data file was not marked: %v", err)
			}

			if _, err := table.ReadSnapshot(dir); err != nil {
				t.Fatalf("ReadSnapshot after the crash: %v", err)
			}
			tb = openTable(t, dir, opts)
			c := table.Commit{Schema: testFields, Files: []table.AddFile{writeFile(t, tb, 0, 2)}}
			if tt.partitioned {
				c = table.Commit{Schema: partFields, Partitioning: &partLayout, Files: []table.AddFile{writePartFile(t, tb, "nl", "2024-01-02", 1)}}
			}
			mustCommit(t, tb, c)
			if _, err := os.Stat(filepath.Join(dir, table.FirstFileMark)); !os.IsNotExist(err) {
				t.Errorf("the mark outlived the first commit: %v", err)
			}
			clk.now = clk.now.Add(2 * table.DefaultGCGrace)
			if n, err := tb.CollectGarbage(); err != nil || n != 1 {
				t.Fatalf("CollectGarbage = %d, %v; want the crashed writer's file of %v", n, err, left)
			}
		})
	}
}

// TestOpenRemovesAStaleMark checks that a mark left in a table that has a
// log (a crash between the first commit and the mark's removal) goes when
// the table is opened: without the log it would vouch for data files it
// never saw.
func TestOpenRemovesAStaleMark(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	mustCommit(t, tb, table.Commit{Schema: testFields, Files: []table.AddFile{writeFile(t, tb, 0, 2)}})
	tb.Close()
	mark := filepath.Join(dir, table.FirstFileMark)
	if err := os.WriteFile(mark, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	openTable(t, dir, table.Options{})
	if _, err := os.Stat(mark); !os.IsNotExist(err) {
		t.Errorf("the stale mark survived Open: %v", err)
	}
}
