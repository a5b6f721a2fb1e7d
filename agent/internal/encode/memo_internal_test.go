package encode

import (
	"slices"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestSchemaFollowsFields: one Debezium encoder with include_schema,
// given rows whose table id or fields change, writes each row as a new
// encoder does: the schema it keeps is remade for new columns, a new
// Fields slice of the same columns and another table.
func TestSchemaFollowsFields(t *testing.T) {
	one := []schema.Field{{Name: "id", Type: intType}}
	two := append(slices.Clone(one), schema.Field{Name: "name", Type: strType, Nullable: true})
	rows := []Row{
		{Op: 'c', DB: "inventory", Table: "customers", Fields: one, Values: []any{int32(1)}},
		{Op: 'c', DB: "inventory", Table: "customers", Fields: one, Values: []any{int32(2)}},
		{Op: 'c', DB: "inventory", Table: "orders", Fields: one, Values: []any{int32(3)}},
		{Op: 'c', DB: "inventory", Table: "orders", Fields: two, Values: []any{int32(4), "x"}},
		{Op: 'c', DB: "inventory", Table: "orders", Fields: two[:1], Values: []any{int32(5)}},
		{Op: 'c', DB: "inventory", Table: "orders", Fields: slices.Clone(one), Values: []any{int32(6)}},
		{Op: 'c', Topic: "src", Fields: one, Values: []any{int32(7)}},
	}
	yes := true
	s := &spec.KafkaSink{IncludeSchema: &yes}
	shared := fixed(s)
	for i := range rows {
		got, err := shared.Value(nil, &rows[i])
		if err != nil {
			t.Fatal(err)
		}
		want, err := fixed(s).Value(nil, &rows[i])
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("row %d:\n got %s\nwant %s", i, got, want)
		}
	}
}
