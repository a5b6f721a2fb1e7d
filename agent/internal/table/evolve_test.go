package table_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

func TestSchemaChange(t *testing.T) {
	long := &schema.Type{Kind: schema.Long}
	str := &schema.Type{Kind: schema.String}
	structOf := func(fs ...schema.Field) *schema.Type { return &schema.Type{Kind: schema.Struct, Fields: fs} }
	base := []schema.Field{
		{Name: "id", Type: long},
		{Name: "s", Type: structOf(schema.Field{Name: "a", Type: long, Nullable: true}), Nullable: true},
	}
	with := func(edit func([]schema.Field) []schema.Field) []schema.Field {
		return edit(slices.Clone(base))
	}
	good := []struct {
		name string
		next []schema.Field
	}{
		{"add nullable column", with(func(f []schema.Field) []schema.Field {
			return append(f, schema.Field{Name: "x", Type: str, Nullable: true})
		})},
		{"add nullable nested field", with(func(f []schema.Field) []schema.Field {
			f[1].Type = structOf(f[1].Type.Fields[0], schema.Field{Name: "b", Type: str, Nullable: true})
			return f
		})},
		{"add column in front", with(func(f []schema.Field) []schema.Field {
			return append([]schema.Field{{Name: "x", Type: str, Nullable: true}}, f...)
		})},
		{"relax nullability", with(func(f []schema.Field) []schema.Field { f[0].Nullable = true; return f })},
	}
	bad := []struct {
		name string
		next []schema.Field
		want string
	}{
		{"add NOT NULL column", with(func(f []schema.Field) []schema.Field { return append(f, schema.Field{Name: "x", Type: str}) }), "new column x is NOT NULL"},
		{"drop column", base[:1], "column s is missing"},
		{"rename by case", with(func(f []schema.Field) []schema.Field { f[0].Name = "ID"; return f }), "column id is renamed to ID"},
		{"change type", with(func(f []schema.Field) []schema.Field { f[0].Type = str; return f }), "column id changes type"},
		{"tighten nullability", with(func(f []schema.Field) []schema.Field { f[1].Nullable = false; return f }), "column s becomes NOT NULL"},
		{"tighten nested nullability", with(func(f []schema.Field) []schema.Field {
			f[1].Type = structOf(schema.Field{Name: "a", Type: long})
			return f
		}), "column s.a becomes NOT NULL"},
		{"add NOT NULL nested field", with(func(f []schema.Field) []schema.Field {
			f[1].Type = structOf(f[1].Type.Fields[0], schema.Field{Name: "b", Type: str})
			return f
		}), "new column s.b is NOT NULL"},
		{"change nested type", with(func(f []schema.Field) []schema.Field {
			f[1].Type = structOf(schema.Field{Name: "a", Type: str, Nullable: true})
			return f
		}), "column s.a changes type"},
	}
	for _, tt := range good {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tb := openTable(t, dir, table.Options{})
			mustCommit(t, tb, table.Commit{Schema: base})
			mustCommit(t, tb, table.Commit{Schema: base, Txns: map[string]int64{"a": 1}})
			if hasAction(t, dir, 1, "metaData") {
				t.Error("an unchanged schema wrote a metaData action")
			}
			mustCommit(t, tb, table.Commit{Schema: tt.next, Txns: map[string]int64{"a": 2}, From: map[string]int64{"a": 1}})
			if !hasAction(t, dir, 2, "metaData") {
				t.Error("the schema change wrote no metaData action")
			}
			if got, err := table.ReadSnapshot(dir); err != nil || !schema.Equal(got.Schema, tt.next) {
				t.Errorf("replayed schema = %v, %v; want %v", got.Schema, err, tt.next)
			}
		})
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			tb := openTable(t, t.TempDir(), table.Options{})
			mustCommit(t, tb, table.Commit{Schema: base})
			_, err := tb.Commit(table.Commit{Schema: tt.next})
			if !errors.Is(err, table.ErrSchemaChange) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Commit error = %v, want ErrSchemaChange mentioning %q", err, tt.want)
			}
		})
	}
}

func TestProtocolTimestampNTZ(t *testing.T) {
	ntz := schema.Field{Name: "at", Type: &schema.Type{Kind: schema.TimestampNTZ}, Nullable: true}
	t.Run("new table", func(t *testing.T) {
		dir := t.TempDir()
		mustCommit(t, openTable(t, dir, table.Options{}), table.Commit{Schema: append(slices.Clone(testFields), ntz)})
		want := `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["timestampNtz"],"writerFeatures":["appendOnly","invariants","timestampNtz"]}}`
		if !slices.Contains(readLog(t, dir, 0), want) {
			t.Errorf("log 0 = %v, want the line %s", readLog(t, dir, 0), want)
		}
	})
	t.Run("added column", func(t *testing.T) {
		dir := t.TempDir()
		tb := openTable(t, dir, table.Options{})
		mustCommit(t, tb, table.Commit{Schema: testFields})
		mustCommit(t, tb, table.Commit{Schema: append(slices.Clone(testFields), ntz)})
		want := `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["timestampNtz"],"writerFeatures":["appendOnly","invariants","timestampNtz"]}}`
		if !slices.Contains(readLog(t, dir, 1), want) {
			t.Errorf("log 1 = %v, want the line %s", readLog(t, dir, 1), want)
		}
		mustCommit(t, tb, table.Commit{Schema: append(slices.Clone(testFields), ntz), Txns: map[string]int64{"a": 1}})
		if hasAction(t, dir, 2, "protocol") {
			t.Error("a commit on an upgraded table wrote the protocol again")
		}
	})
}

// hasAction reports whether log version v holds an action of kind.
func hasAction(t *testing.T, dir string, v int, kind string) bool {
	t.Helper()
	return slices.ContainsFunc(readLog(t, dir, v), func(l string) bool { return strings.HasPrefix(l, `{"`+kind+`":`) })
}
