package encode_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/encode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestRowsNested: a row's image holds the parsed key and value fields,
// nested values become Go values, the metadata columns are left out, and
// the key is the parsed key fields as JSON; written as JSON, the rows read
// back the same.
func TestRowsNested(t *testing.T) {
	const valueDDL = "m MAP<STRING, ARRAY<INT>>, items ARRAY<STRUCT<a: INT, b: ARRAY<STRING>>>, s STRUCT<x: INT>"
	l := layoutOf(t, &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: "id INT"}},
		&spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: valueDDL}},
		spec.TableConfiguration{SourceMetadataColumn: "meta", MetadataColumns: []string{spec.MetaOffset, spec.MetaHeaders}})
	recs := []record.Record{
		{Topic: "src", Key: []byte(`{"id":7}`),
			Value: []byte(`{"m":{"a":[1,null],"b":[]},"items":[{"a":1,"b":["x"]},null,{"a":null,"b":null}],"s":null}`)},
		{Topic: "src", Key: []byte(`{"id":8}`), Value: []byte(`{"m":null,"items":[],"s":{"x":3}}`)},
	}
	rows := decodeRows(t, l, recs)
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	var names []string
	for _, f := range rows[0].Fields {
		names = append(names, f.Name)
	}
	if !reflect.DeepEqual(names, []string{"id", "m", "items", "s"}) {
		t.Fatalf("image columns %q", names)
	}
	want := [][]any{
		{int32(7), [][2]any{{"a", []any{int32(1), nil}}, {"b", []any{}}},
			[]any{map[string]any{"a": int32(1), "b": []any{"x"}}, nil, map[string]any{"a": nil, "b": nil}}, nil},
		{int32(8), nil, []any{}, map[string]any{"x": int32(3)}},
	}
	for i, w := range want {
		if !reflect.DeepEqual(rows[i].Values, w) {
			t.Errorf("row %d: %#v, want %#v", i, rows[i].Values, w)
		}
	}
	if string(rows[0].Key) != `{"id":7}` || string(rows[1].Key) != `{"id":8}` {
		t.Errorf("keys %s, %s", rows[0].Key, rows[1].Key)
	}
	out := encodeRows(t, encode.New(&spec.KafkaSink{ValueFormat: spec.SinkFormatJSON}), rows)
	back := layoutOf(t, &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: "id INT"}},
		&spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: valueDDL}}, spec.TableConfiguration{})
	sameRows(t, decodeRows(t, back, out), rows, true, 0)
}

// TestRowsOfEvents: a Canal event of two rows gives two rows that share
// its record's headers and key, a DDL event none; rows follow their
// records through Batch.RowRecord.
func TestRowsOfEvents(t *testing.T) {
	l := layoutOf(t, nil, &spec.Transformer{Format: spec.FormatCanalJSON, JSONOptions: &spec.JSONOptions{Schema: "id INT, name STRING"}},
		spec.TableConfiguration{})
	recs := []record.Record{
		{Topic: "src", Offset: 10, Key: []byte("k10"), Headers: []record.Header{{Key: "h", Value: []byte("10")}},
			Value: []byte(`{"data":[{"id":"101","name":"scooter"},{"id":"102","name":"battery"}],"old":null,` +
				`"type":"INSERT","database":"inventory","table":"products","es":1589373560000,"ts":1589373560798,"isDdl":false}`)},
		{Topic: "src", Offset: 11, Value: []byte(`{"data":null,"old":null,"type":"ALTER","database":"inventory","table":"products",` +
			`"es":1589373561000,"ts":1589373561798,"isDdl":true,"sql":"ALTER TABLE products ADD COLUMN weight FLOAT"}`)},
		{Topic: "src", Offset: 12, Key: []byte("k12"), Headers: []record.Header{{Key: "h", Value: []byte("12")}},
			Value: []byte(`{"data":[{"id":"101","name":"scooter"}],"old":null,"type":"DELETE","database":"inventory",` +
				`"table":"products","es":1589373562000,"ts":1589373562798,"isDdl":false}`)},
	}
	rows := decodeRows(t, l, recs)
	if len(rows) != 3 {
		t.Fatalf("%d rows: %+v", len(rows), rows)
	}
	for i, w := range []struct {
		op       byte
		id       int32
		key, hdr string
	}{{'c', 101, "k10", "10"}, {'c', 102, "k10", "10"}, {'d', 101, "k12", "12"}} {
		r := rows[i]
		if r.Op != w.op || r.Values[0] != w.id || string(r.Key) != w.key || string(r.Headers[0].Value) != w.hdr ||
			r.DB != "inventory" || r.Table != "products" {
			t.Errorf("row %d: %c %v key %s headers %v %s.%s", i, r.Op, r.Values, r.Key, r.Headers, r.DB, r.Table)
		}
	}
}

// TestRowsVariant: a VARIANT value column (JSON without json_options) is
// the record's own JSON in the image; a null value is null.
func TestRowsVariant(t *testing.T) {
	l := layoutOf(t, nil, &spec.Transformer{Format: spec.FormatJSON}, spec.TableConfiguration{})
	recs := []record.Record{{Topic: "src", Key: []byte("k"), Value: []byte(`{"a": [1, "x"]}`)}, {Topic: "src"}}
	rows := decodeRows(t, l, recs)
	if len(rows) != 2 || len(rows[0].Fields) != 1 || rows[0].Fields[0].Name != spec.ValueColumn || rows[1].Values[0] != nil {
		t.Fatalf("rows %+v", rows)
	}
	got, err := encode.New(&spec.KafkaSink{ValueFormat: spec.SinkFormatJSON}).Value(nil, &rows[0])
	if err != nil || string(got) != `{"value":{"a": [1, "x"]}}` || string(rows[0].Key) != "k" {
		t.Fatalf("JSON of a VARIANT row: %s, %v; key %q", got, err, rows[0].Key)
	}
}

// TestRowsVariantOfTable: a row of a table has no record value: its
// VARIANT value column is the VARIANT rendered as JSON (keys sorted,
// numbers by value), written in the row image of each value format as a
// topic source's record is; a null value is null.
func TestRowsVariantOfTable(t *testing.T) {
	l := layoutOf(t, nil, &spec.Transformer{Format: spec.FormatJSON}, spec.TableConfiguration{})
	b := decodeAll(t, l, []record.Record{{Topic: "src", Value: []byte(`{"b": [1, "x", 1.50], "a": {"c": 1e2}}`)}, {Topic: "src"}})
	rows, err := encode.Rows(l, l.Columns(), &b, make([]record.Record, 2))
	if err != nil || len(rows) != 2 || rows[1].Values[0] != nil {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	const want = `{"value":{"a":{"c":1e+02},"b":[1,"x",1.50]}}`
	for _, format := range []string{spec.SinkFormatJSON, spec.SinkFormatDebeziumJSON, spec.SinkFormatCanalJSON} {
		got, err := encode.New(&spec.KafkaSink{ValueFormat: format}).Value(nil, &rows[0])
		if err != nil || !strings.Contains(string(got), want) {
			t.Errorf("%s of a table's VARIANT row: %s, %v; want it to hold %s", format, got, err, want)
		}
	}
}

func TestRowsErrors(t *testing.T) {
	l := layoutOf(t, nil, &spec.Transformer{Format: spec.FormatString}, spec.TableConfiguration{})
	recs := []record.Record{{Topic: "src", Value: []byte("v")}}
	b := decodeAll(t, l, recs)
	b.RowRecord = []int32{5}
	if _, err := encode.Rows(l, l.Columns(), &b, recs); err == nil {
		t.Fatal("a row of a record that is not there: no error")
	}
	b.RowRecord = nil
	b.Columns = b.Columns[:1]
	if _, err := encode.Rows(l, l.Columns(), &b, recs); err == nil {
		t.Fatal("a batch with fewer columns than the table: no error")
	}
}

// TestRowsKeyPrefix: the key written is the key's fields under their own
// names, without key_fields_prefix, which the image's columns have.
func TestRowsKeyPrefix(t *testing.T) {
	tbl := &spec.Table{DestinationTable: "t", ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
		Topics: []string{"src"}, KeyFieldsPrefix: "k_",
		KeyTransformer:   &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: "id INT"}},
		ValueTransformer: &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: "id INT, name STRING"}}}}}
	l, errs := tbl.Layout()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	rows := decodeRows(t, l, []record.Record{{Topic: "src", Key: []byte(`{"id":1}`), Value: []byte(`{"id":2,"name":"n"}`)}})
	if len(rows) != 1 || string(rows[0].Key) != `{"id":1}` || rows[0].Fields[0].Name != "k_id" ||
		!reflect.DeepEqual(rows[0].Values, []any{int32(1), int32(2), "n"}) {
		t.Fatalf("rows %+v, key %s", rows, rows[0].Key)
	}
}
