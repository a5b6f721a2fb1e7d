//go:build e2e

package e2e

import (
	"path/filepath"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// TestSparkColumnMappingAndWidening writes, with the table package, a
// table whose names need Delta column mapping, then widens two of its
// types and adds a column; Spark 4 with Delta 4 reads every row by the real
// names (the first file's values widened) and appends one, and the agent
// then opens the table Spark wrote to and commits after it.
func TestSparkColumnMappingAndWidening(t *testing.T) {
	t.Parallel()
	spark, dir, tb := sparkTable(t)
	// write commits one file of rows, built by fill, with schema fields.
	write := func(fields []schema.Field, widen bool, fill func(b *rows.Builder)) {
		t.Helper()
		add := tabletest.WriteFile(t, tb, fields, fill)
		if _, err := tb.Commit(table.Commit{Schema: fields, AllowTypeWidening: widen, Files: []table.AddFile{add}}); err != nil {
			t.Fatal(err)
		}
	}
	// row adds a row whose a.b and s.`x y` ab and xy write, and whose new
	// col is newCol ("" for none).
	row := func(b *rows.Builder, id int64, ab func(), xy func(), newCol string) {
		cells := []func(){
			func() { b.Int64(id) },
			func() { b.Bytes([]byte("user-" + string(rune('0'+id)))) },
			ab,
			func() {
				b.BeginStruct()
				b.Field(0)
				xy()
				b.EndStruct()
			},
		}
		if newCol != "" {
			cells = append(cells, func() { b.Bytes([]byte(newCol)) })
		}
		tabletest.Row(t, b, cells...)
	}
	write(tabletest.Fields(t, "id BIGINT, `first name` STRING, `a.b` INT, s STRUCT<`x y`: FLOAT>"), false, func(b *rows.Builder) {
		for id := range int64(2) {
			row(b, id, func() { b.Int32(int32(id)) }, func() { b.Float(float32(id) + 0.5) }, "")
		}
	})
	wide := tabletest.Fields(t, "id BIGINT, `first name` STRING, `a.b` BIGINT, s STRUCT<`x y`: DOUBLE>, `new col` STRING")
	write(wide, true, func(b *rows.Builder) {
		row(b, 2, func() { b.Int64(1 << 40) }, func() { b.Double(0.1) }, "n2")
	})
	tb.Close()

	runSpark(t, spark, "check_spark_mapping.py", "--jars", filepath.Join(spark, "jars"), "--table", dir)

	// The agent follows Spark's commit (same schema, a third file) and
	// commits after it.
	tb, err := table.Open(dir, table.Options{})
	if err != nil {
		t.Fatalf("the agent cannot open the table after Spark's append: %v", err)
	}
	if s := tb.Snapshot(); !schema.Equal(s.Schema, wide) || s.NumFiles != 3 {
		t.Fatalf("after Spark: schema %v, %d files", s.Schema, s.NumFiles)
	}
	write(wide, false, func(b *rows.Builder) {
		row(b, 4, func() { b.Int64(4) }, func() { b.Double(4.5) }, "n4")
	})
}
