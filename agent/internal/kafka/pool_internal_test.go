package kafka

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/segmentio/kafka-go/compress"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
)

var codecs = []compress.Compression{compress.None, compress.Gzip, compress.Snappy, compress.Lz4, compress.Zstd}

// TestSlicePoolClasses: a slice from the pool is at least as large as
// asked for and at most a quarter larger; a slice given back goes to the
// largest class it can serve, unless it is smaller or larger than all.
func TestSlicePoolClasses(t *testing.T) {
	p := newSlicePool[byte](1<<10, false)
	largest := p.classCap(poolClasses - 1)
	if largest != 16<<20 {
		t.Fatalf("largest class %d", largest)
	}
	for n := 1; n <= 2*largest; n += n/7 + 1 {
		switch up := p.classOf(n, true); {
		case n > largest:
			if up != -1 {
				t.Errorf("%d: class %d past the largest", n, up)
			}
		case up < 0 || p.classCap(up) < n || up > 0 && p.classCap(up-1) >= n || 4*p.classCap(up) > 5*max(n, 1<<10):
			t.Errorf("%d: class %d", n, up)
		}
		switch down := p.classOf(n, false); {
		case n < 1<<10 || n >= largest+largest/4:
			if down != -1 {
				t.Errorf("%d given back: class %d out of the pool", n, down)
			}
		case down < 0 || p.classCap(down) > n || down < poolClasses-1 && p.classCap(down+1) <= n:
			t.Errorf("%d given back: class %d", n, down)
		}
	}
	s := p.get(5000)
	if len(*s) != 0 || cap(*s) < 5000 || cap(*s) > 5000*5/4 {
		t.Fatalf("get(5000): len %d cap %d", len(*s), cap(*s))
	}
	p.put(s)
	if big := p.get(largest + 1); cap(*big) != largest+1 {
		t.Fatalf("get past the largest class: cap %d", cap(*big))
	}
}

// testBatches returns three record batches of 40 records each, compressed
// with codec, whose keys, values and headers all carry tag.
func testBatches(t *testing.T, codec compress.Compression, tag string) []byte {
	var out []byte
	for batch := range 3 {
		var recs []testRecord
		for i := range 40 {
			recs = append(recs, testRecord{
				offsetDelta: int64(i), key: fmt.Appendf(nil, "%s-%d", tag, 40*batch+i),
				value:   fmt.Appendf(nil, `{"tag":%q,"n":%d,"pad":%q}`, tag, 40*batch+i, strings.Repeat(tag, 20)),
				headers: [][2]string{{"trace", tag}, {"n", fmt.Sprint(i)}},
			})
		}
		out = append(out, encodeBatch(t, int64(40*batch), int16(codec), 0, 0, -1, recs)...)
	}
	return out
}

// checkBatch fails t unless b holds the records of testBatches with tag.
func checkBatch(t *testing.T, b Batch, tag string) {
	t.Helper()
	if len(b.Records) != 120 || b.Next != 120 {
		t.Fatalf("%s: %d records, next %d", tag, len(b.Records), b.Next)
	}
	for i, r := range b.Records {
		value := fmt.Sprintf(`{"tag":%q,"n":%d,"pad":%q}`, tag, i, strings.Repeat(tag, 20))
		if r.Offset != int64(i) || string(r.Key) != fmt.Sprintf("%s-%d", tag, i) || string(r.Value) != value ||
			len(r.Headers) != 2 || r.Headers[0].Key != "trace" || string(r.Headers[0].Value) != tag ||
			r.Headers[1].Key != "n" || string(r.Headers[1].Value) != fmt.Sprint(i%40) {
			t.Fatalf("%s: record %d is %+v", tag, i, r)
		}
	}
}

// fetchBatch reads a fetch response holding records as the fetcher does,
// from a pooled buffer, and decodes it. The batch must hold that buffer
// just when records are not compressed.
func fetchBatch(t *testing.T, codec compress.Compression, records []byte) Batch {
	t.Helper()
	body := fetchResponseBody(0, -1, records)
	resp := binary.BigEndian.AppendUint32(nil, uint32(4+len(body)))
	resp = binary.BigEndian.AppendUint32(resp, 1) // correlation id
	resp = append(resp, body...)
	p, err := readFetch(bufio.NewReader(bytes.NewReader(resp)), 1, testTP)
	if err != nil {
		t.Fatal(err)
	}
	buf := p.resp
	b, err := (&Fetcher{TP: testTP}).batch(&p, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if holds := slices.Contains(b.mem.buffers, buf); holds != (codec == compress.None) {
		t.Fatalf("the batch holds the response buffer: %v", holds)
	}
	if b.Bytes != b.mem.size() || b.Bytes < int64(len(records)) {
		t.Fatalf("the batch holds %d bytes, counts %d, for %d bytes of record batches", b.mem.size(), b.Bytes, len(records))
	}
	return b
}

// memoryOf returns the address ranges of the pooled memory b holds.
func memoryOf(b Batch) [][2]uintptr {
	var ranges [][2]uintptr
	add := func(p unsafe.Pointer, size uintptr) {
		ranges = append(ranges, [2]uintptr{uintptr(p), uintptr(p) + size})
	}
	for _, buf := range b.mem.buffers {
		add(unsafe.Pointer(unsafe.SliceData(*buf)), uintptr(cap(*buf)))
	}
	if r := b.mem.records; r != nil {
		add(unsafe.Pointer(unsafe.SliceData(*r)), uintptr(cap(*r))*unsafe.Sizeof(record.Record{}))
	}
	for _, h := range b.mem.headers {
		add(unsafe.Pointer(unsafe.SliceData(*h)), uintptr(cap(*h))*unsafe.Sizeof(record.Header{}))
	}
	return ranges
}

// checkDisjoint fails t if batches a and b share pooled memory.
func checkDisjoint(t *testing.T, a, b Batch) {
	t.Helper()
	for _, x := range memoryOf(a) {
		for _, y := range memoryOf(b) {
			if x[0] < y[1] && y[0] < x[1] {
				t.Fatalf("two unreleased batches share memory: %x and %x", x, y)
			}
		}
	}
}

// TestBatchesKeepTheirMemory: the pooled memory of a batch is never handed
// to another batch before it is released, its records stay intact until
// then, and releasing twice, also through a copy, gives nothing back twice
// (which would hand one buffer to two batches).
func TestBatchesKeepTheirMemory(t *testing.T) {
	var zero Batch
	zero.Release()
	for _, codec := range codecs {
		t.Run(codec.String(), func(t *testing.T) {
			first := fetchBatch(t, codec, testBatches(t, codec, "first"))
			second := fetchBatch(t, codec, testBatches(t, codec, "second"))
			runtime.GC() // the pools drop what they keep; the batches keep theirs
			checkBatch(t, first, "first")
			checkBatch(t, second, "second")
			checkDisjoint(t, first, second)

			copied := first
			first.Release()
			if first.Records != nil || first.mem != nil {
				t.Fatalf("a released batch still has %d records", len(first.Records))
			}
			first.Release()
			copied.Release()
			third := fetchBatch(t, codec, testBatches(t, codec, "third"))
			fourth := fetchBatch(t, codec, testBatches(t, codec, "fourth"))
			checkBatch(t, second, "second")
			checkBatch(t, third, "third")
			checkBatch(t, fourth, "fourth")
			checkDisjoint(t, second, third)
			checkDisjoint(t, second, fourth)
			checkDisjoint(t, third, fourth)
			for _, b := range []*Batch{&second, &third, &fourth} {
				b.Release()
			}
		})
	}
}

// inflated returns the record section of batch b decompressed.
func inflated(t *testing.T, b *recordBatch) []byte {
	t.Helper()
	r, err := b.decompressor(bytes.NewReader(b.records))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	section, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return section
}

// TestInflateBuffers: a batch is decompressed once into a buffer from the
// pool; one that fills the free space exactly takes no other, one that
// outgrows its estimate moves to a larger buffer and gives the smaller one
// back, and one larger than the limit is an error.
func TestInflateBuffers(t *testing.T) {
	for _, codec := range codecs[1:] {
		t.Run(codec.String(), func(t *testing.T) {
			// 200 KB of one byte: far more than 4 times its compressed size.
			buf := encodeBatch(t, 0, int16(codec), 0, 0, -1, []testRecord{{value: bytes.Repeat([]byte("x"), 200_000)}})
			b, _, err := nextBatch(buf)
			if err != nil {
				t.Fatal(err)
			}
			want := inflated(t, &b)

			bd := newBuilder(testTP, 0)
			defer bd.mem.release()
			got, err := bd.inflate(&b, 0)
			if err != nil || !bytes.Equal(got, want) || len(bd.mem.buffers) != 1 {
				t.Fatalf("outgrown: %d bytes in %d buffers, %v", len(got), len(bd.mem.buffers), err)
			}

			exact := newBuilder(testTP, 0)
			defer exact.mem.release()
			exact.ratio = 16 // expects about the compressed size
			exact.newBuffer(len(want))
			*exact.cur = (*exact.cur)[:cap(*exact.cur)-len(want)]
			got, err = exact.inflate(&b, 0)
			if err != nil || !bytes.Equal(got, want) || len(exact.mem.buffers) != 1 || len(*exact.cur) != cap(*exact.cur) {
				t.Fatalf("exact fit: %d bytes in %d buffers, %v", len(got), len(exact.mem.buffers), err)
			}

			big, _, err := nextBatch(encodeBatch(t, 0, int16(codec), 0, 0, -1, []testRecord{{value: make([]byte, 1<<20)}}))
			if err != nil {
				t.Fatal(err)
			}
			limited := newBuilder(testTP, 0)
			defer limited.mem.release()
			limited.limit = 1 << 20
			if _, err := limited.inflate(&big, 0); err == nil || !strings.Contains(err.Error(), "more than 1 MiB") {
				t.Fatalf("past the limit: %v", err)
			}
		})
	}
}

// TestInflatePacksBatches: the compressed batches of one fetch share
// decompression buffers, the headers of its records share slices, and
// each record keeps its own bytes.
func TestInflatePacksBatches(t *testing.T) {
	for _, codec := range codecs[1:] {
		t.Run(codec.String(), func(t *testing.T) {
			b, err := (&Fetcher{TP: testTP}).batch(&fetchedPartition{records: testBatches(t, codec, "packed")}, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Release()
			checkBatch(t, b, "packed")
			// The first batch outgrows the first estimate, the next ones
			// fit in one buffer; 240 headers fit in 64, 128 and 256.
			if len(b.mem.buffers) > 2 || len(b.mem.headers) > 3 {
				t.Fatalf("3 batches decompressed into %d buffers, 240 headers cut from %d slices", len(b.mem.buffers), len(b.mem.headers))
			}
		})
	}
}
