package table_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// partFields is the schema of the partitioned tables of these tests:
// partitioned by country and by day, the date of ts, a generated column.
var (
	partFields = []schema.Field{
		{Name: "id", Type: &schema.Type{Kind: schema.Long}},
		{Name: "country", Type: &schema.Type{Kind: schema.String}, Nullable: true},
		{Name: "ts", Type: &schema.Type{Kind: schema.Timestamp}, Nullable: true},
		{Name: "day", Type: &schema.Type{Kind: schema.Date}, Nullable: true},
	}
	partLayout = table.Partitioning{Columns: []string{"country", "day"}, Generated: map[string]string{"day": "CAST(`ts` AS DATE)"}}
)

// writePartFile writes a file of partition (country, day) holding rows
// with ids ids, at noon of day; country "" is null.
func writePartFile(t *testing.T, tb *table.Table, country, day string, ids ...int64) table.AddFile {
	t.Helper()
	ps, err := rows.Schema(partFields)
	if err != nil {
		t.Fatal(err)
	}
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		t.Fatal(err)
	}
	fw, err := tb.NewPartitionFile(ps, []table.PartitionValue{{Column: "country", Value: country}, {Column: "day", Value: day}})
	if err != nil {
		t.Fatal(err)
	}
	cols := make([][]parquet.Value, 4)
	for _, id := range ids {
		cols[0] = append(cols[0], parquet.Int64Value(id).Level(0, 0, 0))
		if country == "" {
			cols[1] = append(cols[1], parquet.NullValue().Level(0, 0, 1))
		} else {
			cols[1] = append(cols[1], parquet.ByteArrayValue([]byte(country)).Level(0, 1, 1))
		}
		cols[2] = append(cols[2], parquet.Int64Value(d.Add(12*time.Hour).UnixMicro()).Level(0, 1, 2))
		cols[3] = append(cols[3], parquet.Int32Value(int32(d.Unix()/86400)).Level(0, 1, 3))
	}
	if err := fw.WriteColumns(cols, len(ids)); err != nil {
		t.Fatal(err)
	}
	add, err := fw.Close()
	if err != nil {
		t.Fatal(err)
	}
	return add
}

// TestPartitionedCommit: a new partitioned table gets partitionColumns,
// the generation expression of its generated column and the writer
// feature generated columns need; its files are in the folders of their
// partition values, escaped as Spark escapes them, and their add actions
// carry the values (a null one empty) and percent-encoded paths. Reopened,
// and from a checkpoint, the table has the same files; delta-rs reads
// every row with its partition values.
func TestPartitionedCommit(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	files := []table.AddFile{
		writePartFile(t, tb, "a:b", "2024-01-02", 1, 2),
		writePartFile(t, tb, "", "2024-01-02", 3),
		writePartFile(t, tb, "fr", "2024-01-03", 4),
	}
	if want := "country=a%3Ab/day=2024-01-02/"; !strings.HasPrefix(files[0].Path, want) {
		t.Fatalf("path %s, want it under %s", files[0].Path, want)
	}
	if want := "country=__HIVE_DEFAULT_PARTITION__/day=2024-01-02/"; !strings.HasPrefix(files[1].Path, want) {
		t.Fatalf("path %s, want it under %s", files[1].Path, want)
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Path))); err != nil {
			t.Fatal(err)
		}
	}
	c := table.Commit{Schema: partFields, Files: files, Txns: map[string]int64{"t/0": 4}, Partitioning: &partLayout,
		Configuration: map[string]string{"delta.checkpointInterval": "1"}}
	if _, err := tb.Commit(c); err != nil {
		t.Fatal(err)
	}

	var entry struct {
		Protocol *struct {
			MinReaderVersion int      `json:"minReaderVersion"`
			MinWriterVersion int      `json:"minWriterVersion"`
			WriterFeatures   []string `json:"writerFeatures"`
		} `json:"protocol"`
		MetaData *struct {
			PartitionColumns []string `json:"partitionColumns"`
			SchemaString     string   `json:"schemaString"`
		} `json:"metaData"`
		Add *struct {
			Path            string            `json:"path"`
			PartitionValues map[string]string `json:"partitionValues"`
		} `json:"add"`
	}
	data, err := os.ReadFile(logFile(dir, logName(0)))
	if err != nil {
		t.Fatal(err)
	}
	var adds []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		entry.Add = nil
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatal(err)
		}
		if a := entry.Add; a != nil {
			adds = append(adds, a.Path)
			if strings.HasPrefix(a.Path, "country=a%253Ab/") && !reflect.DeepEqual(a.PartitionValues, map[string]string{"country": "a:b", "day": "2024-01-02"}) ||
				strings.HasPrefix(a.Path, "country=__HIVE") && a.PartitionValues["country"] != "" {
				t.Errorf("add %s has partition values %v", a.Path, a.PartitionValues)
			}
		}
	}
	if !strings.HasPrefix(strings.Join(adds, " "), "country=a%253Ab/day=2024-01-02/part-") {
		t.Errorf("add paths %v, want the first percent-encoded", adds)
	}
	p := entry.Protocol
	if p == nil || p.MinReaderVersion != 1 || p.MinWriterVersion != 7 || !contains(p.WriterFeatures, "generatedColumns") || !contains(p.WriterFeatures, "appendOnly") {
		t.Errorf("protocol %+v, want reader 1, writer 7 with generatedColumns and appendOnly", p)
	}
	if m := entry.MetaData; m == nil || !reflect.DeepEqual(m.PartitionColumns, []string{"country", "day"}) ||
		!strings.Contains(m.SchemaString, `"delta.generationExpression":"CAST(`+"`ts`"+` AS DATE)"`) {
		t.Errorf("metaData %+v, want partition columns and the generation expression of day", m)
	}

	// A second commit writes the checkpoint of version 1; the table opens
	// from it alone with the same state.
	c = table.Commit{Files: []table.AddFile{writePartFile(t, tb, "fr", "2024-01-04", 5)}, Txns: map[string]int64{"t/0": 5},
		From: map[string]int64{"t/0": 4}, Partitioning: &partLayout}
	if _, err := tb.Commit(c); err != nil {
		t.Fatal(err)
	}
	want := tb.Snapshot()
	tb.Close()
	if !exists(logFile(dir, checkpointName(1))) {
		t.Fatal("no checkpoint at version 1")
	}
	removeLog(t, dir, 0, 1) // version 1 stays: its commitInfo holds the counters
	tb = openTable(t, dir, table.Options{})
	if got := tb.Snapshot(); !reflect.DeepEqual(got, want) || got.NumFiles != 4 {
		t.Fatalf("snapshot from the checkpoint =\n%+v, want\n%+v with 4 files", got, want)
	}
	for _, row := range readCheckpoint(t, dir, 1) {
		if row.Add != nil && strings.HasPrefix(row.Add.Path, "country=a") && !strings.HasPrefix(row.Add.Path, "country=a%253Ab/") {
			t.Errorf("checkpoint add path %s, want it percent-encoded", row.Add.Path)
		}
	}
	tb.Close()

	python := toolPython(t)
	var got [][]any
	runDeltaRS(t, python, &got, "rows", dir, "id", "country", "day")
	wantRows := `[[1,"a:b","2024-01-02"],[2,"a:b","2024-01-02"],[3,null,"2024-01-02"],[4,"fr","2024-01-03"],[5,"fr","2024-01-04"]]`
	if js, _ := json.Marshal(got); string(js) != wantRows {
		t.Errorf("delta-rs reads %s, want %s", js, wantRows)
	}
}

// TestPartitioningChange: a commit whose partition layout is not the
// table's is refused with a PartitionChangeError naming both, and so is a
// file without the table's partition values.
func TestPartitioningChange(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	if _, err := tb.Commit(table.Commit{Schema: partFields, Partitioning: &partLayout, Txns: map[string]int64{"t/0": 0}}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []table.Partitioning{
		{},
		{Columns: []string{"country"}},
		{Columns: []string{"country", "day"}, Generated: map[string]string{"day": "CAST(`id` AS DATE)"}},
	} {
		err := tb.CheckPartitioning(p)
		var pc *table.PartitionChangeError
		if !errors.As(err, &pc) || !reflect.DeepEqual(pc.Table, []string{"country", "day"}) {
			t.Errorf("CheckPartitioning(%+v) = %v, want a PartitionChangeError", p, err)
		}
		_, err = tb.Commit(table.Commit{Partitioning: &p, Txns: map[string]int64{"t/0": 1}, From: map[string]int64{"t/0": 0}})
		if !errors.As(err, &pc) {
			t.Errorf("Commit with %+v = %v, want a PartitionChangeError", p, err)
		}
	}
	if err := tb.CheckPartitioning(partLayout); err != nil {
		t.Errorf("CheckPartitioning of the table's own layout: %v", err)
	}
	f := writeFile(t, tb, 0, 1) // no partition values
	_, err := tb.Commit(table.Commit{Files: []table.AddFile{f}, Txns: map[string]int64{"t/0": 1}, From: map[string]int64{"t/0": 0}})
	if err == nil || !strings.Contains(err.Error(), "partitioned by [country, day]") {
		t.Errorf("commit of an unpartitioned file = %v, want it refused", err)
	}
}

// TestCollectGarbagePartitioned collects what a crash left in a
// partitioned table's partition folders (a closed file no commit added,
// and a file being written under its temporary name) after the grace
// period, and keeps the committed files.
func TestCollectGarbagePartitioned(t *testing.T) {
	dir := t.TempDir()
	clk := &clock{now: time.Now()}
	tb := openTable(t, dir, table.Options{Now: clk.Now})
	committed := writePartFile(t, tb, "fr", "2024-01-02", 1)
	if _, err := tb.Commit(table.Commit{Schema: partFields, Partitioning: &partLayout, Files: []table.AddFile{committed}}); err != nil {
		t.Fatal(err)
	}
	orphan := writePartFile(t, tb, "fr", "2024-01-02", 2) // closed, never committed
	temp := filepath.Join(dir, filepath.Dir(orphan.Path), ".part-00000-tributary-00000000-0000-4000-8000-000000000000-c000.00000000-0000-4000-8000-000000000001.snappy.parquet.tmp")
	if err := os.WriteFile(temp, []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	tb.Close()
	old := clk.now.Add(-2 * time.Hour)
	for _, p := range []string{filepath.Join(dir, orphan.Path), temp} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	tb = openTable(t, dir, table.Options{Now: clk.Now})
	n, err := tb.CollectGarbage()
	if err != nil || n != 2 {
		t.Fatalf("CollectGarbage = %d, %v; want the orphan and the temporary file", n, err)
	}
	if _, err := os.Stat(filepath.Join(dir, committed.Path)); err != nil {
		t.Errorf("the committed file is gone: %v", err)
	}
}
