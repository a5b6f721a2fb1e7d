package decode

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// benchBatch is the number of records per Decode call in the benchmarks.
const benchBatch = 1000

// benchRecords returns benchBatch ~100-byte JSON records.
func benchRecords() []Record {
	recs := make([]Record, benchBatch)
	for i := range recs {
		id := 10000 + i
		recs[i] = Record{
			Topic: "orders", Partition: 1, Offset: int64(i), Timestamp: time.UnixMilli(1714566896789),
			Key:   fmt.Appendf(nil, "%d", id),
			Value: fmt.Appendf(nil, `{"id":%d,"name":"user-%d","amount":%d.45,"ts":"2024-05-01T12:34:56.789Z","tags":["a","b"]}`, id, id, i),
		}
	}
	return recs
}

// benchJSONLayout is `id BIGINT, name STRING, amount DOUBLE, ts TIMESTAMP,
// tags ARRAY<STRING>` for the value, the key as BINARY.
func benchJSONLayout() *spec.Layout {
	return jsonValue(null("id", tLong), null("name", tString), null("amount", tDouble), null("ts", tTS), null("tags", tArr(tString)))
}

// BenchmarkDecodeJSON decodes the JSON value of ~100-byte records, alone
// and followed by parquet-go writing the rows (to io.Discard).
func BenchmarkDecodeJSON(b *testing.B) {
	benchDecode(b, benchJSONLayout())
}

// BenchmarkDecodeBinary decodes records into BINARY key and value columns
// and the source metadata column.
func BenchmarkDecodeBinary(b *testing.B) {
	benchDecode(b, &spec.Layout{Key: spec.Part{Column: spec.KeyColumn}, Value: spec.Part{Column: spec.ValueColumn}, MetadataColumn: "source"})
}

func benchDecode(b *testing.B, layout *spec.Layout) {
	recs := benchRecords()
	var bytes int64
	for _, r := range recs {
		bytes += int64(len(r.Value))
	}
	d, err := New(layout)
	if err != nil {
		b.Fatal(err)
	}
	var rows []parquet.Row
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(bytes)
		b.ReportAllocs()
		for b.Loop() {
			rows, _, err = d.Decode(recs, rows[:0])
			if err != nil {
				b.Fatal(err)
			}
		}
		reportRecords(b)
	})
	b.Run("decode+write", func(b *testing.B) {
		w := parquet.NewGenericWriter[any](io.Discard, d.Schema())
		b.SetBytes(bytes)
		b.ReportAllocs()
		for b.Loop() {
			rows, _, err = d.Decode(recs, rows[:0])
			if err != nil {
				b.Fatal(err)
			}
			if _, err := w.WriteRows(rows); err != nil {
				b.Fatal(err)
			}
		}
		reportRecords(b)
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	})
}

// reportRecords reports records/s; an op (and allocs/op) is one batch of
// benchBatch records.
func reportRecords(b *testing.B) {
	b.ReportMetric(float64(b.N)*benchBatch/b.Elapsed().Seconds(), "records/s")
}

// TestDecodeAllocs fails when steady-state decoding allocates per record.
func TestDecodeAllocs(t *testing.T) {
	recs := benchRecords()
	for name, layout := range map[string]*spec.Layout{
		"json":   benchJSONLayout(),
		"binary": {Key: spec.Part{Column: spec.KeyColumn}, Value: spec.Part{Column: spec.ValueColumn}, MetadataColumn: "source"},
	} {
		d, err := New(layout)
		if err != nil {
			t.Fatal(err)
		}
		var rows []parquet.Row
		rows, _, _ = d.Decode(recs, rows) // warm up the arenas
		allocs := testing.AllocsPerRun(10, func() {
			rows, _, _ = d.Decode(recs, rows[:0])
		})
		if allocs > 0 {
			t.Errorf("%s: %v allocations per batch of %d records, want 0", name, allocs, len(recs))
		}
	}
}
