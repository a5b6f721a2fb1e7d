package decode

import (
	"fmt"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows/rowstest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// FuzzDecodeJSON decodes arbitrary bytes as the JSON key and value of a
// table with every type and nested arrays, maps and structs (VARIANT
// too), and as the key and value of a table of two VARIANT columns (JSON
// without a schema), and checks the invariants: no panic, no error, one row per record with values at valid
// levels in every leaf column (an independent assembler reads each row
// back), and a record counted corrupt exactly when its _corrupt_record is
// set, to the bytes that failed.
func FuzzDecodeJSON(f *testing.F) {
	for _, v := range roundTripValues {
		f.Add([]byte(v))
	}
	for _, v := range []string{
		``, `{}`, `null`, `[]`, `{"i64":1,"i64":null}`, `{"items":[{"opts":{"a":[1,"x",null]}},7]}`,
		`{"m":{"a":{"x":1},"a":{"x":"y"}}}`, `{"nested":[[1,[2]],{}]}`, `{"s":{"a":[1, {"b":"\u00e9"}]}}`,
		`{"d38":1e400,"ts":-1e20,"dt":"2024-13-01","bin":"===="}`, "{\"s\":\"\xff\"}", `{"i64":1`, `{"i64":1}}`,
		`{"k":[{"x":{"1":2}}],"i64":3}`, `{'i64':1,'s':'it\'s'}`, `{"f64":NaN,"s":[-Infinity,+Infinity,2.50,1e2]}`,
		`{"i64":1} trailing`, `{"s":{"a\ud800":"\u0001"},"i64":-0}`, `{"i64":1,"i64":"x","items":[1]}`,
		`{"ts":"2024-1-2 3:4:5 GMT+1","dt":"20240501","i64":2}`,
	} {
		f.Add([]byte(v))
	}
	layout := roundTripLayout()
	layout.Key = spec.Part{Format: spec.FormatJSON, Column: spec.KeyColumn,
		Fields: []schema.Field{null("k", tArr(tStruct(null("x", tMap(tInt, tDec(20, 2))), notNull("y", tTS)))), null("v", tArr(tVariant))}}
	var decoders []*Decoder
	for _, l := range []*spec.Layout{layout, variantLayout()} {
		d, err := New(l, nil)
		if err != nil {
			f.Fatal(err)
		}
		decoders = append(decoders, d)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, d := range decoders {
			fuzzDecode(t, d, data)
		}
	})
}

// fuzzDecode checks FuzzDecodeJSON's invariants for data on decoder d.
func fuzzDecode(t *testing.T, d *Decoder, data []byte) {
	t.Helper()
	recs := []record.Record{{Value: data}, {Key: data, Value: []byte(`{"i64":1}`)}, {Key: data, Value: data}}
	rows, st, err := decodeRows(d, recs)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if len(rows) != len(recs) {
		t.Fatalf("%d rows for %d records", len(rows), len(recs))
	}
	corrupt := 0
	for i, row := range rows {
		cols, err := rowstest.Render(d.Schema(), row)
		if err != nil {
			t.Fatalf("record %d: the row does not match the schema: %v", i, err)
		}
		switch cols[spec.CorruptRecordColumn] {
		case "null":
		case fmt.Sprintf("b%q", data):
			corrupt++
		default:
			t.Fatalf("record %d: _corrupt_record = %s, want null or the input", i, cols[spec.CorruptRecordColumn])
		}
	}
	if corrupt != st.Corrupt {
		t.Fatalf("%d rows with _corrupt_record, Stats.Corrupt = %d", corrupt, st.Corrupt)
	}
}
