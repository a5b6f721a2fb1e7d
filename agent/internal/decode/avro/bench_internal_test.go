package avro

import (
	"fmt"
	"testing"
	"time"

	"github.com/hamba/avro/v2"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema/avroschema"
)

// benchSchema is a ~10-field record: strings, longs, a double, a nullable
// union and timestamps.
const benchSchema = `{"type":"record","name":"Order","namespace":"bench","fields":[
	{"name":"id","type":"long"},
	{"name":"customer","type":"string"},
	{"name":"email","type":"string"},
	{"name":"amount","type":"double"},
	{"name":"quantity","type":"int"},
	{"name":"country","type":"string"},
	{"name":"note","type":["null","string"]},
	{"name":"created","type":{"type":"long","logicalType":"timestamp-micros"}},
	{"name":"updated","type":{"type":"long","logicalType":"timestamp-millis"}},
	{"name":"version","type":"long"}
]}`

// benchBatch is the number of records per batch.
const benchBatch = 1000

// benchData returns the schema and benchBatch encoded records.
func benchData(tb testing.TB) (avro.Schema, [][]byte) {
	s := mustParse(tb, benchSchema)
	data := make([][]byte, benchBatch)
	for i := range data {
		var note any
		if i%2 == 0 {
			note = fmt.Sprintf("note %d", i)
		}
		ts := time.UnixMicro(1714566896789000 + int64(i))
		data[i] = marshal(tb, s, map[string]any{
			"id": int64(10000 + i), "customer": fmt.Sprintf("user-%d", i), "email": fmt.Sprintf("user-%d@example.com", i),
			"amount": float64(i) + 0.45, "quantity": i % 7, "country": "NL", "note": note,
			"created": ts, "updated": ts, "version": int64(i % 3),
		})
	}
	return s, data
}

// decodeBatch decodes every record into a fresh batch of b.
func decodeBatch(tb testing.TB, d *Decoder, b *rows.Builder, data [][]byte) {
	b.Reset()
	for _, v := range data {
		b.BeginRow()
		if err := d.Decode(b, 0, v); err != nil {
			tb.Fatal(err)
		}
		if err := b.EndRow(); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkDecode decodes ~70-byte records of a 10-field schema into
// column batches, and through hamba/avro's generic decoding for
// comparison; the figures are in the package documentation.
func BenchmarkDecode(b *testing.B) {
	s, data := benchData(b)
	var size int64
	for _, v := range data {
		size += int64(len(v))
	}
	b.Run("decoder", func(b *testing.B) {
		cols, err := avroschema.Columns(s, "value")
		if err != nil {
			b.Fatal(err)
		}
		d, err := NewDecoder(s, s, cols, "value", nil)
		if err != nil {
			b.Fatal(err)
		}
		rb, err := rows.NewBuilder(cols)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			decodeBatch(b, d, rb, data)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchBatch), "ns/record")
		b.ReportMetric(testing.AllocsPerRun(1, func() { decodeBatch(b, d, rb, data) })/benchBatch, "allocs/record")
	})
	b.Run("hamba-generic", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		decode := func() {
			for _, v := range data {
				var m map[string]any
				if err := avro.Unmarshal(s, v, &m); err != nil {
					b.Fatal(err)
				}
			}
		}
		for b.Loop() {
			decode()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchBatch), "ns/record")
		b.ReportMetric(testing.AllocsPerRun(1, decode)/benchBatch, "allocs/record")
	})
}

// TestDecodeAllocs fails when steady-state decoding allocates per record.
func TestDecodeAllocs(t *testing.T) {
	s, data := benchData(t)
	cols, err := avroschema.Columns(s, "value")
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDecoder(s, s, cols, "value", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := rows.NewBuilder(cols)
	if err != nil {
		t.Fatal(err)
	}
	decodeBatch(t, d, b, data) // warm up the buffers
	if allocs := testing.AllocsPerRun(10, func() { decodeBatch(t, d, b, data) }); allocs > 0 {
		t.Errorf("%v allocations per batch of %d records, want 0", allocs, benchBatch)
	}
}
