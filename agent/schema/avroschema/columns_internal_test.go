package avroschema

import (
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// TestColumns checks every row of the spark-avro mapping.
func TestColumns(t *testing.T) {
	for _, tc := range []struct{ avsc, want string }{
		{`"boolean"`, "value BOOLEAN"},
		{`"int"`, "value INT"},
		{`"long"`, "value BIGINT"},
		{`"float"`, "value FLOAT"},
		{`"double"`, "value DOUBLE"},
		{`"string"`, "value STRING"},
		{`"bytes"`, "value BINARY"},
		{`{"type":"fixed","name":"F","size":3}`, "value BINARY"},
		{`{"type":"enum","name":"E","symbols":["A","B"]}`, "value STRING"},
		{`{"type":"string","logicalType":"uuid"}`, "value STRING"},
		{`{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}`, "value DECIMAL(10,2)"},
		{`{"type":"fixed","name":"D","size":16,"logicalType":"decimal","precision":38,"scale":4}`, "value DECIMAL(38,4)"},
		{`{"type":"int","logicalType":"date"}`, "value DATE"},
		{`{"type":"int","logicalType":"time-millis"}`, "value INT"},
		{`{"type":"long","logicalType":"time-micros"}`, "value BIGINT"},
		{`{"type":"long","logicalType":"timestamp-millis"}`, "value TIMESTAMP"},
		{`{"type":"long","logicalType":"timestamp-micros"}`, "value TIMESTAMP"},
		{`{"type":"long","logicalType":"local-timestamp-millis"}`, "value TIMESTAMP_NTZ"},
		{`{"type":"long","logicalType":"local-timestamp-micros"}`, "value TIMESTAMP_NTZ"},
		{`{"type":"array","items":"int"}`, "value ARRAY<INT>"},
		{`{"type":"map","values":["null","long"]}`, "value MAP<STRING, BIGINT>"},
		{`["null","string"]`, "value STRING"},
		{`["string","null"]`, "value STRING"},
		{`["int","long"]`, "value BIGINT"},
		{`["null","float","double"]`, "value DOUBLE"},
		{`["string","null","int",{"type":"array","items":"string"}]`, "value STRUCT<member0: STRING, member1: INT, member2: ARRAY<STRING>>"},
		{`{"type":"record","name":"R","fields":[
			{"name":"id","type":"long"},
			{"name":"nothing","type":"null"},
			{"name":"name","type":["null","string"]},
			{"name":"inner","type":{"type":"record","name":"I","fields":[{"name":"x","type":"int"}]}},
			{"name":"again","type":"I"}]}`,
			"id BIGINT, name STRING, inner STRUCT<x: INT>, again STRUCT<x: INT>"},
	} {
		s, err := Parse(tc.avsc)
		if err != nil {
			t.Fatalf("%s: %v", tc.avsc, err)
		}
		cols, err := Columns(s, "value")
		if err != nil {
			t.Fatalf("%s: %v", tc.avsc, err)
		}
		if got := schema.FormatDDL(cols); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.avsc, got, tc.want)
		}
		if !allNullable(cols) {
			t.Errorf("%s: a column is NOT NULL", tc.avsc)
		}
	}
}

// allNullable reports whether every field, nested ones too, is nullable.
func allNullable(fields []schema.Field) bool {
	for _, f := range fields {
		if !f.Nullable {
			return false
		}
		for t := f.Type; t != nil; t = t.Elem {
			if t.Kind == schema.Struct && !allNullable(t.Fields) {
				return false
			}
			if t.Kind == schema.Map && t.Value.Kind == schema.Struct && !allNullable(t.Value.Fields) {
				return false
			}
		}
	}
	return true
}

// TestColumnsErrors checks the schemas a table cannot hold.
func TestColumnsErrors(t *testing.T) {
	for _, tc := range []struct{ avsc, want string }{
		{`{"type":"record","name":"Node","fields":[{"name":"next","type":["null","Node"]}]}`, "record Node is recursive"},
		{`{"type":"bytes","logicalType":"decimal","precision":39,"scale":2}`, "precision above the table's maximum of 38"},
		{`"null"`, "type null"},
		{`{"type":"record","name":"E","fields":[{"name":"n","type":"null"}]}`, "record E has no field"},
		{`{"type":"array","items":"null"}`, "array items"},
	} {
		s, err := Parse(tc.avsc)
		if err != nil {
			t.Fatalf("%s: %v", tc.avsc, err)
		}
		if _, err := Columns(s, "value"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.avsc, err, tc.want)
		}
	}
}

// TestParseNoGlobalCache checks that two versions of one named record parse
// independently.
func TestParseNoGlobalCache(t *testing.T) {
	v1 := `{"type":"record","name":"ns.R","fields":[{"name":"a","type":"int"}]}`
	v2 := `{"type":"record","name":"ns.R","fields":[{"name":"a","type":"int"},{"name":"b","type":"string","default":""}]}`
	for _, text := range []string{v1, v2, v1} {
		s, err := Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := Columns(s, "value")
		if want := strings.Count(text, `"name":`) - 1; len(cols) != want {
			t.Errorf("%s: %d columns, want %d", text, len(cols), want)
		}
	}
}
