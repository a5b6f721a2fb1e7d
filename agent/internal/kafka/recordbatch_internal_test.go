package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/compress"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
)

// testRecord is one record of a batch built by encodeBatch.
type testRecord struct {
	offsetDelta, tsDelta int64
	key, value           []byte
	headers              [][2]string
}

// encodeBatch builds a v2 record batch as a broker stores it.
func encodeBatch(t testing.TB, base int64, attrs int16, baseTS, maxTS, pid int64, recs []testRecord) []byte {
	t.Helper()
	var section []byte
	for _, r := range recs {
		var rec []byte
		rec = append(rec, 0) // attributes
		rec = binary.AppendVarint(rec, r.tsDelta)
		rec = binary.AppendVarint(rec, r.offsetDelta)
		for _, b := range [][]byte{r.key, r.value} {
			if b == nil {
				rec = binary.AppendVarint(rec, -1)
			} else {
				rec = binary.AppendVarint(rec, int64(len(b)))
				rec = append(rec, b...)
			}
		}
		rec = binary.AppendVarint(rec, int64(len(r.headers)))
		for _, h := range r.headers {
			rec = binary.AppendVarint(rec, int64(len(h[0])))
			rec = append(rec, h[0]...)
			rec = binary.AppendVarint(rec, int64(len(h[1])))
			rec = append(rec, h[1]...)
		}
		section = binary.AppendVarint(section, int64(len(rec)))
		section = append(section, rec...)
	}
	if codec := compress.Compression(attrs & attrCompression); codec != 0 {
		var buf bytes.Buffer
		w := codec.Codec().NewWriter(&buf)
		if _, err := w.Write(section); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		section = buf.Bytes()
	}
	lastDelta := int32(0)
	if len(recs) > 0 {
		lastDelta = int32(recs[len(recs)-1].offsetDelta)
	}
	crcPart := binary.BigEndian.AppendUint16(nil, uint16(attrs))
	crcPart = binary.BigEndian.AppendUint32(crcPart, uint32(lastDelta))
	crcPart = binary.BigEndian.AppendUint64(crcPart, uint64(baseTS))
	crcPart = binary.BigEndian.AppendUint64(crcPart, uint64(maxTS))
	crcPart = binary.BigEndian.AppendUint64(crcPart, uint64(pid))
	crcPart = binary.BigEndian.AppendUint16(crcPart, 0)                 // producer epoch
	crcPart = binary.BigEndian.AppendUint32(crcPart, 0)                 // base sequence
	crcPart = binary.BigEndian.AppendUint32(crcPart, uint32(len(recs))) // record count
	crcPart = append(crcPart, section...)
	body := binary.BigEndian.AppendUint32(nil, 0) // leader epoch
	body = append(body, 2)                        // magic
	body = binary.BigEndian.AppendUint32(body, crc32.Checksum(crcPart, castagnoli))
	body = append(body, crcPart...)
	out := binary.BigEndian.AppendUint64(nil, uint64(base))
	out = binary.BigEndian.AppendUint32(out, uint32(len(body)))
	return append(out, body...)
}

var testTP = TopicPartition{Topic: "t", Partition: 3}

// appendAll decodes the records of b at or after from as a fetch does,
// into memory from the pools, which t's cleanup gives back.
func appendAll(t testing.TB, b *recordBatch, from int64) ([]record.Record, error) {
	bd := newBuilder(testTP, 0)
	t.Cleanup(bd.mem.release)
	err := bd.appendRecords(b, from, 0)
	return bd.records(), err
}

// decodeOne reads buf, which must hold one batch and nothing more, and
// returns the batch and all its records.
func decodeOne(t testing.TB, buf []byte) (recordBatch, []record.Record) {
	t.Helper()
	b, rest, err := nextBatch(buf)
	if err != nil || len(rest) != 0 {
		t.Fatalf("nextBatch: %v, %d bytes left", err, len(rest))
	}
	got, err := appendAll(t, &b, 0)
	if err != nil {
		t.Fatal(err)
	}
	return b, got
}

func TestRecordBatchDecoding(t *testing.T) {
	recs := []testRecord{
		{offsetDelta: 0, tsDelta: 0, key: []byte("k0"), value: []byte("v0"), headers: [][2]string{{"h", "x"}}},
		{offsetDelta: 1, tsDelta: 5, key: nil, value: nil},
		{offsetDelta: 3, tsDelta: 9, key: []byte{}, value: []byte("v3")}, // offset 2 compacted away
	}
	for _, codec := range []compress.Compression{0, compress.Gzip, compress.Snappy, compress.Lz4, compress.Zstd} {
		t.Run(codec.String(), func(t *testing.T) {
			buf := encodeBatch(t, 100, int16(codec), 1_000, 1_009, -1, recs)
			b, rest, err := nextBatch(buf)
			if err != nil || len(rest) != 0 {
				t.Fatalf("nextBatch: %v, %d bytes left", err, len(rest))
			}
			if b.lastOffset() != 103 {
				t.Fatalf("last offset %d, want 103", b.lastOffset())
			}
			got, err := appendAll(t, &b, 101)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].Offset != 101 || got[0].Key != nil || got[0].Value != nil ||
				got[1].Offset != 103 || got[1].Key == nil || len(got[1].Key) != 0 || string(got[1].Value) != "v3" {
				t.Fatalf("records from 101: %+v", got)
			}
			if !got[1].Timestamp.Equal(time.UnixMilli(1_009)) || got[1].TimestampType != 0 || got[1].Partition != 3 {
				t.Fatalf("CreateTime record: %+v", got[1])
			}
			all, _ := appendAll(t, &b, 0)
			if len(all) != 3 || all[0].Headers[0].Key != "h" || string(all[0].Headers[0].Value) != "x" {
				t.Fatalf("all records: %+v", all)
			}
		})
	}
}

// TestIssue5LogAppendTime: on LogAppendTime topics every record of a batch
// has the batch's max timestamp (the broker's append time), not the
// producer's time the record deltas still carry.
func TestIssue5LogAppendTime(t *testing.T) {
	buf := encodeBatch(t, 0, attrLogAppendTime, 1_000, 5_000_000, -1,
		[]testRecord{{value: []byte("a")}, {offsetDelta: 1, tsDelta: 7, value: []byte("b")}})
	_, got := decodeOne(t, buf)
	for _, r := range got {
		if !r.Timestamp.Equal(time.UnixMilli(5_000_000)) || r.TimestampType != 1 {
			t.Fatalf("record %d: time %v type %d, want the batch's append time and type 1", r.Offset, r.Timestamp, r.TimestampType)
		}
	}
}

// TestRecordBatchLeaderEpoch: each record carries its batch's partition
// leader epoch (header bytes 12-15, outside the CRC), -1 included.
func TestRecordBatchLeaderEpoch(t *testing.T) {
	for _, epoch := range []int32{0, 7, -1} {
		buf := encodeBatch(t, 0, 0, 1_000, 1_000, -1, []testRecord{{value: []byte("a")}, {offsetDelta: 1, value: []byte("b")}})
		binary.BigEndian.PutUint32(buf[12:], uint32(epoch))
		_, got := decodeOne(t, buf)
		for _, r := range got {
			if r.LeaderEpoch != epoch {
				t.Fatalf("record %d: leader epoch %d, want %d", r.Offset, r.LeaderEpoch, epoch)
			}
		}
	}
}

func TestRecordBatchErrors(t *testing.T) {
	good := encodeBatch(t, 7, 0, 0, 0, -1, []testRecord{{value: []byte("v")}})
	for _, cut := range []int{0, 10, 20, len(good) - 1} {
		if _, _, err := nextBatch(good[:cut]); !errors.Is(err, errTruncatedBatch) {
			t.Errorf("cut at %d: %v, want errTruncatedBatch", cut, err)
		}
	}
	bad := bytes.Clone(good)
	bad[len(bad)-1] ^= 0xff
	if _, _, err := nextBatch(bad); err == nil || !strings.Contains(err.Error(), "CRC") {
		t.Errorf("flipped byte: %v", err)
	}
	old := bytes.Clone(good)
	old[16] = 1
	if _, _, err := nextBatch(old); !errors.Is(err, ErrUnsupportedRecords) || !strings.Contains(err.Error(), "format v1") {
		t.Errorf("magic 1: %v", err)
	}
	// A response holding only part of its first batch would be fetched
	// again and again: an error, retried with backoff.
	f := &Fetcher{TP: testTP}
	bd := newBuilder(testTP, 0)
	defer bd.mem.release()
	if next, _, err := f.records(&fetchedPartition{records: good[:len(good)-1]}, 7, bd); err == nil || next != 7 {
		t.Errorf("partial first batch: next %d, %v", next, err)
	}
}

func TestAbortFilter(t *testing.T) {
	data := func(pid, first, last int64) recordBatch {
		return recordBatch{baseOffset: first, lastOffsetDelta: int32(last - first), producerID: pid, attributes: attrTransactional}
	}
	marker := func(pid, at int64) recordBatch {
		return recordBatch{baseOffset: at, producerID: pid, attributes: attrTransactional | attrControl}
	}
	// Producer 1 aborts [0..1] and later commits [5]; producer 2 aborts [2..4]
	// interleaved with 1's commit marker.
	f := newAbortFilter([]abortedTxn{{ProducerID: 2, FirstOffset: 2}, {ProducerID: 1, FirstOffset: 0}})
	steps := []struct {
		b      recordBatch
		marker int16 // -1: a data batch
		skip   bool
	}{
		{data(1, 0, 1), -1, true},
		{data(2, 2, 2), -1, true},
		{marker(1, 3), controlAbort, true},
		{data(2, 4, 4), -1, true},
		{data(1, 5, 5), -1, false},
		{marker(2, 6), controlAbort, true},
		{data(2, 7, 7), -1, false},
		{recordBatch{baseOffset: 8, producerID: 3}, -1, false}, // not transactional
	}
	for i, s := range steps {
		if s.marker >= 0 {
			f.sawControl(&s.b, s.marker)
			continue
		}
		if got := f.skipData(&s.b); got != s.skip {
			t.Errorf("step %d (offset %d): skip %v, want %v", i, s.b.baseOffset, got, s.skip)
		}
	}
}

func FuzzRecordBatch(f *testing.F) {
	f.Add(encodeBatch(f, 0, 0, 0, 0, -1, []testRecord{{key: []byte("k"), value: []byte("v"), headers: [][2]string{{"a", "b"}}}}))
	f.Add(encodeBatch(f, 5, int16(compress.Snappy), 1, 2, 9, []testRecord{{value: []byte("v")}, {offsetDelta: 2}}))
	f.Fuzz(func(t *testing.T, buf []byte) {
		// The record section alone, as if it passed the CRC check.
		raw := recordBatch{numRecords: int32(len(buf) % 64), records: buf}
		if recs, _ := appendAll(t, &raw, 0); len(recs) > int(raw.numRecords) {
			t.Fatalf("%d records from a section of %d", len(recs), raw.numRecords)
		}
		_, _ = raw.controlType()
		for len(buf) > 0 {
			b, rest, err := nextBatch(buf)
			if err != nil {
				return
			}
			if len(rest) >= len(buf) {
				t.Fatal("nextBatch consumed nothing")
			}
			buf = rest
			recs, _ := appendAll(t, &b, 0)
			if len(recs) > int(max(b.numRecords, 0)) {
				t.Fatalf("%d records from a batch of %d", len(recs), b.numRecords)
			}
			_, _ = b.controlType()
		}
	})
}

func FuzzMetadataResponse(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 1, 0})
	f.Fuzz(func(_ *testing.T, body []byte) {
		_, _ = parseMetadata(body, []string{"t"})
		_, _ = parseFetch(body, testTP)
	})
}

// TestEmptyControlBatch: on compacted topics the log cleaner keeps a control
// batch without records once it removed the marker. It must be stepped over
// like any control batch, not stall the partition.
func TestEmptyControlBatch(t *testing.T) {
	var records []byte
	records = append(records, encodeBatch(t, 0, attrTransactional, 0, 0, 7, []testRecord{{value: []byte("a")}})...)
	records = append(records, encodeBatch(t, 1, attrTransactional|attrControl, 0, 0, 7, nil)...)
	records = append(records, encodeBatch(t, 2, 0, 0, 0, -1, []testRecord{{value: []byte("b")}})...)
	for _, readCommitted := range []bool{true, false} {
		f := &Fetcher{TP: testTP, ReadCommitted: readCommitted}
		b, err := f.batch(&fetchedPartition{records: records}, 0, 0)
		if err != nil || b.Next != 3 || len(b.Records) != 2 || string(b.Records[1].Value) != "b" {
			t.Fatalf("read_committed=%v: %d records, next %d, %v", readCommitted, len(b.Records), b.Next, err)
		}
		b.Release()
	}
}

// fetchResponseBody encodes a v11 fetch response body for partition testTP
// with error code, preferred read replica and record batches records; its
// high watermark is 10, its last stable offset 8, and it lists an aborted
// transaction of producer 7 from offset 3.
func fetchResponseBody(code int16, preferred int32, records []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0) // throttle
	b = binary.BigEndian.AppendUint16(b, 0)    // error code
	b = binary.BigEndian.AppendUint32(b, 0)    // session id
	b = binary.BigEndian.AppendUint32(b, 1)    // topics
	b = binary.BigEndian.AppendUint16(b, uint16(len(testTP.Topic)))
	b = append(b, testTP.Topic...)
	b = binary.BigEndian.AppendUint32(b, 1) // partitions
	b = binary.BigEndian.AppendUint32(b, uint32(testTP.Partition))
	b = binary.BigEndian.AppendUint16(b, uint16(code))
	b = binary.BigEndian.AppendUint64(b, 10) // high watermark
	b = binary.BigEndian.AppendUint64(b, 8)  // last stable offset
	b = binary.BigEndian.AppendUint64(b, 0)  // log start offset
	b = binary.BigEndian.AppendUint32(b, 1)  // aborted transactions
	b = binary.BigEndian.AppendUint64(b, 7)
	b = binary.BigEndian.AppendUint64(b, 3)
	b = binary.BigEndian.AppendUint32(b, uint32(preferred))
	b = binary.BigEndian.AppendUint32(b, uint32(len(records)))
	return append(b, records...)
}

// TestFetchResponsePartition decodes a v11 fetch response and checks what
// the fetcher makes of the partition: its offsets, its aborted
// transactions, and a request to fetch from another replica, which would
// otherwise be answered at once, again and again, with no records.
func TestFetchResponsePartition(t *testing.T) {
	batch := encodeBatch(t, 0, 0, 0, 0, -1, []testRecord{{value: []byte("v")}})
	p, err := parseFetch(fetchResponseBody(0, -1, batch), testTP)
	if err != nil || p.highWatermark != 10 || p.lastStable != 8 || len(p.aborted) != 1 || p.aborted[0] != (abortedTxn{7, 3}) ||
		len(p.records) != len(batch) || p.check(testTP) != nil {
		t.Fatalf("parsed %+v, %v, check %v", p, err, p.check(testTP))
	}
	p, _ = parseFetch(fetchResponseBody(0, 2, nil), testTP)
	if err := p.check(testTP); err == nil || !strings.Contains(err.Error(), "replica 2") {
		t.Fatalf("preferred read replica: %v", err)
	}
	p, _ = parseFetch(fetchResponseBody(1, -1, nil), testTP)
	if err := p.check(testTP); !errors.Is(err, kafkago.OffsetOutOfRange) {
		t.Fatalf("error code 1: %v", err)
	}
}

// TestControlType reads the marker of control batches, compressed or not:
// of a compressed one only the first bytes are decompressed.
func TestControlType(t *testing.T) {
	for _, codec := range []compress.Compression{0, compress.Gzip, compress.Snappy, compress.Lz4, compress.Zstd} {
		for _, marker := range []int16{controlAbort, controlCommit} {
			key := binary.BigEndian.AppendUint16([]byte{0, 0}, uint16(marker))
			buf := encodeBatch(t, 9, attrTransactional|attrControl|int16(codec), 0, 0, 7,
				[]testRecord{{tsDelta: -1 << 40, key: key, value: bytes.Repeat([]byte{1}, 100)}})
			b, _, err := nextBatch(buf)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := b.controlType(); err != nil || got != marker {
				t.Errorf("%s: marker %d, %v; want %d", codec, got, err, marker)
			}
		}
	}
}
