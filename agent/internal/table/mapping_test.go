package table_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// mappedDDL is a schema whose names plain Delta tables cannot hold, at
// every depth.
const mappedDDL = "id BIGINT, `first name` STRING, `a.b` INT, `(cost)` DOUBLE, " +
	"s STRUCT<`x y`: BIGINT>, arr ARRAY<STRUCT<`k=v`: STRING>>, m MAP<STRING, STRUCT<`t\tu`: INT>>"

// mappedFieldCount is the number of struct fields of mappedDDL, at any
// depth.
const mappedFieldCount = 10

// fillMapped adds rows id from to to-1 of mappedDDL's schema, every field
// set, and whatever more writes into each row.
func fillMapped(from, to int64, more ...func(b *rows.Builder, id int64)) func(b *rows.Builder) {
	return func(b *rows.Builder) {
		for id := from; id < to; id++ {
			b.BeginRow()
			b.Field(0)
			b.Int64(id)
			b.Field(1)
			b.Bytes([]byte("name " + string(rune('a'+id))))
			b.Field(2)
			b.Int32(int32(id))
			b.Field(3)
			b.Double(float64(id) + 0.5)
			b.Field(4)
			b.BeginStruct()
			b.Field(0)
			b.Int64(id * 10)
			b.EndStruct()
			b.Field(5)
			b.BeginList()
			b.BeginStruct()
			b.Field(0)
			b.Bytes([]byte("e"))
			b.EndStruct()
			b.EndList()
			b.Field(6)
			b.BeginMap()
			b.Bytes([]byte("k"))
			b.BeginStruct()
			b.Field(0)
			b.Int32(7)
			b.EndStruct()
			b.EndMap()
			for _, m := range more {
				m(b, id)
			}
			if err := b.EndRow(); err != nil {
				panic(err)
			}
		}
	}
}

// schemaMetadata returns, by field path, the metadata of every struct
// field of the schemaString of log version v's metaData action.
func schemaMetadata(t *testing.T, dir string, v int) (map[string]map[string]json.RawMessage, map[string]string) {
	t.Helper()
	var md struct {
		SchemaString  string            `json:"schemaString"`
		Configuration map[string]string `json:"configuration"`
	}
	if !logAction(t, dir, v, "metaData", &md) {
		t.Fatalf("log %d has no metaData action", v)
	}
	_, extra, err := schema.ParseSparkJSONWithMetadata(md.SchemaString)
	if err != nil {
		t.Fatal(err)
	}
	return extra, md.Configuration
}

// physical returns the physical name and id of the field at path.
func physical(t *testing.T, meta map[string]map[string]json.RawMessage, path string) (string, int) {
	t.Helper()
	var name string
	var id int
	if json.Unmarshal(meta[path]["delta.columnMapping.physicalName"], &name) != nil || json.Unmarshal(meta[path]["delta.columnMapping.id"], &id) != nil {
		t.Fatalf("field %s has no column mapping: %s", path, meta[path])
	}
	return name, id
}

// fileSchema returns the Parquet schema of the table's data file name,
// with each struct field's field id by its physical path.
func fileSchema(t *testing.T, dir, name string) map[string]int {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int{}
	for _, e := range pf.Metadata().Schema[1:] {
		ids[e.Name] = int(e.FieldID)
	}
	return ids
}

// TestColumnMappingNewTable: a table whose names need column mapping gets
// protocol 2/5, mode name, an id and a physical name on every field at
// every depth (col-<uuid> for the names plain Parquet readers may
// mis-read; the others keep their names, so that files written before the
// first commit stay readable and readers without column mapping see the
// real names); its files use the physical names and ids, its stats the
// physical names, and callers see only logical names, also after a
// replay from a checkpoint.
func TestColumnMappingNewTable(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	fields := tabletest.Fields(t, mappedDDL)
	add := tabletest.WriteFile(t, tb, fields, fillMapped(0, 3))
	mustCommit(t, tb, table.Commit{Schema: fields, Files: []table.AddFile{add}, Txns: map[string]int64{"t/a/0": 3}})

	var p protocol
	if !logAction(t, dir, 0, "protocol", &p) || p.MinReaderVersion != 2 || p.MinWriterVersion != 5 || p.ReaderFeatures != nil || p.WriterFeatures != nil {
		t.Errorf("protocol = %+v, want reader 2, writer 5", p)
	}
	meta, config := schemaMetadata(t, dir, 0)
	if config["delta.columnMapping.mode"] != "name" || config["delta.columnMapping.maxColumnId"] != "10" {
		t.Errorf("configuration = %v, want mode name and maxColumnId 10", config)
	}
	paths := []string{"id", "`first name`", "`a.b`", "`(cost)`", "s", "s.`x y`", "arr", "arr.element.`k=v`", "m", "m.value.`t\tu`"}
	plain := map[string]string{"id": "id", "`first name`": "first name", "`a.b`": "a.b", "s": "s", "s.`x y`": "x y", "arr": "arr", "m": "m"}
	ids := map[int]bool{}
	physicals := map[string]string{}
	for _, path := range paths {
		name, id := physical(t, meta, path)
		if id < 1 || id > mappedFieldCount || ids[id] {
			t.Errorf("field %s has id %d, want a unique id in 1..%d", path, id, mappedFieldCount)
		}
		ids[id] = true
		// Names that need no mapping, or are safe Parquet names, keep
		// themselves as physical names; the others get col-<uuid>.
		if want, ok := plain[path]; ok && name != want || !ok && !strings.HasPrefix(name, "col-") {
			t.Errorf("field %s has physical name %q, want %q or col-<uuid> for a name that needs mapping", path, name, want)
		}
		physicals[path] = name
	}
	if len(meta) != len(paths) {
		t.Errorf("metadata on %d fields, want %d: %v", len(meta), len(paths), meta)
	}

	// The file stores physical names with field ids, in the table's
	// column order.
	inFile := fileSchema(t, dir, add.Path)
	for _, path := range paths {
		name, id := physical(t, meta, path)
		if inFile[name] != id {
			t.Errorf("field %s: the file has %s with field id %d, want %d", path, name, inFile[name], id)
		}
	}
	if _, ok := inFile["(cost)"]; ok {
		t.Error("the file uses the logical name `(cost)`")
	}
	// Stats use physical names.
	var stats struct {
		MinValues map[string]json.RawMessage `json:"minValues"`
	}
	if err := json.Unmarshal([]byte(add.Stats), &stats); err != nil {
		t.Fatal(err)
	}
	if string(stats.MinValues[physicals["`(cost)`"]]) != "0.5" || stats.MinValues["(cost)"] != nil {
		t.Errorf("stats = %s, want minValues keyed by physical names", add.Stats)
	}

	if got := tb.Snapshot().Schema; !schema.Equal(got, fields) {
		t.Errorf("snapshot schema = %v, want the logical %v", got, fields)
	}
	// Commit up to a checkpoint, drop the entries: the mapping comes back
	// from the checkpoint, and a new column gets the next id.
	appendCommits(t, tb, 10)
	tb.Close()
	removeLog(t, dir, 0, 10)
	tb = openTable(t, dir, table.Options{})
	wider := append(slices.Clone(fields), schema.Field{Name: "new col", Type: &schema.Type{Kind: schema.String}, Nullable: true})
	add = tabletest.WriteFile(t, tb, wider, fillMapped(3, 4))
	v := mustCommit(t, tb, table.Commit{Schema: wider, Files: []table.AddFile{add}})
	meta2, config2 := schemaMetadata(t, dir, int(v))
	for _, path := range paths {
		if n, id := physical(t, meta2, path); n != physicals[path] || !ids[id] {
			t.Errorf("field %s changed its mapping to %s, %d", path, n, id)
		}
	}
	if name, id := physical(t, meta2, "`new col`"); id != mappedFieldCount+1 || name != "new col" || fileSchema(t, dir, add.Path)[name] != mappedFieldCount+1 {
		t.Errorf("new col has %s, %d; want new col, 11, in the file too", name, id)
	}
	if config2["delta.columnMapping.maxColumnId"] != "11" {
		t.Errorf("maxColumnId = %s, want 11", config2["delta.columnMapping.maxColumnId"])
	}
}

// TestColumnMappingTurnedOn: a plain table keeps protocol 1/2 until a
// column needs mapping; then its existing columns keep their names as
// physical names (their files stay readable) and so does the new one, a
// safe Parquet name. With a TIMESTAMP_NTZ column, the table lists columnMapping
// as a reader and writer feature instead.
func TestColumnMappingTurnedOn(t *testing.T) {
	for _, ntz := range []bool{false, true} {
		dir := t.TempDir()
		tb := openTable(t, dir, table.Options{})
		fields := tabletest.Fields(t, "id BIGINT, s STRUCT<a: INT>")
		if ntz {
			fields = tabletest.Fields(t, "id BIGINT, s STRUCT<a: INT>, at TIMESTAMP_NTZ")
		}
		mustCommit(t, tb, table.Commit{Schema: fields})
		if meta, config := schemaMetadata(t, dir, 0); len(meta) != 0 || config["delta.columnMapping.mode"] != "" {
			t.Fatalf("a plain table has column mapping: %v %v", meta, config)
		}
		wider := append(slices.Clone(fields), schema.Field{Name: "first name", Type: &schema.Type{Kind: schema.String}, Nullable: true})
		mustCommit(t, tb, table.Commit{Schema: wider})
		meta, config := schemaMetadata(t, dir, 1)
		for path, want := range map[string]string{"id": "id", "s": "s", "s.a": "a"} {
			if name, _ := physical(t, meta, path); name != want {
				t.Errorf("existing field %s has physical name %q, want %q", path, name, want)
			}
		}
		if name, id := physical(t, meta, "`first name`"); name != "first name" || strconv.Itoa(id) != config["delta.columnMapping.maxColumnId"] {
			t.Errorf("first name: %s, %d; configuration %v", name, id, config)
		}
		var p protocol
		logAction(t, dir, 1, "protocol", &p)
		want := protocol{MinReaderVersion: 2, MinWriterVersion: 5}
		if ntz {
			want = protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"timestampNtz", "columnMapping"},
				WriterFeatures: []string{"appendOnly", "timestampNtz", "columnMapping"}}
		}
		if !reflect.DeepEqual(p, want) {
			t.Errorf("ntz %v: protocol = %+v, want %+v", ntz, p, want)
		}
	}
}

// mappingScript reads the two tables TestColumnMappingEngines wrote with
// delta-rs (its DataFusion reader: to_pyarrow_table does not apply column
// mapping in deltalake 1.6) and DuckDB's delta_scan, and checks the names
// and values; then with to_pyarrow_table and DuckDB's read_parquet on the
// data files, which see the columns whose physical names are their own.
const mappingScript = `
import os
import sys
import duckext
import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder

new, upgraded = sys.argv[1], sys.argv[2]
con = duckext.connect()

def deltars(path):
    dt = DeltaTable(path)
    return pa.table(QueryBuilder().register("t", dt).execute("SELECT * FROM t ORDER BY id").read_all()).to_pylist()

def duck(path):
    rel = con.execute("SELECT * FROM delta_scan(?) ORDER BY id", [path])
    names = [d[0] for d in rel.description]
    return [dict(zip(names, r)) for r in rel.fetchall()]

for rows in (deltars(new), duck(new)):
    assert [r["id"] for r in rows] == [0, 1, 2, 3], rows
    r = rows[1]
    assert r["first name"] == "name b" and r["a.b"] == 1 and r["(cost)"] == 1.5, r
    assert r["s"] == {"x y": 10} and r["arr"] == [{"k=v": "e"}], r
    assert dict(r["m"]) == {"k": {"t\tu": 7}}, r  # a list of pairs from delta-rs, a dict from DuckDB
    assert rows[0]["new col"] is None and rows[3]["new col"] == "n3", rows

for rows in (deltars(upgraded), duck(upgraded)):
    assert [(r["id"], r["name"], r["first name"]) for r in rows] == [(0, "a", None), (1, "b", "B")], rows

# Readers that do not apply column mapping see the columns whose names are
# safe Parquet names, also those added after the first commit: delta-rs's
# to_pyarrow_table and plain Parquet reads of the data files.
def plain(path):
    return sorted(DeltaTable(path).to_pyarrow_table().to_pylist(), key=lambda r: r["id"])

def files(path):
    rel = con.execute("SELECT * FROM read_parquet(?, union_by_name=true) ORDER BY id", [path + "/*.parquet"])
    names = [d[0] for d in rel.description]
    return [dict(zip(names, r)) for r in rel.fetchall()]

for rows in (plain(upgraded), files(upgraded)):
    assert [(r["id"], r["name"], r["first name"]) for r in rows] == [(0, "a", None), (1, "b", "B")], rows
for rows in (plain(new), files(new)):
    assert [(r["first name"], r["s"], r["new col"]) for r in rows] == [
        ("name a", {"x y": 0}, None), ("name b", {"x y": 10}, None), ("name c", {"x y": 20}, None), ("name d", {"x y": 30}, "n3")], rows
print("ok", flush=True)
# Skip the interpreter's teardown, where delta-rs's runtime threads have
# been seen to abort the process after the work was done.
os._exit(0)
`

// TestColumnMappingEngines writes a table mapped from its first commit and
// a plain table that turns mapping on later, and has delta-rs and DuckDB
// read both by their real column names. Skipped without the tool venv.
func TestColumnMappingEngines(t *testing.T) {
	python := toolPython(t)

	mapped := t.TempDir()
	tb := openTable(t, mapped, table.Options{})
	fields := tabletest.Fields(t, mappedDDL)
	mustCommit(t, tb, table.Commit{Schema: fields, Files: []table.AddFile{tabletest.WriteFile(t, tb, fields, fillMapped(0, 3))}})
	wider := append(slices.Clone(fields), schema.Field{Name: "new col", Type: &schema.Type{Kind: schema.String}, Nullable: true})
	newCol := func(b *rows.Builder, id int64) {
		b.Field(7)
		b.Bytes([]byte("n" + strconv.FormatInt(id, 10)))
	}
	mustCommit(t, tb, table.Commit{Schema: wider, Files: []table.AddFile{tabletest.WriteFile(t, tb, wider, fillMapped(3, 4, newCol))}})
	tb.Close()

	upgraded := t.TempDir()
	tb = openTable(t, upgraded, table.Options{})
	plain := tabletest.Fields(t, "id BIGINT, name STRING")
	mustCommit(t, tb, table.Commit{Schema: plain, Files: []table.AddFile{tabletest.WriteFile(t, tb, plain, func(b *rows.Builder) {
		tabletest.Row(t, b, func() { b.Int64(0) }, func() { b.Bytes([]byte("a")) })
	})}})
	named := tabletest.Fields(t, "id BIGINT, name STRING, `first name` STRING")
	mustCommit(t, tb, table.Commit{Schema: named, Files: []table.AddFile{tabletest.WriteFile(t, tb, named, func(b *rows.Builder) {
		tabletest.Row(t, b, func() { b.Int64(1) }, func() { b.Bytes([]byte("b")) }, func() { b.Bytes([]byte("B")) })
	})}})
	tb.Close()

	out, err := scriptCommand(t, python, mappingScript, mapped, upgraded).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("readers: %v\n%s", err, out)
	}
}

// TestColumnMappingFilesBefore: a file written before any name needed
// mapping, committed together with one written after (the schema grew in
// between), stays readable: the names it uses are the physical names the
// commit records.
func TestColumnMappingFilesBefore(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	before := tabletest.Fields(t, "id BIGINT, s STRUCT<a: INT>")
	after := tabletest.Fields(t, "id BIGINT, s STRUCT<a: INT, `b c`: INT>, `first name` STRING")
	fill := func(b *rows.Builder) { tabletest.Row(t, b, func() { b.Int64(1) }) }
	first := tabletest.WriteFile(t, tb, before, fill)
	second := tabletest.WriteFile(t, tb, after, fill)
	mustCommit(t, tb, table.Commit{Schema: after, Files: []table.AddFile{first, second}})
	meta, _ := schemaMetadata(t, dir, 0)
	inFirst, inSecond := fileSchema(t, dir, first.Path), fileSchema(t, dir, second.Path)
	for _, path := range []string{"id", "s", "s.a"} {
		name, id := physical(t, meta, path)
		if _, ok := inFirst[name]; !ok || inSecond[name] != id {
			t.Errorf("field %s is %s (id %d) in the log; the files have %v and %v", path, name, id, inFirst, inSecond)
		}
	}
	for path, want := range map[string]string{"s.`b c`": "b c", "`first name`": "first name"} {
		if name, id := physical(t, meta, path); name != want || inSecond[name] != id {
			t.Errorf("field %s is %s (id %d) in the log; the second file has %v", path, name, id, inSecond)
		}
	}
}

// physicalNames commits fields to the table in dir and returns the
// physical name of each struct field of the new version, by field path.
func physicalNames(t *testing.T, dir string, fields []schema.Field) map[string]string {
	t.Helper()
	tb := openTable(t, dir, table.Options{})
	defer tb.Close()
	v := mustCommit(t, tb, table.Commit{Schema: fields})
	meta, _ := schemaMetadata(t, dir, int(v))
	names := map[string]string{}
	for path := range meta {
		names[path], _ = physical(t, meta, path)
	}
	return names
}

// writeMappedTable writes version 0 of a table with column mapping, as
// Spark leaves it: fields is the JSON array of its schema's fields.
func writeMappedTable(t *testing.T, fields string, maxColumnID int) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
		t.Fatal(err)
	}
	schemaString, _ := json.Marshal(`{"type":"struct","fields":` + fields + `}`)
	writeLog(t, dir, 0, `{"commitInfo":{"timestamp":1,"operation":"CREATE TABLE","engineInfo":"Apache-Spark/4.0.1 Delta-Lake/4.0.1"}}
{"protocol":{"minReaderVersion":2,"minWriterVersion":5}}
{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":`+string(schemaString)+`,"partitionColumns":[],"configuration":{"delta.columnMapping.mode":"name","delta.columnMapping.maxColumnId":"`+strconv.Itoa(maxColumnID)+`"}}}
`)
	return dir
}

// TestColumnMappingPhysicalNames: a new column's physical name is its
// logical name when that is a safe Parquet name and no sibling at its level
// uses it, in any case; otherwise col-<uuid>. The logical name is not
// reused either once a column may have been dropped, since the files still
// hold its values under its physical name.
func TestColumnMappingPhysicalNames(t *testing.T) {
	t.Run("names", func(t *testing.T) {
		dir := t.TempDir()
		// Mapped from the first commit: names a plain table can hold
		// but Parquet readers may mis-read get col-<uuid> from then on.
		physicalNames(t, dir, tabletest.Fields(t, "a INT, `first name` STRING"))
		got := physicalNames(t, dir, tabletest.Fields(t, "a INT, `first name` STRING, `b c` STRING, `x.y` INT, ` lead` INT, `k:v` INT, "+
			"`tab\tx` INT, `q\"q` INT, `[i]` INT, `Ünï code-1` INT, s STRUCT<`b c`: INT, `p,q`: INT, `A`: INT>"))
		for path, want := range map[string]string{"a": "a", "`first name`": "first name", "`b c`": "b c", "`Ünï code-1`": "Ünï code-1", "s": "s", "s.`b c`": "b c", "s.A": "A"} {
			if got[path] != want {
				t.Errorf("%s has physical name %q, want %q", path, got[path], want)
			}
		}
		for _, path := range []string{"`x.y`", "` lead`", "`k:v`", "`tab\tx`", "`q\"q`", "`[i]`", "s.`p,q`"} {
			if !strings.HasPrefix(got[path], "col-") {
				t.Errorf("%s has physical name %q, want col-<uuid>", path, got[path])
			}
		}
	})
	t.Run("taken in another case", func(t *testing.T) {
		// Spark renamed the column whose physical name is "B C" to x.
		dir := writeMappedTable(t, `[{"name":"x","type":"integer","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"B C"}}]`, 1)
		got := physicalNames(t, dir, tabletest.Fields(t, "x INT, `b c` INT, d INT"))
		if got["x"] != "B C" || !strings.HasPrefix(got["`b c`"], "col-") || got["d"] != "d" {
			t.Errorf("physical names %v, want x B C, b c col-<uuid>, d d", got)
		}
	})
	t.Run("after a drop", func(t *testing.T) {
		// The column with id 1 was dropped: its name may be in the files.
		dir := writeMappedTable(t, `[{"name":"a","type":"integer","nullable":true,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"a"}}]`, 2)
		got := physicalNames(t, dir, tabletest.Fields(t, "a INT, `b c` INT"))
		if got["a"] != "a" || !strings.HasPrefix(got["`b c`"], "col-") {
			t.Errorf("physical names %v, want a a, b c col-<uuid>", got)
		}
	})
}
