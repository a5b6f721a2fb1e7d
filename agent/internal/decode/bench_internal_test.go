package decode

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode/decodetest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// benchBatch is the number of records per Decode call in the benchmarks.
const benchBatch = 1000

// benchRecords returns benchBatch ~100-byte JSON records.
func benchRecords() []record.Record {
	recs := make([]record.Record, benchBatch)
	for i := range recs {
		id := 10000 + i
		recs[i] = record.Record{
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

// BenchmarkDecodeJSON decodes the JSON value of ~100-byte records into
// column batches (the decode stage; the table package measures writing
// them).
func BenchmarkDecodeJSON(b *testing.B) {
	benchDecode(b, benchJSONLayout(), benchRecords())
}

// BenchmarkDecodeVariant decodes the JSON key and value of ~100-byte
// records into VARIANT columns.
func BenchmarkDecodeVariant(b *testing.B) {
	benchDecode(b, variantLayout(), benchRecords())
}

// BenchmarkDecodeJSONInferred decodes the records of BenchmarkDecodeJSON
// into the same columns inferred in mode RESCUE, a field of every tenth
// record unknown and rescued.
func BenchmarkDecodeJSONInferred(b *testing.B) {
	recs := benchRecords()
	for i := 0; i < len(recs); i += 10 {
		recs[i].Value = append(bytes.TrimSuffix(recs[i].Value, []byte("}")), `,"extra":{"a":1}}`...)
	}
	benchDecode(b, inferredValue(spec.SchemaEvolutionRescue, benchJSONLayout().Value.Fields...), recs)
}

// BenchmarkDecodeJSONEvents decodes JSON values of about 1 KB with 30
// columns, nested structs, arrays and a map: the records and the schema of
// make bench's 1 KB row (testdata/events.jsonl and events.ddl).
func BenchmarkDecodeJSONEvents(b *testing.B) {
	ddl, err := os.ReadFile("testdata/events.ddl")
	if err != nil {
		b.Fatal(err)
	}
	fields, err := schema.ParseDDL(string(ddl))
	if err != nil {
		b.Fatal(err)
	}
	benchDecode(b, jsonValue(fields...), eventRecords(b))
}

// BenchmarkDecodeVariantEvents decodes the records of
// BenchmarkDecodeJSONEvents into a VARIANT value column.
func BenchmarkDecodeVariantEvents(b *testing.B) {
	benchDecode(b, variantLayout(), eventRecords(b))
}

// eventRecords returns benchBatch records of testdata/events.jsonl.
func eventRecords(b *testing.B) []record.Record {
	lines, err := os.ReadFile("testdata/events.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	values := bytes.Split(bytes.TrimSpace(lines), []byte("\n"))
	recs := make([]record.Record, benchBatch)
	for i := range recs {
		recs[i] = record.Record{Topic: "events", Offset: int64(i), Value: values[i%len(values)]}
	}
	return recs
}

// BenchmarkDecodeBinary decodes records into BINARY key and value columns
// and the source metadata column.
func BenchmarkDecodeBinary(b *testing.B) {
	benchDecode(b, &spec.Layout{Key: spec.Part{Column: spec.KeyColumn}, Value: spec.Part{Column: spec.ValueColumn}, MetadataColumn: "source"},
		benchRecords())
}

// benchDecode measures decoding recs, benchBatch records, with layout.
func benchDecode(b *testing.B, layout *spec.Layout, recs []record.Record) {
	var size int64
	for _, r := range recs {
		size += int64(len(r.Key) + len(r.Value))
	}
	d, err := New(layout, nil)
	if err != nil {
		b.Fatal(err)
	}
	decodetest.Bench(b, len(recs), size, func() (int, error) {
		batch, err := d.Decode(context.Background(), recs)
		return batch.Corrupt, err
	})
}

// TestDecodeAllocs fails when steady-state decoding allocates per record.
func TestDecodeAllocs(t *testing.T) {
	recs := benchRecords()
	for name, layout := range map[string]*spec.Layout{
		"json":     benchJSONLayout(),
		"variant":  variantLayout(),
		"binary":   {Key: spec.Part{Column: spec.KeyColumn}, Value: spec.Part{Column: spec.ValueColumn}, MetadataColumn: "source"},
		"inferred": inferredValue(spec.SchemaEvolutionRescue, benchJSONLayout().Value.Fields...),
	} {
		d, err := New(layout, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = d.Decode(context.Background(), recs) // warm up the buffers
		allocs := testing.AllocsPerRun(10, func() { _, _ = d.Decode(context.Background(), recs) })
		if allocs > 0 {
			t.Errorf("%s: %v allocations per batch of %d records, want 0", name, allocs, len(recs))
		}
	}
}

// BenchmarkDecodeMetadataColumns decodes the records of
// BenchmarkDecodeJSON with every metadata column.
func BenchmarkDecodeMetadataColumns(b *testing.B) {
	l := benchJSONLayout()
	l.Meta = spec.MetadataColumnNames
	benchDecode(b, l, benchRecords())
}
