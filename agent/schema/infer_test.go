package schema_test

import (
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// typeOf parses one DDL type ("BIGINT", "STRUCT<a: INT>"); "" is nil.
func typeOf(t testing.TB, ddl string) *schema.Type {
	t.Helper()
	if ddl == "" {
		return nil
	}
	fs, err := schema.ParseDDL("x " + ddl)
	if err != nil {
		t.Fatalf("ParseDDL(x %s): %v", ddl, err)
	}
	return fs[0].Type
}

// ddlOf returns t as DDL, "" for nil.
func ddlOf(t *schema.Type) string {
	if t == nil {
		return ""
	}
	return t.String()
}

var (
	inferOn  = schema.InferOptions{StringTypeInference: true}
	inferOff = schema.InferOptions{}
)

func TestInferrer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    schema.InferOptions
		records []string
		want    string // FormatDDL of Fields
	}{
		{"scalars", inferOn, []string{`{"b":true,"i":1,"d":1.5,"e":1e3,"s":"x","n":null}`},
			"b BOOLEAN, i BIGINT, d DOUBLE, e DOUBLE, s STRING, n STRING"},
		{"integer limits", inferOn, []string{`{"max":9223372036854775807,"min":-9223372036854775808,"over":9223372036854775808,"under":-9223372036854775809,"z":-0}`},
			"max BIGINT, min BIGINT, over DECIMAL(19,0), under DECIMAL(19,0), z BIGINT"},
		{"integer beyond 38 digits is DOUBLE", inferOn, []string{`{"a":123456789012345678901234567890123456789}`}, "a DOUBLE"},
		{"38 digits are DECIMAL", inferOn, []string{`{"a":12345678901234567890123456789012345678}`}, "a DECIMAL(38,0)"},
		{"order is first seen", inferOn, []string{`{"z":1,"a":1}`, `{"m":1,"a":1,"b":2}`}, "z BIGINT, a BIGINT, m BIGINT, b BIGINT"},
		{"bigint and double", inferOn, []string{`{"a":1}`, `{"a":2.5}`}, "a DOUBLE"},
		{"bigint and decimal", inferOn, []string{`{"a":1}`, `{"a":123456789012345678901}`}, "a DECIMAL(21,0)"},
		{"decimal and double", inferOn, []string{`{"a":123456789012345678901}`, `{"a":0.5}`}, "a DOUBLE"},
		{"boolean and bigint", inferOn, []string{`{"a":true}`, `{"a":1}`}, "a STRING"},
		{"nulls fix no type", inferOn, []string{`{"a":null}`, `{"a":1}`, `{"a":null}`}, "a BIGINT"},
		{"empty strings fix no type", inferOn, []string{`{"a":""}`, `{"a":1}`}, "a BIGINT"},
		{"only empty strings", inferOn, []string{`{"a":""}`}, "a STRING"},
		{"date", inferOn, []string{`{"a":"2024-02-29"}`}, "a DATE"},
		{"not a date", inferOn, []string{`{"a":"2023-02-29","b":"2024-1-01","c":"0000-01-01","d":"2024-01-01 "}`},
			"a STRING, b STRING, c STRING, d STRING"},
		{"timestamps", inferOn, []string{`{"a":"2024-01-02T03:04:05","b":"2024-01-02T03:04:05.123Z","c":"2024-01-02T03:04:05.123456789+05:30","d":"2024-01-02T03:04:05-08:00"}`},
			"a TIMESTAMP, b TIMESTAMP, c TIMESTAMP, d TIMESTAMP"},
		{"not timestamps", inferOn, []string{`{"a":"2024-01-02 03:04:05","b":"2024-01-02T03:04","c":"2024-01-02T24:00:00","d":"2024-01-02T03:04:05.","e":"2024-01-02T03:04:05+0530","f":"2024-01-02T03:04:05.1234567890","g":"2024-01-02T03:04:05UTC"}`},
			"a STRING, b STRING, c STRING, d STRING, e STRING, f STRING, g STRING"},
		// Flink infers TIME from these; a Delta table has no TIME type.
		{"times stay strings", inferOn, []string{`{"a":"03:04:05","b":"03:04:05.123","c":"23:59:59.999999"}`},
			"a STRING, b STRING, c STRING"},
		{"escaped date", inferOn, []string{`{"a":"\u0032024-01-02"}`}, "a DATE"},
		{"date and timestamp", inferOn, []string{`{"a":"2024-01-02"}`, `{"a":"2024-01-02T00:00:00Z"}`}, "a TIMESTAMP"},
		{"date and string", inferOn, []string{`{"a":"2024-01-02"}`, `{"a":"soon"}`}, "a STRING"},
		{"string type inference off", inferOff, []string{`{"a":"2024-01-02","b":"2024-01-02T00:00:00Z"}`}, "a STRING, b STRING"},
		{"primitive as string", schema.InferOptions{PrimitiveAsString: true, StringTypeInference: true},
			[]string{`{"a":1,"b":1.5,"c":true,"d":"2024-01-02","e":[1],"f":{"g":false}}`},
			"a STRING, b STRING, c STRING, d DATE, e ARRAY<STRING>, f STRUCT<g: STRING>"},
		{"struct members merge", inferOn, []string{`{"s":{"b":1}}`, `{"s":{"a":"x","b":2.5}}`}, "s STRUCT<b: DOUBLE, a: STRING>"},
		{"struct and scalar", inferOn, []string{`{"s":{"b":1}}`, `{"s":1}`}, "s STRING"},
		{"arrays", inferOn, []string{`{"a":[1,2],"b":[1,"x"],"c":[],"d":[null],"e":[[1],[2.5]],"f":[{"x":1},{"y":true}]}`},
			"a ARRAY<BIGINT>, b ARRAY<STRING>, c ARRAY<STRING>, d ARRAY<STRING>, e ARRAY<ARRAY<DOUBLE>>, f ARRAY<STRUCT<x: BIGINT, y: BOOLEAN>>"},
		{"empty array then elements", inferOn, []string{`{"a":[]}`, `{"a":[true]}`}, "a ARRAY<BOOLEAN>"},
		{"array and scalar", inferOn, []string{`{"a":[1]}`, `{"a":1}`}, "a STRING"},
		{"empty objects hold no column", inferOn, []string{`{"a":{},"b":[{}],"c":{"d":{}},"e":1}`}, "e BIGINT"},
		{"empty object then members", inferOn, []string{`{"a":{}}`, `{"a":{"x":1}}`}, "a STRUCT<x: BIGINT>"},
		{"null member", inferOn, []string{`{"a":{"x":null}}`}, "a STRUCT<x: STRING>"},
		{"empty key holds no column", inferOn, []string{`{"":1,"a":{"":2,"b":3}}`}, "a STRUCT<b: BIGINT>"},
		{"any key", inferOn, []string{`{"first name":1,"a.b":2,"(cost)":3,"ünï":4,"tab\there":5}`},
			"`first name` BIGINT, `a.b` BIGINT, `(cost)` BIGINT, `ünï` BIGINT, `tab\there` BIGINT"},
		// A key is named as the decoder reads it (Spark's text): a lone
		// surrogate is '?', and each run of bytes Java's UTF-8 decoder
		// replaces is one U+FFFD, so "\xff\xff" is two and "\xe2\x82" one.
		{"escaped keys", inferOn, []string{`{"\u0041\n":1,"\ud83d\ude00":2,"\ud800":3}`}, "`A\n` BIGINT, `😀` BIGINT, `?` BIGINT"},
		{"invalid UTF-8 key", inferOn, []string{"{\"a\xffb\":1,\"c\xff\xffd\xe2\x82\":2}"}, "`a\uFFFDb` BIGINT, `c\uFFFD\uFFFDd\uFFFD` BIGINT"},
		{"duplicate keys count both", inferOn, []string{`{"a":1,"a":"x"}`}, "a STRING"},
		{"case variants keep the first", inferOn, []string{`{"Id":1,"id":"x"}`, `{"ID":true}`, `{"s":{"A":1,"a":"y"}}`},
			"Id BIGINT, s STRUCT<A: BIGINT>"},
		{"case variant seen first in a later record", inferOn, []string{`{"id":1}`, `{"ID":"x","id":2}`}, "id BIGINT"},
		{"trailing content ignored", inferOn, []string{`{"a":1} xyz`, `{"b":1}{"c":1}`}, "a BIGINT, b BIGINT"},
		{"whitespace", inferOn, []string{" \t\r\n{ \"a\" : [ 1 , 2 ] , \"b\" : { } } \n"}, "a ARRAY<BIGINT>"},
		{"single quotes", schema.InferOptions{AllowSingleQuotes: true, StringTypeInference: true},
			[]string{`{'a':'x','b':'2024-01-02','c':"it's",'d':'say \'hi\' "x"',"e":"\'"}`, `{'':1}`},
			"a STRING, b DATE, c STRING, d STRING, e STRING"},
		{"non-numeric numbers", schema.InferOptions{AllowNonNumericNumbers: true},
			[]string{`{"a":NaN,"b":Infinity,"c":-Infinity,"d":+INF,"e":-INF,"f":+Infinity,"g":[1,NaN]}`, `{"a":1,"h":-1}`},
			"a DOUBLE, b DOUBLE, c DOUBLE, d DOUBLE, e DOUBLE, f DOUBLE, g ARRAY<DOUBLE>, h BIGINT"},
		{"non-numeric numbers as strings", schema.InferOptions{AllowNonNumericNumbers: true, PrimitiveAsString: true},
			[]string{`{"a":NaN}`}, "a STRING"},
		{"bad records change nothing", inferOn, []string{`{"a":1}`, `{"a":"x","b":`, `[1]`, `{"a":true,}`}, "a BIGINT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := schema.NewInferrer(tt.opts)
			for _, r := range tt.records {
				_ = in.Add([]byte(r))
			}
			fields := in.Fields()
			if got := schema.FormatDDL(fields); got != tt.want {
				t.Errorf("Fields() = %s\nwant      %s", got, tt.want)
			}
			if err := schema.Validate(fields); err != nil {
				t.Errorf("Fields() is not a valid schema: %v", err)
			}
			for _, f := range fields {
				if !f.Nullable {
					t.Errorf("column %s is not nullable", f.Name)
				}
			}
		})
	}
}

func TestInferrerAddErrors(t *testing.T) {
	t.Parallel()
	bad := []struct{ record, msg string }{
		{``, "found no value"},
		{`  `, "found no value"},
		{`[{"a":1}]`, `found '['`},
		{`"a"`, `found '"'`},
		{`1`, `found '1'`},
		{`null`, `found 'n'`},
		{`{`, "unexpected end of input"},
		{`{"a"}`, "expected ':'"},
		{`{"a":}`, "expected a value"},
		{`{a:1}`, "expected an object key"},
		{`{'a':1}`, "expected an object key"},
		{`{"a":1,}`, "expected an object key"},
		{`{"a":tru}`, "expected true"},
		{`{"a":nul}`, "expected null"},
		{`{"a":01}`, "expected ',' or '}'"},
		{`{"a":1.}`, "no digits after '.'"},
		{`{"a":1e}`, "no digits in the exponent"},
		{`{"a":-}`, "invalid number"},
		{`{"a":NaN}`, "expected a value"},
		{`{"a":"x`, "unterminated string"},
		{"{\"a\":\"x\ny\"}", "unescaped control character"},
		{`{"a":"\x"}`, "invalid escape"},
		{`{"a":"\u12"}`, "invalid escape"},
		{`{"a":[1 2]}`, "expected ',' or ']'"},
		{`{"a":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`, "nest more than 1000"},
	}
	lenient := schema.InferOptions{AllowSingleQuotes: true, AllowNonNumericNumbers: true}
	for _, tt := range []struct{ record, msg string }{
		{`{"a":NaNa}`, "expected ',' or '}'"},
		{`{"a":+1}`, "expected a value"},
		{`{"a":Inf}`, "expected a value"},
		{`{"a":-INFINITY}`, "unexpected 'I'"},
		{`{'a":1}`, "unterminated string"},
		{`{"a":'\x'}`, "invalid escape"},
	} {
		if err := schema.NewInferrer(lenient).Add([]byte(tt.record)); err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("lenient Add(%q) = %v, want an error containing %q", tt.record, err, tt.msg)
		}
	}
	for _, tt := range append(bad, struct{ record, msg string }{`{"a":"\'"}`, "invalid escape"}) {
		in := schema.NewInferrer(inferOn)
		if err := in.Add([]byte(`{"keep":1}`)); err != nil {
			t.Fatal(err)
		}
		err := in.Add([]byte(tt.record))
		if err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("Add(%.40q) = %v, want an error containing %q", tt.record, err, tt.msg)
		}
		if got := schema.FormatDDL(in.Fields()); got != "keep BIGINT" {
			t.Errorf("after Add(%.40q) failed, Fields() = %s, want keep BIGINT", tt.record, got)
		}
	}
}

// TestInferDepth checks that values nested deeper than schema.MaxDepth
// become STRING, so that the inferred schema stays valid.
func TestInferDepth(t *testing.T) {
	t.Parallel()
	for _, open := range []string{`{"a":`, `[`} {
		for _, n := range []int{schema.MaxDepth - 2, schema.MaxDepth - 1, schema.MaxDepth, 999} {
			closer := "}"
			if open == "[" {
				closer = "]"
			}
			rec := `{"x":` + strings.Repeat(open, n) + "1" + strings.Repeat(closer, n) + "}"
			in := schema.NewInferrer(inferOn)
			if err := in.Add([]byte(rec)); err != nil {
				t.Fatalf("Add(%d × %s): %v", n, open, err)
			}
			fields := in.Fields()
			if err := schema.Validate(fields); err != nil {
				t.Errorf("Add(%d × %s): invalid schema: %v", n, open, err)
			}
			if n < schema.MaxDepth-1 && strings.Contains(schema.FormatDDL(fields), "STRING") {
				t.Errorf("Add(%d × %s): %s has a STRING, want none at this depth", n, open, schema.FormatDDL(fields))
			}
		}
	}
}

func TestInferValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		value string
		opts  schema.InferOptions
		want  string // DDL of the type, "" for nil
	}{
		{`null`, inferOn, ""},
		{` true `, inferOn, "BOOLEAN"},
		{`-12`, inferOn, "BIGINT"},
		{`12.5`, inferOn, "DOUBLE"},
		{`1E-3`, inferOn, "DOUBLE"},
		{`99999999999999999999`, inferOn, "DECIMAL(20,0)"},
		{`""`, inferOn, "STRING"},
		{`"x"`, inferOn, "STRING"},
		{`"2024-01-02"`, inferOn, "DATE"},
		{`"2024-01-02"`, inferOff, "STRING"},
		{`"2024-01-02T10:00:00Z"`, inferOn, "TIMESTAMP"},
		{`1`, schema.InferOptions{PrimitiveAsString: true}, "STRING"},
		{`{"a":1,"b":{"c":""}}`, inferOn, "STRUCT<a: BIGINT, b: STRUCT<c: STRING>>"},
		{`[1,null,2.5]`, inferOn, "ARRAY<DOUBLE>"},
		{`{"Id":1,"id":"x","Id":2.5}`, inferOn, "STRUCT<Id: DOUBLE, id: STRING>"},
		{`[{"a":1},{"A":true}]`, inferOn, "ARRAY<STRUCT<a: BIGINT, A: BOOLEAN>>"},
	}
	for _, tt := range tests {
		got, err := schema.InferValue([]byte(tt.value), tt.opts)
		if err != nil {
			t.Errorf("InferValue(%s): %v", tt.value, err)
			continue
		}
		if ddlOf(got) != tt.want {
			t.Errorf("InferValue(%s) = %s, want %s", tt.value, ddlOf(got), tt.want)
		}
	}
	// The shapes that print as no DDL.
	if got, _ := schema.InferValue([]byte(`{}`), inferOn); got == nil || got.Kind != schema.Struct || len(got.Fields) != 0 {
		t.Errorf("InferValue({}) = %#v, want a STRUCT without fields", got)
	}
	if got, _ := schema.InferValue([]byte(`[null]`), inferOn); got == nil || got.Kind != schema.Array || got.Elem != nil {
		t.Errorf("InferValue([null]) = %#v, want an ARRAY with a nil element", got)
	}
	for _, bad := range []string{``, `1 2`, `{"a":1} x`, `[`, `"`} {
		if got, err := schema.InferValue([]byte(bad), inferOn); err == nil {
			t.Errorf("InferValue(%q) = %s, want an error", bad, ddlOf(got))
		}
	}
}

func TestCanonical(t *testing.T) {
	t.Parallel()
	str := &schema.Type{Kind: schema.String}
	emptyStruct := &schema.Type{Kind: schema.Struct}
	tests := []struct {
		in   *schema.Type
		want string
		ok   bool
	}{
		{nil, "STRING", true},
		{typeOf(t, "BIGINT"), "BIGINT", true},
		{emptyStruct, "", false},
		{&schema.Type{Kind: schema.Array}, "ARRAY<STRING>", true},
		{&schema.Type{Kind: schema.Array, Elem: emptyStruct}, "", false},
		{&schema.Type{Kind: schema.Struct, Fields: []schema.Field{{Name: "a"}, {Name: "", Type: str}, {Name: "e", Type: emptyStruct}}}, "STRUCT<a: STRING>", true},
		{&schema.Type{Kind: schema.Map, Key: str}, "MAP<STRING, STRING>", true},
	}
	for _, tt := range tests {
		got, ok := schema.Canonical(tt.in)
		if ok != tt.ok || ddlOf(got) != tt.want {
			t.Errorf("Canonical(%#v) = %s, %v, want %s, %v", tt.in, ddlOf(got), ok, tt.want, tt.ok)
		}
	}
}

// TestFlatten checks flatten_nested_columns' column names: dotted paths of
// struct fields at any depth outside arrays and maps, in order, the first
// of names that differ only in case kept.
func TestFlatten(t *testing.T) {
	t.Parallel()
	fs, err := schema.ParseDDL("id BIGINT, user STRUCT<name: STRING, addr: STRUCT<city: STRING>>, tags ARRAY<STRUCT<n: INT>>, " +
		"m MAP<STRING, STRUCT<x: INT>>, `USER.NAME` STRING")
	if err != nil {
		t.Fatal(err)
	}
	want := "id BIGINT, `user.name` STRING, `user.addr.city` STRING, tags ARRAY<STRUCT<n: INT>>, m MAP<STRING, STRUCT<x: INT>>"
	if got := schema.FormatDDL(schema.Flatten(fs)); got != want {
		t.Errorf("Flatten = %s, want %s", got, want)
	}
}
