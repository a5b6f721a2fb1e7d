package table_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// A writer whose columns another writer of the table extended since its
// last commit of a schema, and whose commit lacks what the other added,
// gets a *SchemaConflictError, which is not ErrSchemaChange (its columns
// are behind, not wrong), and its files are deleted; once it commits the
// log's columns, a change of its own that does not fit is ErrSchemaChange
// again, as it is for a table with one writer.
func TestSchemaConflict(t *testing.T) {
	column := func(name string) schema.Field {
		return schema.Field{Name: name, Type: &schema.Type{Kind: schema.String}, Nullable: true}
	}
	plus := func(names ...string) []schema.Field {
		fields := slices.Clone(testFields)
		for _, n := range names {
			fields = append(fields, column(n))
		}
		return fields
	}
	tests := []struct {
		name string
		// catchUp, when set, has the writer read the other writer's entry
		// before it commits (garbage collection catches up).
		catchUp bool
		// mine is the schema the writer commits.
		mine []schema.Field
	}{
		{name: "the old columns", mine: testFields},
		{name: "the old columns, read by a catch-up before", catchUp: true, mine: testFields},
		{name: "another new column", mine: plus("y")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			other, err := table.OpenUnlocked(dir, table.Options{})
			if err != nil {
				t.Fatal(err)
			}
			mustCommit(t, other, table.Commit{Schema: testFields, Txns: map[string]int64{"p/0": 0, "p/1": 0}})
			w, err := table.OpenUnlocked(dir, table.Options{})
			if err != nil {
				t.Fatal(err)
			}
			mustCommit(t, other, table.Commit{Schema: plus("x"), Files: []table.AddFile{writeFile(t, other, 0, 2)},
				Txns: map[string]int64{"p/0": 2}, From: map[string]int64{"p/0": 0}})
			if tt.catchUp {
				if _, err := w.CollectGarbage(); err != nil {
					t.Fatal(err)
				}
			}
			add := writeFile(t, w, 10, 13)
			_, err = w.Commit(table.Commit{Schema: tt.mine, Files: []table.AddFile{add},
				Txns: map[string]int64{"p/1": 3}, From: map[string]int64{"p/1": 0}})
			var conflict *table.SchemaConflictError
			if !errors.As(err, &conflict) || errors.Is(err, table.ErrSchemaChange) || conflict.Version != 1 ||
				!strings.Contains(err.Error(), "column x is missing") || !strings.Contains(err.Error(), "resume from the log") {
				t.Fatalf("Commit error = %v, want a *SchemaConflictError at version 1 naming column x", err)
			}
			if _, err := os.Stat(filepath.Join(dir, add.Path)); !os.IsNotExist(err) {
				t.Errorf("the conflicting commit's file still exists: %v", err)
			}

			// Started again from the log, with its columns: the writer's
			// commits go on, and its own bad change is its own error.
			if s := w.Snapshot(); !schema.Equal(s.Schema, plus("x")) {
				t.Fatalf("the writer's snapshot has the columns %v, want the log's", s.Schema)
			}
			mustCommit(t, w, table.Commit{Schema: plus("x", "y"), Files: []table.AddFile{writeFile(t, w, 10, 13)},
				Txns: map[string]int64{"p/1": 3}, From: map[string]int64{"p/1": 0}})
			_, err = w.Commit(table.Commit{Schema: plus("x"), Txns: map[string]int64{"p/1": 4}, From: map[string]int64{"p/1": 3}})
			if !errors.Is(err, table.ErrSchemaChange) || errors.As(err, &conflict) {
				t.Fatalf("Commit error = %v, want ErrSchemaChange", err)
			}
		})
	}
}
