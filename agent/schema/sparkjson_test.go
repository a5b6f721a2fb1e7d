package schema_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// everyType declares a column of every type and alias family, with every
// modifier.
const everyType = `b BOOLEAN NOT NULL COMMENT 'flag', t TINYINT, s SMALLINT, i INT, l BIGINT, f FLOAT, d DOUBLE,
	dec DECIMAL(12,3), str STRING, c CHAR(2), v VARCHAR(10) COMMENT '<v & w>', bin BINARY, dt DATE, ts TIMESTAMP,
	ntz TIMESTAMP_NTZ, vr VARIANT, arr ARRAY<STRING>, m MAP<STRING, BIGINT> NOT NULL,
	st STRUCT<x: INT NOT NULL COMMENT 'inner', y ARRAY<VARCHAR(3)>>`

// everyTypeJSON is the Spark JSON of everyType, as Spark writes it.
const everyTypeJSON = `{"type":"struct","fields":[` +
	`{"name":"b","type":"boolean","nullable":false,"metadata":{"comment":"flag"}},` +
	`{"name":"t","type":"byte","nullable":true,"metadata":{}},` +
	`{"name":"s","type":"short","nullable":true,"metadata":{}},` +
	`{"name":"i","type":"integer","nullable":true,"metadata":{}},` +
	`{"name":"l","type":"long","nullable":true,"metadata":{}},` +
	`{"name":"f","type":"float","nullable":true,"metadata":{}},` +
	`{"name":"d","type":"double","nullable":true,"metadata":{}},` +
	`{"name":"dec","type":"decimal(12,3)","nullable":true,"metadata":{}},` +
	`{"name":"str","type":"string","nullable":true,"metadata":{}},` +
	`{"name":"c","type":"string","nullable":true,"metadata":{"__CHAR_VARCHAR_TYPE_STRING":"char(2)"}},` +
	`{"name":"v","type":"string","nullable":true,"metadata":{"__CHAR_VARCHAR_TYPE_STRING":"varchar(10)","comment":"<v & w>"}},` +
	`{"name":"bin","type":"binary","nullable":true,"metadata":{}},` +
	`{"name":"dt","type":"date","nullable":true,"metadata":{}},` +
	`{"name":"ts","type":"timestamp","nullable":true,"metadata":{}},` +
	`{"name":"ntz","type":"timestamp_ntz","nullable":true,"metadata":{}},` +
	`{"name":"vr","type":"variant","nullable":true,"metadata":{}},` +
	`{"name":"arr","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}},` +
	`{"name":"m","type":{"type":"map","keyType":"string","valueType":"long","valueContainsNull":true},"nullable":false,"metadata":{}},` +
	`{"name":"st","type":{"type":"struct","fields":[` +
	`{"name":"x","type":"integer","nullable":false,"metadata":{"comment":"inner"}},` +
	`{"name":"y","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}}]},` +
	`"nullable":true,"metadata":{"__CHAR_VARCHAR_TYPE_STRING":"struct<x:int,y:array<varchar(3)>>"}}]}`

func TestSparkJSONGolden(t *testing.T) {
	t.Parallel()
	fields, err := schema.ParseDDL(everyType)
	if err != nil {
		t.Fatal(err)
	}
	got, err := schema.SparkJSON(fields)
	if err != nil {
		t.Fatal(err)
	}
	if got != everyTypeJSON {
		t.Errorf("SparkJSON\n got  %s\n want %s", got, everyTypeJSON)
	}
	back, err := schema.ParseSparkJSON(got)
	if err != nil {
		t.Fatal(err)
	}
	assertSame(t, back, fields)
}

func TestSparkJSONEmpty(t *testing.T) {
	t.Parallel()
	got, err := schema.SparkJSON(nil)
	if want := `{"type":"struct","fields":[]}`; err != nil || got != want {
		t.Errorf("SparkJSON(nil) = %q, %v; want %q", got, err, want)
	}
}

func TestSparkJSONRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range goodDDL {
		js, err := schema.SparkJSON(tc.want)
		if err != nil {
			t.Errorf("%s: SparkJSON: %v", tc.name, err)
			continue
		}
		got, err := schema.ParseSparkJSON(js)
		if err != nil {
			t.Errorf("%s: ParseSparkJSON(%s): %v", tc.name, js, err)
			continue
		}
		assertSame(t, got, tc.want)
	}
}

// goodSparkJSON are schemas in the forms Spark and delta-rs write, with
// the DDL they mean. FuzzParseSparkJSON seeds its corpus with them.
var goodSparkJSON = []struct {
	name, json, want string
}{
	{"delta-rs", `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},` +
		`{"name":"tags","type":{"type":"map","keyType":"string","valueType":"string","valueContainsNull":true},"nullable":true,"metadata":{}}]}`,
		"id BIGINT, tags MAP<STRING, STRING>"},
	{"pretty-printed", "{\n  \"type\" : \"struct\",\n  \"fields\" : [ {\n    \"name\" : \"a\",\n    \"type\" : \"decimal(5, 2)\",\n    \"nullable\" : false,\n    \"metadata\" : { }\n  } ]\n}",
		"a DECIMAL(5,2) NOT NULL"},
	{"no nullable and no metadata", `{"type":"struct","fields":[{"name":"a","type":"decimal"}]}`, "a DECIMAL(10,0)"},
	{"char and varchar type names", `{"type":"struct","fields":[{"name":"a","type":"varchar(5)","nullable":true,"metadata":{}},` +
		`{"name":"b","type":"char(1)","nullable":true,"metadata":{}}]}`, "a VARCHAR(5), b CHAR(1)"},
	{"other metadata ignored", `{"type":"struct","fields":[{"name":"a","type":"integer","nullable":true,` +
		`"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-1","comment":"c"}}]}`, "a INT COMMENT 'c'"},
	{"char/varchar in a map in metadata", `{"type":"struct","fields":[{"name":"m","type":{"type":"map","keyType":"string",` +
		`"valueType":"string","valueContainsNull":true},"nullable":true,"metadata":{"__CHAR_VARCHAR_TYPE_STRING":"map<char(2),varchar(9)>"}}]}`,
		"m MAP<CHAR(2), VARCHAR(9)>"},
	{"quoted name in metadata", `{"type":"struct","fields":[{"name":"s","type":{"type":"struct","fields":[` +
		`{"name":"a b","type":"string","nullable":true,"metadata":{}}]},"nullable":true,` +
		`"metadata":{"__CHAR_VARCHAR_TYPE_STRING":"struct<` + "`a b`" + `:varchar(4)>"}}]}`,
		"s STRUCT<`a b`: VARCHAR(4)>"},
	{"no columns", `{"type":"struct","fields":[]}`, ""},
}

// TestParseSparkJSON reads schemas in the forms Spark and delta-rs write.
func TestParseSparkJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range goodSparkJSON {
		got, err := schema.ParseSparkJSON(tc.json)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if ddl := schema.FormatDDL(got); ddl != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, ddl, tc.want)
		}
	}
}

// sparkJSONField returns a schema of one column "a" of the JSON type typ.
func sparkJSONField(typ string) string {
	return `{"type":"struct","fields":[{"name":"a","type":` + typ + `,"nullable":true,"metadata":{}}]}`
}

// deepSparkJSON nests arrays deeper than MaxDepth.
var deepSparkJSON = strings.Repeat(`{"type":"array","elementType":`, 70) + `"long"` + strings.Repeat(`,"containsNull":true}`, 70)

// badSparkJSON are schemas ParseSparkJSON refuses, with what its error must
// say. FuzzParseSparkJSON seeds its corpus with them.
var badSparkJSON = []struct{ name, json, want string }{
	{"not JSON", `{"type":`, "parsing Spark schema JSON: unexpected end of JSON input"},
	{"not a struct", `{"type":"array","elementType":"long","containsNull":true}`, `the schema has type "array", want "struct"`},
	{"no fields", `{"type":"struct"}`, `has no "fields"`},
	{"non-null elements", sparkJSONField(`{"type":"array","elementType":"long","containsNull":false}`), `column a: arrays with non-nullable elements`},
	{"non-null values", sparkJSONField(`{"type":"map","keyType":"long","valueType":"long","valueContainsNull":false}`), `column a: maps with non-nullable values`},
	{"unknown name", sparkJSONField(`"json"`), `column a: unsupported Spark type "json" (supported: boolean`},
	{"interval", sparkJSONField(`"interval day to second"`), `unsupported Spark type "interval day to second"`},
	{"udt", sparkJSONField(`{"type":"udt","class":"x"}`), `column a: unknown Spark type "udt"`},
	{"no type", `{"type":"struct","fields":[{"name":"a"}]}`, `column a has no "type"`},
	{"no name", `{"type":"struct","fields":[{"type":"long"}]}`, `field 0 of struct "" has no "name"`},
	{"empty name", `{"type":"struct","fields":[{"name":"","type":"long"}]}`, "column ``: the name is empty"},
	{"duplicate", `{"type":"struct","fields":[{"name":"a","type":"long"},{"name":"A","type":"long"}]}`, "column A is declared twice"},
	{"empty struct", sparkJSONField(`{"type":"struct","fields":[]}`), "column a: a STRUCT needs at least one field"},
	{"decimal precision", sparkJSONField(`"decimal(39,0)"`), `unsupported Spark type "decimal(39,0)"`},
	{"varchar zero", sparkJSONField(`"varchar(0)"`), `unsupported Spark type "varchar(0)"`},
	{"comment not a string", `{"type":"struct","fields":[{"name":"a","type":"long","metadata":{"comment":1}}]}`, `column a: metadata "comment"`},
	{"char metadata mismatch", `{"type":"struct","fields":[{"name":"a","type":"long","metadata":{"__CHAR_VARCHAR_TYPE_STRING":"varchar(3)"}}]}`,
		`column a: metadata "__CHAR_VARCHAR_TYPE_STRING" declares type VARCHAR(3), which does not match its type BIGINT`},
	{"char metadata invalid", `{"type":"struct","fields":[{"name":"a","type":"string","metadata":{"__CHAR_VARCHAR_TYPE_STRING":"varchar("}}]}`,
		`type "varchar(": line 1, column 9: expected the length of VARCHAR`},
	{"too deep", sparkJSONField(deepSparkJSON), "types nest more than 64 levels deep"},
}

func TestParseSparkJSONErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range badSparkJSON {
		_, err := schema.ParseSparkJSON(tc.json)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ParseSparkJSON error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

// TestSparkJSONInvalid checks that SparkJSON refuses schemas ParseDDL could
// not have produced rather than writing a log Spark cannot read.
func TestSparkJSONInvalid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		fields []schema.Field
		want   string
	}{
		{"nil type", []schema.Field{{Name: "a"}}, "column a has no type"},
		{"unknown kind", []schema.Field{col("a", &schema.Type{Kind: 0})}, "column a: unknown type kind Kind(0)"},
		{"decimal", []schema.Field{col("a", dec(0, 0))}, "column a: DECIMAL(0,0) is out of range"},
		{"negative scale", []schema.Field{col("a", dec(5, -1))}, "DECIMAL(5,-1) is out of range"},
		{"char without length", []schema.Field{col("a", &schema.Type{Kind: schema.String, Fixed: true})}, "string length 0 is out of range"},
		{"array without element", []schema.Field{col("a", &schema.Type{Kind: schema.Array})}, "column a.element has no type"},
		{"map without value", []schema.Field{col("a", &schema.Type{Kind: schema.Map, Key: prim(schema.Int)})}, "column a.value has no type"},
		{"empty struct", []schema.Field{col("a", structOf())}, "a STRUCT needs at least one field"},
		{"nested duplicate", []schema.Field{col("s", structOf(col("x", prim(schema.Int)), col("X", prim(schema.Int))))}, "column s.X is declared twice"},
		{"empty name", []schema.Field{col("", prim(schema.Int))}, "the name is empty"},
		{"invalid UTF-8 comment", []schema.Field{comment(col("a", prim(schema.Int)), "\xff")}, "column a: the comment is not valid UTF-8"},
	} {
		_, err := schema.SparkJSON(tc.fields)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: SparkJSON error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

// TestSparkJSONMetadata: metadata the type system does not model is
// written on the fields its paths name, at any depth, and read back by
// path; comment and CHAR/VARCHAR keys stay SparkJSON's own.
func TestSparkJSONMetadata(t *testing.T) {
	fields, err := schema.ParseDDL("`a b` INT COMMENT 'c', l ARRAY<STRUCT<`x.y`: INT>>, m MAP<STRING, STRUCT<v: VARCHAR(3)>>")
	if err != nil {
		t.Fatal(err)
	}
	extra := schema.Metadata{
		schema.FieldPath("a b"):                 {"k": json.RawMessage(`1`), "comment": json.RawMessage(`"ignored"`)},
		schema.FieldPath("l", "element", "x.y"): {"k": json.RawMessage(`[{"a":2}]`)},
		schema.FieldPath("m", "value", "v"):     {"k": json.RawMessage(`"s"`)},
	}
	js, err := schema.SparkJSONWithMetadata(fields, extra)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"metadata":{"comment":"c","k":1}`, `"metadata":{"k":[{"a":2}]}`, `"metadata":{"k":"s"}`} {
		if !strings.Contains(js, want) {
			t.Errorf("%s lacks %s", js, want)
		}
	}
	back, got, err := schema.ParseSparkJSONWithMetadata(js)
	if err != nil {
		t.Fatal(err)
	}
	if !schema.Equal(back, fields) {
		t.Errorf("fields = %v, want %v", back, fields)
	}
	delete(extra[schema.FieldPath("a b")], "comment")
	if !reflect.DeepEqual(got, extra) {
		t.Errorf("metadata = %s, want %s", got, extra)
	}
	if p := schema.FieldPath("l", "element", "x.y"); p != "l.element.`x.y`" {
		t.Errorf("FieldPath = %s", p)
	}
}
