package table_test

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
)

// rewriteFiles reads files of tb and writes their rows into one new file,
// which it returns with the paths it replaces.
func rewriteFiles(t *testing.T, tb *table.Table, files []table.LiveFile) ([]string, table.AddFile) {
	t.Helper()
	var paths []string
	var fw *table.FileWriter
	for _, f := range files {
		ps, _, cols, n := tabletest.ReadFile(t, tb, f.Path)
		if fw == nil {
			var err error
			if fw, err = tb.NewFile(ps); err != nil {
				t.Fatal(err)
			}
		}
		if err := fw.WriteColumns(cols, n); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, f.Path)
	}
	add, err := fw.Close()
	if err != nil {
		t.Fatal(err)
	}
	return paths, add
}

// rewriteAll is rewriteFiles of every live file.
func rewriteAll(t *testing.T, tb *table.Table) ([]string, table.AddFile) {
	t.Helper()
	return rewriteFiles(t, tb, tb.Files())
}

// decodeLine decodes one log line into its single action.
func decodeLine(t *testing.T, line string) map[string]map[string]any {
	t.Helper()
	var a map[string]map[string]any
	if err := json.Unmarshal([]byte(line), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestCommitRewrite replaces three files by one and checks the entry's
// actions, that replay and a checkpoint read it back, that the counters of
// ingestion and the offsets stay, and that a changelog reader skips it.
func TestCommitRewrite(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	appendCommits(t, tb, 3)
	before := tb.Snapshot()
	files := tb.Files()
	if len(files) != 3 || files[0].Version != 0 || files[2].Version != 2 || files[1].NumRecords != 2 {
		t.Fatalf("Files = %+v", files)
	}
	removes, add := rewriteAll(t, tb)
	v, err := tb.CommitRewrite(table.Rewrite{Removes: removes, Adds: []table.AddFile{add}})
	if err != nil || v != 3 {
		t.Fatalf("CommitRewrite = %d, %v", v, err)
	}

	lines := readLog(t, dir, 3)
	if len(lines) != 5 {
		t.Fatalf("entry has %d lines, want commitInfo, 3 removes, 1 add:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	info := decodeLine(t, lines[0])["commitInfo"]
	if info["operation"] != "OPTIMIZE" || info["isBlindAppend"] != false || info["readVersion"] != 2.0 {
		t.Errorf("commitInfo = %v", info)
	}
	m := info["operationMetrics"].(map[string]any)
	if m["numRemovedFiles"] != "3" || m["numAddedFiles"] != "1" || m["numAddedBytes"] != strconv.FormatInt(add.Size, 10) || m["numRemovedBytes"] == nil {
		t.Errorf("operationMetrics = %v", m)
	}
	for i, f := range files {
		rm := decodeLine(t, lines[1+i])["remove"]
		if rm == nil || rm["path"] != f.Path || rm["dataChange"] != false || rm["extendedFileMetadata"] != true ||
			rm["size"] != float64(f.Size) || rm["deletionTimestamp"] == nil || !strings.Contains(rm["stats"].(string), `"numRecords":2`) {
			t.Errorf("line %d = %s", 2+i, lines[1+i])
		}
	}
	if a := decodeLine(t, lines[4])["add"]; a == nil || a["path"] != add.Path || a["dataChange"] != false {
		t.Errorf("add = %s", lines[4])
	}

	check := func(what string, tb *table.Table) {
		t.Helper()
		snap := tb.Snapshot()
		got := tb.Files()
		if len(got) != 1 || got[0].Path != add.Path || got[0].NumRecords != 6 || snap.NumRows != 6 {
			t.Errorf("%s: Files = %+v, rows %d", what, got, snap.NumRows)
		}
		if snap.Txns["t/a/0"] != 6 || snap.Counters[table.MetricOutputRows] != before.Counters[table.MetricOutputRows] ||
			snap.Counters[table.MetricAddedFiles] != 3 || snap.Configuration["tributary.format"] != before.Configuration["tributary.format"] {
			t.Errorf("%s: snapshot = %+v, before %+v", what, snap, before)
		}
	}
	check("after the commit", tb)
	tb.Close()
	// Replayed, then with a checkpoint at version 10 that holds the
	// rewrite's state, and read alone once the entries before it are gone.
	tb = openTable(t, dir, table.Options{})
	check("replayed", tb)
	appendCommits(t, tb, 7)
	tb.Close()
	removeLog(t, dir, 0, 11)
	tb = openTable(t, dir, table.Options{})
	if n := len(tb.Files()); n != 8 || tb.Snapshot().NumRows != 20 {
		t.Errorf("from the checkpoint: %d files, %d rows; want 8 files, 20 rows", n, tb.Snapshot().NumRows)
	}
}

// TestChangesSkipRewrite checks that a changelog reader reads no rows from
// a rewrite: its version has no files, and is no error.
func TestChangesSkipRewrite(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	appendCommits(t, tb, 2)
	removes, add := rewriteAll(t, tb)
	if _, err := tb.CommitRewrite(table.Rewrite{Removes: removes, Adds: []table.AddFile{add}}); err != nil {
		t.Fatal(err)
	}
	r, err := table.OpenChanges(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	changes, err := r.Changes(0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 3 || len(changes[0].Files) != 1 || len(changes[1].Files) != 1 || len(changes[2].Files) != 0 {
		t.Errorf("Changes = %+v", changes)
	}
}

// twoWriters opens two writers of a new table, as writers on a file system
// where locks do not hold would, after the first committed n appends.
func twoWriters(t *testing.T, n int) (dir string, tb, other *table.Table) {
	t.Helper()
	dir = t.TempDir()
	tb = openUnlocked(t, dir)
	appendCommits(t, tb, n)
	return dir, tb, openUnlocked(t, dir)
}

// openUnlocked opens the table in dir without its lock, and closes it when
// the test ends.
func openUnlocked(t *testing.T, dir string) *table.Table {
	t.Helper()
	tb, err := table.OpenUnlocked(dir, table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

// TestCommitRewriteAfterIngestion has another writer append a file after the
// rewrite read the table: the rewrite loses the race for the version,
// reads the append and lands after it, keeping the appended file.
func TestCommitRewriteAfterIngestion(t *testing.T) {
	dir, tb, other := twoWriters(t, 2)
	removes, add := rewriteAll(t, tb)
	appendCommits(t, other, 1) // version 2, which tb has not read
	v, err := tb.CommitRewrite(table.Rewrite{Removes: removes, Adds: []table.AddFile{add}})
	if err != nil || v != 3 {
		t.Fatalf("CommitRewrite = %d, %v; want version 3", v, err)
	}
	tb.Close()
	re := openTable(t, dir, table.Options{})
	if snap := re.Snapshot(); snap.NumFiles != 2 || snap.NumRows != 6 || snap.Txns["t/a/0"] != 6 {
		t.Errorf("after the rewrite: %+v", snap)
	}
}

// TestCommitRewriteGivesWay has another writer compact a file first: the
// rewrite gives way with a RewriteConflictError naming the file and deletes
// its new file.
func TestCommitRewriteGivesWay(t *testing.T) {
	dir, tb, other := twoWriters(t, 3)
	removes, add := rewriteAll(t, tb)
	first := other.Files()[:2]
	otherRemoves, otherAdd := rewriteFiles(t, other, first)
	if _, err := other.CommitRewrite(table.Rewrite{Removes: otherRemoves, Adds: []table.AddFile{otherAdd}}); err != nil {
		t.Fatal(err)
	}
	_, err := tb.CommitRewrite(table.Rewrite{Removes: removes, Adds: []table.AddFile{add}})
	var conflict *table.RewriteConflictError
	if !errors.As(err, &conflict) || conflict.Path != first[0].Path || conflict.Version != 3 {
		t.Fatalf("CommitRewrite = %v; want a RewriteConflictError on %s at version 3", err, first[0].Path)
	}
	if _, err := os.Stat(filepath.Join(dir, add.Path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the new file of the rewrite that gave way is still there: %v", err)
	}
	if snap := tb.Snapshot(); snap.Version != 3 || snap.NumFiles != 2 || snap.NumRows != 6 {
		t.Errorf("after giving way: %+v", snap)
	}
}

// TestCommitRewriteRefused checks the rewrites refused before anything is
// written.
func TestCommitRewriteRefused(t *testing.T) {
	tb := openTable(t, t.TempDir(), table.Options{})
	appendCommits(t, tb, 1)
	p := tb.Files()[0].Path
	for _, r := range []table.Rewrite{
		{},
		{Removes: []string{p, p}},
		{Removes: []string{p}, Adds: []table.AddFile{{Path: "x.csv"}}},
	} {
		if _, err := tb.CommitRewrite(r); err == nil {
			t.Errorf("CommitRewrite(%+v) succeeded", r)
		}
	}
	if v := tb.Snapshot().Version; v != 0 {
		t.Errorf("version %d after refused rewrites", v)
	}
}

// TestTargetFileSize reads delta.targetFileSize as Delta does: bytes, or a
// Spark byte string with binary units.
func TestTargetFileSize(t *testing.T) {
	for in, want := range map[string]int64{"134217728": 128 << 20, "128mb": 128 << 20, " 1G ": 1 << 30, "512k": 512 << 10, "100 b": 100} {
		got, ok, err := table.TargetFileSize(map[string]string{"delta.targetFileSize": in})
		if got != want || !ok || err != nil {
			t.Errorf("TargetFileSize(%q) = %d, %v, %v; want %d", in, got, ok, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "1.5g", "12 parsecs", "mb"} {
		if _, ok, err := table.TargetFileSize(map[string]string{"delta.targetFileSize": in}); err == nil || !ok {
			t.Errorf("TargetFileSize(%q) accepted", in)
		}
	}
	if _, ok, err := table.TargetFileSize(nil); ok || err != nil {
		t.Errorf("TargetFileSize(nil) = %v, %v", ok, err)
	}
}

// TestOpenFilePartitioned refuses to read a file of a partitioned table
// that lacks the partition column (as Spark writes them), with
// ErrNoPartitionColumns, rather than read its values as null.
func TestOpenFilePartitioned(t *testing.T) {
	dir := writeForeignTable(t, `{"minReaderVersion":1,"minWriterVersion":2}`, `{}`)
	data, err := os.ReadFile(logFile(dir, logName(0)))
	if err != nil {
		t.Fatal(err)
	}
	writeLog(t, dir, 0, strings.Replace(string(data), `"partitionColumns":[]`, `"partitionColumns":["name"]`, 1))
	type row struct {
		ID     int64   `parquet:"id"`
		Amount float64 `parquet:"amount"`
	}
	if err := os.MkdirAll(filepath.Join(dir, "name=a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := parquet.WriteFile(filepath.Join(dir, "name=a", "part-0.parquet"), []row{{1, 2.5}}); err != nil {
		t.Fatal(err)
	}
	writeLog(t, dir, 1, `{"add":{"path":"name=a/part-0.parquet","partitionValues":{"name":"a"},"size":1,"modificationTime":1,"dataChange":true}}`+"\n")
	tb := openTable(t, dir, table.Options{})
	files := tb.Files()
	if len(files) != 1 || files[0].PartitionValues["name"] != "a" {
		t.Fatalf("Files = %+v", files)
	}
	if fr, err := tb.OpenFile(files[0].Path, table.WholeFileBytes); !errors.Is(err, table.ErrNoPartitionColumns) {
		if err == nil {
			fr.Close()
		}
		t.Errorf("OpenFile = %v; want ErrNoPartitionColumns", err)
	}
}

// TestCommitRewriteCounters checks that a rewrite counts nothing, also in a
// table with no counters yet (another engine wrote it).
func TestCommitRewriteCounters(t *testing.T) {
	dir := writeForeignTable(t, `{"minReaderVersion":1,"minWriterVersion":2}`, `{}`)
	writeLog(t, dir, 1, `{"add":{"path":"part-0.parquet","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true,"stats":"{\"numRecords\":1}"}}`+"\n")
	tb := openTable(t, dir, table.Options{})
	add := writeFile(t, tb, 0, 1)
	if _, err := tb.CommitRewrite(table.Rewrite{Removes: []string{"part-0.parquet"}, Adds: []table.AddFile{add}}); err != nil {
		t.Fatal(err)
	}
	if c := tb.Counters(); len(c) != 0 {
		t.Errorf("counters after a rewrite: %v", c)
	}
	tb.Close()
	if c := openTable(t, dir, table.Options{}).Counters(); len(c) != 0 {
		t.Errorf("counters after replaying a rewrite: %v", c)
	}
}

// TestOpenFileBatches reads a file of several row groups in batches that
// cross them: every row once, in order, and io.EOF after the last.
func TestOpenFileBatches(t *testing.T) {
	tb := openTable(t, t.TempDir(), table.Options{RowGroupRows: 10})
	mustCommit(t, tb, table.Commit{Files: []table.AddFile{writeFile(t, tb, 0, 35)}, Schema: testFields})
	fr, err := tb.OpenFile(tb.Files()[0].Path, table.WholeFileBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	if fr.NumRows() != 35 {
		t.Fatalf("NumRows = %d; want 35", fr.NumRows())
	}
	var ids []int64
	for _, want := range []int{15, 15, 5} {
		cols, n, err := fr.Read(15)
		if err != nil || n != want {
			t.Fatalf("Read(15) = %d rows, %v; want %d", n, err, want)
		}
		for _, v := range cols[0] {
			ids = append(ids, v.Int64())
		}
	}
	if _, n, err := fr.Read(15); n != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("Read after the last row = %d rows, %v; want io.EOF", n, err)
	}
	for i, id := range ids {
		if id != int64(i) {
			t.Fatalf("rows read in the order %v", ids)
		}
	}
}

// TestOpenFileDamaged opens data files that are not what the log says:
// cut short, and not Parquet at all. Each is an error naming the file,
// never a panic (a maintainer opens every small file of its table at each
// check, so a panic there would restart the agent for ever).
func TestOpenFileDamaged(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	mustCommit(t, tb, table.Commit{Files: []table.AddFile{writeFile(t, tb, 0, 35), writeFile(t, tb, 35, 70)}, Schema: testFields})
	files := tb.Files()
	whole := filepath.Join(dir, files[0].Path)
	data, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	for i, damaged := range [][]byte{data[:len(data)/2], []byte(strings.Repeat("not parquet ", 100))} {
		path := files[i].Path
		if err := os.WriteFile(filepath.Join(dir, path), damaged, 0o644); err != nil {
			t.Fatal(err)
		}
		fr, err := tb.OpenFile(path, table.WholeFileBytes)
		if err == nil {
			fr.Close()
			t.Errorf("OpenFile of %s (%d damaged bytes) succeeded", path, len(damaged))
		} else if !strings.Contains(err.Error(), path) {
			t.Errorf("OpenFile of %s: %v; want an error naming the file", path, err)
		}
	}
}

// TestRefresh reads what another writer committed: its files are in Files
// once Refresh has run, not before.
func TestRefresh(t *testing.T) {
	_, tb, other := twoWriters(t, 2)
	appendCommits(t, tb, 3)
	if n := len(other.Files()); n != 2 {
		t.Fatalf("before Refresh the other writer sees %d files; want the 2 it opened with", n)
	}
	if err := other.Refresh(); err != nil {
		t.Fatal(err)
	}
	if n, v := len(other.Files()), other.Snapshot().Version; n != 5 || v != tb.Snapshot().Version {
		t.Errorf("after Refresh: %d files at version %d; want 5 at %d", n, v, tb.Snapshot().Version)
	}
	other.Close()
	if err := other.Refresh(); err == nil {
		t.Error("Refresh of a closed table succeeded")
	}
}
