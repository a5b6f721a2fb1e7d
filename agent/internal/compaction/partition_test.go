package compaction_test

import (
	"context"
	"path"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/compaction"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
)

// TestRunPartitioned compacts a table partitioned by region: each
// region's small files become one file in the region's folder, with its
// partition value, never mixed with another region's rows; delta-rs and
// DuckDB read every row once.
func TestRunPartitioned(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir)
	fields := tabletest.Fields(t, "id BIGINT, a BIGINT, note STRING, region STRING")
	ps, err := rows.Schema(fields)
	if err != nil {
		t.Fatal(err)
	}
	regions := []string{"eu", "a:b", "x y%"} // folder names Spark escapes, and paths the log percent-encodes
	var id int64
	for i := range 30 {
		region := regions[i%len(regions)]
		b, err := rows.NewBuilder(fields)
		if err != nil {
			t.Fatal(err)
		}
		for range 10 {
			tabletest.Row(t, b, func() { b.Int64(id) }, func() { b.Int64(id) }, nil, func() { b.Bytes([]byte(region)) })
			id++
		}
		fw, err := tb.NewPartitionFile(ps, []table.PartitionValue{{Column: "region", Value: region}})
		if err != nil {
			t.Fatal(err)
		}
		if err := fw.WriteColumns(b.Columns(), b.Rows()); err != nil {
			t.Fatal(err)
		}
		add, err := fw.Close()
		if err != nil {
			t.Fatal(err)
		}
		c := table.Commit{Files: []table.AddFile{add}, Txns: map[string]int64{appID: id}, From: map[string]int64{},
			Partitioning: &table.Partitioning{Columns: []string{"region"}}}
		if i == 0 {
			c.Schema = fields
		} else {
			c.From[appID] = id - 10
		}
		if _, err := tb.Commit(c); err != nil {
			t.Fatal(err)
		}
	}
	res, err := compaction.Run(context.Background(), tb, compaction.Options{TargetSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if res.Commits != 3 || res.FilesRemoved != 30 || res.FilesAdded != 3 || res.Skipped != 0 {
		t.Fatalf("Result = %+v; want a commit of 10 files into 1 per region", res)
	}
	files := tb.Files()
	if len(files) != 3 {
		t.Fatalf("files after compaction: %+v", files)
	}
	for _, f := range files {
		region := f.PartitionValues["region"]
		if f.NumRecords != 100 || !strings.HasPrefix(path.Dir(f.Path), "region=") {
			t.Errorf("file %s of region %q holds %d rows; want 100 in the region's folder", f.Path, region, f.NumRecords)
		}
		_, values, cols, n := tabletest.ReadFile(t, tb, f.Path)
		if len(values) != 1 || values[0].Value != region {
			t.Errorf("file %s: partition values %+v", f.Path, values)
		}
		for i := range n {
			if got := cols[3][i].String(); got != region {
				t.Fatalf("file %s of region %s holds a row of region %s", f.Path, region, got)
			}
		}
	}
	tb.Close()
	// The log read again, as another process would: the same files.
	again := openTable(t, dir)
	if got := again.Files(); len(got) != 3 || again.Snapshot().NumRows != 300 {
		t.Fatalf("the log read again has files %+v", got)
	}
	again.Close()
	out := readEngines(t, dir)
	want := map[string]any{"rows": 300.0, "distinct": 300.0, "sum": 299 * 300 / 2.0, "sum_a": 299 * 300 / 2.0, "notes": 0.0}
	checkEngine(t, out, "duckdb", want, "")
	checkEngine(t, out, "deltars", want, "")
}
