package rows_test

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows/rowstest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

var (
	tInt    = &schema.Type{Kind: schema.Int}
	tLong   = &schema.Type{Kind: schema.Long}
	tString = &schema.Type{Kind: schema.String}
)

func field(name string, t *schema.Type, nullable bool) schema.Field {
	return schema.Field{Name: name, Type: t, Nullable: nullable}
}

// TestSchema checks Spark's type mapping and that columns keep their
// declared order rather than parquet.Group's alphabetical one.
func TestSchema(t *testing.T) {
	s, err := rows.Schema([]schema.Field{
		field("z_bool", &schema.Type{Kind: schema.Boolean}, false),
		field("y_byte", &schema.Type{Kind: schema.Byte}, true),
		field("x_short", &schema.Type{Kind: schema.Short}, true),
		field("w_int", tInt, true),
		field("v_long", tLong, true),
		field("u_float", &schema.Type{Kind: schema.Float}, true),
		field("t_double", &schema.Type{Kind: schema.Double}, true),
		field("s_dec9", &schema.Type{Kind: schema.Decimal, Precision: 9, Scale: 2}, true),
		field("r_dec18", &schema.Type{Kind: schema.Decimal, Precision: 18, Scale: 0}, true),
		field("q_dec38", &schema.Type{Kind: schema.Decimal, Precision: 38, Scale: 10}, true),
		field("p_string", tString, true),
		field("o_varchar", &schema.Type{Kind: schema.String, Length: 10}, true),
		field("n_binary", &schema.Type{Kind: schema.Binary}, true),
		field("m_date", &schema.Type{Kind: schema.Date}, true),
		field("l_ts", &schema.Type{Kind: schema.Timestamp}, true),
		field("k_ntz", &schema.Type{Kind: schema.TimestampNTZ}, true),
		field("j_arr", &schema.Type{Kind: schema.Array, Elem: tInt}, true),
		field("i_map", &schema.Type{Kind: schema.Map, Key: tString, Value: tLong}, true),
		field("h_struct", &schema.Type{Kind: schema.Struct, Fields: []schema.Field{field("b", tInt, false), field("a", tString, true)}}, false),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `message spark_schema {
	required boolean z_bool;
	optional int32 y_byte (INT(8,true));
	optional int32 x_short (INT(16,true));
	optional int32 w_int (INT(32,true));
	optional int64 v_long (INT(64,true));
	optional float u_float;
	optional double t_double;
	optional int32 s_dec9 (DECIMAL(9,2));
	optional int64 r_dec18 (DECIMAL(18,0));
	optional fixed_len_byte_array(16) q_dec38 (DECIMAL(38,10));
	optional binary p_string (STRING);
	optional binary o_varchar (STRING);
	optional binary n_binary;
	optional int32 m_date (DATE);
	optional int64 l_ts (TIMESTAMP(isAdjustedToUTC=true,unit=MICROS));
	optional int64 k_ntz (TIMESTAMP(isAdjustedToUTC=false,unit=MICROS));
	optional group j_arr (LIST) {
		repeated group list {
			optional int32 element (INT(32,true));
		}
	}
	optional group i_map (MAP) {
		repeated group key_value {
			required binary key (STRING);
			optional int64 value (INT(64,true));
		}
	}
	required group h_struct {
		required int32 b (INT(32,true));
		optional binary a (STRING);
	}
}`
	if got := s.String(); got != want {
		t.Errorf("schema =\n%s\nwant\n%s", got, want)
	}
	var paths []string
	for _, c := range s.Columns() {
		paths = append(paths, strings.Join(c, "."))
	}
	if got, want := paths[len(paths)-2:], []string{"h_struct.b", "h_struct.a"}; !reflect.DeepEqual(got, want) {
		t.Errorf("last columns = %v, want %v", got, want)
	}
}

// TestSchemaErrors checks the types Parquet cannot represent.
func TestSchemaErrors(t *testing.T) {
	for _, tc := range []struct {
		typ  *schema.Type
		want string
	}{
		{nil, "field f: missing type"},
		{&schema.Type{Kind: schema.Decimal, Precision: 39}, "field f: DECIMAL precision 39 is outside 1..38"},
		{&schema.Type{Kind: schema.Decimal, Precision: 5, Scale: 6}, "field f: DECIMAL(5,6) scale is outside 0..5"},
		{&schema.Type{Kind: schema.Struct}, "field f: a struct needs at least one field"},
		{&schema.Type{Kind: schema.Array, Elem: &schema.Type{Kind: 99}}, "field f.element: unknown type kind 99"},
	} {
		_, err := rows.Schema([]schema.Field{field("f", tc.typ, true)})
		if err == nil || err.Error() != tc.want {
			t.Errorf("Schema(%+v) error = %v, want %q", tc.typ, err, tc.want)
		}
	}
}

// TestBuilderMisuse checks that misuse is an error from EndRow, not a
// panic or a malformed row, and that the next row is unaffected.
func TestBuilderMisuse(t *testing.T) {
	fields := []schema.Field{
		field("req", tInt, false),
		field("opt", tString, true),
		field("list", &schema.Type{Kind: schema.Array, Elem: tInt}, true),
		field("map", &schema.Type{Kind: schema.Map, Key: tString, Value: tInt}, true),
		field("dec", &schema.Type{Kind: schema.Decimal, Precision: 20, Scale: 0}, true),
	}
	for _, tc := range []struct {
		name  string
		build func(b *rows.Builder)
		want  string
	}{
		{"required missing", func(*rows.Builder) {}, "req is NOT NULL but was not written"},
		{"required null", func(b *rows.Builder) { b.Field(0); b.Null() }, "req is NOT NULL but was written a null"},
		{"wrong kind", func(b *rows.Builder) { b.Field(0); b.Int64(1) }, "req of type INT cannot hold a INT64 value"},
		{"no field selected", func(b *rows.Builder) { b.Int32(1) }, "without selecting a field"},
		{"field out of range", func(b *rows.Builder) { b.Field(9) }, "has no field 9"},
		{"unclosed list", func(b *rows.Builder) { b.Field(0); b.Int32(1); b.Field(2); b.BeginList() }, "still open"},
		{"struct on a list", func(b *rows.Builder) { b.Field(2); b.BeginStruct() }, "cannot hold a STRUCT value"},
		{"map key without value", func(b *rows.Builder) {
			b.Field(0)
			b.Int32(1)
			b.Field(3)
			b.BeginMap()
			b.Bytes([]byte("k"))
			b.EndMap()
		}, "closed after a key without its value"},
		{"null map key", func(b *rows.Builder) { b.Field(3); b.BeginMap(); b.Null() }, "map.key is NOT NULL"},
		{"short decimal", func(b *rows.Builder) { b.Field(4); b.Bytes([]byte{1}) }, "cannot hold a 1 bytes value"},
		{"EndStruct closing the row", func(b *rows.Builder) { b.EndStruct() }, "call EndRow"},
		{"EndList without BeginList", func(b *rows.Builder) { b.EndList() }, "without a matching Begin"},
		{"DiscardFields out of range", func(b *rows.Builder) { b.DiscardFields(0, 6) }, "outside the open row's 5 fields"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := rows.NewBuilder(fields)
			if err != nil {
				t.Fatal(err)
			}
			b.Reset()
			b.BeginRow()
			tc.build(b)
			if err := b.EndRow(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("EndRow() = %v; want an error containing %q", err, tc.want)
			}
			b.BeginRow()
			b.Field(0)
			b.Int32(7)
			if err := b.EndRow(); err != nil {
				t.Fatalf("next row: %v", err)
			}
			// The failed row left nothing behind.
			if got := rowstest.Rows(b.Columns()); b.Rows() != 1 || len(got) != 1 || len(got[0]) != 6 {
				t.Fatalf("batch = %d rows %v; want the next row alone, with 6 values", b.Rows(), got)
			}
		})
	}
}

// record is the Go form of the round-trip schema, read back by parquet-go's
// own reflection-based reader.
type record struct {
	ID    *int64            `parquet:"id,optional"`
	Items []item            `parquet:"items,optional,list"`
	Attrs map[string]*int32 `parquet:"attrs,optional"`
	Name  *string           `parquet:"name,optional"`
}

type item struct {
	Tags []string `parquet:"tags,optional,list"`
	Qty  *int32   `parquet:"qty,optional"`
}

// TestRoundTrip writes rows built out of order (fields in any order,
// duplicates, discarded fields) and reads them back into Go values with
// parquet-go's reader.
func TestRoundTrip(t *testing.T) {
	b, err := rows.NewBuilder([]schema.Field{
		field("id", tLong, true),
		field("items", &schema.Type{Kind: schema.Array, Elem: &schema.Type{Kind: schema.Struct, Fields: []schema.Field{
			field("tags", &schema.Type{Kind: schema.Array, Elem: tString}, true),
			field("qty", tInt, true),
		}}}, true),
		field("attrs", &schema.Type{Kind: schema.Map, Key: tString, Value: tInt}, true),
		field("name", tString, true),
	})
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	add := rowAdder(t, b)
	add(func() {
		b.Field(3)
		b.Bytes([]byte("first"))
		b.Field(1)
		b.BeginList()
		b.BeginStruct()
		b.Field(1)
		b.Int32(2)
		b.Field(0)
		b.BeginList()
		b.Bytes([]byte("a"))
		b.Bytes([]byte("b"))
		b.EndList()
		b.Field(1) // duplicate: the last value wins
		b.Int32(3)
		b.EndStruct()
		b.BeginStruct()
		b.Field(0)
		b.BeginList()
		b.EndList()
		b.EndStruct()
		b.EndList()
		b.Field(0)
		b.Int64(1)
		b.Field(2)
		b.BeginMap()
		b.Bytes([]byte("k"))
		b.Int32(5)
		b.Bytes([]byte("n"))
		b.Null()
		b.EndMap()
	})
	add(func() {}) // all null
	add(func() {
		b.Field(0)
		b.Int64(2)
		b.Field(1)
		b.BeginList()
		b.Null()
		b.BeginStruct() // abandoned by DiscardFields
		b.DiscardFields(1, 2)
		b.Field(1)
		b.BeginList()
		b.EndList()
		b.Field(0)
		b.Int64(3) // duplicate top-level field
	})

	var buf bytes.Buffer
	w := parquet.NewGenericWriter[any](&buf, b.Schema())
	if _, err := w.WriteRows(rowstest.Rows(b.Columns())); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := parquet.NewGenericReader[record](bytes.NewReader(buf.Bytes()))
	got := make([]record, 3)
	if n, err := r.Read(got); n != 3 {
		t.Fatalf("read %d rows: %v", n, err)
	}
	i32 := func(v int32) *int32 { return &v }
	i64 := func(v int64) *int64 { return &v }
	str := func(v string) *string { return &v }
	want := []record{
		{ID: i64(1), Items: []item{{Tags: []string{"a", "b"}, Qty: i32(3)}, {Tags: []string{}}}, Attrs: map[string]*int32{"k": i32(5), "n": nil}, Name: str("first")},
		{},
		{ID: i64(3), Items: []item{}},
	}
	for i := range want {
		if g, w := dump(got[i]), dump(want[i]); g != w {
			t.Errorf("row %d = %s, want %s", i, g, w)
		}
	}
}

// dump prints a record with its pointers followed.
func dump(r record) string {
	var sb strings.Builder
	p := func(v any) string {
		rv := reflect.ValueOf(v)
		if rv.IsNil() {
			return "nil"
		}
		return fmt.Sprint(rv.Elem().Interface())
	}
	fmt.Fprintf(&sb, "id=%s items=", p(r.ID))
	if r.Items == nil {
		sb.WriteString("nil")
	}
	for _, it := range r.Items {
		fmt.Fprintf(&sb, "{tags=%q(nil=%v) qty=%s}", it.Tags, it.Tags == nil, p(it.Qty))
	}
	sb.WriteString(" attrs=")
	if r.Attrs == nil {
		sb.WriteString("nil")
	}
	for _, k := range []string{"k", "n"} {
		if v, ok := r.Attrs[k]; ok {
			fmt.Fprintf(&sb, "%s:%s ", k, p(v))
		}
	}
	fmt.Fprintf(&sb, "name=%s", p(r.Name))
	return sb.String()
}

// rowAdder returns a function that adds one row to b, built by its
// argument between BeginRow and EndRow, and fails the test if EndRow does.
func rowAdder(t *testing.T, b *rows.Builder) func(build func()) {
	return func(build func()) {
		t.Helper()
		b.BeginRow()
		build()
		if err := b.EndRow(); err != nil {
			t.Fatal(err)
		}
	}
}
