package schema_test

import (
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

func TestEqual(t *testing.T) {
	t.Parallel()
	base := []schema.Field{
		notNull(col("id", prim(schema.Long))),
		col("s", structOf(col("x", dec(5, 2)), col("y", array(mapOf(prim(schema.String), varchar(3)))))),
	}
	same := []schema.Field{
		comment(notNull(col("id", prim(schema.Long))), "comments are ignored"),
		col("s", structOf(col("x", dec(5, 2)), comment(col("y", array(mapOf(prim(schema.String), varchar(3)))), "here too"))),
	}
	if !schema.Equal(base, same) {
		t.Errorf("Equal(%s, %s) = false, want true", schema.FormatDDL(base), schema.FormatDDL(same))
	}
	if !schema.Equal(nil, []schema.Field{}) {
		t.Error("Equal(nil, empty) = false, want true")
	}
	for _, other := range [][]schema.Field{
		base[:1],
		{col("id", prim(schema.Long)), base[1]},
		{notNull(col("ID", prim(schema.Long))), base[1]},
		{notNull(col("id", prim(schema.Int))), base[1]},
		{base[0], col("s", structOf(col("x", dec(5, 3)), col("y", array(mapOf(prim(schema.String), varchar(3))))))},
		{base[0], col("s", structOf(col("x", dec(6, 2)), col("y", array(mapOf(prim(schema.String), varchar(3))))))},
		{base[0], col("s", structOf(col("x", dec(5, 2)), col("y", array(mapOf(prim(schema.String), varchar(4))))))},
		{base[0], col("s", structOf(col("x", dec(5, 2)), col("y", array(mapOf(prim(schema.String), char(3))))))},
		{base[0], col("s", structOf(col("x", dec(5, 2)), col("y", array(mapOf(prim(schema.Binary), varchar(3))))))},
		{base[0], col("s", structOf(col("x", dec(5, 2)), notNull(col("y", array(mapOf(prim(schema.String), varchar(3)))))))},
		{base[0], col("s", structOf(col("x", dec(5, 2))))},
		{base[0], col("s", structOf(col("x", dec(5, 2)), col("y", nil)))},
	} {
		if schema.Equal(base, other) || schema.Equal(other, base) {
			t.Errorf("Equal(%s, %s) = true, want false", schema.FormatDDL(base), schema.FormatDDL(other))
		}
	}
}

func TestHasKind(t *testing.T) {
	t.Parallel()
	fields, err := schema.ParseDDL("a INT, m MAP<STRING, ARRAY<STRUCT<t: TIMESTAMP_NTZ, v: VARIANT>>>, k MAP<DATE, INT>")
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[schema.Kind]bool{
		schema.Int: true, schema.TimestampNTZ: true, schema.Struct: true, schema.Array: true, schema.Date: true,
		schema.Variant:   true,
		schema.Timestamp: false, schema.Long: false, schema.Decimal: false,
	} {
		if got := schema.HasKind(fields, k); got != want {
			t.Errorf("HasKind(%s) = %v, want %v", k, got, want)
		}
	}
	if schema.HasKind([]schema.Field{{Name: "a"}}, schema.Int) {
		t.Error("HasKind on a field without a type = true, want false")
	}
}
