package decode

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode/decodetest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// skipBad decodes recs with layout l and SkipBad on; it returns the rows
// rendered and the batch, its Columns dropped.
func skipBad(t *testing.T, l *spec.Layout, recs []record.Record) ([]map[string]string, Batch) {
	t.Helper()
	d, err := New(l, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.SetOptions(Options{SkipBad: true})
	b, err := d.Decode(context.Background(), recs)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return renderBatch(t, d, &b), b
}

// renderBatch returns the rows of b, a batch of d, rendered, once it checked
// that b.Rows counts them; it drops b.Columns.
func renderBatch(t *testing.T, d *Decoder, b *Batch) []map[string]string {
	t.Helper()
	out := decodetest.Render(t, d.Schema(), b.Columns, b.Rows)
	b.Columns = nil
	return out
}

// badIndexes returns the record indexes of b.Bad.
func badIndexes(b Batch) []int {
	var out []int
	for _, r := range b.Bad {
		out = append(out, r.Record)
	}
	return out
}

// TestSkipBadJSON checks that with SkipBad a JSON record that would go to
// _corrupt_record gets no row, is listed in Bad with its side, and that
// RowRecord maps the rows left to their records.
func TestSkipBadJSON(t *testing.T) {
	l := jsonValue(null("a", tInt), notNull("b", tString))
	l.Key = spec.Part{Format: spec.FormatJSON, Fields: []schema.Field{null("k", tInt)}, Column: spec.KeyColumn}
	recs := []record.Record{
		{Key: []byte(`{"k":1}`), Value: []byte(`{"a":1,"b":"x"}`)},
		{Key: []byte(`{"k":2}`), Value: []byte(`{"a":"one","b":"x"}`)}, // unfit value
		{Key: []byte(`{"k":3}`), Value: nil},                           // a tombstone decodes
		{Key: []byte(`[`), Value: []byte(`{"a":4,"b":"y"}`)},           // malformed key
		{Key: []byte(`{"k":5}`), Value: []byte(`{"a":5,"b":"z"}`)},
	}
	rows, b := skipBad(t, l, recs)
	var got []string
	for _, r := range rows {
		got = append(got, pick(r, "k", "a", "b", spec.CorruptRecordColumn))
	}
	want := []string{`1 1 "x" null`, `3 null null null`, `5 5 "z" null`}
	if !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
	if !slices.Equal(b.RowRecord, []int32{0, 2, 4}) {
		t.Errorf("RowRecord %v, want [0 2 4]", b.RowRecord)
	}
	if got := badIndexes(b); !slices.Equal(got, []int{1, 3}) {
		t.Errorf("Bad %v, want records 1 and 3", got)
	}
	if b.Corrupt != 0 {
		t.Errorf("Corrupt = %d, want 0: left out records are not corrupt rows", b.Corrupt)
	}
	if len(b.Bad) == 2 && (!strings.Contains(b.Bad[0].Err.Error(), "value") || !strings.Contains(b.Bad[1].Err.Error(), "key") ||
		!errors.Is(b.Bad[0].Err, errBadInput)) {
		t.Errorf("Bad errors %v, %v: want the value's, then the key's", b.Bad[0].Err, b.Bad[1].Err)
	}

	// Without bad records the rows are the records: RowRecord is nil.
	_, b = skipBad(t, l, []record.Record{recs[0], recs[4]})
	if b.RowRecord != nil || b.Bad != nil || b.Rows != 2 {
		t.Errorf("all good: Rows %d, RowRecord %v, Bad %v; want 2, nil, nil", b.Rows, b.RowRecord, b.Bad)
	}
	// Every record bad: no rows.
	_, b = skipBad(t, l, []record.Record{recs[1], recs[3]})
	if b.Rows != 0 || len(b.RowRecord) != 0 || len(b.Bad) != 2 {
		t.Errorf("all bad: Rows %d, RowRecord %v, Bad %d; want 0, empty, 2", b.Rows, b.RowRecord, len(b.Bad))
	}
}

// TestSkipBadFailFast checks that with SkipBad a FAILFAST Avro record that
// does not decode no longer stops the batch: it is left out.
func TestSkipBadFailFast(t *testing.T) {
	l := layoutOf(t, avroTable(ordersV3, spec.ParseModeFailFast))
	good := avroBytes(t, ordersV3, order{ID: 1, Name: "a", Qty: 2})
	rows, b := skipBad(t, l, []record.Record{{Topic: "t", Offset: 1, Value: good[:3]}, {Topic: "t", Offset: 2, Value: good}})
	if len(rows) != 1 || pick(rows[0], "id", "name") != `1 "a"` {
		t.Fatalf("rows %v, want the record at offset 2", rows)
	}
	if got := badIndexes(b); !slices.Equal(got, []int{0}) || !slices.Equal(b.RowRecord, []int32{1}) {
		t.Errorf("Bad %v, RowRecord %v; want [0], [1]", got, b.RowRecord)
	}
}

// TestSkipBadInferred checks that a left-out record of an inferred part
// adds no columns: only good records' new fields count.
func TestSkipBadInferred(t *testing.T) {
	l := inferredValue("ADD_NEW_COLUMNS", null("id", tLong))
	d, err := New(l, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.SetOptions(Options{SkipBad: true})
	recs := []record.Record{
		{Topic: "t", Offset: 1, Value: []byte(`{"id":1,"x":1,"oops`)},
		{Topic: "t", Offset: 2, Value: []byte(`{"id":2}`)},
		{Topic: "t", Offset: 3, Value: []byte(`{"id":3,"y":1}`)},
	}
	_, err = d.Decode(context.Background(), recs)
	var nc *NewColumnsError
	if !errors.As(err, &nc) || strings.Join(nc.Columns, ",") != "y" || nc.Offset != 3 {
		t.Fatalf("Decode: %v, want new column y asked at offset 3", err)
	}
	b, err := d.Decode(context.Background(), recs[:2])
	if err != nil || b.Rows != 1 || len(b.Bad) != 1 {
		t.Fatalf("Decode without the new column: %v, %d rows, %d bad; want 1 row, 1 bad", err, b.Rows, len(b.Bad))
	}
}
