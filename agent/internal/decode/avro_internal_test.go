package decode

import (
	"context"
	"errors"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// avroTable returns a table whose value is plain Avro of the inline schema
// text.
func avroTable(text, mode string) *spec.Table {
	return &spec.Table{
		DestinationTable: "t",
		ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{Topics: []string{"t"},
			ValueTransformer: &spec.Transformer{Format: spec.FormatAvro, AvroOptions: &spec.AvroOptions{Schema: text, ParseMode: mode}}}},
	}
}

func TestStaticAvroRecord(t *testing.T) {
	l := layoutOf(t, avroTable(ordersV3, ""))
	if got := names(l.Columns()); got != "key,id,name,qty,note,_corrupt_record" {
		t.Fatalf("columns %s", got)
	}
	d, err := New(l, nil)
	if err != nil {
		t.Fatal(err)
	}
	note := "x"
	good := avroBytes(t, ordersV3, order{ID: 1, Name: "a", Qty: 2, Note: &note})
	framed := frame(t, 1, nil, good) // registry framing is not plain Avro
	rows, st := rendered(t, d, []record.Record{{Value: good}, {Value: avroBytes(t, ordersV3, order{ID: 2})}, {Value: nil},
		{Value: good[:3]}, {Value: framed}})
	want := []string{`1 "a" 2 "x"`, `2 "" 0 null`, `null null null null`, `null null null null`, `null null null null`}
	for i, w := range want {
		if got := pick(rows[i], "id", "name", "qty", "note"); got != w {
			t.Errorf("row %d: %s, want %s", i, got, w)
		}
	}
	for i, c := range []string{"null", "null", "null", quoteBytes(good[:3]), quoteBytes(framed)} {
		if c != "null" {
			c = "b" + c
		}
		if got := rows[i][spec.CorruptRecordColumn]; got != c {
			t.Errorf("row %d: _corrupt_record %s, want %s", i, got, c)
		}
	}
	if st.Corrupt != 2 {
		t.Errorf("Stats.Corrupt = %d, want 2", st.Corrupt)
	}

	fl := layoutOf(t, avroTable(ordersV3, spec.ParseModeFailFast))
	fd, err := New(fl, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fd.Decode(context.Background(), []record.Record{{Topic: "t", Offset: 1, Value: good}, {Topic: "t", Offset: 2, Value: good[:3]}})
	var re *RecordError
	if !errors.As(err, &re) || re.Offset != 2 {
		t.Errorf("FAILFAST: %v, want a RecordError at offset 2", err)
	}
}

func TestStaticAvroNotRecord(t *testing.T) {
	for _, tc := range []struct {
		schema string
		value  any
		want   string
	}{
		{`"string"`, "héllo", `"héllo"`},
		{`"long"`, int64(42), `42`},
		{`{"type":"array","items":"int"}`, []int{1, 2}, `[1 2]`},
		{`["null","double"]`, 1.5, `1.5`},
	} {
		l := layoutOf(t, avroTable(tc.schema, ""))
		if got := names(l.Columns()); got != "key,value,_corrupt_record" {
			t.Fatalf("%s: columns %s, want one column named value", tc.schema, got)
		}
		d, err := New(l, nil)
		if err != nil {
			t.Fatal(err)
		}
		rows, st := rendered(t, d, []record.Record{{Value: avroBytes(t, tc.schema, tc.value)}, {Value: nil}})
		if got := rows[0]["value"]; got != tc.want || rows[1]["value"] != "null" || st.Corrupt != 0 {
			t.Errorf("%s: value %s then %s (%d corrupt), want %s then null", tc.schema, got, rows[1]["value"], st.Corrupt, tc.want)
		}
	}
}
