package decode

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows/rowstest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Types used by the tests.
var (
	tBool    = &schema.Type{Kind: schema.Boolean}
	tByte    = &schema.Type{Kind: schema.Byte}
	tShort   = &schema.Type{Kind: schema.Short}
	tInt     = &schema.Type{Kind: schema.Int}
	tLong    = &schema.Type{Kind: schema.Long}
	tFloat   = &schema.Type{Kind: schema.Float}
	tDouble  = &schema.Type{Kind: schema.Double}
	tString  = &schema.Type{Kind: schema.String}
	tVarchar = &schema.Type{Kind: schema.String, Length: 3}
	tBinary  = &schema.Type{Kind: schema.Binary}
	tDate    = &schema.Type{Kind: schema.Date}
	tTS      = &schema.Type{Kind: schema.Timestamp}
	tNTZ     = &schema.Type{Kind: schema.TimestampNTZ}
)

func tDec(p, s int) *schema.Type { return &schema.Type{Kind: schema.Decimal, Precision: p, Scale: s} }
func tArr(e *schema.Type) *schema.Type {
	return &schema.Type{Kind: schema.Array, Elem: e}
}
func tMap(k, v *schema.Type) *schema.Type {
	return &schema.Type{Kind: schema.Map, Key: k, Value: v}
}
func tStruct(fs ...schema.Field) *schema.Type { return &schema.Type{Kind: schema.Struct, Fields: fs} }
func null(name string, t *schema.Type) schema.Field {
	return schema.Field{Name: name, Type: t, Nullable: true}
}
func notNull(name string, t *schema.Type) schema.Field {
	return schema.Field{Name: name, Type: t}
}

// decodeRow decodes one record with layout l and renders its columns; the
// decoder must agree with the Parquet writer's idea of the row's shape.
func decodeRow(t *testing.T, l *spec.Layout, r record.Record) (map[string]string, Stats) {
	t.Helper()
	d, err := New(l, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	got, st, err := decodeRows(d, []record.Record{r})
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if len(got) != 1 {
		t.Fatalf("Decode returned %d rows, want 1", len(got))
	}
	cols, err := rowstest.Render(d.Schema(), got[0])
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return cols, st
}

// jsonValue is the layout of a table whose value is JSON with fields fs.
func jsonValue(fs ...schema.Field) *spec.Layout {
	return &spec.Layout{
		Key:           spec.Part{Column: spec.KeyColumn},
		Value:         spec.Part{Format: spec.FormatJSON, Fields: fs, Column: spec.ValueColumn},
		CorruptRecord: true,
	}
}

// TestJSONTypes checks every type rule: the value written for a field `f`
// of each type, and whether the record is corrupt (then null is written and
// the document goes to _corrupt_record).
func TestJSONTypes(t *testing.T) {
	tests := []struct {
		typ     *schema.Type
		in      string
		want    string
		corrupt bool
	}{
		{tBool, `true`, `true`, false},
		{tBool, `false`, `false`, false},
		{tBool, `null`, `null`, false},
		{tBool, `1`, `null`, true},
		{tBool, `"true"`, `null`, true},

		{tByte, `127`, `127`, false},
		{tByte, `-128`, `-128`, false},
		{tByte, `128`, `null`, true},
		{tShort, `-32768`, `-32768`, false},
		{tShort, `32768`, `null`, true},
		{tInt, `2147483647`, `2147483647`, false},
		{tInt, `-2147483649`, `null`, true},
		{tInt, `1.0`, `null`, true},
		{tInt, `1e2`, `null`, true},
		{tInt, `"5"`, `null`, true},
		{tInt, `[5]`, `null`, true},
		{tLong, `9223372036854775807`, `9223372036854775807`, false},
		{tLong, `-9223372036854775808`, `-9223372036854775808`, false},
		{tLong, `9223372036854775808`, `null`, true},
		{tLong, `-0`, `0`, false},

		{tFloat, `1.5`, `1.5`, false},
		{tFloat, `2`, `2`, false},
		{tFloat, `"NaN"`, `NaN`, false},
		{tFloat, `"Infinity"`, `+Inf`, false},
		{tFloat, `NaN`, `NaN`, false},
		{tFloat, `"INF"`, `null`, true},
		{tFloat, `1e39`, `+Inf`, false},
		{tFloat, `"1.5"`, `null`, true},
		{tFloat, `true`, `null`, true},
		{tDouble, `123.45`, `123.45`, false},
		{tDouble, `-1e-300`, `-1e-300`, false},
		{tDouble, `"-Infinity"`, `-Inf`, false},
		{tDouble, `"-INF"`, `-Inf`, false},
		{tDouble, `-Infinity`, `-Inf`, false},
		{tDouble, `+Infinity`, `+Inf`, false},
		{tDouble, `"+NaN"`, `null`, true},
		{tDouble, `"abc"`, `null`, true},

		{tDec(5, 2), `123.456`, `123.46`, false},
		{tDec(5, 2), `123.455`, `123.46`, false}, // HALF_UP on the decimal text, not a binary double
		{tDec(5, 2), `-1.005`, `-1.01`, false},
		{tDec(5, 2), `0.004`, `0.00`, false},
		{tDec(5, 2), `7`, `7.00`, false},
		{tDec(5, 2), `1e2`, `100.00`, false},
		{tDec(5, 2), `"12.3"`, `12.30`, false},
		{tDec(5, 2), `"-1E-1"`, `-0.10`, false},
		{tDec(5, 2), `1234.5`, `null`, true},
		{tDec(5, 2), `999.995`, `null`, true}, // rounds to 1000.00
		{tDec(5, 2), `"12,3"`, `null`, true},
		{tDec(5, 2), `true`, `null`, true},
		{tDec(18, 0), `999999999999999999`, `999999999999999999`, false},
		{tDec(18, 0), `1e18`, `null`, true},
		{tDec(20, 0), `-12345678901234567890`, `-12345678901234567890`, false},
		{tDec(38, 10), `1234567890123456789012345678.0123456789`, `1234567890123456789012345678.0123456789`, false},
		{tDec(38, 10), `-0.00000000005`, `-0.0000000001`, false},
		{tDec(38, 10), `1e28`, `null`, true},
		{tDec(38, 0), `-99999999999999999999999999999999999999`, `-99999999999999999999999999999999999999`, false},

		{tString, `"abc"`, `"abc"`, false},
		{tString, `"a\u00e9\n\"\\\/\ud83d\ude00"`, `"aé\n\"\\/😀"`, false},
		{tString, `"\ud800"`, `"?"`, false}, // Java's encoder writes a lone surrogate as '?'
		{tString, `'it\'s "q"'`, `"it's \"q\""`, false},
		{tString, `""`, `""`, false},
		{tString, `42`, `"42"`, false},
		{tString, `-1.50e3`, `"-1500.0"`, false}, // as Java writes the double
		{tString, `1e-5`, `"1.0E-5"`, false},
		{tString, `123456789.0`, `"1.23456789E8"`, false},
		{tString, `-0`, `"0"`, false},
		{tString, `1e999`, `"\"Infinity\""`, false},
		{tString, `-Infinity`, `"\"-Infinity\""`, false},
		{tString, `true`, `"true"`, false},
		{tString, `{ "a" : [1, 2], "b\" c": "x y" }`, `"{\"a\":[1,2],\"b\\\" c\":\"x y\"}"`, false},
		{tString, `{'\u0041':["\u00e9\u0001", 2.50, NaN]}`, `"{\"A\":[\"é\\u0001\",2.5,\"NaN\"]}"`, false},
		{tString, `[]`, `"[]"`, false},
		{tVarchar, `"longer than 3"`, `"longer than 3"`, false}, // no length enforcement

		// Jackson (Spark's JSON parser) refuses a number of more than
		// 1,000 digits, wherever it is: the record is corrupt.
		{tDouble, "1" + strings.Repeat("0", 999), `+Inf`, false},
		{tDouble, "-1." + strings.Repeat("0", 998) + "e1", `-10`, false},
		{tDouble, "1" + strings.Repeat("0", 1000), `null`, true},
		{tDouble, "1." + strings.Repeat("0", 999) + "e1", `null`, true},
		{tString, "1" + strings.Repeat("0", 1000), `null`, true},
		{tStruct(null("a", tInt)), `{"a":1,"b":[1` + strings.Repeat("0", 1000) + `]}`, `null`, true},

		{tBinary, `"aGVsbG8="`, `b"hello"`, false},
		{tBinary, `"aGVsbG8"`, `null`, true}, // padding is required
		{tBinary, `"aGVs\nbG8="`, `b"hello"`, false},
		// What Spark 4.0.1's from_json gives (Jackson's MIME base64):
		// whitespace only before a group, a group after padding, the
		// padded bits unchecked.
		{tBinary, `"AQ\nID"`, `null`, true},
		{tBinary, `"A QID"`, `null`, true},
		{tBinary, `"AQ= ="`, `null`, true},
		{tBinary, `" AQID\t"`, `b"\x01\x02\x03"`, false},
		{tBinary, `"AQ==AQID"`, `b"\x01\x01\x02\x03"`, false},
		{tBinary, `"AQI=\tAQ=="`, `b"\x01\x02\x01"`, false},
		{tBinary, `"AR=="`, `b"\x01"`, false},
		{tBinary, `"AQJ="`, `b"\x01\x02"`, false},
		{tBinary, `"AQ=A"`, `null`, true},
		{tBinary, `"AQID="`, `null`, true},
		{tBinary, `"AQ-_"`, `null`, true},
		{tBinary, `"  "`, `b""`, false},
		{tBinary, `""`, `b""`, false},
		{tBinary, `"!!"`, `null`, true},
		{tBinary, `5`, `null`, true},

		{tDate, `"2024-05-01"`, `2024-05-01`, false},
		{tDate, `"2024-02-29"`, `2024-02-29`, false},
		{tDate, `"1900-01-01"`, `1900-01-01`, false},
		{tDate, `"2024-05-01T23:59:59-05:00"`, `2024-05-01`, false},
		{tDate, `"2024-05-01 10:00"`, `2024-05-01`, false},
		{tDate, `"2023-02-29"`, `null`, true},
		{tDate, `"2024/05/01"`, `null`, true},
		{tDate, `"2024-05-01T"`, `2024-05-01`, false},
		{tDate, `"2024-5-1 junk"`, `2024-05-01`, false},
		{tDate, `"-1"`, `1969-12-31`, false}, // days since the epoch, when not a year
		{tDate, `20240501`, `null`, true},

		{tTS, `"2024-01-02T03:04:05.123Z"`, `2024-01-02T03:04:05.123Z`, false},
		{tTS, `"2024-01-02T03:04:05+01:00"`, `2024-01-02T02:04:05Z`, false},
		{tTS, `"2024-01-02T03:04:05-0130"`, `2024-01-02T04:34:05Z`, false},
		{tTS, `"2024-01-02 03:04:05"`, `2024-01-02T03:04:05Z`, false},
		{tTS, `"2024-01-02T03:04"`, `2024-01-02T03:04:00Z`, false},
		{tTS, `"2024-01-02T03:04:05.1234567Z"`, `2024-01-02T03:04:05.123456Z`, false},
		{tTS, `"2024-01-02"`, `2024-01-02T00:00:00Z`, false},
		{tTS, `"1960-01-02T03:04:05.5Z"`, `1960-01-02T03:04:05.5Z`, false},
		{tTS, `1704164645`, `2024-01-02T03:04:05Z`, false},
		{tTS, `-1`, `1969-12-31T23:59:59Z`, false},
		{tTS, `1704164645.25`, `null`, true},
		{tTS, `9223372036855`, `null`, true},
		{tTS, `1e30`, `null`, true},
		{tTS, `"2024-01-02T25:00:00Z"`, `null`, true},
		{tTS, `"2024-01-02T03:04:05+01:00:00"`, `2024-01-02T02:04:05Z`, false},
		{tTS, `"2024-1-2 3:4:5 GMT+1"`, `2024-01-02T02:04:05Z`, false},
		{tTS, `"2024-01-02T03:04:05 Europe/Paris"`, `null`, true}, // region zones are not supported
		{tTS, `"yesterday"`, `null`, true},
		{tNTZ, `"2024-01-02T03:04:05.5"`, `2024-01-02T03:04:05.5`, false},
		{tNTZ, `"2024-01-02T03:04:05Z"`, `null`, true},
		{tNTZ, `1704164645`, `null`, true},

		{tArr(tInt), `[1, 2 ,3]`, `[1 2 3]`, false},
		{tArr(tInt), `[]`, `[]`, false},
		{tArr(tInt), `[null]`, `[null]`, false},
		{tArr(tInt), `[1,"x",3]`, `null`, true}, // one bad element nulls the array
		{tArr(tInt), `"x"`, `null`, true},
		{tArr(tInt), `{"a":1}`, `null`, true},
		{tArr(tArr(tInt)), `[[1],[],null,[2,3]]`, `[[1] [] null [2 3]]`, false},

		{tMap(tString, tInt), `{"a":1,"b":null}`, `{"a":1,"b":null}`, false},
		{tMap(tString, tInt), `{}`, `{}`, false},
		{tMap(tString, tInt), `{"a":"x","b":2}`, `null`, true},
		{tMap(tString, tInt), `[1]`, `null`, true},
		{tMap(tString, tInt), `{"a\"b":1}`, `{"a\"b":1}`, false},
		{tMap(tInt, tString), `{"1":"a","-2":"c"}`, `{1:"a",-2:"c"}`, false},
		{tMap(tInt, tString), `{"1":"a","x":"b"}`, `null`, true},
		{tMap(tBool, tInt), `{"true":1}`, `{true:1}`, false},
		{tMap(tDate, tInt), `{"2024-01-02":1}`, `{2024-01-02:1}`, false},
		{tMap(tDouble, tInt), `{"NaN":1,"1.5":2}`, `{NaN:1,1.5:2}`, false},
		{tMap(tArr(tInt), tInt), `{"[1]":1}`, `null`, true},

		{tStruct(null("a", tInt), null("b", tString)), `{"a":1}`, `{a=1 b=null}`, false},
		{tStruct(null("a", tInt), null("b", tString)), `{"b":"x","c":[9],"a":2}`, `{a=2 b="x"}`, false},
		{tStruct(null("a", tInt), null("b", tString)), `{"a":1,"a":2}`, `{a=2 b=null}`, false},
		{tStruct(null("a", tInt), null("b", tString)), `{"a":1,"a":null}`, `{a=null b=null}`, false},
		{tStruct(null("a", tInt), null("b", tString)), `{"a":1,"a":"x"}`, `{a=1 b=null}`, true}, // Spark keeps the value that fit
		{tStruct(null("a", tInt), null("b", tString)), `{"a":"x","b":"y"}`, `{a=null b="y"}`, true},
		{tStruct(null("a", tInt), null("b", tString)), `5`, `null`, true},
		{tStruct(null("a", tInt), null("b", tString)), `{}`, `{a=null b=null}`, false},
		{tStruct(notNull("a", tInt)), `{"a":1}`, `{a=1}`, false},
		{tStruct(notNull("a", tInt)), `{}`, `{a=null}`, true},
		{tStruct(notNull("a", tInt)), `{"a":null}`, `{a=null}`, true},
		{tStruct(notNull("a", tInt)), `{"a":"x"}`, `{a=null}`, true},
		{tStruct(notNull("a", tInt)), `{"a":1,"a":null}`, `{a=null}`, true},
		{tStruct(notNull("a", tInt)), `{"a":null,"a":1}`, `{a=1}`, false},
		{
			tArr(tStruct(null("a", tInt), null("m", tMap(tString, tArr(tLong))))),
			`[{"m":{"x":[1,2],"y":[]},"a":1},null,{},{"m":{"z":null}}]`,
			`[{a=1 m={"x":[1 2],"y":[]}} null {a=null m=null} {a=null m={"z":null}}]`, false,
		},
	}
	for _, tc := range tests {
		t.Run(kindNames[tc.typ.Kind]+" "+tc.in, func(t *testing.T) {
			doc := `{"f":` + tc.in + `}`
			cols, st := decodeRow(t, jsonValue(null("f", tc.typ)), record.Record{Value: []byte(doc)})
			if cols["f"] != tc.want {
				t.Errorf("f = %s, want %s", cols["f"], tc.want)
			}
			checkCorrupt(t, cols, st, tc.corrupt, doc)
		})
	}
}

// kindNames names kinds in test names.
var kindNames = map[schema.Kind]string{
	schema.Boolean: "BOOLEAN", schema.Byte: "TINYINT", schema.Short: "SMALLINT", schema.Int: "INT",
	schema.Long: "BIGINT", schema.Float: "FLOAT", schema.Double: "DOUBLE", schema.Decimal: "DECIMAL",
	schema.String: "STRING", schema.Binary: "BINARY", schema.Date: "DATE", schema.Timestamp: "TIMESTAMP",
	schema.TimestampNTZ: "TIMESTAMP_NTZ", schema.Array: "ARRAY", schema.Map: "MAP", schema.Struct: "STRUCT",
}

// checkCorrupt asserts _corrupt_record (raw when corrupt, else null) and
// the corrupt count.
func checkCorrupt(t *testing.T, cols map[string]string, st Stats, corrupt bool, raw string) {
	t.Helper()
	want, wantN := "null", 0
	if corrupt {
		want, wantN = fmt.Sprintf("b%q", raw), 1
	}
	if got := cols[spec.CorruptRecordColumn]; got != want {
		t.Errorf("_corrupt_record = %s, want %s", got, want)
	}
	if st.Corrupt != wantN {
		t.Errorf("Stats.Corrupt = %d, want %d", st.Corrupt, wantN)
	}
}

// TestJSONKeys checks that a key finds its field however the document
// spells it: as the field's bytes, which are compared without scanning
// the string, or escaped, single-quoted, with whitespace around the colon,
// or as a longer or shorter name, which are scanned and looked up. Fields
// whose names a document cannot spell plainly, and names declared twice,
// are found too.
func TestJSONKeys(t *testing.T) {
	l := jsonValue(null("a", tLong), null("name", tString), null(`q"t`, tLong), null(`b\s`, tLong), null("é", tLong))
	tests := []struct{ in, want string }{
		{`{"a":1,"name":"x","q\"t":2,"b\\s":3,"é":4}`, `a=1 name="x" q"t=2 b\s=3 é=4`},
		{`{ "a" : 1 , "name"	:"x"}`, `a=1 name="x" q"t=null b\s=null é=null`},
		{`{"\u0061":1,"n\u0061me":"x","\u00e9":4}`, `a=1 name="x" q"t=null b\s=null é=4`},
		{`{'a':1,'name':'x'}`, `a=1 name="x" q"t=null b\s=null é=null`},
		{`{"name":"x","a":1}`, `a=1 name="x" q"t=null b\s=null é=null`},
		{`{"aa":1,"nam":"y","names":"z","a":2}`, `a=2 name=null q"t=null b\s=null é=null`},
		{`{"a::":"x","a":2}`, `a=2 name=null q"t=null b\s=null é=null`},
	}
	for _, tc := range tests {
		cols, st := decodeRow(t, l, record.Record{Value: []byte(tc.in)})
		if st.Corrupt != 0 {
			t.Errorf("%s: corrupt", tc.in)
		}
		var got []string
		for _, f := range l.Value.Fields {
			got = append(got, f.Name+"="+cols[f.Name])
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.in, g, tc.want)
		}
	}
	// A name declared twice finds its last field, even where the first is
	// the field expected next.
	dup := jsonValue(null("s", tStruct(null("a", tLong), null("b", tLong), null("a", tString))))
	if cols, st := decodeRow(t, dup, record.Record{Value: []byte(`{"s":{"a":"x","b":2}}`)}); cols["s"] != `{a=null b=2 a="x"}` || st.Corrupt != 0 {
		t.Errorf(`a declared twice: s = %s, %d corrupt; want {a=null b=2 a="x"}, none`, cols["s"], st.Corrupt)
	}
	// A key spelled plainly but not followed by a colon is malformed.
	if _, st := decodeRow(t, l, record.Record{Value: []byte(`{"a" 1}`)}); st.Corrupt != 1 {
		t.Errorf(`{"a" 1}: want corrupt`)
	}
}
