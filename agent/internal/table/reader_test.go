package table_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// readerPython is the interpreter of the project's tool venv (pyarrow,
// duckdb, deltalake), relative to this package.
const readerPython = "../../../.tools/py/bin/python"

// readerScript reads the table in argv[1] with delta-rs, pyarrow and DuckDB
// and checks what TestIndependentReaders wrote.
const readerScript = `
import os
import sys, datetime, decimal
import deltalake, duckdb, pyarrow.parquet as pq

path = sys.argv[1]
dt = deltalake.DeltaTable(path)
assert dt.version() == 2, dt.version()
proto = dt.protocol()
assert (proto.min_reader_version, proto.min_writer_version) == (3, 7), proto
assert "timestampNtz" in (proto.reader_features or []), proto
rows = sorted(dt.to_pyarrow_table().to_pylist(), key=lambda r: r["id"])
assert [r["id"] for r in rows] == list(range(6)), rows
r = rows[1]
assert r["name"] == "n1" and r["amount"] == 0.5 and r["flag"] is True, r
assert r["day"] == datetime.date(1970, 1, 2), r
assert r["at"] == datetime.datetime(2024, 5, 6, 7, 8, 9, 10, tzinfo=datetime.timezone.utc), r["at"]
assert r["local"] == datetime.datetime(2024, 5, 6, 7, 8, 9, 10), r["local"]
assert r["price"] == decimal.Decimal("0.01"), r["price"]
assert r["tags"] == ["a", "b"] and r["s"] == {"a": 1}, r
assert r["extra"] is None, r
n = rows[0]
assert n["name"] is None and n["tags"] is None and n["s"] is None and n["local"] is None, n
assert rows[2]["tags"] == [] and rows[5]["extra"] == "e5", rows
if hasattr(dt, "transaction_version"):
    assert dt.transaction_version("tbl/topic/0") == 6, dt.transaction_version("tbl/topic/0")

assert pq.read_table(path).num_rows == 6
count, total = duckdb.sql("SELECT count(*), sum(id) FROM read_parquet('%s/*.parquet', union_by_name=true)" % path).fetchall()[0]
assert (count, total) == (6, 15), (count, total)
print("ok", flush=True)
# Skip the interpreter's teardown, where delta-rs's runtime threads have
# been seen to abort the process after the work was done.
os._exit(0)
`

// TestIndependentReaders writes a table with several types and a schema
// change over three commits, then checks that delta-rs, pyarrow and DuckDB
// read it. It is skipped when the tool venv is absent.
func TestIndependentReaders(t *testing.T) {
	python := toolPython(t)

	opt := func(k schema.Kind) schema.Field { return schema.Field{Type: &schema.Type{Kind: k}, Nullable: true} }
	named := func(name string, f schema.Field) schema.Field { f.Name = name; return f }
	fields := []schema.Field{
		{Name: "id", Type: &schema.Type{Kind: schema.Long}},
		named("name", opt(schema.String)),
		named("amount", opt(schema.Double)),
		named("flag", opt(schema.Boolean)),
		named("day", opt(schema.Date)),
		named("at", opt(schema.Timestamp)),
		named("local", opt(schema.TimestampNTZ)),
		{Name: "price", Type: &schema.Type{Kind: schema.Decimal, Precision: 10, Scale: 2}, Nullable: true},
		{Name: "tags", Type: &schema.Type{Kind: schema.Array, Elem: &schema.Type{Kind: schema.String}}, Nullable: true},
		{Name: "s", Type: &schema.Type{Kind: schema.Struct, Fields: []schema.Field{named("a", opt(schema.Int))}}, Nullable: true},
	}
	group := func() parquet.Group {
		return parquet.Group{
			"id":     parquet.Int(64),
			"name":   parquet.Optional(parquet.String()),
			"amount": parquet.Optional(parquet.Leaf(parquet.DoubleType)),
			"flag":   parquet.Optional(parquet.Leaf(parquet.BooleanType)),
			"day":    parquet.Optional(parquet.Date()),
			"at":     parquet.Optional(parquet.Timestamp(parquet.Microsecond)),
			"local":  parquet.Optional(parquet.TimestampAdjusted(parquet.Microsecond, false)),
			"price":  parquet.Optional(parquet.Decimal(2, 10, parquet.Int64Type)),
			"tags":   parquet.Optional(parquet.List(parquet.Optional(parquet.String()))),
			"s":      parquet.Optional(parquet.Group{"a": parquet.Optional(parquet.Int(32))}),
		}
	}
	ps := parquet.NewSchema("spark_schema", group())
	withExtra := group()
	withExtra["extra"] = parquet.Optional(parquet.String())
	psExtra := parquet.NewSchema("spark_schema", withExtra)
	fieldsExtra := append(slices.Clone(fields), named("extra", opt(schema.String)))

	at := time.Date(2024, 5, 6, 7, 8, 9, 10_000, time.UTC).UnixMicro()
	// row builds a row of s for id; ids 0 and 3 hold nulls, id 2 an empty list.
	row := func(s *parquet.Schema, id int64) parquet.Row {
		null := id%3 == 0
		vals := map[string][]parquet.Value{}
		leaf := func(col string, v any) {
			if null && col != "id" {
				vals[col] = []parquet.Value{parquet.NullValue()}
				return
			}
			vals[col] = []parquet.Value{parquet.ValueOf(v).Level(0, 1, 0)}
		}
		vals["id"] = []parquet.Value{parquet.ValueOf(id)}
		leaf("name", "n"+string(rune('0'+id)))
		leaf("amount", float64(id)/2)
		leaf("flag", id%2 == 1)
		leaf("day", int32(id))
		leaf("at", at)
		leaf("local", at)
		leaf("price", id)
		switch {
		case null:
			vals["tags.list.element"] = []parquet.Value{parquet.NullValue()}
			vals["s.a"] = []parquet.Value{parquet.NullValue()}
		case id == 2:
			vals["tags.list.element"] = []parquet.Value{parquet.NullValue().Level(0, 1, 0)}
			vals["s.a"] = []parquet.Value{parquet.ValueOf(int32(id)).Level(0, 2, 0)}
		default:
			vals["tags.list.element"] = []parquet.Value{parquet.ValueOf("a").Level(0, 3, 0), parquet.ValueOf("b").Level(1, 3, 0)}
			vals["s.a"] = []parquet.Value{parquet.ValueOf(int32(id)).Level(0, 2, 0)}
		}
		if s == psExtra {
			vals["extra"] = []parquet.Value{parquet.ValueOf("e"+string(rune('0'+id))).Level(0, 1, 0)}
		}
		return buildRow(t, s, vals)
	}
	write := func(tb *table.Table, s *parquet.Schema, ids ...int64) table.AddFile {
		fw, err := tb.NewFile(s)
		if err != nil {
			t.Fatal(err)
		}
		var rows []parquet.Row
		for _, id := range ids {
			rows = append(rows, row(s, id))
		}
		if err := writeRows(fw, rows); err != nil {
			t.Fatal(err)
		}
		add, err := fw.Close()
		if err != nil {
			t.Fatal(err)
		}
		return add
	}

	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	mustCommit(t, tb, table.Commit{Schema: fields, Files: []table.AddFile{write(tb, ps, 0, 1)}, Txns: map[string]int64{"tbl/topic/0": 2}})
	mustCommit(t, tb, table.Commit{Files: []table.AddFile{write(tb, ps, 2), write(tb, ps, 3, 4)},
		Txns: map[string]int64{"tbl/topic/0": 5}, From: map[string]int64{"tbl/topic/0": 2}})
	mustCommit(t, tb, table.Commit{Schema: fieldsExtra, Files: []table.AddFile{write(tb, psExtra, 5)},
		Txns: map[string]int64{"tbl/topic/0": 6}, From: map[string]int64{"tbl/topic/0": 5}})
	// An uncommitted file is not part of the table; the next run collects
	// it once it is older than the grace period.
	write(tb, ps, 7)
	tb.Close()
	later := func() time.Time { return time.Now().Add(2 * table.DefaultGCGrace) }
	if n, err := openTable(t, dir, table.Options{Now: later}).CollectGarbage(); n != 1 || err != nil {
		t.Fatalf("CollectGarbage = %d, %v; want 1 file", n, err)
	}

	out, err := scriptCommand(t, python, readerScript, dir).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("readers: %v\n%s", err, out)
	}
}

// toolPython returns the interpreter of the tool venv, and skips the test
// when there is none or it lacks a reader.
func toolPython(t *testing.T) string {
	t.Helper()
	python, err := filepath.Abs(readerPython)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(python); err != nil {
		t.Skipf("no Python venv with deltalake at %s: %v", python, err)
	}
	if out, err := exec.Command(python, "-c", "import deltalake, duckdb, pyarrow").CombinedOutput(); err != nil {
		t.Skipf("the venv lacks a reader: %v\n%s", err, out)
	}
	return python
}

// buildRow lays out the values of each leaf column (by dotted path) as a row
// of s, setting column indexes; other levels are set by the caller.
func buildRow(t *testing.T, s *parquet.Schema, vals map[string][]parquet.Value) parquet.Row {
	t.Helper()
	var row parquet.Row
	for _, path := range s.Columns() {
		leaf, _ := s.Lookup(path...)
		vs, ok := vals[strings.Join(path, ".")]
		if !ok {
			t.Fatalf("no value for column %v", path)
		}
		for _, v := range vs {
			row = append(row, v.Level(v.RepetitionLevel(), v.DefinitionLevel(), leaf.ColumnIndex))
		}
	}
	return row
}
