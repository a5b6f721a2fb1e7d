package table_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
)

// format1Table copies the table an agent of format 1 wrote (two commits of
// the partition "orders/0", offsets 0 to 5, no tributary.format property)
// into a new folder and returns it.
func format1Table(t *testing.T) string {
	t.Helper()
	return copyDir(t, filepath.Join("testdata", "format1-table"))
}

// TestFormatOldTableAppends: a table of format 1 opens, takes appends as
// before, and keeps its configuration: no property is added to it.
func TestFormatOldTableAppends(t *testing.T) {
	dir := format1Table(t)
	tb := openTable(t, dir, table.Options{})
	before := tb.Snapshot()
	if before.Version != 1 || before.NumRows != 5 || before.Txns["orders/0"] != 5 {
		t.Fatalf("the format 1 table = %+v", before)
	}
	mustCommit(t, tb, table.Commit{Files: []table.AddFile{writeFile(t, tb, 5, 7)},
		Txns: map[string]int64{"orders/0": 7}, From: map[string]int64{"orders/0": 5}})
	tb.Close()
	after := openTable(t, dir, table.Options{}).Snapshot()
	if after.NumRows != 7 || after.Txns["orders/0"] != 7 {
		t.Fatalf("after an append = %+v", after)
	}
	if _, ok := after.Configuration["tributary.format"]; ok || after.Configuration["tributary.topicId.orders"] != "fixture-topic-id" {
		t.Fatalf("the configuration changed: %v", after.Configuration)
	}
}

// TestFormatNewTable: a new table records the format it is written in, and
// no commit may set it.
func TestFormatNewTable(t *testing.T) {
	tb := openTable(t, filepath.Join(t.TempDir(), "t"), table.Options{})
	appendCommits(t, tb, 1)
	if got := tb.Snapshot().Configuration["tributary.format"]; got != strconv.Itoa(table.FormatVersion) {
		t.Fatalf("tributary.format = %q, want %d", got, table.FormatVersion)
	}
	if _, err := tb.Commit(table.Commit{Configuration: map[string]string{"tributary.format": "1"}}); err == nil {
		t.Fatal("a commit set tributary.format")
	}
}

// withFormat rewrites version 0 of the table in dir to give it the
// tributary.format property value, as an agent of that format would have.
func withFormat(t *testing.T, dir string, v int, value string) {
	t.Helper()
	path := logFile(dir, logName(v))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const created = `"tributary.createdBy":"tributary-agent"`
	if !strings.Contains(string(data), created) {
		t.Fatalf("version %d has no metaData of the agent's", v)
	}
	data = []byte(strings.Replace(string(data), created, created+`,"tributary.format":"`+value+`"`, 1))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFormatNewerRefused: a table of a newer format, or of a format no
// agent writes, is refused for appends with a message naming the table,
// both formats and the fix; it can still be read.
func TestFormatNewerRefused(t *testing.T) {
	for _, value := range []string{strconv.Itoa(table.FormatVersion + 1), "two", "0"} {
		t.Run(value, func(t *testing.T) {
			dir := format1Table(t)
			withFormat(t, dir, 0, value)
			_, err := table.Open(dir, table.Options{})
			var newer *table.NewerFormatError
			if !errors.As(err, &newer) {
				t.Fatalf("Open = %v, want a NewerFormatError", err)
			}
			for _, want := range []string{dir, strconv.Quote(value), "format " + strconv.Itoa(table.FormatVersion), "upgrade this agent"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%q does not say %q", err, want)
				}
			}
			if snap, err := table.ReadSnapshot(dir); err != nil || snap.NumRows != 5 {
				t.Fatalf("ReadSnapshot = %+v, %v; want the table readable", snap, err)
			}
		})
	}
}

// TestFormatNewerWhileOpen: when another writer (a newer agent of a
// cluster) gives the table a newer format while this one has it open, this
// one's next commit is refused and writes nothing.
func TestFormatNewerWhileOpen(t *testing.T) {
	dir := format1Table(t)
	tb := openTable(t, dir, table.Options{})
	add := writeFile(t, tb, 5, 7)
	entry := readLog(t, dir, 0)
	var meta string
	for _, line := range entry {
		if strings.HasPrefix(line, `{"metaData"`) {
			meta = line
		}
	}
	writeLog(t, dir, 2, `{"commitInfo":{"timestamp":1,"operation":"SET TBLPROPERTIES"}}`+"\n"+
		strings.Replace(meta, `"tributary.createdBy":"tributary-agent"`, `"tributary.createdBy":"tributary-agent","tributary.format":"99"`, 1)+"\n")
	_, err := tb.Commit(table.Commit{Files: []table.AddFile{add}, Txns: map[string]int64{"orders/0": 7}, From: map[string]int64{"orders/0": 5}})
	var newer *table.NewerFormatError
	if !errors.As(err, &newer) || newer.Format != "99" {
		t.Fatalf("Commit = %v, want a NewerFormatError for format 99", err)
	}
	if _, err := os.Stat(logFile(dir, logName(3))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("version 3 was written: %v", err)
	}
}
