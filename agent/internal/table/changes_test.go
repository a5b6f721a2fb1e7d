package table_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows/rowstest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// TestChanges reads back, version by version, the rows a writer appended to
// a table with column mapping, while the writer holds the table: the files
// of a version before a new column have it null, and the columns come in
// the table's order under their logical names.
func TestChanges(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	fields := tabletest.Fields(t, mappedDDL)
	mustCommit(t, tb, table.Commit{Schema: fields, Files: []table.AddFile{
		tabletest.WriteFile(t, tb, fields, fillMapped(0, 2)), tabletest.WriteFile(t, tb, fields, fillMapped(2, 3)),
	}})
	wider := append(slices.Clone(fields), schema.Field{Name: "new col", Type: &schema.Type{Kind: schema.String}, Nullable: true})
	mustCommit(t, tb, table.Commit{Schema: wider})
	newCol := func(b *rows.Builder, id int64) {
		b.Field(7)
		b.Bytes([]byte("n" + strconv.FormatInt(id, 10)))
	}
	mustCommit(t, tb, table.Commit{Files: []table.AddFile{tabletest.WriteFile(t, tb, wider, fillMapped(3, 5, newCol))}})

	r, err := table.OpenChanges(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	changes, err := r.Changes(0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 2 || changes[0].Version != 0 || len(changes[0].Files) != 2 || changes[1].Version != 1 || len(changes[1].Files) != 0 {
		t.Fatalf("changes from 0, at most 2 = %+v, want version 0 with 2 files, version 1 with none", changes)
	}
	if more, err := r.Changes(3, 10); err != nil || len(more) != 0 {
		t.Fatalf("changes from 3 = %+v, %v; want none yet", more, err)
	}
	ps, err := rows.Schema(wider)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	read := func(files []string) {
		for _, f := range files {
			cols, n, err := r.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rs := rowstest.Rows(cols)
			if len(rs) != n {
				t.Fatalf("%s: %d rows, columns of %d", f, n, len(rs))
			}
			for _, row := range rs {
				m, err := rowstest.Render(ps, row)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, m["id"]+" "+m["first name"]+" "+m["s"]+" "+m["new col"])
			}
		}
	}
	read(changes[0].Files)
	// A commit after the reader opened shows at the next call.
	mustCommit(t, tb, table.Commit{Files: []table.AddFile{tabletest.WriteFile(t, tb, wider, fillMapped(5, 6, newCol))}})
	later, err := r.Changes(2, 10)
	if err != nil || len(later) != 2 || later[0].Version != 2 || later[1].Version != 3 {
		t.Fatalf("changes from 2 = %+v, %v; want versions 2 and 3", later, err)
	}
	read(later[0].Files)
	read(later[1].Files)
	want := []string{
		`0 "name a" {x y=0} null`, `1 "name b" {x y=10} null`, `2 "name c" {x y=20} null`,
		`3 "name d" {x y=30} "n3"`, `4 "name e" {x y=40} "n4"`, `5 "name f" {x y=50} "n5"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows = %q, want %q", got, want)
	}
}

// TestChangesRefused: a version that removes rows (a DELETE by another
// engine) cannot be a change of an append changelog, and neither can a
// version the log no longer holds; a compaction's rewrite is no change.
func TestChangesRefused(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	appendCommits(t, tb, 2)
	add := writeFile(t, tb, 10, 12)
	tb.Close()
	writeLog(t, dir, 2, `{"remove":{"path":"`+add.Path+`","dataChange":false}}
{"add":{"path":"`+add.Path+`","partitionValues":{},"size":1,"modificationTime":1,"dataChange":false}}
`)
	writeLog(t, dir, 3, `{"remove":{"path":"`+add.Path+`","dataChange":true}}
`)
	r, err := table.OpenChanges(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	changes, err := r.Changes(2, 1)
	if err != nil || len(changes) != 1 || len(changes[0].Files) != 0 {
		t.Fatalf("a compaction: %+v, %v; want a version without files", changes, err)
	}
	if _, err := r.Changes(3, 1); !errors.Is(err, table.ErrNotChangelog) || !strings.Contains(err.Error(), "rows were deleted or rewritten") {
		t.Fatalf("a delete: %v", err)
	}
	removeLog(t, dir, 0, 1)
	if _, err := r.Changes(0, 1); !errors.Is(err, table.ErrNotChangelog) || !strings.Contains(err.Error(), "no longer in the log") {
		t.Fatalf("a version the log lost: %v", err)
	}
}

// TestChangesWidened: a file written before a column was widened (INT to
// BIGINT, FLOAT to DOUBLE) reads as the widened column.
func TestChangesWidened(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	narrow := tabletest.Fields(t, "id INT, x FLOAT")
	add := tabletest.WriteFile(t, tb, narrow, func(b *rows.Builder) {
		tabletest.Row(t, b, func() { b.Int32(7) }, func() { b.Float(1.5) })
	})
	mustCommit(t, tb, table.Commit{Schema: narrow, Files: []table.AddFile{add}})
	wide := tabletest.Fields(t, "id BIGINT, x DOUBLE")
	mustCommit(t, tb, table.Commit{Schema: wide, AllowTypeWidening: true})
	r, err := table.OpenChanges(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	changes, err := r.Changes(0, 1)
	if err != nil || len(changes) != 1 || len(changes[0].Files) != 1 {
		t.Fatalf("changes = %+v, %v", changes, err)
	}
	cols, n, err := r.ReadFile(changes[0].Files[0])
	if err != nil || n != 1 {
		t.Fatalf("ReadFile: %d rows, %v", n, err)
	}
	if id, x := cols[0][0], cols[1][0]; id.Kind() != parquet.Int64 || id.Int64() != 7 || x.Kind() != parquet.Double || x.Double() != 1.5 {
		t.Fatalf("read %v %v, want BIGINT 7 and DOUBLE 1.5", id, x)
	}
}
