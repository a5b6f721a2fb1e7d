package table_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
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
	if !strings.HasPrefix(add.Path, "part-00000-tributary-") || !strings.HasSuffix(add.Path, "-c000.snappy.parquet") {
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
		Counters:      map[string]int64{"numCorruptRecords": 1, "numOutputRows": 3, "numAddedFiles": 1, "numOutputBytes": add.Size},
		Configuration: map[string]string{"delta.appendOnly": "true", "tributary.createdBy": "tributary-agent", "tributary.format": "1"},
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
	const stats = `{"numRecords":3,"minValues":{"amount":0,"id":0,"name":"n"},"maxValues":{"amount":1,"id":2,"name":"nxx"},"nullCount":{"amount":0,"id":0,"name":0}}`
	if a := kinds["add"]; a["path"] != add.Path || a["stats"] != stats || a["dataChange"] != true {
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
	steps := []map[string]int64{
		{"t/a/0": 10, "t/a/1": 5},
		{"t/a/0": 20},
		{"t/a/1": 7, "t/b/0": 1},
		{"t/a/0": 25},
	}
	var id int64
	for i, txns := range steps {
		c := table.Commit{Txns: txns, From: from(tb, txns), Counters: map[string]int64{"numCorruptRecords": 2}}
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
	if want := map[string]int64{"t/a/0": 25, "t/a/1": 7, "t/b/0": 1}; !reflect.DeepEqual(s.Txns, want) {
		t.Errorf("txns = %v, want %v", s.Txns, want)
	}
	if s.NumFiles != 6 || s.NumRows != id || s.Counters["numCorruptRecords"] != 8 || s.Counters["numOutputRows"] != id {
		t.Errorf("snapshot = %+v", s)
	}
	tb.Close()
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
		{"missing file", table.Commit{Schema: testFields, Files: []table.AddFile{{Path: missingFile}}}, missingFile},
		{"path outside", table.Commit{Schema: testFields, Files: []table.AddFile{{Path: "../x.parquet"}}}, "not a data file"},
		{"twice", table.Commit{Schema: testFields, Files: []table.AddFile{add, add}}, "added twice"},
		{"reserved counter", table.Commit{Schema: testFields, Counters: map[string]int64{"numOutputRows": 1}}, "reserved"},
		{"reserved parameter", table.Commit{Schema: testFields, Parameters: map[string]string{"outputMode": "Complete"}}, "reserved"},
		{"negative offset", table.Commit{Schema: testFields, Txns: map[string]int64{"a": -1}}, "negative"},
		{"negative from", table.Commit{Schema: testFields, Txns: map[string]int64{"a": 1}, From: map[string]int64{"a": -1}}, "negative"},
		{"from without txn", table.Commit{Schema: testFields, Txns: map[string]int64{"a": 1}, From: map[string]int64{"b": 1}}, `"b"`},
		{"backwards", table.Commit{Schema: testFields, Txns: map[string]int64{"a": 4}, From: map[string]int64{"a": 5}}, "never move backwards"},
		{"not our file name", table.Commit{Schema: testFields, Files: []table.AddFile{{Path: "part-00000-x-c000.snappy.parquet"}}}, "not a data file"},
		{"changed file", table.Commit{Schema: testFields, Files: []table.AddFile{{Path: add.Path, Size: add.Size + 1}}}, "bytes"},
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

// TestCommitFrom has another writer slip a commit in between a writer's
// snapshot and its commit, and checks the commit's offset preconditions
// against what the other writer did.
func TestCommitFrom(t *testing.T) {
	type txns = map[string]int64
	tests := []struct {
		name string
		// other is what another writer commits after the writer's
		// snapshot, on top of version 0, which holds p/0 = 10.
		other table.Commit
		// txns and from are the writer's commit.
		txns, from txns
		// conflict is the expected error, nil for success.
		conflict *table.ConflictError
	}{
		{name: "another partition slipped in",
			other: table.Commit{Txns: txns{"p/1": 5}},
			txns:  txns{"p/0": 20},
			from:  txns{"p/0": 10}},
		{name: "the same partition slipped in",
			other:    table.Commit{Txns: txns{"p/0": 20}, From: txns{"p/0": 10}},
			txns:     txns{"p/0": 20},
			from:     txns{"p/0": 10},
			conflict: &table.ConflictError{Version: 1, AppID: "p/0", Expected: 10, Actual: 20}},
		{name: "the same partition slipped in without moving",
			other: table.Commit{Txns: txns{"p/0": 10}, From: txns{"p/0": 10}},
			txns:  txns{"p/0": 20},
			from:  txns{"p/0": 10}},
		{name: "a first commit of a partition raced",
			other:    table.Commit{Txns: txns{"p/1": 0}},
			txns:     txns{"p/1": 5},
			conflict: &table.ConflictError{Version: 1, AppID: "p/1", Expected: -1, Actual: 0}},
		{name: "a stale start",
			other:    table.Commit{Txns: txns{"p/2": 1}},
			txns:     txns{"p/0": 20},
			from:     txns{"p/0": 5},
			conflict: &table.ConflictError{Version: 0, AppID: "p/0", Expected: 5, Actual: 10}},
		{name: "a start the log never recorded",
			other:    table.Commit{Txns: txns{"p/2": 1}},
			txns:     txns{"p/3": 20},
			from:     txns{"p/3": 10},
			conflict: &table.ConflictError{Version: -1, AppID: "p/3", Expected: 10, Actual: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			other, err := table.OpenUnlocked(dir, table.Options{})
			if err != nil {
				t.Fatal(err)
			}
			mustCommit(t, other, table.Commit{Schema: testFields, Txns: txns{"p/0": 10}})
			w, err := table.OpenUnlocked(dir, table.Options{})
			if err != nil {
				t.Fatal(err)
			}
			tt.other.Files = []table.AddFile{writeFile(t, other, 100, 101)}
			mustCommit(t, other, tt.other)

			add := writeFile(t, w, 0, 3)
			v, err := w.Commit(table.Commit{Files: []table.AddFile{add}, Txns: tt.txns, From: tt.from})
			if tt.conflict == nil {
				if err != nil || v != 2 {
					t.Fatalf("Commit = %d, %v; want version 2", v, err)
				}
				return
			}
			var conflict *table.ConflictError
			if !errors.As(err, &conflict) || *conflict != *tt.conflict {
				t.Fatalf("Commit error = %v, want %+v", err, tt.conflict)
			}
			for _, want := range []string{tt.conflict.AppID, "another writer", "resume from the log"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, add.Path)); !os.IsNotExist(err) {
				t.Errorf("the conflicting commit's file still exists: %v", err)
			}
			// The writer now sees the other writer's commit, to resume from.
			if s := w.Snapshot(); s.Version != 1 || s.NumRows != 1 {
				t.Errorf("snapshot after the conflict = %+v, want version 1 with 1 row", s)
			}
		})
	}
}

// TestConcurrentWritersRace races two writers, each with its own Table on
// one folder (unlocked on purpose), over the same partitions. Each commits
// rows whose ids are their partition's offsets, from where its last look
// at the log says the partition is, and on a conflict looks again. The log
// must end up holding every offset of every partition exactly once, with
// offsets that never move backwards and no file added twice.
func TestConcurrentWritersRace(t *testing.T) {
	dir := t.TempDir()
	parts := []string{"t/x/0", "t/x/1"}
	init, err := table.OpenUnlocked(dir, table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustCommit(t, init, table.Commit{Schema: testFields, Txns: map[string]int64{parts[0]: 0, parts[1]: 0}})
	const writers, commits = 2, 15
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	var conflicts atomic.Int64
	for w := range writers {
		tb, err := table.OpenUnlocked(dir, table.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(w), 1))
		wg.Go(func() {
			for range commits {
				view := tb.Snapshot().Txns
				c := table.Commit{Txns: map[string]int64{}, From: map[string]int64{}}
				for p, appID := range parts {
					if rng.IntN(3) == 0 && len(c.Txns) > 0 {
						continue // this commit leaves the partition alone
					}
					from, n := view[appID], 1+rng.Int64N(3)
					add, err := tryWriteFile(tb, int64(p)*1000+from, int64(p)*1000+from+n)
					if err != nil {
						errs <- err
						return
					}
					c.Files = append(c.Files, add)
					c.Txns[appID], c.From[appID] = from+n, from
				}
				var conflict *table.ConflictError
				if _, err := tb.Commit(c); errors.As(err, &conflict) {
					conflicts.Add(1)
				} else if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// Walk the log: offsets only move forward, each file is added once.
	last, added := map[string]int64{}, map[string]bool{}
	snap, err := table.ReadSnapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	for v := range int(snap.Version) + 1 {
		for _, line := range readLog(t, dir, v) {
			var a struct {
				Txn *struct {
					AppID   string `json:"appId"`
					Version int64  `json:"version"`
				} `json:"txn"`
				Add *struct{ Path string } `json:"add"`
			}
			if err := json.Unmarshal([]byte(line), &a); err != nil {
				t.Fatal(err)
			}
			if a.Txn != nil {
				if prev, ok := last[a.Txn.AppID]; ok && a.Txn.Version <= prev {
					t.Errorf("version %d moves %s from %d to %d", v, a.Txn.AppID, prev, a.Txn.Version)
				}
				last[a.Txn.AppID] = a.Txn.Version
			}
			if a.Add != nil {
				if added[a.Add.Path] {
					t.Errorf("version %d adds %s again", v, a.Add.Path)
				}
				added[a.Add.Path] = true
			}
		}
	}
	// Every offset of every partition is in the table exactly once.
	seen := map[int64]int{}
	for path := range added {
		rows, err := parquet.ReadFile[struct {
			ID int64 `parquet:"id"`
		}](filepath.Join(dir, path))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			seen[r.ID]++
		}
	}
	total := 0
	for p, appID := range parts {
		for off := range snap.Txns[appID] {
			if n := seen[int64(p)*1000+off]; n != 1 {
				t.Errorf("%s offset %d is in the table %d times", appID, off, n)
			}
		}
		total += int(snap.Txns[appID])
	}
	if len(seen) != total {
		t.Errorf("the table holds %d distinct ids, want %d", len(seen), total)
	}
	// The conflicting commits deleted their files.
	if n := countDataFiles(t, dir); n != len(added) {
		t.Errorf("%d data files on disk, %d in the log", n, len(added))
	}
	t.Logf("%d versions, %d conflicts, offsets %v", snap.Version+1, conflicts.Load(), snap.Txns)
}

// countDataFiles counts the .parquet files in folder dir.
func countDataFiles(t *testing.T, dir string) int {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, de := range des {
		if strings.HasSuffix(de.Name(), ".parquet") {
			n++
		}
	}
	return n
}

func TestFileWriterRowGroups(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{RowGroupRows: 10, Compression: &parquet.Zstd})
	fw, err := tb.NewFile(testParquet)
	if err != nil {
		t.Fatal(err)
	}
	for i := range int64(7) {
		if err := writeRows(fw, []parquet.Row{testRow(i*5, "a", 1), testRow(i*5+1, "b", 2), testRow(i*5+2, "c", 3), testRow(i*5+3, "d", 4), testRow(i*5+4, "e", 5)}); err != nil {
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
	pf := openDataFile(t, dir, add)
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
	if err := writeRows(fw, []parquet.Row{testRow(1, "a", 1)}); err != nil {
		t.Fatal(err)
	}
	fw.Abort()
	for _, sub := range []string{".", "_tmp"} {
		des, _ := os.ReadDir(filepath.Join(dir, sub))
		for _, de := range des {
			if !de.IsDir() && de.Name() != "_tributary.lock" {
				t.Errorf("file %s left after Abort", filepath.Join(sub, de.Name()))
			}
		}
	}
	if err := writeRows(fw, []parquet.Row{testRow(1, "a", 1)}); err == nil {
		t.Error("WriteRows after Abort succeeded")
	}
}

// TestFileWriterSplitsBatches writes one batch across three row groups, with
// a repeated column whose rows hold zero to three values.
func TestFileWriterSplitsBatches(t *testing.T) {
	type tagged struct {
		ID   int64    `parquet:"id"`
		Tags []string `parquet:"tags"`
	}
	ps := parquet.SchemaOf(tagged{})
	var want []tagged
	var rows []parquet.Row
	for i := range int64(7) {
		r := tagged{ID: i}
		for j := range i % 4 {
			r.Tags = append(r.Tags, fmt.Sprintf("t%d.%d", i, j))
		}
		want = append(want, r)
		rows = append(rows, ps.Deconstruct(nil, r))
	}
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{RowGroupRows: 3})
	fw, err := tb.NewFile(ps)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeRows(fw, rows); err != nil {
		t.Fatal(err)
	}
	add, err := fw.Close()
	if err != nil {
		t.Fatal(err)
	}
	pf := openDataFile(t, dir, add)
	var sizes []int64
	for _, rg := range pf.RowGroups() {
		sizes = append(sizes, rg.NumRows())
	}
	if fmt.Sprint(sizes) != "[3 3 1]" {
		t.Errorf("row groups of %v rows, want [3 3 1]", sizes)
	}
	got := make([]tagged, 8)
	n, _ := parquet.NewGenericReader[tagged](pf).Read(got)
	if fmt.Sprint(got[:n]) != fmt.Sprint(want) {
		t.Errorf("read back %v, want %v", got[:n], want)
	}
}

// TestFileWriterBadColumns checks that a malformed batch is refused whole,
// naming the column and what is wrong, and leaves the file usable.
func TestFileWriterBadColumns(t *testing.T) {
	tb := openTable(t, t.TempDir(), table.Options{})
	fw, err := tb.NewFile(testParquet)
	if err != nil {
		t.Fatal(err)
	}
	good := testRow(1, "a", 1) // amount, id, name
	amount, id, name := good[0], good[1], good[2]
	tests := []struct {
		name string
		cols [][]parquet.Value
		rows int
		want string
	}{
		{"missing column", [][]parquet.Value{{amount}, {id}}, 1, "2 columns, the schema has 3"},
		{"column index", [][]parquet.Value{{amount}, {amount}, {name}}, 1, "column id: value 0 has column index 0"},
		{"rows", [][]parquet.Value{{amount, amount}, {id}, {name}}, 1, "column amount: values for 2 rows, want 1"},
		{"null in required", [][]parquet.Value{{amount}, {parquet.NullValue().Level(0, 0, 1)}, {name}}, 1, "column id: value 0: null at the maximum definition level"},
		{"kind", [][]parquet.Value{{amount}, {parquet.ValueOf("x").Level(0, 0, 1)}, {name}}, 1, "column id: value 0: BYTE_ARRAY value, want INT64"},
		{"levels", [][]parquet.Value{{amount}, {id}, {parquet.ValueOf("x").Level(1, 1, 2)}}, 1, "column name: the first value has repetition level 1"},
		{"definition", [][]parquet.Value{{amount}, {id}, {parquet.ValueOf("x").Level(0, 0, 2)}}, 1, "column name: value 0 at definition level 0, want 1"},
	}
	for _, tt := range tests {
		if err := fw.WriteColumns(tt.cols, tt.rows); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: WriteColumns error = %v, want it to mention %q", tt.name, err, tt.want)
		}
	}
	// A fixed-length value of another length.
	fixed, err := tb.NewFile(parquet.NewSchema("spark_schema", parquet.Group{"d": parquet.Leaf(parquet.FixedLenByteArrayType(4))}))
	if err != nil {
		t.Fatal(err)
	}
	defer fixed.Abort()
	short := [][]parquet.Value{{parquet.FixedLenByteArrayValue([]byte("abc")).Level(0, 0, 0)}}
	if err := fixed.WriteColumns(short, 1); err == nil || !strings.Contains(err.Error(), "column d: value 0: 3 bytes, want 4") {
		t.Errorf("WriteColumns of a 3-byte FIXED_LEN_BYTE_ARRAY(4) value: %v", err)
	}
	// The refused batches wrote nothing and the file is still usable.
	if err := writeRows(fw, []parquet.Row{good, good}); err != nil {
		t.Fatal(err)
	}
	if add, err := fw.Close(); err != nil || add.NumRecords != 2 {
		t.Errorf("Close = %+v, %v; want 2 records", add, err)
	}
}

// openDataFile opens the data file add of the table in dir as a Parquet
// file, closed when the test ends.
func openDataFile(t *testing.T, dir string, add table.AddFile) *parquet.File {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, add.Path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	pf, err := parquet.OpenFile(f, add.Size)
	if err != nil {
		t.Fatal(err)
	}
	return pf
}
