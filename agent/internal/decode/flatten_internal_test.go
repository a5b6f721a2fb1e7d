package decode

import (
	"context"
	"fmt"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// flatValue is inferredValue with flatten_nested_columns.
func flatValue(fs ...schema.Field) *spec.Layout {
	l := inferredValue(spec.SchemaEvolutionAddNewColumns, fs...)
	on := true
	l.Value.Transformer.JSONOptions.FlattenNestedColumns = &on
	return l
}

// TestFlattenedColumns checks that the fields of nested objects go to
// their dotted columns, and what does not fit them is rescued.
func TestFlattenedColumns(t *testing.T) {
	l := flatValue(null("id", tLong), null("user.name", tString), null("user.addr.city", tString),
		null("tags", tArr(tStruct(null("n", tLong)))), null("user", tString))
	tests := []struct {
		value, want string // id user.name user.addr.city tags rescue
	}{
		{`{"id":1,"user":{"name":"a","addr":{"city":"x"}},"tags":[{"n":1}]}`, `1 "a" "x" [{n=1}] null`},
		{`{"user":{"addr":{"city":"y"},"name":"b"},"id":2}`, `2 "b" "y" null null`},
		{`{"id":3,"user":null}`, `3 null null null null`},
		{`{"id":4,"user":{"addr":null}}`, `4 null null null null`},
		{`{"id":5,"user":"text"}`, `5 null null null "{\"user\":\"text\"}"`},
		{`{"id":6,"user":{"name":7}}`, `6 "7" null null null`},
		{`{"id":7,"user":{"addr":{"city":[1]}}}`, `7 null "[1]" null null`},
		{`{"id":8,"user.name":"literal"}`, "8 null null null \"{\\\"`user.name`\\\":\\\"literal\\\"}\""},
	}
	for _, tc := range tests {
		t.Run(tc.value, func(t *testing.T) {
			cols, st := decodeRow(t, l, record.Record{Value: []byte(tc.value)})
			got := cols["id"] + " " + cols["user.name"] + " " + cols["user.addr.city"] + " " + cols["tags"] + " " + cols[spec.RescuedDataColumn]
			if got != tc.want {
				t.Errorf("id user.name user.addr.city tags rescue = %s, want %s", got, tc.want)
			}
			if st.Corrupt != 0 || cols["user"] != "null" {
				t.Errorf("corrupt %d, user %s", st.Corrupt, cols["user"])
			}
		})
	}
	cols, st := decodeRow(t, l, record.Record{Value: []byte(`{"id":9,"user":{"name":"a"`)})
	if st.Corrupt != 1 || cols["id"] != "null" || cols["user.name"] != "null" {
		t.Errorf("malformed: corrupt %d, %v", st.Corrupt, cols)
	}
}

// TestFlattenedNewColumns checks that new fields of nested objects, and
// new objects, ask for dotted columns, and that the records decode into
// them once the part has them.
func TestFlattenedNewColumns(t *testing.T) {
	cols := []schema.Field{null("id", tLong), null("user.name", tString)}
	recs := []record.Record{{Topic: "t", Offset: 4, Value: []byte(
		`{"id":1,"user":{"name":"a","age":3,"addr":{"zip":"z"}},"meta":{"a":{"b":true}},"tags":[{"n":1}],"empty":{}}`)}}
	nc := newColumnsOf(t, flatValue(cols...), recs)
	want := "id BIGINT, `user.name` STRING, `user.age` BIGINT, `user.addr.zip` STRING, `meta.a.b` BOOLEAN, tags ARRAY<STRUCT<n: BIGINT>>"
	if got := schema.FormatDDL(nc.Fields); got != want {
		t.Fatalf("fields %s, want %s", got, want)
	}
	row, _ := decodeRow(t, flatValue(nc.Fields...), recs[0])
	for k, v := range map[string]string{"user.age": "3", "user.addr.zip": `"z"`, "meta.a.b": "true", "tags": "[{n=1}]",
		spec.RescuedDataColumn: `"{\"empty\":{}}"`} {
		if row[k] != v {
			t.Errorf("%s = %s, want %s", k, row[k], v)
		}
	}
}

// TestFlattenInference checks the columns inference gives the first
// records with flatten_nested_columns.
func TestFlattenInference(t *testing.T) {
	in := schema.NewInferrer(schema.InferOptions{FlattenNested: true})
	for _, r := range []string{`{"id":1,"user":{"name":"a","addr":{"city":"x"}},"tags":[{"n":1}]}`, `{"user":{"age":2},"e":{}}`} {
		if err := in.Add([]byte(r)); err != nil {
			t.Fatal(err)
		}
	}
	want := "id BIGINT, `user.name` STRING, `user.addr.city` STRING, `user.age` BIGINT, tags ARRAY<STRUCT<n: BIGINT>>"
	if got := schema.FormatDDL(in.Fields()); got != want {
		t.Errorf("fields %s, want %s", got, want)
	}
}

// FuzzDecodeFlattened is FuzzDecodeJSON for a flattened inferred part that
// rescues what its columns do not take, with every metadata column: the
// walk through groups of columns keeps the same invariants.
func FuzzDecodeFlattened(f *testing.F) {
	for _, v := range []string{
		``, `{}`, `null`, `{"user":{"name":"a","addr":{"city":"x"}}}`, `{"user":null}`, `{"user":[1]}`,
		`{"user":{"addr":{"city":{"deep":1}}},"user.name":2}`, `{"user":{"addr":"x"}`, `{"tags":[{"n":1},{"n":"x"}]}`,
		`{"user":{"name":"a","name":{"b":1}},"id":"7"}`, `{"user":{"addr":{}}}`,
	} {
		f.Add([]byte(v))
	}
	l := flatValue(null("id", tLong), null("user.name", tString), null("user.addr.city", tString),
		null("tags", tArr(tStruct(null("n", tLong)))), null("user", tString))
	l.Value.Transformer.JSONOptions.SchemaEvolutionMode = spec.SchemaEvolutionRescue
	l.Meta = spec.MetadataColumnNames
	d, err := New(l, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzDecode(t, d, data) })
}

// TestFlattenedDecodeAllocs fails when steady-state decoding of a
// prefixed, flattened part with every metadata column allocates per
// record, unknown fields in its groups rescued included.
func TestFlattenedDecodeAllocs(t *testing.T) {
	l := flatValue(null("id", tLong), null("user.name", tString), null("user.addr.city", tString))
	l.Value.Transformer.JSONOptions.SchemaEvolutionMode = spec.SchemaEvolutionRescue
	l.Value.Prefix = "v_"
	l.Meta = spec.MetadataColumnNames
	recs := benchRecords()
	for i := range recs {
		recs[i].Value = fmt.Appendf(nil, `{"id":%d,"user":{"name":"u","addr":{"city":"c","zip":%d},"age":%d},"extra":1}`, i, i, i)
		recs[i].Headers = []record.Header{{Key: "h", Value: []byte("v")}}
	}
	d, err := New(l, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = d.Decode(context.Background(), recs) // warm up the buffers
	if allocs := testing.AllocsPerRun(10, func() { _, _ = d.Decode(context.Background(), recs) }); allocs > 0 {
		t.Errorf("%v allocations per batch of %d records, want 0", allocs, len(recs))
	}
}

// TestFlattenedWidening checks that a value a flattened column can take
// once widened asks to widen that column, by its dotted name.
func TestFlattenedWidening(t *testing.T) {
	l := flatValue(null("user.age", tInt))
	l.Value.Transformer.JSONOptions.SchemaEvolutionMode = spec.SchemaEvolutionAddNewColumnsWithTypeWidening
	nc := newColumnsOf(t, l, []record.Record{{Value: []byte(`{"user":{"age":3000000000}}`)}})
	if schema.FormatDDL(nc.Fields) != "`user.age` BIGINT" {
		t.Fatalf("Decode: %v, want user.age widened to BIGINT", nc)
	}
}
