package decode

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows/rowstest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// inferredValue is the layout of a table whose value is JSON inferred in
// mode, with current columns fs and the default rescue column.
func inferredValue(mode string, fs ...schema.Field) *spec.Layout {
	tr := &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{SchemaEvolutionMode: mode}}
	return &spec.Layout{
		Key:            spec.Part{Column: spec.KeyColumn},
		Value:          spec.Part{Format: spec.FormatJSON, Transformer: tr, Fields: fs, Column: spec.ValueColumn, Rescue: tr.JSONOptions.RescueColumn()},
		MetadataColumn: "_kafka",
		CorruptRecord:  true,
	}
}

// TestInferredRescue checks what goes to the rescue column, and what makes
// a record corrupt, in the modes that never change the schema.
func TestInferredRescue(t *testing.T) {
	cols := []schema.Field{null("id", tLong), null("s", tStruct(null("x", tLong))), null("tags", tArr(tLong))}
	tests := []struct {
		name, mode, value string
		want              string // id s tags rescue
		corrupt           bool
	}{
		{"fits", "RESCUE", `{"id":1,"s":{"x":2},"tags":[3]}`, `1 {x=2} [3] null`, false},
		{"new top-level field", "rescue", `{"id":1,"extra":{"a": [1]}}`, `1 null null "{\"extra\":{\"a\": [1]}}"`, false},
		{"mismatch", "RESCUE", `{"id":"one"}`, `null null null "{\"id\":\"one\"}"`, false},
		{"nested new and mismatch", "RESCUE", `{"s":{"x":"no","y":true},"tags":[1,"two"]}`,
			`null {x=null} [1 null] "{\"s.x\":\"no\",\"s.y\":true,\"tags[1]\":\"two\"}"`, false},
		{"null new field is not rescued", "RESCUE", `{"id":1,"z":null}`, `1 null null null`, false},
		{"case clash is rescued", "RESCUE", `{"ID":2}`, `null null null "{\"ID\":2}"`, false},
		{"reserved name is rescued", "RESCUE", `{"_kafka":2}`, `null null null "{\"_kafka\":2}"`, false},
		{"dotted name is quoted", "RESCUE", `{"a.b":2}`, "null null null \"{\\\"`a.b`\\\":2}\"", false},
		{"malformed is corrupt", "RESCUE", `{"id":1,"z":`, `null null null null`, true},
		{"NONE ignores new fields", "NONE", `{"id":1,"extra":2}`, `1 null null <none>`, false},
		{"NONE without rescue: mismatch is corrupt", "NONE", `{"id":"one"}`, `null null null <none>`, true},
		{"mismatch rescued in ADD_NEW_COLUMNS", "ADD_NEW_COLUMNS", `{"id":"one"}`, `null null null "{\"id\":\"one\"}"`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := inferredValue(tc.mode, cols...)
			got, st := decodeRow(t, l, record.Record{Value: []byte(tc.value)})
			rescue, ok := got[spec.RescuedDataColumn]
			if !ok {
				rescue = "<none>"
			}
			if s := got["id"] + " " + got["s"] + " " + got["tags"] + " " + rescue; s != tc.want {
				t.Errorf("id s tags rescue = %s, want %s", s, tc.want)
			}
			checkCorrupt(t, got, st, tc.corrupt, tc.value)
		})
	}
}

// TestInferredNewColumns checks that records with new fields, at any depth,
// make the chunk fail with the columns it needs, and that the chunk
// decodes once the table has them.
func TestInferredNewColumns(t *testing.T) {
	cols := []schema.Field{null("id", tLong), null("items", tArr(tStruct(null("n", tLong))))}
	recs := []record.Record{
		{Topic: "t", Offset: 7, Value: []byte(`{"id":1}`)},
		{Topic: "t", Offset: 8, Value: []byte(`{"id":2,"note":"a","items":[{"n":1,"size":"XL"}]}`)},
		{Topic: "t", Offset: 9, Value: []byte(`{"id":3,"note":"b"}`)},
	}
	for _, mode := range []string{"ADD_NEW_COLUMNS", "addNewColumns", "FAIL_ON_NEW_COLUMNS"} {
		t.Run(mode, func(t *testing.T) {
			nc := newColumnsOf(t, inferredValue(mode, cols...), recs)
			if nc.Offset != 8 || nc.Side != "value" || nc.Fail != (mode == "FAIL_ON_NEW_COLUMNS") {
				t.Errorf("error %+v", nc)
			}
			if !slices.Equal(nc.Columns, []string{"items[0].size", "note"}) && !slices.Equal(nc.Columns, []string{"note", "items[0].size"}) {
				t.Errorf("columns %q", nc.Columns)
			}
			want := "id BIGINT, items ARRAY<STRUCT<n: BIGINT, size: STRING>>, note STRING"
			if got := schema.FormatDDL(nc.Fields); got != want {
				t.Errorf("fields %s, want %s", got, want)
			}
			next, changed := nc.Apply(cols)
			if !changed || schema.FormatDDL(next) != want {
				t.Fatalf("Apply: %s %v", schema.FormatDDL(next), changed)
			}
			d, err := New(inferredValue(mode, next...), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := d.Decode(context.Background(), recs)
			if err != nil {
				t.Fatalf("Decode with the new columns: %v", err)
			}
			if b.Rows != 3 || b.Corrupt != 0 {
				t.Errorf("%d rows, %d corrupt", b.Rows, b.Corrupt)
			}
			row, err := rowstest.Render(d.Schema(), rowstest.Rows(b.Columns)[1])
			if err != nil {
				t.Fatal(err)
			}
			if row["note"] != `"a"` || row["items"] != `[{n=1 size="XL"}]` || row[spec.RescuedDataColumn] != "null" {
				t.Errorf("row 1: %v", row)
			}
			if _, changed := nc.Apply(next); changed {
				t.Error("Apply changes columns that have the new fields already")
			}
		})
	}
}

// TestInferredWidening checks that a value a column can take once widened
// asks for the widening only in ADD_NEW_COLUMNS_WITH_TYPE_WIDENING, and
// that a value no widening Delta allows takes is rescued.
func TestInferredWidening(t *testing.T) {
	cols := []schema.Field{null("n", tInt), null("l", tLong)}
	big := record.Record{Value: []byte(`{"n":3000000000}`)}
	d, err := New(inferredValue(spec.SchemaEvolutionAddNewColumnsWithTypeWidening, cols...), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Decode(context.Background(), []record.Record{big})
	var nc *NewColumnsError
	if !errors.As(err, &nc) || schema.FormatDDL(nc.Fields) != "n BIGINT, l BIGINT" || !slices.Equal(nc.Columns, []string{"n"}) {
		t.Fatalf("Decode: %v", err)
	}
	// A fraction in a BIGINT column widens it to the DECIMAL that holds
	// both, as Delta allows (DECIMAL(20 + k, k)); never to DOUBLE.
	_, err = d.Decode(context.Background(), []record.Record{{Value: []byte(`{"l":1.5}`)}})
	if !errors.As(err, &nc) || schema.FormatDDL(nc.Fields) != "n INT, l DECIMAL(21,1)" {
		t.Fatalf("Decode of a fraction into BIGINT: %v", err)
	}
	// An exponent has no exact DECIMAL: rescued.
	got, _ := decodeRow(t, inferredValue(spec.SchemaEvolutionAddNewColumnsWithTypeWidening, cols...), record.Record{Value: []byte(`{"l":1.5e300}`)})
	if got[spec.RescuedDataColumn] != `"{\"l\":1.5e300}"` {
		t.Errorf("BIGINT given 1.5e300: rescue %s", got[spec.RescuedDataColumn])
	}
	// No widening holds a value out of DECIMAL(38,0)'s range: rescued.
	wide := []schema.Field{null("d", tDec(38, 0))}
	huge := `{"d":` + strings.Repeat("9", 40) + `}`
	got, _ = decodeRow(t, inferredValue(spec.SchemaEvolutionAddNewColumnsWithTypeWidening, wide...), record.Record{Value: []byte(huge)})
	if want := strconv.Quote(`{"d":` + strings.Repeat("9", 40) + `}`); got[spec.RescuedDataColumn] != want {
		t.Errorf("DECIMAL(38,0) given 40 digits: rescue %s, want %s", got[spec.RescuedDataColumn], want)
	}
	got, _ = decodeRow(t, inferredValue(spec.SchemaEvolutionAddNewColumns, cols...), big)
	if got[spec.RescuedDataColumn] != `"{\"n\":3000000000}"` {
		t.Errorf("ADD_NEW_COLUMNS rescue %s", got[spec.RescuedDataColumn])
	}
}

// TestRescueKeys checks the spelling of rescue object keys, and that they
// are valid JSON strings whatever the names hold.
func TestRescueKeys(t *testing.T) {
	path := []step{{name: "a.b"}, {elem: true, index: 3}, {name: "x`y"}}
	if got, want := pathString(path, "q\x01\""), "`a.b`[3].`x``y`.q\x01\""; got != want {
		t.Errorf("path %q, want %q", got, want)
	}
	key := jsontext.AppendQuoted(nil, appendPath(nil, path, "q\x01\""))
	var back string
	if err := json.Unmarshal(key, &back); err != nil || back != pathString(path, "q\x01\"") {
		t.Errorf("key %s reads back as %q, %v", key, back, err)
	}
}

// newColumnsOf decodes recs with layout l and returns the NewColumnsError
// the decoder must answer with.
func newColumnsOf(t *testing.T, l *spec.Layout, recs []record.Record) *NewColumnsError {
	t.Helper()
	d, err := New(l, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Decode(context.Background(), recs)
	var nc *NewColumnsError
	if !errors.As(err, &nc) {
		t.Fatalf("Decode: %v, want a NewColumnsError", err)
	}
	return nc
}

// TestJSONEmptyValueAsDeleteInferred checks _op beside an inferred JSON
// value's rescue column.
func TestJSONEmptyValueAsDeleteInferred(t *testing.T) {
	on := true
	l := inferredValue(spec.SchemaEvolutionAddNewColumns, null("id", tLong))
	l.Value.Transformer.JSONOptions.EmptyValueAsDelete = &on
	l.Op = true
	recs := []record.Record{{Value: []byte(`{"id":1,"x":"a"}`)}, {Key: []byte("k")}}
	l.Value.Fields, _ = newColumnsOf(t, l, recs).Apply(l.Value.Fields)
	d, err := New(l, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.Decode(context.Background(), recs)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	var got []string
	for _, r := range renderBatch(t, d, &b) {
		got = append(got, pick(r, "_op", "id", "x", spec.RescuedDataColumn))
	}
	if want := []string{`"c" 1 "a" null`, `"d" null null null`}; !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
	if got := names(l.Columns()); got != "key,id,x,_op,_kafka,_rescued_data,_corrupt_record" {
		t.Errorf("columns %s", got)
	}
}
