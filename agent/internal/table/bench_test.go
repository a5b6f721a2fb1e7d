package table_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// benchRows is the number of rows per WriteColumns call in the benchmarks,
// about what the agent writes at a time.
const benchRows = 1000

// benchBatch builds benchRows rows of the JSON bench table of `make bench`
// (a BINARY key, then id BIGINT, name STRING, amount DOUBLE, ts TIMESTAMP,
// tags ARRAY<STRING>, _corrupt_record BINARY), with a Builder as the
// decoders do, and returns the Builder holding them and the bytes of their
// values.
func benchBatch(b *testing.B) (*rows.Builder, int64) {
	str := &schema.Type{Kind: schema.String}
	bin := &schema.Type{Kind: schema.Binary}
	rb, err := rows.NewBuilder([]schema.Field{
		{Name: "key", Type: bin, Nullable: true},
		{Name: "id", Type: &schema.Type{Kind: schema.Long}, Nullable: true},
		{Name: "name", Type: str, Nullable: true},
		{Name: "amount", Type: &schema.Type{Kind: schema.Double}, Nullable: true},
		{Name: "ts", Type: &schema.Type{Kind: schema.Timestamp}, Nullable: true},
		{Name: "tags", Type: &schema.Type{Kind: schema.Array, Elem: str}, Nullable: true},
		{Name: "_corrupt_record", Type: bin, Nullable: true},
	})
	if err != nil {
		b.Fatal(err)
	}
	var bytes int64
	for i := range benchRows {
		key, name, tag := fmt.Appendf(nil, "%d", 10000+i), fmt.Appendf(nil, "user-%d", 10000+i), fmt.Appendf(nil, "b%d", i%7)
		bytes += int64(len(key)+len(name)+len(tag)) + 1 + 3*8
		rb.BeginRow()
		rb.Field(0)
		rb.Bytes(key)
		rb.Field(1)
		rb.Int64(int64(10000 + i))
		rb.Field(2)
		rb.Bytes(name)
		rb.Field(3)
		rb.Double(float64(i) + 0.45)
		rb.Field(4)
		rb.Int64(1714566896789000 + int64(i))
		rb.Field(5)
		rb.BeginList()
		rb.Bytes([]byte("a"))
		rb.Bytes(tag)
		rb.EndList()
		if err := rb.EndRow(); err != nil {
			b.Fatal(err)
		}
	}
	return rb, bytes
}

// BenchmarkWriteColumns measures the stages after decoding: handing column
// batches to parquet-go's column writers and encoding the pages
// (uncompressed), and the same with each codec the agent offers, whose
// difference is the cost of compressing. Files are written to disk and
// committed nowhere; an op is one batch of benchRows rows.
func BenchmarkWriteColumns(b *testing.B) {
	rb, bytes := benchBatch(b)
	for _, codec := range []compress.Codec{&parquet.Uncompressed, &parquet.Snappy, &parquet.Zstd} {
		b.Run(codec.String(), func(b *testing.B) {
			tb := openTable(b, b.TempDir(), table.Options{Compression: codec})
			fw, err := tb.NewFile(rb.Schema())
			if err != nil {
				b.Fatal(err)
			}
			defer fw.Abort()
			write := func() {
				if err := fw.WriteColumns(rb.Columns(), rb.Rows()); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(bytes)
			b.ReportAllocs()
			for b.Loop() {
				write()
			}
			b.ReportMetric(float64(b.N)*benchRows/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(testing.AllocsPerRun(10, write)/benchRows, "allocs/record")
		})
	}
}

// BenchmarkWriteVariantEvents is BenchmarkWriteColumns (Snappy) for the 1 KB
// events of make bench (the decode package's testdata) decoded as they are
// when a table reads them as VARIANT: about 400 bytes of metadata, the
// event's keys, and 600 of value a row. The 64 events come in 31 sets of
// keys, so the metadata column's Parquet dictionary stores each once per
// row group. An op is one batch of benchRows rows.
func BenchmarkWriteVariantEvents(b *testing.B) {
	lines, err := os.ReadFile("../decode/testdata/events.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	values := bytes.Split(bytes.TrimSpace(lines), []byte("\n"))
	recs := make([]record.Record, benchRows)
	var size int64
	for i := range recs {
		recs[i] = record.Record{Topic: "events", Offset: int64(i), Value: values[i%len(values)]}
		size += int64(len(recs[i].Value))
	}
	dec, err := decode.New(&spec.Layout{Value: spec.Part{Format: spec.FormatJSON, Transformer: &spec.Transformer{Format: spec.FormatJSON},
		Column: spec.ValueColumn}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	batch, err := dec.Decode(context.Background(), recs)
	if err != nil {
		b.Fatal(err)
	}
	tb := openTable(b, b.TempDir(), table.Options{})
	fw, err := tb.NewFile(dec.Schema())
	if err != nil {
		b.Fatal(err)
	}
	defer fw.Abort()
	write := func() {
		if err := fw.WriteColumns(batch.Columns, batch.Rows); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		write()
	}
	b.ReportMetric(float64(b.N)*benchRows/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(testing.AllocsPerRun(10, write)/benchRows, "allocs/record")
}

// BenchmarkCompress measures the compress stage alone: each codec the agent
// offers compressing the data of a batch of benchRows rows as written
// uncompressed (the file BenchmarkWriteColumns writes for one batch, page
// headers and footer included). An op is one batch.
func BenchmarkCompress(b *testing.B) {
	rb, _ := benchBatch(b)
	dir := b.TempDir()
	tb := openTable(b, dir, table.Options{Compression: &parquet.Uncompressed})
	fw, err := tb.NewFile(rb.Schema())
	if err != nil {
		b.Fatal(err)
	}
	if err := fw.WriteColumns(rb.Columns(), rb.Rows()); err != nil {
		b.Fatal(err)
	}
	add, err := fw.Close()
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, add.Path))
	if err != nil {
		b.Fatal(err)
	}
	for _, codec := range []compress.Codec{&parquet.Snappy, &parquet.Zstd} {
		b.Run(codec.String(), func(b *testing.B) {
			var out []byte
			encode := func() {
				if out, err = codec.Encode(out[:0], data); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				encode()
			}
			b.ReportMetric(float64(b.N)*benchRows/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(testing.AllocsPerRun(10, encode)/benchRows, "allocs/record")
		})
	}
}
