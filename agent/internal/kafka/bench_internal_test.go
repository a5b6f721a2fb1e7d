package kafka

import (
	"fmt"
	"testing"

	"github.com/segmentio/kafka-go/compress"
)

// benchFetch is a fetched partition of 10 batches of 100 ~100-byte JSON
// records each, compressed with codec, as a broker returns them.
func benchFetch(b *testing.B, codec compress.Compression) (*fetchedPartition, int) {
	var records []byte
	n := 0
	for batch := range 10 {
		var recs []testRecord
		for i := range 100 {
			id := n + i
			recs = append(recs, testRecord{
				offsetDelta: int64(i), tsDelta: int64(i),
				key:   fmt.Appendf(nil, "%d", id),
				value: fmt.Appendf(nil, `{"id":%d,"name":"user-%d","amount":%d.45,"ts":"2024-05-01T12:34:56.789Z","tags":["a","b"]}`, id, id, i),
			})
		}
		records = append(records, encodeBatch(b, int64(batch*100), int16(codec), 1_714_566_896_789, 1_714_566_896_889, -1, recs)...)
		n += len(recs)
	}
	return &fetchedPartition{records: records}, n
}

// BenchmarkFetchParse measures what the fetcher does with a fetch response
// once it is read: checking and walking record batches, decompressing them
// and laying the records out for the decoders, per codec, then releasing
// the batch as the agent does once it has written it. allocs/record are
// the allocations per record in steady state.
func BenchmarkFetchParse(b *testing.B) {
	for _, codec := range []compress.Compression{0, compress.Snappy, compress.Lz4, compress.Zstd, compress.Gzip} {
		name := "none"
		if codec != 0 {
			name = codec.String()
		}
		b.Run(name, func(b *testing.B) {
			p, n := benchFetch(b, codec)
			f := &Fetcher{TP: testTP, ReadCommitted: true}
			parse := func() {
				batch, err := f.batch(p, 0, n)
				if err != nil || len(batch.Records) != n || batch.Next != int64(n) {
					b.Fatalf("%d records up to %d: %v", len(batch.Records), batch.Next, err)
				}
				batch.Release()
			}
			b.SetBytes(int64(len(p.records)))
			b.ReportAllocs()
			for b.Loop() {
				parse()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(testing.AllocsPerRun(100, parse)/float64(n), "allocs/record")
		})
	}
}
