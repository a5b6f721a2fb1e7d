package changelog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
)

// TestStopInMultiRowEvent checks that a change event of several rows whose
// second row brings a new column stops the chunk before the event: none of
// its rows is in the batch, which maps its rows to the records before it,
// and the next decoding, with the new column, goes on from the event.
func TestStopInMultiRowEvent(t *testing.T) {
	l := changelogLayout(canal(nil))
	recs := []record.Record{
		{Offset: 10, Value: []byte(`{"type":"INSERT","data":[{"id":"1"}],"database":"d","table":"t"}`)},
		{Offset: 11, Value: []byte(`{"type":"INSERT","data":[{"id":"2"},{"id":"3"}],"database":"d","table":"t"}`)},
		{Offset: 12, Value: []byte(`{"type":"INSERT","data":[{"id":"4"},{"id":"5","x":"new"}],"database":"d","table":"t"}`)},
		{Offset: 13, Value: []byte(`{"type":"DELETE","data":[{"id":"6"}],"database":"d","table":"t"}`)},
	}
	var got []string
	start, decoded := 0, 0
	for range 5 {
		d, err := New(l, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := d.Decode(context.Background(), recs[start:])
		var nc *decode.NewColumnsError
		if err != nil && !errors.As(err, &nc) {
			t.Fatalf("Decode from %d: %v", start, err)
		}
		rows := renderBatch(t, d, &b)
		for i, r := range rows {
			rec := i
			if b.RowRecord != nil {
				rec = int(b.RowRecord[i])
			}
			got = append(got, fmt.Sprintf("%d:%s", recs[start+rec].Offset, pick(r, "_op", "id", "x")))
		}
		if nc == nil {
			decoded += len(recs) - start
			break
		}
		decoded += nc.Record + 1
		l.Value.Fields, _ = nc.Apply(l.Value.Fields)
		start += nc.Record
	}
	// <none>: the rows before the event have no column x.
	want := []string{`10:"c" "1" <none>`, `11:"c" "2" <none>`, `11:"c" "3" <none>`, `12:"c" "4" null`, `12:"c" "5" "new"`, `13:"d" "6" null`}
	if !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
	// The first decoding stops at the first record (the table has no
	// columns yet), the second at the third.
	if decoded != len(recs)+2 {
		t.Errorf("decoded %d records, want %d", decoded, len(recs)+2)
	}
}
