package protobuf

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode/protobuf/protobuftest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows/rowstest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema/protoschema"
)

// eventFull sets every field of Event.
const eventFull = `{
  "i32": -1, "s32": -2, "sf32": -3, "u32": 4294967295, "f32": 2147483648,
  "i64": "-4", "s64": "-5", "sf64": "-6", "u64": "18446744073709551615", "f64": "7",
  "fl": 1.5, "db": -2.25, "b": true, "s": "héllo", "by": "AAEC", "kind": "VIEW",
  "item": {"sku": "a", "qty": 1},
  "tags": ["x", "", "z"],
  "items": [{"sku": "b"}, {}, {"qty": 3}],
  "counts": {"zz": "1", "aa": "2", "mm": "0"},
  "byId": {"7": {"sku": "s7"}, "-1": {}},
  "text": "chosen",
  "ts": "2024-05-01T12:34:56.789123456Z",
  "wDouble": 1.25, "wFloat": 2.5, "wInt64": "-64", "wUint64": "64", "wInt32": -32, "wUint32": 32,
  "wBool": true, "wString": "w", "wBytes": "Bw==",
  "opt": 35,
  "source": {"host": "h", "port": 9092},
  "times": ["1970-01-01T00:00:00Z", "1969-12-31T23:59:59.999999Z"],
  "kinds": ["CLICK", "KIND_UNSPECIFIED", 9],
  "flags": {"true": 1, "false": 0}
}`

func TestDecodeRoundTrip(t *testing.T) {
	md := message(t, "Event")
	// parquet-go assembles maps with keys other than strings into Go maps
	// wrongly, and BINARY as strings: TestDecodeMapKeys checks flags and
	// by_id.
	cols := slices.DeleteFunc(columns(t, md, -1), func(f schema.Field) bool { return f.Name == "flags" || f.Name == "by_id" })
	d, err := NewDecoder(md, -1, cols)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"every field", eventFull, `{"b":true,"by":"\u0000\u0001\u0002",` +
			`"counts":{"aa":2,"mm":0,"zz":1},"db":-2.25,"f32":-2147483648,"f64":7,"fl":1.5,` +
			`"i32":-1,"i64":-4,"item":{"qty":1,"sku":"a"},"items":[{"qty":null,"sku":"b"},{"qty":null,"sku":null},{"qty":3,"sku":null}],` +
			`"kind":"VIEW","kinds":["CLICK","KIND_UNSPECIFIED","UNKNOWN_ENUM_VALUE_Kind_9"],"number":null,"opt":35,"picked":null,"s":"héllo","s32":-2,"s64":-5,` +
			`"sf32":-3,"sf64":-6,"source":{"host":"h","port":9092},"tags":["x","","z"],"text":"chosen","times":[0,-1],` +
			`"ts":1714566896789123,"u32":-1,"u64":-1,"w_bool":true,"w_bytes":"\u0007","w_double":1.25,"w_float":2.5,` +
			`"w_int32":-32,"w_int64":-64,"w_string":"w","w_uint32":32,"w_uint64":64}`},
		// proto3 zero values are not on the wire: null, as in Spark; fields
		// with presence (optional, messages, wrappers, oneof members) keep
		// their zero values; repeated and map fields are empty, not null.
		{"zero values", `{"i32": 0, "s": "", "b": false, "kind": "KIND_UNSPECIFIED", "opt": 0, "item": {}, "number": "0",
			"ts": "1970-01-01T00:00:00Z", "wInt32": 0, "wString": "", "wBool": false, "tags": []}`,
			`{"b":null,"by":null,"counts":{},"db":null,"f32":null,"f64":null,"fl":null,"i32":null,"i64":null,` +
				`"item":{"qty":null,"sku":null},"items":[],"kind":null,"kinds":[],"number":0,"opt":0,"picked":null,"s":null,"s32":null,` +
				`"s64":null,"sf32":null,"sf64":null,"source":null,"tags":[],"text":null,"times":[],"ts":0,"u32":null,"u64":null,` +
				`"w_bool":false,"w_bytes":null,"w_double":null,"w_float":null,"w_int32":0,"w_int64":null,"w_string":"","w_uint32":null,` +
				`"w_uint64":null}`},
		{"oneof message", `{"picked": {"sku": "p"}, "kind": 5}`,
			`{"b":null,"by":null,"counts":{},"db":null,"f32":null,"f64":null,"fl":null,"i32":null,"i64":null,` +
				`"item":null,"items":[],"kind":"UNKNOWN_ENUM_VALUE_Kind_5","kinds":[],"number":null,"opt":null,"picked":{"qty":null,"sku":"p"},"s":null,"s32":null,` +
				`"s64":null,"sf32":null,"sf64":null,"source":null,"tags":[],"text":null,"times":[],"ts":null,"u32":null,"u64":null,` +
				`"w_bool":null,"w_bytes":null,"w_double":null,"w_float":null,"w_int32":null,"w_int64":null,"w_string":null,"w_uint32":null,` +
				`"w_uint64":null}`},
	} {
		got, err := decodeRow(t, d, cols, protobuftest.Encode(t, md, tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
		} else if got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// TestDecodeMapKeys checks maps keyed by bool and int, sorted by key, in
// the values of their leaf columns (keys, then values).
func TestDecodeMapKeys(t *testing.T) {
	md := message(t, "Event")
	cols := slices.DeleteFunc(columns(t, md, -1), func(f schema.Field) bool { return f.Name != "flags" && f.Name != "by_id" })
	d, err := NewDecoder(md, -1, cols)
	if err != nil {
		t.Fatal(err)
	}
	b, err := rows.NewBuilder(cols)
	if err != nil {
		t.Fatal(err)
	}
	b.BeginRow()
	if err := d.Decode(b, 0, protobuftest.Encode(t, md, eventFull)); err != nil {
		t.Fatal(err)
	}
	if err := b.EndRow(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range rowstest.Rows(b.Columns())[0] {
		got = append(got, v.String())
	}
	if want := "-1 7 <null> s7 <null> <null> false true 0 1"; strings.Join(got, " ") != want {
		t.Errorf("by_id and flags keys and values %v, want %s", got, want)
	}
}

func TestDecodeRecursive(t *testing.T) {
	md := message(t, "Node")
	in := `{"name": "root", "children": [{"name": "a", "children": [{"name": "a1", "children": [{"name": "deep"}]}]}, {"name": "b"}]}`
	for depth, want := range map[int]string{
		0: `{"name":"root"}`,
		1: `{"children":[{"name":"a"},{"name":"b"}],"name":"root"}`,
		2: `{"children":[{"children":[{"name":"a1"}],"name":"a"},{"children":[],"name":"b"}],"name":"root"}`,
	} {
		cols := columns(t, md, depth)
		d, err := NewDecoder(md, depth, cols)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeRow(t, d, cols, protobuftest.Encode(t, md, in))
		if err != nil || got != want {
			t.Errorf("depth %d: %s, %v; want %s", depth, got, err, want)
		}
	}
	if _, err := NewDecoder(md, -1, nil); !errors.Is(err, protoschema.ErrRecursive) {
		t.Errorf("depth -1: error %v", err)
	}
}

func TestDecodeProto2Defaults(t *testing.T) {
	fd := compile(t, `syntax = "proto2";
package p;
message M {
  optional int32 plain = 1;
  optional int32 seven = 2 [default = 7];
  optional string named = 3 [default = "x"];
  optional E e = 4 [default = B];
  required int64 r = 5;
  enum E { A = 1; B = 2; }
}
`, nil)
	md := fd.Messages().Get(0)
	cols := columns(t, md, -1)
	d, err := NewDecoder(md, -1, cols)
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		`{"r": "1"}`:                         `{"e":"B","named":"x","plain":null,"r":1,"seven":7}`,
		`{"r": "0", "plain": 0, "seven": 0}`: `{"e":"B","named":"x","plain":0,"r":0,"seven":0}`,
	} {
		got, err := decodeRow(t, d, cols, protobuftest.Encode(t, md, in))
		if err != nil || got != want {
			t.Errorf("%s: %s, %v; want %s", in, got, err, want)
		}
	}
	// A required field missing fails the record, as Spark's parsing does.
	if _, err := decodeRow(t, d, cols, nil); err == nil || !strings.Contains(err.Error(), "required field p.M.r not set") {
		t.Errorf("missing required field: error %v", err)
	}
}

// TestDecodeClosedEnum checks that a number a closed (proto2) enum lacks is
// an unknown field, as protobuf parses it (and Spark reads it): a single
// field keeps its earlier value, or its default, or stays null; a list
// leaves the number out; a map entry's value stays its default; a oneof
// member does not replace the other; a required field is still missing.
func TestDecodeClosedEnum(t *testing.T) {
	fd := compile(t, `syntax = "proto2";
package p;
message M {
  optional E plain = 1;
  optional E dark = 2 [default = DARK];
  repeated E list = 3;
  repeated E packed = 4 [packed = true];
  map<string, E> by_name = 5;
  oneof pick { E picked = 6; string other = 7; }
  enum E { LIGHT = 1; DARK = 2; }
}
message R { required E r = 1; enum E { A = 1; } }
`, nil)
	d, cols := decoder(t, fd.Messages().Get(0))
	varint := func(b []byte, num protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), v)
	}
	var in []byte
	in = varint(in, 1, 9) // plain: unknown, stays null
	in = varint(in, 2, 1) // dark: LIGHT
	in = varint(in, 2, 9) // dark: unknown, stays LIGHT
	in = varint(in, 3, 1) // list: LIGHT
	in = varint(in, 3, 9) // list: unknown, left out
	in = varint(in, 3, 2) // list: DARK
	in = protowire.AppendTag(in, 4, protowire.BytesType)
	in = protowire.AppendBytes(in, []byte{2, 9, 1}) // packed: DARK, unknown, LIGHT
	entry := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "k")
	entry = varint(entry, 2, 9)
	in = protowire.AppendBytes(protowire.AppendTag(in, 5, protowire.BytesType), entry) // by_name: k → LIGHT, the default
	in = protowire.AppendString(protowire.AppendTag(in, 7, protowire.BytesType), "o")
	in = varint(in, 6, 9) // picked: unknown, other stays
	// (parquet-go assembles the map's STRING values as base64: "TElHSFQ=" is
	// LIGHT.)
	want := `{"by_name":{"k":"TElHSFQ="},"dark":"LIGHT","list":["LIGHT","DARK"],"other":"o","packed":["DARK","LIGHT"],"picked":null,"plain":null}`
	if got, err := decodeRow(t, d, cols, in); err != nil || got != want {
		t.Errorf("got %s, %v\nwant %s", got, err, want)
	}
	// Without the earlier value, dark reads as its default.
	if got, err := decodeRow(t, d, cols, varint(nil, 2, 9)); err != nil || !strings.Contains(got, `"dark":"DARK"`) {
		t.Errorf("dark unknown alone: %s, %v", got, err)
	}
	dr, rcols := decoder(t, fd.Messages().Get(1))
	if _, err := decodeRow(t, dr, rcols, varint(nil, 1, 9)); err == nil || !strings.Contains(err.Error(), "required field p.R.r not set") {
		t.Errorf("required closed enum with an unknown number: error %v", err)
	}
}

// TestDecodeProto2InvalidUTF8 checks that a proto2 string that is not
// valid UTF-8, which protobuf does not check in proto2, is read as Spark
// reads it: the broken bytes become U+FFFD, so that a STRING column holds
// only UTF-8. (proto3 refuses it: TestDecodeMalformed.)
func TestDecodeProto2InvalidUTF8(t *testing.T) {
	md := compile(t, `syntax = "proto2";
package p;
message M { optional string s = 1; repeated string l = 2; map<string, string> m = 3; }
`, nil).Messages().Get(0)
	d, cols := decoder(t, md)
	str := func(b []byte, num protowire.Number, s string) []byte {
		return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), s)
	}
	in := str(nil, 1, "a\xffb\xe2\x82")
	in = str(in, 2, "\xc0\xafok")
	in = str(in, 3, string(str(str(nil, 1, "k\xff"), 2, "v\xff")))
	// (parquet-go assembles the map's STRING values as base64: "du+/vQ=="
	// is "v\uFFFD".)
	want := "{\"l\":[\"\uFFFD\uFFFDok\"],\"m\":{\"k\uFFFD\":\"du+/vQ==\"},\"s\":\"a\uFFFDb\uFFFD\"}"
	if got, err := decodeRow(t, d, cols, in); err != nil || got != want {
		t.Errorf("got %s, %v\nwant %s", got, err, want)
	}
}

func TestDecodeColumns(t *testing.T) {
	md := message(t, "Event")
	in := protobuftest.Encode(t, md, eventFull)
	tString, tInt := &schema.Type{Kind: schema.String}, &schema.Type{Kind: schema.Int}
	null := func(name string, t *schema.Type) schema.Field {
		return schema.Field{Name: name, Type: t, Nullable: true}
	}

	// A subset in another order, a column the message lacks, a struct
	// with a field the message lacks and without one it has.
	cols := []schema.Field{
		null("gone", tString), null("s", tString), null("i32", tInt),
		null("source", &schema.Type{Kind: schema.Struct, Fields: []schema.Field{null("old", tInt), null("host", tString)}}),
	}
	d, err := NewDecoder(md, -1, cols)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeRow(t, d, cols, in)
	if want := `{"gone":null,"i32":-1,"s":"héllo","source":{"host":"h","old":null}}`; err != nil || got != want {
		t.Errorf("%s, %v; want %s", got, err, want)
	}

	for _, tc := range []struct {
		col  schema.Field
		want string
	}{
		{null("i32", tString), "column i32 of type STRING cannot hold int32 values of protobuf field tributary.events.Event.i32"},
		{null("ts", &schema.Type{Kind: schema.Long}), "column ts of type BIGINT cannot hold google.protobuf.Timestamp values"},
		{null("tags", tString), "column tags of type STRING cannot hold string values"},
		{null("counts", &schema.Type{Kind: schema.Array, Elem: tString}), "column counts of type ARRAY<STRING> cannot hold"},
		{null("counts", &schema.Type{Kind: schema.Map, Key: tString, Value: tString}), "column counts.value of type STRING cannot hold int64 values"},
		{null("items", &schema.Type{Kind: schema.Array, Elem: tInt}), "column items.element of type INT cannot hold tributary.events.Event.Item values"},
		{null("w_int32", tString), "column w_int32 of type STRING cannot hold int32 values of protobuf field google.protobuf.Int32Value.value"},
		{null("item", &schema.Type{Kind: schema.Struct, Fields: []schema.Field{null("qty", tString)}}), "column item.qty of type STRING"},
		{null("s", nil), "column s of type <nil> cannot hold"},
	} {
		_, err := NewDecoder(md, -1, []schema.Field{tc.col})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.col.Name, err, tc.want)
		}
	}
}

func TestDecodeMalformed(t *testing.T) {
	md := message(t, "Event")
	cols := columns(t, md, -1)
	d, err := NewDecoder(md, -1, cols)
	if err != nil {
		t.Fatal(err)
	}
	full := protobuftest.Encode(t, md, eventFull)
	tag := func(n protowire.Number, typ protowire.Type) []byte { return protowire.AppendTag(nil, n, typ) }
	// A timestamp whose seconds overflow int64 microseconds (protojson
	// would refuse it).
	seconds := protowire.AppendVarint(tag(1, protowire.VarintType), 1<<62)
	for name, data := range map[string][]byte{
		"truncated":                 full[:len(full)-1],
		"truncated varint":          append(tag(1, protowire.VarintType), 0x80),
		"length beyond the end":     append(tag(14, protowire.BytesType), 10, 'a'),
		"field number 0":            {0x00, 0x01},
		"invalid wire type":         tag(1, 7),
		"end group without a start": tag(1, protowire.EndGroupType),
		"group without an end":      tag(1, protowire.StartGroupType),
		"invalid UTF-8 string":      append(tag(14, protowire.BytesType), 1, 0xff),
		"timestamp out of range":    protowire.AppendBytes(tag(25, protowire.BytesType), seconds),
		"timestamp in a list":       protowire.AppendBytes(tag(37, protowire.BytesType), seconds),
		"varint overflow":           append(tag(1, protowire.VarintType), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02),
		"field number too large":    protowire.AppendVarint(protowire.AppendTag(nil, protowire.MaxValidNumber+1, protowire.VarintType), 1),
		"packed varint truncated":   append(tag(38, protowire.BytesType), 2, 0x01, 0x80),
		"truncated fixed32":         append(tag(5, protowire.Fixed32Type), 1, 2, 3),
		"truncated map entry":       append(tag(20, protowire.BytesType), 3, 0x0a, 0x05, 'k'),
		"invalid UTF-8 map key":     append(tag(20, protowire.BytesType), 3, 0x0a, 0x01, 0xff),
		"invalid UTF-8 in a list":   append(tag(18, protowire.BytesType), 1, 0xff),
		"invalid UTF-8 wrapper":     append(tag(33, protowire.BytesType), 3, 0x0a, 0x01, 0xff),
		"invalid UTF-8 nested":      append(tag(17, protowire.BytesType), 3, 0x0a, 0x01, 0xff),
		"unknown groups too deep":   slices.Concat(bytes.Repeat(tag(99, protowire.StartGroupType), 10010), bytes.Repeat(tag(99, protowire.EndGroupType), 10010)),
	} {
		b, err := rows.NewBuilder(cols)
		if err != nil {
			t.Fatal(err)
		}
		b.BeginRow()
		err = d.Decode(b, 0, data)
		if err == nil || !strings.HasPrefix(err.Error(), "decoding tributary.events.Event: ") {
			t.Errorf("%s: error %v", name, err)
		}
		if strings.HasPrefix(name, "timestamp") && !errors.Is(err, errTimestampRange) {
			t.Errorf("%s: error %v, want %v", name, err, errTimestampRange)
		}
		b.DiscardFields(0, len(cols))
		if err := b.EndRow(); err != nil {
			t.Errorf("%s: the row does not end after DiscardFields: %v", name, err)
		}
	}

	// A known field with another wire type is an unknown field, as
	// protobuf specifies: ignored, like unknown fields.
	data := append(tag(1, protowire.BytesType), 1, 'x')
	data = append(data, tag(99, protowire.VarintType)...)
	data = append(data, 5)
	data = append(data, tag(14, protowire.BytesType)...)
	data = append(data, 1, 'k')
	got, err := decodeRow(t, d, cols, data)
	if err != nil || !strings.Contains(got, `"i32":null`) || !strings.Contains(got, `"s":"k"`) {
		t.Errorf("unknown fields: %s, %v", got, err)
	}

	// So is a map key of another wire type, which makes protobuf-go panic
	// (v1.36.12): the entry keeps its first key.
	data = append(tag(20, protowire.BytesType), 10, 0x0a, 0x01, 'k', 0x0d, 1, 2, 3, 4, 0x10, 0x07)
	got, err = decodeRow(t, d, cols, data)
	if err != nil || !strings.Contains(got, `"counts":{"k":7}`) {
		t.Errorf("map key of another wire type: %s, %v", got, err)
	}
}
