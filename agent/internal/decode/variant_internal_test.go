package decode

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows/rowstest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/variant"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// tVariant is the VARIANT type.
var tVariant = &schema.Type{Kind: schema.Variant}

// variantText is how rowstest.Render shows the VARIANT of JSON text json, as
// the encoder encodes it.
func variantText(t *testing.T, json string) string {
	t.Helper()
	var enc variant.Encoder
	meta, value, err := enc.Encode([]byte(json))
	if err != nil {
		t.Fatalf("encoding %s: %v", json, err)
	}
	return fmt.Sprintf("variant(%x %x)", meta, value)
}

// variantLayout is the layout of a table whose key and value are JSON
// without json_options: two VARIANT columns.
func variantLayout() *spec.Layout {
	return &spec.Layout{
		Key:           spec.Part{Format: spec.FormatJSON, Transformer: &spec.Transformer{Format: spec.FormatJSON}, Column: spec.KeyColumn},
		Value:         spec.Part{Format: spec.FormatJSON, Transformer: &spec.Transformer{Format: spec.FormatJSON}, Column: spec.ValueColumn},
		CorruptRecord: true,
	}
}

// TestVariantPart: JSON without json_options fills one VARIANT column per
// side; bytes that are not one JSON text leave it null and go to
// _corrupt_record.
func TestVariantPart(t *testing.T) {
	layout := variantLayout()
	if got := schema.FormatDDL(layout.Columns()); got != "key VARIANT, value VARIANT, _corrupt_record BINARY" {
		t.Fatalf("columns = %s", got)
	}
	tests := []struct {
		name    string
		value   []byte
		want    string // "" for the variant of value itself
		corrupt bool
	}{
		{"object", []byte(`{"b":[1,2.5,"x"],"a":{"c":null}}`), "", false},
		{"scalar", []byte(` 12345678901234567890 `), "", false},
		{"JSON null", []byte(`null`), "", false},
		{"tombstone", nil, "null", false},
		{"empty", []byte{}, "null", false},
		{"blank", []byte(" \n\t"), "null", false},
		{"malformed", []byte(`{"a":`), "null", true},
		{"trailing data", []byte(`{"a":1} x`), "null", true},
		{"duplicate key", []byte(`{"a":1,"a":2}`), "null", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cols, st := decodeRow(t, layout, record.Record{Key: []byte(`"k"`), Value: tc.value})
			want := tc.want
			if want == "" {
				want = variantText(t, string(tc.value))
			}
			if cols["value"] != want {
				t.Errorf("value = %s, want %s", cols["value"], want)
			}
			if k := variantText(t, `"k"`); cols["key"] != k {
				t.Errorf("key = %s, want %s", cols["key"], k)
			}
			checkCorrupt(t, cols, st, tc.corrupt, string(tc.value))
		})
	}
}

// TestJSONVariantField: a VARIANT field of a JSON schema holds its JSON
// sub-value, as Spark's from_json gives it.
func TestJSONVariantField(t *testing.T) {
	layout := jsonValue(null("id", tInt), null("v", tVariant), null("l", tArr(tVariant)))
	tests := []struct {
		name, doc, v, l string
		corrupt         bool
	}{
		{"object", `{"id":1,"v":{"x":[1,{"y":true}]},"l":[1,"a"]}`, `{"x":[1,{"y":true}]}`, `[1 "a"]`, false},
		{"scalar", `{"v":-0.25}`, `-0.25`, ``, false},
		{"JSON null is a VARIANT null", `{"v":null,"l":[null]}`, `null`, `[null]`, false},
		{"missing", `{"id":1}`, ``, ``, false},
		{"duplicate key inside", `{"id":1,"v":{"a":1,"a":2}}`, ``, ``, true},
		{"malformed inside", `{"id":1,"v":{"a":}}`, ``, ``, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cols, st := decodeRow(t, layout, record.Record{Value: []byte(tc.doc)})
			wantV, wantL := "null", "null"
			if tc.v != "" {
				wantV = variantText(t, tc.v)
			}
			switch tc.l {
			case `[1 "a"]`:
				wantL = "[" + variantText(t, "1") + " " + variantText(t, `"a"`) + "]"
			case `[null]`:
				wantL = "[" + variantText(t, "null") + "]"
			}
			if cols["v"] != wantV || cols["l"] != wantL {
				t.Errorf("v, l = %s, %s; want %s, %s", cols["v"], cols["l"], wantV, wantL)
			}
			checkCorrupt(t, cols, st, tc.corrupt, tc.doc)
		})
	}
}

// TestDecodeParsed: a value parsed already is written as it was encoded,
// without parsing its text again; a value that was not is parsed, and the
// key is parsed either way. The encoding given for the first record is
// another text's, to tell the two apart.
func TestDecodeParsed(t *testing.T) {
	d, err := New(variantLayout(), nil)
	if err != nil {
		t.Fatal(err)
	}
	recs := []record.Record{
		{Key: []byte(`"k1"`), Value: []byte(`{"text":1}`)},
		{Key: []byte(`"k2"`), Value: []byte(`{"b":[1,2]}`)},
		{Key: []byte(`"k3"`), Value: []byte(`{"a":`)},
	}
	var enc variant.Encoder
	meta, value, err := enc.Encode([]byte(`{"parsed":true}`))
	if err != nil {
		t.Fatal(err)
	}
	values := []variant.Encoded{{Metadata: meta, Value: value}, {}, {}}
	b, err := d.DecodeParsed(context.Background(), recs, values)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, row := range rowstest.Rows(b.Columns) {
		cols, err := rowstest.Render(d.Schema(), row)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, cols["key"]+" "+cols["value"])
	}
	want := []string{
		variantText(t, `"k1"`) + " " + variantText(t, `{"parsed":true}`),
		variantText(t, `"k2"`) + " " + variantText(t, `{"b":[1,2]}`),
		variantText(t, `"k3"`) + " null",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if b.Corrupt != 1 {
		t.Errorf("%d corrupt records, want 1", b.Corrupt)
	}
	if _, err := d.DecodeParsed(context.Background(), recs, values[:2]); err == nil {
		t.Error("DecodeParsed took fewer values than records")
	}
	// Decode after DecodeParsed parses every value.
	b, err = d.Decode(context.Background(), recs[:1])
	if err != nil {
		t.Fatal(err)
	}
	cols, err := rowstest.Render(d.Schema(), rowstest.Rows(b.Columns)[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := variantText(t, `{"text":1}`); cols["value"] != want {
		t.Errorf("value after Decode = %s, want %s", cols["value"], want)
	}
}
