package table_test

import (
	"os"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// variantFields is a table with VARIANT columns at the top and in a struct.
var variantFields = []schema.Field{
	field("id", schema.Long, true),
	field("v", schema.Variant, true),
	{Name: "s", Nullable: true, Type: &schema.Type{Kind: schema.Struct, Fields: []schema.Field{field("w", schema.Variant, true)}}},
}

// writeVariantFile writes three rows of variantFields: a row with both
// variants, one with v null, one with s null; the variants are the INT8 42
// with an empty metadata dictionary.
func writeVariantFile(t *testing.T, tb *table.Table, firstID int64) table.AddFile {
	t.Helper()
	meta, value := []byte{0x01, 0x00, 0x00}, []byte{0x0c, 0x2a}
	return tabletest.WriteFile(t, tb, variantFields, func(b *rows.Builder) {
		v := func() { b.Variant(meta, value) }
		s := func() {
			b.BeginStruct()
			b.Field(0)
			b.Variant(meta, value)
			b.EndStruct()
		}
		tabletest.Row(t, b, func() { b.Int64(firstID) }, v, s)
		tabletest.Row(t, b, func() { b.Int64(firstID + 1) }, nil, s)
		tabletest.Row(t, b, func() { b.Int64(firstID + 2) }, v)
	})
}

// TestVariantTable: a table with VARIANT columns gets stats with a null
// count only for them, survives a checkpoint, and opens in delta-rs.
func TestVariantTable(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	const commits = 11 // versions 0 to 10: a checkpoint at the default interval
	for i := range int64(commits) {
		add := writeVariantFile(t, tb, 3*i)
		const want = `{"numRecords":3,"minValues":{"id":0},"maxValues":{"id":2},"nullCount":{"id":0,"v":1,"s":{"w":1}}}`
		if i == 0 && add.Stats != want {
			t.Errorf("stats = %s, want %s", add.Stats, want)
		}
		c := table.Commit{Files: []table.AddFile{add}, Txns: map[string]int64{"t/a/0": 3 * (i + 1)}}
		if i == 0 {
			c.Schema = variantFields
		} else {
			c.From = map[string]int64{"t/a/0": 3 * i}
		}
		mustCommit(t, tb, c)
	}
	if !exists(logFile(dir, checkpointName(commits-1))) {
		t.Fatalf("no checkpoint at version %d", commits-1)
	}
	want := tb.Snapshot()
	tb.Close()
	for v := range commits - 1 {
		os.Remove(logFile(dir, logName(v)))
	}
	got := openTable(t, dir, table.Options{}).Snapshot()
	if !schema.Equal(got.Schema, variantFields) || got.NumRows != 3*commits || got.NumRows != want.NumRows {
		t.Errorf("snapshot from the checkpoint = %+v, want schema %s and %d rows", got, schema.FormatDDL(variantFields), 3*commits)
	}

	var read struct{ Version, Rows, Files int }
	runDeltaRS(t, toolPython(t), &read, "read", dir, "t/a/0")
	if read.Rows != 3*commits || read.Files != commits {
		t.Errorf("delta-rs reads %+v, want %d rows in %d files", read, 3*commits, commits)
	}
}
