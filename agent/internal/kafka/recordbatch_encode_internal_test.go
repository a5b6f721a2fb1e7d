package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/compress"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
)

// roundTrip encodes recs as a batch of p with codec, decodes it with the
// fetch path's decoder, and returns the batch header and the records.
func roundTrip(t testing.TB, p batchProducer, codec compress.Compression, recs []OutRecord) (recordBatch, []byte, []record.Record) {
	t.Helper()
	buf, err := appendRecordBatch([]byte("prefix"), p, codec, recs)
	if err != nil {
		t.Fatal(err)
	}
	if string(buf[:6]) != "prefix" {
		t.Fatalf("dst's bytes were overwritten: %q", buf[:6])
	}
	buf = buf[6:]
	b, got := decodeOne(t, buf)
	return b, buf, got
}

// sameRecords fails t unless got holds recs, with offsets from 0 and the
// timestamps recs have (now for none, between before and after).
func sameRecords(t testing.TB, recs []OutRecord, got []record.Record, before, after time.Time) {
	t.Helper()
	if len(got) != len(recs) {
		t.Fatalf("%d records back, want %d", len(got), len(recs))
	}
	for i, r := range recs {
		g := got[i]
		if g.Offset != int64(i) || !bytes.Equal(g.Key, r.Key) || (g.Key == nil) != (r.Key == nil) ||
			!bytes.Equal(g.Value, r.Value) || (g.Value == nil) != (r.Value == nil) || len(g.Headers) != len(r.Headers) {
			t.Fatalf("record %d: got %+v, want %+v", i, g, r)
		}
		for j, h := range r.Headers {
			if g.Headers[j].Key != h.Key || !bytes.Equal(g.Headers[j].Value, h.Value) || (g.Headers[j].Value == nil) != (h.Value == nil) {
				t.Fatalf("record %d header %d: got %+v, want %+v", i, j, g.Headers[j], h)
			}
		}
		switch {
		case r.Timestamp.IsZero():
			if g.Timestamp.Before(before.Truncate(time.Millisecond)) || g.Timestamp.After(after) {
				t.Fatalf("record %d: timestamp %v is not the time it was encoded", i, g.Timestamp)
			}
		case !g.Timestamp.Equal(r.Timestamp.Truncate(time.Millisecond)):
			t.Fatalf("record %d: timestamp %v, want %v", i, g.Timestamp, r.Timestamp)
		}
	}
}

func TestRecordBatchEncode(t *testing.T) {
	t0 := time.UnixMilli(1_700_000_000_000)
	recs := []OutRecord{
		{Key: []byte("k0"), Value: []byte("v0"), Timestamp: t0.Add(5 * time.Millisecond),
			Headers: []record.Header{{Key: "h", Value: []byte("x")}, {Key: "h", Value: nil}, {Key: "", Value: []byte{}}}},
		{Key: nil, Value: nil, Timestamp: t0},                                                // earlier than the first
		{Key: []byte{}, Value: bytes.Repeat([]byte("v"), 300), Timestamp: t0.Add(time.Hour)}, // the max
		{Value: []byte("now")}, // no timestamp: the time of encoding
	}
	for _, codec := range codecs {
		for _, p := range []batchProducer{noProducer, {id: 4242, epoch: 7, sequence: 1 << 30, transactional: true}} {
			t.Run(codec.String(), func(t *testing.T) {
				before := time.Now()
				b, buf, got := roundTrip(t, p, codec, recs)
				after := time.Now()
				sameRecords(t, recs, got, before, after)
				if b.codec() != codec || b.transactional() != p.transactional || b.control() || b.logAppendTime() {
					t.Fatalf("attributes %#x for codec %s, transactional %v", b.attributes, codec, p.transactional)
				}
				if b.producerID != p.id || b.numRecords != 4 || b.lastOffset() != 3 || b.baseOffset != 0 {
					t.Fatalf("header: %+v", b)
				}
				if b.baseTimestamp != t0.Add(5*time.Millisecond).UnixMilli() || b.maxTimestamp < t0.Add(time.Hour).UnixMilli() {
					t.Fatalf("base timestamp %d, max %d", b.baseTimestamp, b.maxTimestamp)
				}
				// Fields the decoder skips: leader epoch, epoch, sequence.
				if le := int32(binary.BigEndian.Uint32(buf[12:])); le != -1 {
					t.Fatalf("partition leader epoch %d, want -1", le)
				}
				if e, s := int16(binary.BigEndian.Uint16(buf[51:])), int32(binary.BigEndian.Uint32(buf[53:])); e != p.epoch || s != p.sequence {
					t.Fatalf("producer epoch %d, base sequence %d; want %d, %d", e, s, p.epoch, p.sequence)
				}
			})
		}
	}
}

func TestRecordBatchEncodeErrors(t *testing.T) {
	if _, err := appendRecordBatch(nil, noProducer, compress.None, nil); !errors.Is(err, errNoRecords) {
		t.Fatalf("no records: %v", err)
	}
	dst := []byte("keep")
	out, err := appendRecordBatch(dst, noProducer, compress.Compression(7), []OutRecord{{Value: []byte("v")}})
	if !errors.Is(err, ErrUnsupportedRecords) || string(out) != "keep" {
		t.Fatalf("unknown codec: %v, dst %q", err, out)
	}
}

// FuzzRecordBatchEncode encodes records made of the fuzzer's bytes with
// every codec and checks the decoder reads the same records back.
func FuzzRecordBatchEncode(f *testing.F) {
	f.Add([]byte("k"), []byte("v"), "h", []byte("x"), uint8(3), int64(1_700_000_000_000))
	f.Add([]byte{}, []byte{}, "", []byte{}, uint8(1), int64(0))
	f.Fuzz(func(t *testing.T, key, value []byte, hk string, hv []byte, n uint8, ms int64) {
		ms &= 1<<50 - 1 // a time a batch can hold without overflowing its deltas
		var recs []OutRecord
		for i := range int(n%8) + 1 {
			r := OutRecord{Key: key, Value: value, Timestamp: time.UnixMilli(ms + int64(i)*int64(len(value)-3))}
			if i%2 == 1 {
				r.Key, r.Value = nil, nil
			}
			if i%3 == 0 {
				r.Headers = []record.Header{{Key: hk, Value: hv}}
			}
			recs = append(recs, r)
		}
		for _, codec := range codecs {
			_, _, got := roundTrip(t, batchProducer{id: 1, epoch: 2, sequence: 3, transactional: true}, codec, recs)
			sameRecords(t, recs, got, time.Time{}, time.Time{})
		}
	})
}

// BenchmarkRecordBatchEncode measures encoding a transactional batch of
// 100 ~100-byte JSON records, per codec, into a reused buffer.
func BenchmarkRecordBatchEncode(b *testing.B) {
	recs := make([]OutRecord, 100)
	size := 0
	for i := range recs {
		recs[i] = OutRecord{Key: fmt.Appendf(nil, "%d", i), Timestamp: time.UnixMilli(1_714_566_896_789 + int64(i)),
			Value: fmt.Appendf(nil, `{"id":%d,"name":"user-%d","amount":%d.45,"ts":"2024-05-01T12:34:56.789Z","tags":["a","b"]}`, i, i, i)}
		size += len(recs[i].Key) + len(recs[i].Value)
	}
	p := batchProducer{id: 1, epoch: 0, sequence: 0, transactional: true}
	for _, codec := range codecs {
		b.Run(codec.String(), func(b *testing.B) {
			var buf []byte
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if buf, err = appendRecordBatch(buf[:0], p, codec, recs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
