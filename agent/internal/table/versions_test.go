package table_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// TestVersions reads back what each version did to a table with column
// mapping: the first version's metadata with the columns' ids, a schema
// change, appends, and a compaction that changes no rows; then the live
// files, and a version the log no longer holds.
func TestVersions(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	fields := tabletest.Fields(t, mappedDDL)
	mustCommit(t, tb, table.Commit{Schema: fields, Files: []table.AddFile{
		tabletest.WriteFile(t, tb, fields, fillMapped(0, 2)), tabletest.WriteFile(t, tb, fields, fillMapped(2, 3)),
	}})
	wider := append(fields[:len(fields):len(fields)], schema.Field{Name: "n", Type: &schema.Type{Kind: schema.Long}, Nullable: true})
	mustCommit(t, tb, table.Commit{Schema: wider})
	mustCommit(t, tb, table.Commit{Files: []table.AddFile{tabletest.WriteFile(t, tb, wider, fillMapped(3, 5))}})
	removes, add := rewriteAll(t, tb)
	if _, err := tb.CommitRewrite(table.Rewrite{Removes: removes, Adds: []table.AddFile{add}}); err != nil {
		t.Fatal(err)
	}

	r, err := table.OpenChanges(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	vs, err := r.Versions(0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 4 {
		t.Fatalf("%d versions, want 4: %+v", len(vs), vs)
	}
	v0 := vs[0]
	if v0.Meta == nil || len(v0.Meta.Schema) != len(fields) || len(v0.Added) != 2 || !v0.DataChange || len(v0.Removed) != 0 {
		t.Fatalf("version 0 = %+v", v0)
	}
	if c, ok := v0.Meta.Columns[schema.FieldPath("first name")]; !ok || c.ID == 0 || c.Name == "" {
		t.Errorf("column of `first name` = %+v, %v; want an id and a physical name", c, ok)
	}
	if v0.Added[0].Records != 2 || v0.Added[0].Size <= 0 || v0.Added[0].Stats == "" {
		t.Errorf("version 0's first file = %+v, want 2 records, a size and stats", v0.Added[0])
	}
	if v1 := vs[1]; v1.Meta == nil || len(v1.Meta.Schema) != len(wider) || len(v1.Added)+len(v1.Removed) != 0 || v1.DataChange {
		t.Errorf("version 1 = %+v, want the wider schema and no files", v1)
	}
	if v2 := vs[2]; v2.Meta != nil || len(v2.Added) != 1 || v2.Added[0].Records != 2 {
		t.Errorf("version 2 = %+v, want one file of 2 records and no metadata", v2)
	}
	if v3 := vs[3]; v3.DataChange || len(v3.Removed) != 3 || len(v3.Added) != 1 || v3.Added[0].Records != 5 || v3.Removed[0].Size <= 0 {
		t.Errorf("version 3 = %+v, want a compaction of 3 files into one of 5 records", v3)
	}
	version, meta, live := r.Current()
	if version != 3 || meta == nil || len(meta.Schema) != len(wider) || len(live) != 1 || live[0].Path != vs[3].Added[0].Path {
		t.Errorf("Current = %d, %+v, %+v; want version 3, the wider schema and the compacted file", version, meta, live)
	}

	if err := os.Remove(filepath.Join(dir, "_delta_log", "00000000000000000000.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Versions(0, 10); !errors.Is(err, table.ErrVersionGone) {
		t.Errorf("Versions of a deleted version: %v, want ErrVersionGone", err)
	}
}
