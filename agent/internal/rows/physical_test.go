package rows_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// TestRenamed: every struct field, at any depth (inside lists and maps
// too), takes the name and field id the callback gives its field path;
// the leaf columns keep their order, types and levels.
func TestRenamed(t *testing.T) {
	fields, err := schema.ParseDDL("b BIGINT, `a b` STRUCT<z: INT, y: STRING>, l ARRAY<STRUCT<`k=v`: INT>>, " +
		"m MAP<STRING, STRUCT<q: DOUBLE>>, n ARRAY<BIGINT>")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := rows.Schema(fields)
	if err != nil {
		t.Fatal(err)
	}
	wantPaths := [][]string{{"b"}, {"a b"}, {"a b", "z"}, {"a b", "y"}, {"l"}, {"l", "element", "k=v"},
		{"m"}, {"m", "value", "q"}, {"n"}}
	if got := rows.FieldPaths(ps); !reflect.DeepEqual(got, wantPaths) {
		t.Fatalf("FieldPaths = %q, want %q", got, wantPaths)
	}
	ids := map[string]int{}
	for i, p := range wantPaths {
		ids[strings.Join(p, "/")] = i + 1
	}
	renamed := rows.Renamed(ps, func(path []string) rows.Column {
		return rows.Column{Name: "p_" + path[len(path)-1], ID: ids[strings.Join(path, "/")]}
	})
	wantCols := [][]string{{"p_b"}, {"p_a b", "p_z"}, {"p_a b", "p_y"}, {"p_l", "list", "element", "p_k=v"},
		{"p_m", "key_value", "key"}, {"p_m", "key_value", "value", "p_q"}, {"p_n", "list", "element"}}
	if got := renamed.Columns(); !reflect.DeepEqual(got, wantCols) {
		t.Fatalf("columns = %q, want %q", got, wantCols)
	}
	for i, path := range ps.Columns() {
		before, _ := ps.Lookup(path...)
		after, _ := renamed.Lookup(wantCols[i]...)
		if before.ColumnIndex != after.ColumnIndex || before.MaxDefinitionLevel != after.MaxDefinitionLevel ||
			before.MaxRepetitionLevel != after.MaxRepetitionLevel || before.Node.Type().Kind() != after.Node.Type().Kind() {
			t.Errorf("column %v became %+v, was %+v", path, after, before)
		}
	}
	if got := rows.FieldPaths(renamed)[5]; !reflect.DeepEqual(got, []string{"p_l", "element", "p_k=v"}) {
		t.Errorf("renamed field path = %q", got)
	}
	// Field ids, on struct fields only.
	var walk func(n parquet.Node)
	got := map[string]int{}
	walk = func(n parquet.Node) {
		for _, f := range n.Fields() {
			if f.ID() != 0 {
				got[f.Name()] = f.ID()
			}
			if !f.Leaf() {
				walk(f)
			}
		}
	}
	walk(renamed)
	want := map[string]int{"p_b": 1, "p_a b": 2, "p_z": 3, "p_y": 4, "p_l": 5, "p_k=v": 6, "p_m": 7, "p_q": 8, "p_n": 9}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("field ids = %v, want %v", got, want)
	}
}
