package table_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// TestSchemaWidening: the type changes Delta's type widening allows pass
// CheckSchemaWidening, at any depth, and no others; CheckSchemaChange
// still refuses them all.
func TestSchemaWidening(t *testing.T) {
	good := [][2]string{
		{"TINYINT", "SMALLINT"}, {"TINYINT", "BIGINT"}, {"SMALLINT", "INT"}, {"INT", "BIGINT"},
		{"FLOAT", "DOUBLE"}, {"TINYINT", "DOUBLE"}, {"INT", "DOUBLE"},
		{"DATE", "TIMESTAMP_NTZ"},
		{"DECIMAL(5,2)", "DECIMAL(7,3)"}, {"DECIMAL(5,2)", "DECIMAL(6,3)"}, {"DECIMAL(5,2)", "DECIMAL(6,2)"},
		{"INT", "DECIMAL(10,0)"}, {"SMALLINT", "DECIMAL(12,2)"}, {"BIGINT", "DECIMAL(20,0)"}, {"BIGINT", "DECIMAL(38,18)"},
		{"ARRAY<INT>", "ARRAY<BIGINT>"}, {"MAP<STRING, FLOAT>", "MAP<STRING, DOUBLE>"}, {"STRUCT<a: INT>", "STRUCT<a: BIGINT>"},
	}
	bad := [][2]string{
		{"BIGINT", "INT"}, {"BIGINT", "DOUBLE"}, {"DOUBLE", "FLOAT"}, {"INT", "FLOAT"}, {"INT", "STRING"},
		{"DATE", "TIMESTAMP"}, {"TIMESTAMP", "TIMESTAMP_NTZ"},
		{"DECIMAL(5,2)", "DECIMAL(5,3)"}, {"DECIMAL(5,2)", "DECIMAL(7,5)"}, {"DECIMAL(5,2)", "DECIMAL(4,1)"},
		{"INT", "DECIMAL(9,0)"}, {"INT", "DECIMAL(11,2)"}, {"BIGINT", "DECIMAL(19,0)"}, {"BIGINT", "DECIMAL(21,2)"},
		{"DECIMAL(5,2)", "DOUBLE"}, {"ARRAY<BIGINT>", "ARRAY<INT>"},
	}
	check := func(from, to string, ok bool) {
		t.Helper()
		prev, next := tabletest.Fields(t, "c "+from), tabletest.Fields(t, "c "+to)
		err := table.CheckSchemaWidening(prev, next)
		if (err == nil) != ok {
			t.Errorf("%s to %s: CheckSchemaWidening = %v, want ok %v", from, to, err, ok)
		}
		if err != nil && !errors.Is(err, table.ErrSchemaChange) {
			t.Errorf("%s to %s: %v does not wrap ErrSchemaChange", from, to, err)
		}
		if err := table.CheckSchemaChange(prev, next); err == nil {
			t.Errorf("%s to %s: CheckSchemaChange accepts a type change", from, to)
		}
	}
	for _, c := range good {
		check(c[0], c[1], true)
	}
	for _, c := range bad {
		check(c[0], c[1], false)
	}
}

// TestTypeWideningCommit: a commit that widens types, with
// AllowTypeWidening, gives the table the typeWidening feature (reader 3,
// writer 7, both lists), delta.enableTypeWidening and the delta.typeChanges
// metadata of every change, also for an array element (fieldPath); the
// history grows with a later change and survives other schema changes.
// Without AllowTypeWidening the commit is refused.
func TestTypeWideningCommit(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	mustCommit(t, tb, table.Commit{Schema: tabletest.Fields(t, "a SMALLINT, l ARRAY<FLOAT>, s STRUCT<d: DATE>")})
	wide := tabletest.Fields(t, "a INT, l ARRAY<DOUBLE>, s STRUCT<d: TIMESTAMP_NTZ>")
	if _, err := tb.Commit(table.Commit{Schema: wide}); !errors.Is(err, table.ErrSchemaChange) {
		t.Fatalf("commit without AllowTypeWidening: %v, want ErrSchemaChange", err)
	}
	mustCommit(t, tb, table.Commit{Schema: wide, AllowTypeWidening: true})
	mustCommit(t, tb, table.Commit{Schema: tabletest.Fields(t, "a BIGINT, l ARRAY<DOUBLE>, s STRUCT<d: TIMESTAMP_NTZ>, x STRING"), AllowTypeWidening: true})

	var p protocol
	if !logAction(t, dir, 1, "protocol", &p) || p.MinReaderVersion != 3 || p.MinWriterVersion != 7 ||
		!reflect.DeepEqual(p.ReaderFeatures, []string{"timestampNtz", "typeWidening"}) ||
		!reflect.DeepEqual(p.WriterFeatures, []string{"appendOnly", "invariants", "timestampNtz", "typeWidening"}) {
		t.Errorf("protocol = %+v", p)
	}
	meta, config := schemaMetadata(t, dir, 2)
	if config["delta.enableTypeWidening"] != "true" {
		t.Errorf("configuration = %v", config)
	}
	want := map[string]string{
		"a":   `[{"fromType":"short","toType":"integer"},{"fromType":"integer","toType":"long"}]`,
		"l":   `[{"fromType":"float","toType":"double","fieldPath":"element"}]`,
		"s.d": `[{"fromType":"date","toType":"timestamp_ntz"}]`,
	}
	for path, w := range want {
		if got := string(meta[path]["delta.typeChanges"]); got != w {
			t.Errorf("%s: delta.typeChanges = %s, want %s", path, got, w)
		}
	}
	if len(meta) != len(want) {
		t.Errorf("metadata = %v", meta)
	}
	tb.Close()
	if got := openTable(t, dir, table.Options{}).Snapshot().Schema; !schema.Equal(got, tabletest.Fields(t, "a BIGINT, l ARRAY<DOUBLE>, s STRUCT<d: TIMESTAMP_NTZ>, x STRING")) {
		t.Errorf("schema after replay = %v", got)
	}
}

// wideningScript reads the table TestTypeWideningEngines wrote with
// delta-rs and DuckDB's delta_scan and prints, per reader, the rows (or
// the error) as JSON.
const wideningScript = `
import sys, json
import duckext
import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder

path = sys.argv[1]
out = {}
try:
    dt = DeltaTable(path)
    rows = pa.table(QueryBuilder().register("t", dt).execute("SELECT * FROM t ORDER BY id").read_all()).to_pylist()
    out["deltars"] = [[r["id"], r["a"], r["f"], str(r["d"])] for r in rows]
except Exception as e:
    out["deltars"] = "error: " + str(e).splitlines()[0]
try:
    rows = duckext.connect().execute("SELECT id, a, f, d::VARCHAR FROM delta_scan(?) ORDER BY id", [path]).fetchall()
    out["duckdb"] = [list(r) for r in rows]
except Exception as e:
    out["duckdb"] = "error: " + str(e).splitlines()[0]
print(json.dumps(out))
`

// TestTypeWideningEngines writes a file with narrow types, widens them and
// writes a file with the wide ones, then has delta-rs and DuckDB read both
// files together. Skipped without the tool venv.
func TestTypeWideningEngines(t *testing.T) {
	python := toolPython(t)
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	narrow := tabletest.Fields(t, "id BIGINT, a INT, f FLOAT, d DECIMAL(5,2)")
	mustCommit(t, tb, table.Commit{Schema: narrow, Files: []table.AddFile{tabletest.WriteFile(t, tb, narrow, func(b *rows.Builder) {
		tabletest.Row(t, b, func() { b.Int64(0) }, func() { b.Int32(7) }, func() { b.Float(1.5) },
			func() { b.Int32(123) }) // d = 1.23
	})}})
	wide := tabletest.Fields(t, "id BIGINT, a BIGINT, f DOUBLE, d DECIMAL(12,3)")
	mustCommit(t, tb, table.Commit{Schema: wide, AllowTypeWidening: true, Files: []table.AddFile{tabletest.WriteFile(t, tb, wide, func(b *rows.Builder) {
		tabletest.Row(t, b, func() { b.Int64(1) }, func() { b.Int64(1 << 40) }, func() { b.Double(2.25) },
			func() { b.Int64(4567) }) // d = 4.567
	})}})
	tb.Close()

	out, err := scriptCommand(t, python, wideningScript, dir).Output()
	if err != nil {
		t.Fatalf("readers: %v\n%s", err, out)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("readers: %v\n%s", err, out)
	}
	// DuckDB widens the old file's values; delta-rs (deltalake 1.6)
	// refuses tables with the typeWidening feature, which is fine as long
	// as it never returns wrong values.
	var want any
	if err := json.Unmarshal([]byte(`[[0, 7, 1.5, "1.230"], [1, 1099511627776, 2.25, "4.567"]]`), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got["duckdb"], want) {
		t.Errorf("DuckDB reads %v, want %v", got["duckdb"], want)
	}
	if msg, ok := got["deltars"].(string); ok && !strings.Contains(msg, "TypeWidening") || !ok && !reflect.DeepEqual(got["deltars"], want) {
		t.Errorf("delta-rs reads %v, want %v or a refusal of the typeWidening feature", got["deltars"], want)
	}
}
