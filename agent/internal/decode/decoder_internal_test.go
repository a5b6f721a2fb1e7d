package decode

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows/rowstest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// decodeRows decodes recs with d and returns the batch as rows.
func decodeRows(d *Decoder, recs []record.Record) ([]parquet.Row, Stats, error) {
	b, err := d.Decode(context.Background(), recs)
	if err != nil {
		return nil, Stats{}, err
	}
	rs := rowstest.Rows(b.Columns)
	if len(rs) != b.Rows {
		return nil, Stats{}, fmt.Errorf("the batch's columns hold %d rows, Rows says %d", len(rs), b.Rows)
	}
	return rs, b.Stats, nil
}

// TestJSONDocuments checks the document-level rules: what makes a whole
// key or value corrupt, and which fields keep their values.
func TestJSONDocuments(t *testing.T) {
	layout := jsonValue(null("a", tInt), notNull("b", tString), null("s", tStruct(null("x", tArr(tInt)))))
	tests := []struct {
		name    string
		value   []byte
		want    string // a, b, s
		corrupt bool
	}{
		{"object", []byte(`{"a":1,"b":"x","s":{"x":[1]}}`), `1 "x" {x=[1]}`, false},
		{"whitespace", []byte(" \t\r\n{ \"b\" : \"x\" ,\n\"a\":1 } \n"), `1 "x" null`, false},
		{"unknown keys are ignored", []byte(`{"z":{"deep":[1,{"q":null}],"s":2},"b":"x","a":1}`), `1 "x" null`, false},
		{"keys are case-sensitive", []byte(`{"A":1,"b":"x"}`), `null "x" null`, false},
		{"escaped key", []byte(`{"\u0061":1,"b":"x"}`), `1 "x" null`, false},
		{"duplicate key: last wins", []byte(`{"a":1,"b":"x","a":2,"s":{"x":[1,2]},"s":{"x":[3]}}`), `2 "x" {x=[3]}`, false},
		{"tombstone", nil, `null null null`, false},
		{"empty", []byte{}, `null null null`, false},
		{"blank", []byte("  \n"), `null null null`, false},
		{"NOT NULL missing keeps the others", []byte(`{"a":1}`), `1 null null`, true},
		{"NOT NULL null", []byte(`{"a":1,"b":null}`), `1 null null`, true},
		{"unfit nested field", []byte(`{"a":1,"b":"x","s":{"x":"y"}}`), `1 "x" {x=null}`, true},
		{"unfit field keeps the others", []byte(`{"a":"one","b":"x"}`), `null "x" null`, true},
		{"number", []byte(`42`), `null null null`, true},
		{"array", []byte(`[1]`), `null null null`, true},
		{"string", []byte(`"x"`), `null null null`, true},
		{"null", []byte(`null`), `null null null`, true},
		{"truncated", []byte(`{"a":1,"b":"x","s":{"x":[1,2`), `null null null`, true},
		{"trailing bytes are not read", []byte(`{"a":1,"b":"x"} {}`), `1 "x" null`, false},
		{"trailing comma", []byte(`{"a":1,"b":"x",}`), `null null null`, true},
		{"missing colon", []byte(`{"a" 1}`), `null null null`, true},
		{"single quotes", []byte(`{'a':1,"b":'x'}`), `1 "x" null`, false},
		{"bare word", []byte(`{"a":1,"b":nope}`), `null null null`, true},
		{"leading zero", []byte(`{"a":01,"b":"x"}`), `null null null`, true},
		{"control character in string", []byte("{\"a\":1,\"b\":\"x\ty\"}"), `null null null`, true},
		{"bad escape", []byte(`{"b":"\x"}`), `null null null`, true},
		{"invalid UTF-8 is replaced", []byte("{\"a\":1,\"b\":\"\xff\"}"), `1 "�" null`, false},
		{"invalid UTF-8 outside strings", []byte("\xff{\"a\":1,\"b\":\"x\"}"), `null null null`, true},
		{"malformed in a skipped value", []byte(`{"a":1,"b":"x","z":[1,}`), `null null null`, true},
		{"deeply nested", []byte(`{"z":` + nest(maxDepth+10) + `}`), `null null null`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cols, st := decodeRow(t, layout, record.Record{Value: tc.value})
			if got := cols["a"] + " " + cols["b"] + " " + cols["s"]; got != tc.want {
				t.Errorf("a b s = %s, want %s", got, tc.want)
			}
			checkCorrupt(t, cols, st, tc.corrupt, string(tc.value))
		})
	}
}

// nest returns n nested arrays.
func nest(n int) string {
	b := make([]byte, 0, 2*n)
	for range n {
		b = append(b, '[')
	}
	for range n {
		b = append(b, ']')
	}
	return string(b)
}

// TestKeyAndValue checks which bytes _corrupt_record holds when the key,
// the value, or both are JSON and corrupt.
func TestKeyAndValue(t *testing.T) {
	layout := &spec.Layout{
		Key:           spec.Part{Format: spec.FormatJSON, Fields: []schema.Field{null("k", tInt)}, Column: spec.KeyColumn},
		Value:         spec.Part{Format: spec.FormatJSON, Fields: []schema.Field{null("v", tInt)}, Column: spec.ValueColumn},
		CorruptRecord: true,
	}
	tests := []struct {
		name       string
		key, value string
		want       string // k v
		corrupt    string // the raw bytes, "" for none
	}{
		{"both fine", `{"k":1}`, `{"v":2}`, `1 2`, ""},
		{"key corrupt", `{"k":"x"}`, `{"v":2}`, `null 2`, `{"k":"x"}`},
		{"value corrupt", `{"k":1}`, `oops`, `1 null`, `oops`},
		{"both corrupt: the value wins", `[`, `{"v":true}`, `null null`, `{"v":true}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cols, st := decodeRow(t, layout, record.Record{Key: []byte(tc.key), Value: []byte(tc.value)})
			if got := cols["k"] + " " + cols["v"]; got != tc.want {
				t.Errorf("k v = %s, want %s", got, tc.want)
			}
			checkCorrupt(t, cols, st, tc.corrupt != "", tc.corrupt)
		})
	}
}

// TestRawParts checks the BINARY and STRING parts: bytes kept as they are,
// null kept null, invalid UTF-8 replaced by U+FFFD in a STRING and never
// corrupt.
func TestRawParts(t *testing.T) {
	layout := &spec.Layout{
		Key:   spec.Part{Column: spec.KeyColumn},
		Value: spec.Part{Format: spec.FormatString, Column: spec.ValueColumn},
	}
	tests := []struct {
		name       string
		key, value []byte
		want       string // key value
	}{
		{"bytes", []byte("k\x00\xff"), []byte("héllo"), `b"k\x00\xff" "héllo"`},
		{"nulls", nil, nil, `null null`},
		{"empty", []byte{}, []byte{}, `b"" ""`},
		{"invalid UTF-8", []byte("k"), []byte("a\xffb\xe2\x82\xf0\x80\xed\xa0\x80c\xe2\x82"), "b\"k\" \"a\ufffdb\ufffd\ufffd\ufffd\ufffdc\ufffd\""},
		// Java replaces the start of an encoded surrogate, ED A0, as one run.
		{"truncated surrogate", []byte("k"), []byte("\xed\xa0A"), "b\"k\" \"\ufffdA\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cols, st := decodeRow(t, layout, record.Record{Key: tc.key, Value: tc.value})
			want := tc.want
			if got := cols["key"] + " " + cols["value"]; got != want {
				t.Errorf("key value = %s, want %s", got, want)
			}
			if _, ok := cols[spec.CorruptRecordColumn]; ok || st.Corrupt != 0 {
				t.Errorf("a layout without JSON has a _corrupt_record column or corrupt records (%d)", st.Corrupt)
			}
		})
	}
}

// TestMetadata checks the source metadata column.
func TestMetadata(t *testing.T) {
	layout := &spec.Layout{Key: spec.Part{Column: spec.KeyColumn}, Value: spec.Part{Column: spec.ValueColumn}, MetadataColumn: "source"}
	ts := time.Date(2024, 1, 2, 3, 4, 5, 123456789, time.FixedZone("x", 3600))
	tests := []struct {
		name string
		rec  record.Record
		want string
	}{
		{
			"all fields",
			record.Record{Topic: "orders", Partition: 3, Offset: 1 << 40, Timestamp: ts, TimestampType: 1, Headers: []record.Header{{Key: "h1", Value: []byte("v")}, {Key: "h2"}}},
			`{topic="orders" partition=3 offset=1099511627776 timestamp=2024-01-02T02:04:05.123456Z timestampType=1 headers=[{key="h1" value=b"v"} {key="h2" value=null}]}`,
		},
		{
			"no timestamp, no headers",
			record.Record{Topic: "t", Headers: []record.Header{}},
			`{topic="t" partition=0 offset=0 timestamp=null timestampType=0 headers=null}`,
		},
		{
			"timestamp -1",
			record.Record{Topic: "t", Timestamp: time.UnixMilli(-1)},
			`{topic="t" partition=0 offset=0 timestamp=null timestampType=0 headers=null}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cols, _ := decodeRow(t, layout, tc.rec)
			if cols["source"] != tc.want {
				t.Errorf("source =\n%s\nwant\n%s", cols["source"], tc.want)
			}
		})
	}
}

// TestNew checks the column order and nullability of the schema, and the
// layouts New refuses.
func TestNew(t *testing.T) {
	d, err := New(&spec.Layout{
		Key:            spec.Part{Format: spec.FormatString, Column: spec.KeyColumn},
		Value:          spec.Part{Format: spec.FormatJSON, Fields: []schema.Field{notNull("z", tInt), null("a", tStruct(notNull("y", tInt)))}, Column: spec.ValueColumn},
		MetadataColumn: "m",
		CorruptRecord:  true,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `message spark_schema {
	optional binary key (STRING);
	optional int32 z (INT(32,true));
	optional group a {
		optional int32 y (INT(32,true));
	}
	optional group m {
		optional binary topic (STRING);
		optional int32 partition (INT(32,true));
		optional int64 offset (INT(64,true));
		optional int64 timestamp (TIMESTAMP(isAdjustedToUTC=true,unit=MICROS));
		optional int32 timestampType (INT(32,true));
		optional group headers (LIST) {
			repeated group list {
				optional group element {
					optional binary key (STRING);
					optional binary value;
				}
			}
		}
	}
	optional binary _corrupt_record;
}`
	if got := fmt.Sprint(d.Schema()); got != want {
		t.Errorf("schema =\n%s\nwant\n%s", got, want)
	}

	for _, l := range []*spec.Layout{
		{Value: spec.Part{Format: spec.FormatAvro, Column: spec.ValueColumn}},
		{Value: spec.Part{Format: spec.FormatJSON, Column: spec.ValueColumn}},
		{Value: spec.Part{Format: spec.FormatJSON, Fields: []schema.Field{null("d", tDec(39, 0))}}},
	} {
		if _, err := New(l, nil); err == nil {
			t.Errorf("New(%+v) succeeded, want an error", l.Value)
		}
	}
}

// TestDecodeBatch checks that one call decodes many records into distinct
// rows, that a second call reuses the arena, and counts corrupt records.
func TestDecodeBatch(t *testing.T) {
	d, err := New(jsonValue(null("n", tLong), null("s", tString)), nil)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		var recs []record.Record
		for i := range 100 {
			v := fmt.Sprintf(`{"n":%d,"s":"r\u00e9%d"}`, i, i)
			if i%10 == 0 {
				v = "bad"
			}
			recs = append(recs, record.Record{Value: []byte(v)})
		}
		got, st, err := decodeRows(d, recs)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 100 || st.Corrupt != 10 {
			t.Fatalf("round %d: %d rows, %d corrupt; want 100, 10", round, len(got), st.Corrupt)
		}
		for i, row := range got {
			cols, err := rowstest.Render(d.Schema(), row)
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf(`%d "ré%d"`, i, i)
			if i%10 == 0 {
				want = "null null"
			}
			if g := cols["n"] + " " + cols["s"]; g != want {
				t.Errorf("round %d row %d: %s, want %s", round, i, g, want)
			}
		}
	}
}
