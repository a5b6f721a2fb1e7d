package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestDeadLetterRaw checks that a dead letter row holds a record's key,
// value and metadata as a table of raw records, with a source metadata
// column, does: headers whose keys are not valid UTF-8, no timestamp and
// no headers included.
func TestDeadLetterRaw(t *testing.T) {
	recs := []decode.Record{
		{Topic: "t", Partition: 2, Offset: 7, Timestamp: time.UnixMilli(1700000000123), TimestampType: 1, Key: []byte("k"),
			Value: []byte(`{"a":1}`), Headers: []decode.Header{{Key: "ok", Value: []byte("v")}, {Key: "bad\xed\xa0A\xff\xfe"}}},
		{Topic: "t", Offset: 8, Timestamp: time.UnixMilli(-1), Value: []byte("v")},
	}
	d, err := newDeadLetters()
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.batch(recs, []string{"e1", "e2"})
	if err != nil {
		t.Fatal(err)
	}
	dec, err := decode.New(&spec.Layout{Key: spec.Part{Column: spec.KeyColumn}, Value: spec.Part{Column: spec.ValueColumn},
		MetadataColumn: "m"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := dec.Decode(context.Background(), recs)
	if err != nil {
		t.Fatal(err)
	}
	// Columns 0 to 8: key, value, then topic to headers' key and value.
	for c := range 9 {
		if len(got.Columns[c]) != len(want.Columns[c]) {
			t.Fatalf("column %d: %d values, want %d", c, len(got.Columns[c]), len(want.Columns[c]))
		}
		for i, v := range got.Columns[c] {
			w := want.Columns[c][i]
			if v.IsNull() != w.IsNull() || v.String() != w.String() {
				t.Errorf("column %d, value %d: %v, want %v", c, i, v, w)
			}
		}
	}
	if errs := got.Columns[9]; len(errs) != 2 || errs[0].String() != "e1" || errs[1].String() != "e2" {
		t.Errorf("error column %v, want e1 and e2", errs)
	}
}
