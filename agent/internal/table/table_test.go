package table_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
)

func TestFirstCommit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cat", "sch", "tbl")
	tb := openTable(t, dir, table.Options{})
	if s := tb.Snapshot(); s.Version != -1 || s.Schema != nil || len(s.Txns) != 0 {
		t.Fatalf("empty table snapshot = %+v", s)
	}
	add := writeFile(t, tb, 0, 3)
	if !strings.HasPrefix(add.Path, "part-00000-") || !strings.HasSuffix(add.Path, "-c000.snappy.parquet") {
		t.Errorf("file name %q", add.Path)
	}
	v := mustCommit(t, tb, table.Commit{
		Schema:   testFields,
		Files:    []table.AddFile{add},
		Txns:     map[string]int64{"tbl/orders/0": 3},
		Counters: map[string]int64{"numCorruptRecords": 1},
	})
	if v != 0 {
		t.Fatalf("first version = %d", v)
	}
	s := tb.Snapshot()
	want := table.Snapshot{
		Version: 0, Schema: testFields, Txns: map[string]int64{"tbl/orders/0": 3}, NumFiles: 1, NumRows: 3,
		Counters: map[string]int64{"numCorruptRecords": 1, "numOutputRows": 3, "numAddedFiles": 1, "numOutputBytes": add.Size},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("snapshot =\n%+v, want\n%+v", s, want)
	}

	kinds := map[string]map[string]any{}
	for _, line := range readLog(t, dir, 0) {
		var a map[string]map[string]any
		if err := json.Unmarshal([]byte(line), &a); err != nil || len(a) != 1 {
			t.Fatalf("log line %s: %v", line, err)
		}
		for k, v := range a {
			kinds[k] = v
		}
	}
	if p := kinds["protocol"]; p["minReaderVersion"] != 1.0 || p["minWriterVersion"] != 2.0 {
		t.Errorf("protocol = %v", p)
	}
	md := kinds["metaData"]
	if md["format"].(map[string]any)["provider"] != "parquet" || len(md["partitionColumns"].([]any)) != 0 || md["id"] == "" {
		t.Errorf("metaData = %v", md)
	}
	if a := kinds["add"]; a["path"] != add.Path || a["stats"] != `{"numRecords":3}` || a["dataChange"] != true {
		t.Errorf("add = %v", a)
	}
	if x := kinds["txn"]; x["appId"] != "tbl/orders/0" || x["version"] != 3.0 {
		t.Errorf("txn = %v", x)
	}
	if ci := kinds["commitInfo"]; ci["operation"] != "STREAMING UPDATE" || ci["engineInfo"] != "tributary-agent" {
		t.Errorf("commitInfo = %v", ci)
	}
	if des, _ := os.ReadDir(filepath.Join(dir, "_tmp")); len(des) != 0 {
		t.Errorf("_tmp holds %d files after Close", len(des))
	}
}

func TestCommitsReplay(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	// Txn versions are the latest per appId, not the largest: a reset that
	// moves an offset back is recorded as such.
	steps := []map[string]int64{
		{"t/a/0": 10, "t/a/1": 5},
		{"t/a/0": 20},
		{"t/a/1": 7, "t/b/0": 1},
		{"t/a/0": 15},
	}
	var id int64
	for i, txns := range steps {
		c := table.Commit{Txns: txns, Counters: map[string]int64{"numCorruptRecords": 2}}
		if i == 0 {
			c.Schema = testFields
		}
		if i != 1 { // a commit may carry offsets only
			c.Files = []table.AddFile{writeFile(t, tb, id, id+4), writeFile(t, tb, id+4, id+5)}
			id += 5
		}
		if v := mustCommit(t, tb, c); v != int64(i) {
			t.Fatalf("commit %d got version %d", i, v)
		}
	}
	s := tb.Snapshot()
	if want := map[string]int64{"t/a/0": 15, "t/a/1": 7, "t/b/0": 1}; !reflect.DeepEqual(s.Txns, want) {
		t.Errorf("txns = %v, want %v", s.Txns, want)
	}
	if s.NumFiles != 6 || s.NumRows != id || s.Counters["numCorruptRecords"] != 8 || s.Counters["numOutputRows"] != id {
		t.Errorf("snapshot = %+v", s)
	}
	if re := openTable(t, dir, table.Options{}).Snapshot(); !reflect.DeepEqual(re, s) {
		t.Errorf("replayed snapshot =\n%+v, want\n%+v", re, s)
	}
}

func TestCommitRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	add := writeFile(t, tb, 0, 1)
	tests := []struct {
		name string
		c    table.Commit
		want string
	}{
		{"empty", table.Commit{}, "nothing to commit"},
		{"no schema first", table.Commit{Files: []table.AddFile{add}}, "needs a schema"},
		{"missing file", table.Commit{Schema: testFields, Files: []table.AddFile{{Path: "part-x.parquet"}}}, "part-x.parquet"},
		{"path outside", table.Commit{Schema: testFields, Files: []table.AddFile{{Path: "../x.parquet"}}}, "not a data file"},
		{"twice", table.Commit{Schema: testFields, Files: []table.AddFile{add, add}}, "added twice"},
		{"reserved counter", table.Commit{Schema: testFields, Counters: map[string]int64{"numOutputRows": 1}}, "reserved"},
		{"negative offset", table.Commit{Schema: testFields, Txns: map[string]int64{"a": -1}}, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tb.Commit(tt.c); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Commit error = %v, want it to mention %q", err, tt.want)
			}
		})
	}
	if v := tb.Snapshot().Version; v != -1 {
		t.Errorf("refused commits wrote version %d", v)
	}
}

func TestConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	a := openTable(t, dir, table.Options{})
	mustCommit(t, a, table.Commit{Schema: testFields, Txns: map[string]int64{"t/x/0": 0}})
	b := openTable(t, dir, table.Options{})

	// a wins version 1; b, still at version 0, loses it but records other
	// partitions, so it retries at version 2.
	mustCommit(t, a, table.Commit{Files: []table.AddFile{writeFile(t, a, 0, 2)}, Txns: map[string]int64{"t/x/0": 2}})
	if v := mustCommit(t, b, table.Commit{Files: []table.AddFile{writeFile(t, b, 2, 5)}, Txns: map[string]int64{"t/x/1": 3}}); v != 2 {
		t.Fatalf("retried commit got version %d, want 2", v)
	}
	if s := b.Snapshot(); s.NumRows != 5 || s.Txns["t/x/0"] != 2 || s.Txns["t/x/1"] != 3 {
		t.Errorf("b after retry = %+v", s)
	}

	// a, still at version 1, now records t/x/1, which b committed at version
	// 2: its rows may be duplicates, so it must not retry.
	lost := writeFile(t, a, 2, 4)
	_, err := a.Commit(table.Commit{Files: []table.AddFile{lost}, Txns: map[string]int64{"t/x/1": 4}})
	var conflict *table.ErrConflict
	if !errors.As(err, &conflict) || conflict.Version != 2 || conflict.AppID != "t/x/1" {
		t.Fatalf("overlapping commit error = %v, want ErrConflict at version 2 for t/x/1", err)
	}
	if _, err := os.Stat(filepath.Join(dir, lost.Path)); !os.IsNotExist(err) {
		t.Errorf("losing commit's file still exists: %v", err)
	}
	if s := a.Snapshot(); s.Version != 2 || s.Txns["t/x/1"] != 3 {
		t.Errorf("a after conflict = %+v, want b's version 2", s)
	}
}

func TestConcurrentWritersRace(t *testing.T) {
	dir := t.TempDir()
	mustCommit(t, openTable(t, dir, table.Options{}), table.Commit{Schema: testFields, Txns: map[string]int64{"init": 0}})
	const writers, commits = 3, 4
	var wg sync.WaitGroup
	errs := make(chan error, writers*commits)
	for w := range writers {
		tb := openTable(t, dir, table.Options{})
		wg.Go(func() {
			for i := range commits {
				add, err := tryWriteFile(tb, 0, 1)
				if err != nil {
					errs <- err
					return
				}
				appID := "t/x/" + string(rune('0'+w))
				if _, err := tb.Commit(table.Commit{Files: []table.AddFile{add}, Txns: map[string]int64{appID: int64(i + 1)}}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s := openTable(t, dir, table.Options{}).Snapshot()
	if s.Version != writers*commits || s.NumRows != writers*commits || len(s.Txns) != writers+1 {
		t.Errorf("after %d racing commits: %+v", writers*commits, s)
	}
	for appID, v := range s.Txns {
		if appID != "init" && v != commits {
			t.Errorf("txn %s = %d, want %d", appID, v, commits)
		}
	}
}

func TestFileWriterRowGroups(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{RowGroupRows: 10, Compression: &parquet.Zstd})
	fw, err := tb.NewFile(testParquet)
	if err != nil {
		t.Fatal(err)
	}
	for i := range int64(7) {
		if err := fw.WriteRows([]parquet.Row{testRow(i*5, "a", 1), testRow(i*5+1, "b", 2), testRow(i*5+2, "c", 3), testRow(i*5+3, "d", 4), testRow(i*5+4, "e", 5)}); err != nil {
			t.Fatal(err)
		}
	}
	if fw.Rows() != 35 || fw.Size() <= 0 {
		t.Errorf("Rows %d, Size %d", fw.Rows(), fw.Size())
	}
	add, err := fw.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(add.Path, ".zstd.parquet") || add.NumRecords != 35 {
		t.Errorf("AddFile = %+v", add)
	}
	f, err := os.Open(filepath.Join(dir, add.Path))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pf, err := parquet.OpenFile(f, add.Size)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(pf.RowGroups()); n != 4 || pf.NumRows() != 35 {
		t.Errorf("file has %d row groups and %d rows, want 4 and 35", n, pf.NumRows())
	}
	if _, err := fw.Close(); err == nil {
		t.Error("second Close succeeded")
	}
}

func TestFileWriterAbort(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	fw, err := tb.NewFile(testParquet)
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.WriteRows([]parquet.Row{testRow(1, "a", 1)}); err != nil {
		t.Fatal(err)
	}
	fw.Abort()
	for _, sub := range []string{".", "_tmp"} {
		des, _ := os.ReadDir(filepath.Join(dir, sub))
		for _, de := range des {
			if !de.IsDir() {
				t.Errorf("file %s left after Abort", filepath.Join(sub, de.Name()))
			}
		}
	}
	if err := fw.WriteRows([]parquet.Row{testRow(1, "a", 1)}); err == nil {
		t.Error("WriteRows after Abort succeeded")
	}
}

func TestFileWriterBadRows(t *testing.T) {
	tb := openTable(t, t.TempDir(), table.Options{})
	fw, err := tb.NewFile(testParquet)
	if err != nil {
		t.Fatal(err)
	}
	good := testRow(1, "a", 1)
	tests := []struct {
		name string
		row  parquet.Row
		want string
	}{
		{"unknown column", parquet.Row{parquet.ValueOf(int64(1)).Level(0, 0, 7)}, "column index 7"},
		{"missing column", good[:2], "no value for column name"},
		{"skipped column", parquet.Row{good[0], good[2]}, "no value for column id"},
		{"order", parquet.Row{good[0], good[1], good[0], good[2]}, "column order"},
		{"null in required", parquet.Row{good[0], parquet.NullValue().Level(0, 0, 1), good[2]}, "required"},
		{"kind", parquet.Row{good[0], parquet.ValueOf("x").Level(0, 0, 1), good[2]}, "BYTE_ARRAY value, want INT64"},
		{"levels", parquet.Row{good[0], good[1], parquet.ValueOf("x").Level(1, 1, 2)}, "exceed"},
	}
	for _, tt := range tests {
		if err := fw.WriteRows([]parquet.Row{good, tt.row}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: WriteRows error = %v, want it to mention %q", tt.name, err, tt.want)
		}
	}
	// The refused batches wrote nothing and the file is still usable.
	if err := fw.WriteRows([]parquet.Row{good, good}); err != nil {
		t.Fatal(err)
	}
	if add, err := fw.Close(); err != nil || add.NumRecords != 2 {
		t.Errorf("Close = %+v, %v; want 2 records", add, err)
	}
}
