package protobuf

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode/protobuf/protobuftest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// benchBatch is the number of records per batch in the benchmark.
const benchBatch = 1000

// BenchmarkDecode decodes ~100-byte Order messages (ten fields: integers,
// strings, a double, an enum, a Timestamp, a repeated string, a nested
// message) into a batch of rows.
func BenchmarkDecode(b *testing.B) {
	md := message(b, "Order")
	cols := columns(b, md, -1)
	d, err := NewDecoder(md, -1, cols)
	if err != nil {
		b.Fatal(err)
	}
	benchDecode(b, md, cols, d.Decode)
}

// BenchmarkDecodeReference is BenchmarkDecode with the reference decoder,
// the package's first, which decoded with dynamicpb.
func BenchmarkDecodeReference(b *testing.B) {
	md := message(b, "Order")
	cols := columns(b, md, -1)
	d, err := newRefDecoder(md, -1, cols)
	if err != nil {
		b.Fatal(err)
	}
	benchDecode(b, md, cols, d.Decode)
}

// benchDecode measures decode on batches of Order messages.
func benchDecode(b *testing.B, md protoreflect.MessageDescriptor, cols []schema.Field, decode func(*rows.Builder, int, []byte) error) {
	bl, err := rows.NewBuilder(cols)
	if err != nil {
		b.Fatal(err)
	}
	recs := make([][]byte, benchBatch)
	size := 0
	for i := range recs {
		recs[i] = protobuftest.Encode(b, md, fmt.Sprintf(`{"id": "%d", "customer": "customer-%d", "amount": %d.45, "quantity": %d,
			"kind": "CLICK", "created": "2024-05-01T12:34:56.789Z", "tags": ["a", "b"], "paid": true,
			"note": "note %d", "source": {"host": "h%d", "port": 9092}}`, 10000+i, i, i, i%7+1, i, i%3))
		size += len(recs[i])
	}
	batch := func() {
		bl.Reset()
		for _, r := range recs {
			bl.BeginRow()
			if err := decode(bl, 0, r); err != nil {
				b.Fatal(err)
			}
			if err := bl.EndRow(); err != nil {
				b.Fatal(err)
			}
		}
	}
	batch() // warm up the buffers
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		batch()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchBatch, "ns/record")
	b.ReportMetric(testing.AllocsPerRun(3, batch)/benchBatch, "allocs/record")
}
