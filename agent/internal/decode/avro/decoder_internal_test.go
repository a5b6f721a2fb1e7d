package avro

import (
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows/rowstest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema/avroschema"
)

// mustParse parses an Avro schema or fails the test.
func mustParse(t testing.TB, text string) avro.Schema {
	t.Helper()
	s, err := avroschema.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// decodeRow decodes data, written with writer and read as reader, into a
// row whose columns are a leading "pre" column and cols (reader's own when
// nil), and renders it.
func decodeRow(t testing.TB, writer, reader avro.Schema, cols []schema.Field, data []byte) (map[string]string, error) {
	t.Helper()
	if cols == nil {
		var err error
		if cols, err = avroschema.Columns(reader, "value"); err != nil {
			t.Fatal(err)
		}
	}
	d, err := NewDecoder(writer, reader, cols, "value", nil)
	if err != nil {
		t.Fatal(err)
	}
	all := append([]schema.Field{{Name: "pre", Type: &schema.Type{Kind: schema.Long}, Nullable: true}}, cols...)
	b, err := rows.NewBuilder(all)
	if err != nil {
		t.Fatal(err)
	}
	b.BeginRow()
	b.Field(0)
	b.Int64(7)
	if err := d.Decode(b, 1, data); err != nil {
		b.DiscardFields(1, len(all))
		if err := b.EndRow(); err != nil {
			t.Fatalf("EndRow after DiscardFields: %v", err)
		}
		return nil, err
	}
	if err := b.EndRow(); err != nil {
		t.Fatalf("EndRow: %v", err)
	}
	got, err := rowstest.Render(b.Schema(), rowstest.Rows(b.Columns())[0])
	if err != nil {
		t.Fatal(err)
	}
	if got["pre"] != "7" {
		t.Errorf("pre = %s, want 7", got["pre"])
	}
	return got, nil
}

// marshal encodes v with schema s.
func marshal(t testing.TB, s avro.Schema, v any) []byte {
	t.Helper()
	data, err := avro.Marshal(s, v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// check compares rendered columns with want.
func check(t *testing.T, got, want map[string]string) {
	t.Helper()
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %s, want %s", k, got[k], w)
		}
	}
}

const allTypes = `{"type":"record","name":"All","namespace":"t","fields":[
	{"name":"b","type":"boolean"},
	{"name":"i","type":"int"},
	{"name":"l","type":"long"},
	{"name":"f","type":"float"},
	{"name":"d","type":"double"},
	{"name":"s","type":"string"},
	{"name":"by","type":"bytes"},
	{"name":"fx","type":{"type":"fixed","name":"F3","size":3}},
	{"name":"e","type":{"type":"enum","name":"Color","symbols":["RED","GREEN"]}},
	{"name":"u","type":{"type":"string","logicalType":"uuid"}},
	{"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
	{"name":"dec18","type":{"type":"bytes","logicalType":"decimal","precision":18,"scale":0}},
	{"name":"dec38","type":{"type":"fixed","name":"D16","size":16,"logicalType":"decimal","precision":38,"scale":3}},
	{"name":"date","type":{"type":"int","logicalType":"date"}},
	{"name":"tms","type":{"type":"int","logicalType":"time-millis"}},
	{"name":"tus","type":{"type":"long","logicalType":"time-micros"}},
	{"name":"tsm","type":{"type":"long","logicalType":"timestamp-millis"}},
	{"name":"tsu","type":{"type":"long","logicalType":"timestamp-micros"}},
	{"name":"ltm","type":{"type":"long","logicalType":"local-timestamp-millis"}},
	{"name":"opt","type":["null","string"]},
	{"name":"optnull","type":["string","null"]},
	{"name":"il","type":["int","long"]},
	{"name":"multi","type":["null","string","int",{"type":"array","items":"string"}]},
	{"name":"arr","type":{"type":"array","items":["null",{"type":"record","name":"Item","fields":[{"name":"q","type":"int"}]}]}},
	{"name":"m","type":{"type":"map","values":{"type":"array","items":"long"}}},
	{"name":"rec","type":{"type":"record","name":"Inner","fields":[{"name":"x","type":"double"},{"name":"y","type":"Color"}]}}
]}`

// TestRoundTrip encodes a record of every type with hamba/avro and checks
// what the Decoder writes.
func TestRoundTrip(t *testing.T) {
	s := mustParse(t, allTypes)
	ts := time.Date(2024, 5, 1, 12, 34, 56, 789000000, time.UTC)
	v := map[string]any{
		"b": true, "i": -5, "l": int64(1) << 40, "f": float32(1.5), "d": 2.25, "s": "héllo",
		"by": []byte{0, 1, 0xff}, "fx": [3]byte{'a', 'b', 'c'}, "e": "GREEN",
		"u":     "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
		"dec":   big.NewRat(-12345, 100),
		"dec18": big.NewRat(123456789012345678, 1),
		"dec38": new(big.Rat).SetFrac(new(big.Int).Neg(new(big.Int).Exp(big.NewInt(10), big.NewInt(37), nil)), big.NewInt(1000)),
		"date":  time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC), "tms": 3 * time.Second, "tus": 4 * time.Microsecond,
		"tsm": ts, "tsu": ts, "ltm": ts,
		"opt": "x", "optnull": nil, "il": map[string]any{"long": int64(1) << 35},
		"multi": map[string]any{"array": []any{"p", "q"}},
		"arr":   []any{nil, map[string]any{"t.Item": map[string]any{"q": 3}}},
		// One entry: hamba/avro writes a Go map's entries in random order.
		"m":   map[string]any{"k": []any{int64(1), int64(2)}},
		"rec": map[string]any{"x": -0.5, "y": "RED"},
	}
	got, err := decodeRow(t, s, s, nil, marshal(t, s, v))
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, map[string]string{
		"b": "true", "i": "-5", "l": "1099511627776", "f": "1.5", "d": "2.25", "s": `"héllo"`,
		"by": `b"\x00\x01\xff"`, "fx": `b"abc"`, "e": `"GREEN"`, "u": `"6ba7b810-9dad-11d1-80b4-00c04fd430c8"`,
		"dec": "-123.45", "dec18": "123456789012345678", "dec38": "-10000000000000000000000000000000000.000",
		"date": "2024-05-01", "tms": "3000", "tus": "4",
		"tsm": "2024-05-01T12:34:56.789Z", "tsu": "2024-05-01T12:34:56.789Z", "ltm": "2024-05-01T12:34:56.789",
		"opt": `"x"`, "optnull": "null", "il": "34359738368",
		"multi": `{member0=null member1=null member2=["p" "q"]}`,
		"arr":   "[null {q=3}]", "m": `{"k":[1 2]}`, "rec": `{x=-0.5 y="RED"}`,
	})
}

// TestTopLevelNonRecord checks a schema other than a record: one column.
func TestTopLevelNonRecord(t *testing.T) {
	s := mustParse(t, `["null","long"]`)
	got, err := decodeRow(t, s, s, nil, marshal(t, s, int64(-3)))
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, map[string]string{"value": "-3"})
	got, err = decodeRow(t, s, s, nil, []byte{0})
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, map[string]string{"value": "null"})
}

// TestResolution checks schema resolution between writer and reader.
func TestResolution(t *testing.T) {
	writer := mustParse(t, `{"type":"record","name":"R","fields":[
		{"name":"id","type":"int"},
		{"name":"gone","type":{"type":"record","name":"G","fields":[{"name":"a","type":{"type":"array","items":{"type":"map","values":"string"}}},{"name":"u","type":["null","G"]}]}},
		{"name":"f","type":"float"},
		{"name":"l","type":"long"},
		{"name":"s","type":"string"},
		{"name":"by","type":"bytes"},
		{"name":"color","type":{"type":"enum","name":"C","symbols":["RED","BLUE","PINK"]}},
		{"name":"maybe","type":["null","int"]},
		{"name":"old_name","type":"string"},
		{"name":"tail","type":"int"}]}`)
	reader := mustParse(t, `{"type":"record","name":"R","fields":[
		{"name":"id","type":"long"},
		{"name":"f","type":"double"},
		{"name":"l","type":"double"},
		{"name":"s","type":"bytes"},
		{"name":"by","type":"string"},
		{"name":"color","type":{"type":"enum","name":"C","symbols":["RED","BLUE","OTHER"],"default":"OTHER"}},
		{"name":"maybe","type":"long"},
		{"name":"new_name","aliases":["old_name"],"type":"string"},
		{"name":"added","type":"string","default":"dflt"},
		{"name":"added_null","type":["null","int"],"default":null},
		{"name":"added_ts","type":{"type":"long","logicalType":"timestamp-millis"},"default":1500},
		{"name":"added_rec","type":{"type":"record","name":"AR","fields":[{"name":"n","type":"int","default":4},{"name":"arr","type":{"type":"array","items":"string"}}]},"default":{"arr":["z"]}},
		{"name":"added_dec","type":{"type":"bytes","logicalType":"decimal","precision":5,"scale":1},"default":"\u0001\u0000"},
		{"name":"added_enum","type":"C","default":"BLUE"},
		{"name":"tail","type":"int"}]}`)
	v := map[string]any{
		"id": 3, "gone": map[string]any{"a": []any{map[string]any{"k": "v"}}, "u": map[string]any{"G": map[string]any{"a": []any{}, "u": nil}}},
		"f": float32(0.25), "l": int64(9), "s": "str", "by": []byte("byt"), "color": "PINK", "maybe": 8, "old_name": "renamed", "tail": 11,
	}
	got, err := decodeRow(t, writer, reader, nil, marshal(t, writer, v))
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, map[string]string{
		"id": "3", "f": "0.25", "l": "9", "s": `b"str"`, "by": `"byt"`, "color": `"OTHER"`, "maybe": "8",
		"new_name": `"renamed"`, "added": `"dflt"`, "added_null": "null", "added_ts": "1970-01-01T00:00:01.5Z",
		"added_rec": `{n=4 arr=["z"]}`, "added_dec": "25.6", "added_enum": `"BLUE"`, "tail": "11",
	})
	// The nullable writer union's null branch cannot be read as a long.
	v["maybe"] = nil
	if _, err := decodeRow(t, writer, reader, nil, marshal(t, writer, v)); err == nil || !strings.Contains(err.Error(), "field maybe") {
		t.Errorf("null read as long: error %v", err)
	}
}

// TestResolutionColumns checks reading into table columns that differ from
// the reader's: more columns, wider types, and the errors.
func TestResolutionColumns(t *testing.T) {
	s := mustParse(t, `{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"f","type":"float"}]}`)
	data := marshal(t, s, map[string]any{"a": 1, "f": float32(2)})
	long, double := &schema.Type{Kind: schema.Long}, &schema.Type{Kind: schema.Double}
	cols := []schema.Field{{Name: "extra", Type: long, Nullable: true}, {Name: "A", Type: long, Nullable: true}, {Name: "f", Type: double, Nullable: true}}
	got, err := decodeRow(t, s, s, cols, data)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, map[string]string{"extra": "null", "A": "1", "f": "2"})

	for _, tc := range []struct {
		cols []schema.Field
		want string
	}{
		{[]schema.Field{{Name: "a", Type: long, Nullable: true}}, "field f: the table has no column"},
		{[]schema.Field{{Name: "a", Type: &schema.Type{Kind: schema.String}, Nullable: true}, {Name: "f", Type: double, Nullable: true}}, "field a: the reader's INT does not fit the column's STRING"},
		{append(cols, schema.Field{Name: "req", Type: long}), "field req: the column is NOT NULL"},
	} {
		if _, err := NewDecoder(s, s, tc.cols, "value", nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
	for _, tc := range []struct{ w, r, want string }{
		{`{"type":"record","name":"R","fields":[{"name":"a","type":"long"}]}`, `{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}`, "field a: the writer's long cannot be read as the reader's int"},
		{`{"type":"record","name":"R","fields":[]}`, `{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}`, "field a: the writer's schema lacks it"},
		{`{"type":"record","name":"R","fields":[{"name":"a","type":"string"}]}`, `{"type":"record","name":"R","fields":[{"name":"a","type":["null","int"]}]}`, "field a"},
		{`{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"bytes","logicalType":"decimal","precision":5,"scale":2}}]}`,
			`{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"bytes","logicalType":"decimal","precision":5,"scale":3}}]}`, "decimal scale 2"},
	} {
		w, r := mustParse(t, tc.w), mustParse(t, tc.r)
		cols, err := avroschema.Columns(r, "value")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewDecoder(w, r, cols, "value", nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s as %s: error %v, want %q", tc.w, tc.r, err, tc.want)
		}
	}
}

// TestUnionResolution checks a writer union read as a reader's non-union
// type and a writer value read as a reader's union.
func TestUnionResolution(t *testing.T) {
	w := mustParse(t, `{"type":"record","name":"R","fields":[{"name":"u","type":["int","string"]},{"name":"v","type":"int"}]}`)
	r := mustParse(t, `{"type":"record","name":"R","fields":[{"name":"u","type":"string"},{"name":"v","type":["null","string","long"]}]}`)
	got, err := decodeRow(t, w, r, nil, marshal(t, w, map[string]any{"u": map[string]any{"string": "s"}, "v": 5}))
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, map[string]string{"u": `"s"`, "v": "{member0=null member1=5}"})
	_, err = decodeRow(t, w, r, nil, marshal(t, w, map[string]any{"u": map[string]any{"int": 1}, "v": 5}))
	if err == nil || !strings.Contains(err.Error(), "field u") {
		t.Errorf("unresolvable branch: error %v", err)
	}
}

// TestMalformed checks that malformed data fails with the field and offset.
func TestMalformed(t *testing.T) {
	s := mustParse(t, `{"type":"record","name":"R","fields":[
		{"name":"i","type":"int"},
		{"name":"s","type":"string"},
		{"name":"u","type":["null","long"]},
		{"name":"a","type":{"type":"array","items":"long"}},
		{"name":"n","type":{"type":"array","items":{"type":"fixed","name":"Z","size":0}}},
		{"name":"b","type":"boolean"},
		{"name":"e","type":{"type":"enum","name":"E","symbols":["X"]}},
		{"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":3,"scale":0}}]}`)
	good := []byte{2, 2, 'x', 0, 2, 4, 0, 0, 1, 0, 4, 0x03, 0xe7} // i=1 s="x" u=null a=[2] n=[] b=true e=X d=999
	if _, err := decodeRow(t, s, s, nil, good); err != nil {
		t.Fatalf("good datum: %v", err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "field i at byte 0: truncated"},
		{"truncated", good[:len(good)-1], "field d at byte 11: length past the end"},
		{"trailing", append(good[:len(good):len(good)], 0), "the datum at byte 13: bytes left"},
		{"bad varint", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, "varint longer than 10 bytes"},
		{"int range", []byte{0x80, 0x80, 0x80, 0x80, 0x20}, "field i at byte 5: int out of range"},
		{"negative length", []byte{2, 1}, "field s at byte 2: negative length"},
		{"length past end", []byte{2, 0x7e, 'x'}, "field s at byte 2: length past the end"},
		{"invalid utf-8", []byte{2, 2, 0xff}, "field s at byte 3: invalid UTF-8"},
		{"union index", []byte{2, 2, 'x', 4}, "field u at byte 4: union index 2 out of range"},
		{"negative union index", []byte{2, 2, 'x', 1}, "union index -1"},
		{"block count", []byte{2, 2, 'x', 0, 0x7e, 2}, "field a at byte 5: block count past the end"},
		{"negative block size", []byte{2, 2, 'x', 0, 1, 1}, "negative block size"},
		{"block size past end", []byte{2, 2, 'x', 0, 1, 0x7e, 4}, "block size past the end"},
		{"free items", []byte{2, 2, 'x', 0, 0, 0xfe, 0xff, 0xff, 0xff, 0x0f}, "field n at byte 10: too many items"},
		{"boolean", []byte{2, 2, 'x', 0, 0, 0, 2}, "field b at byte 6: boolean byte"},
		{"enum index", []byte{2, 2, 'x', 0, 0, 0, 1, 2}, "field e at byte 8: enum index 1"},
		{"decimal precision", []byte{2, 2, 'x', 0, 0, 0, 1, 0, 4, 0x03, 0xe8}, "field d at byte 11: decimal out of its column's precision"},
		{"empty decimal", []byte{2, 2, 'x', 0, 0, 0, 1, 0, 0}, "empty decimal"},
	} {
		_, err := decodeRow(t, s, s, nil, tc.data)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestSkipBlocks checks that skipped arrays and maps in blocks with byte
// sizes, and recursive records, are passed over.
func TestSkipBlocks(t *testing.T) {
	w := mustParse(t, `{"type":"record","name":"R","fields":[
		{"name":"skip","type":{"type":"array","items":{"type":"map","values":"string"}}},
		{"name":"list","type":{"type":"record","name":"L","fields":[{"name":"next","type":["null","L"]}]}},
		{"name":"keep","type":{"type":"array","items":"int"}}]}`)
	r := mustParse(t, `{"type":"record","name":"R","fields":[{"name":"keep","type":{"type":"array","items":"int"}}]}`)
	data := []byte{
		1, 12, 2, 2, 'k', 2, 'v', 0, 0, // skip: a block of -1 items in 6 bytes, {k:v}, then the end
		2, 2, 0, // list: next → next → null
		3, 4, 2, 4, 0, // keep: a block of -2 items in 2 bytes: 1, 2
	}
	got, err := decodeRow(t, w, r, nil, data)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, map[string]string{"keep": "[1 2]"})
}
