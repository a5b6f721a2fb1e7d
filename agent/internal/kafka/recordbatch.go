package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"time"

	"github.com/segmentio/kafka-go/compress"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
)

// This file decodes Kafka record batches (message format v2, the only one
// Kafka 4 stores). kafka-go's protocol package decodes them too, but drops
// two header fields the agent needs: the last offset delta (where the next
// fetch starts when a batch's tail records were compacted away, or when a
// whole batch is skipped) and the max timestamp (the record time of every
// record in a LogAppendTime batch). Decoding here also lets keys and values
// point into the fetch response, or into the pooled buffer a compressed
// batch is decompressed into, instead of one allocation per record.

// Record batch attribute bits.
const (
	attrCompression   = 0x07
	attrLogAppendTime = 0x08
	attrTransactional = 0x10
	attrControl       = 0x20
)

// batchHeaderSize is the size of a v2 record batch header, from the base
// offset to the record count inclusive.
const batchHeaderSize = 61

// Control record types (the second int16 of a control record's key), and
// controlNone for a control batch whose marker the log cleaner removed.
const (
	controlNone   = -1
	controlAbort  = 0
	controlCommit = 1
)

// maxBatchBytes bounds the uncompressed size of one record batch: a batch
// that claims more is refused rather than exhausting memory.
const maxBatchBytes = 256 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrUnsupportedRecords is wrapped by the errors of record batches the
// agent cannot read however often it retries: an old message format, an
// unknown compression codec. [Fetcher.Run] returns them at once.
var ErrUnsupportedRecords = errors.New("unsupported records")

// errTruncatedBatch is returned for a batch cut short by the fetch size; the
// next fetch reads it whole.
var errTruncatedBatch = errors.New("truncated record batch")

// recordBatch is one decoded v2 record batch header plus its raw records.
type recordBatch struct {
	baseOffset      int64
	lastOffsetDelta int32
	// leaderEpoch is the partition leader epoch the batch was written in,
	// -1 when the producer's batch never reached a leader that set it.
	leaderEpoch   int32
	attributes    int16
	baseTimestamp int64
	maxTimestamp  int64
	producerID    int64
	numRecords    int32
	// records is the batch's record section, compressed when the
	// attributes say so.
	records []byte
}

func (b *recordBatch) lastOffset() int64   { return b.baseOffset + int64(b.lastOffsetDelta) }
func (b *recordBatch) control() bool       { return b.attributes&attrControl != 0 }
func (b *recordBatch) transactional() bool { return b.attributes&attrTransactional != 0 }
func (b *recordBatch) logAppendTime() bool { return b.attributes&attrLogAppendTime != 0 }

// codec returns the compression of the batch's records.
func (b *recordBatch) codec() compress.Compression {
	return compress.Compression(b.attributes & attrCompression)
}

// nextBatch decodes the record batch at the start of buf and returns it and
// the bytes after it. A batch cut short at the end of buf (the broker fills
// a fetch up to its size limit) is [errTruncatedBatch].
func nextBatch(buf []byte) (recordBatch, []byte, error) {
	var b recordBatch
	if len(buf) < 17 {
		return b, nil, errTruncatedBatch
	}
	b.baseOffset = int64(binary.BigEndian.Uint64(buf))
	length := int(int32(binary.BigEndian.Uint32(buf[8:])))
	if magic := buf[16]; magic != 2 {
		return b, nil, fmt.Errorf("%w: record batch at offset %d has message format v%d; only v2 (Kafka 0.11 and later) is supported",
			ErrUnsupportedRecords, b.baseOffset, magic)
	}
	if length < batchHeaderSize-12 {
		return b, nil, fmt.Errorf("record batch at offset %d has an impossible length %d", b.baseOffset, length)
	}
	if len(buf) < 12+length {
		return b, nil, errTruncatedBatch
	}
	body := buf[12 : 12+length]
	b.leaderEpoch = int32(binary.BigEndian.Uint32(body))
	// body: leader epoch (4), magic (1), crc (4), then what the crc covers.
	if want, got := binary.BigEndian.Uint32(body[5:]), crc32.Checksum(body[9:], castagnoli); want != got {
		return b, nil, fmt.Errorf("record batch at offset %d fails its CRC check (corrupt on the broker or in transit)", b.baseOffset)
	}
	h := body[9:]
	b.attributes = int16(binary.BigEndian.Uint16(h))
	b.lastOffsetDelta = int32(binary.BigEndian.Uint32(h[2:]))
	b.baseTimestamp = int64(binary.BigEndian.Uint64(h[6:]))
	b.maxTimestamp = int64(binary.BigEndian.Uint64(h[14:]))
	b.producerID = int64(binary.BigEndian.Uint64(h[22:]))
	// producer epoch (2) and base sequence (4) are not needed.
	b.numRecords = int32(binary.BigEndian.Uint32(h[36:]))
	b.records = h[40:]
	return b, buf[12+length:], nil
}

// decompressor returns a reader of b's record section decompressed from
// src, which holds it compressed. The caller closes it.
func (b *recordBatch) decompressor(src io.Reader) (io.ReadCloser, error) {
	c := b.codec().Codec()
	if c == nil {
		return nil, fmt.Errorf("%w: record batch at offset %d: unknown compression codec %d", ErrUnsupportedRecords, b.baseOffset, b.codec())
	}
	return c.NewReader(src), nil
}

// batchDecoder reads varint-framed records out of an uncompressed record
// section.
type batchDecoder struct {
	buf []byte
	err error
}

func (d *batchDecoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.err = errors.New("bad varint")
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

// bytes reads a varint length and that many bytes; length -1 is nil.
func (d *batchDecoder) bytes() []byte {
	n := d.varint()
	if d.err != nil || n < 0 {
		return nil
	}
	if int64(len(d.buf)) < n {
		d.err = errors.New("field longer than the batch")
		return nil
	}
	v := d.buf[:n:n]
	d.buf = d.buf[n:]
	return v
}

// minRecordSize is the size of the smallest record: its length, attributes,
// timestamp delta, offset delta, key length, value length and header count
// take a byte each at least.
const minRecordSize = 7

// appendRecords decodes b's records at or after from and appends them to
// the builder's. Keys, values and header values point into the batch:
// into the fetch response, or for a compressed batch, into the buffer it
// was decompressed into. ahead is the size of the fetched batches after b
// (see [builder.inflate]).
func (bd *builder) appendRecords(b *recordBatch, from int64, ahead int) error {
	raw := b.records
	compressed := b.codec() != compress.None
	if compressed {
		var err error
		if raw, err = bd.inflate(b, ahead); err != nil {
			return fmt.Errorf("%s: %w", bd.tp, err)
		}
	}
	bd.reserve(min(int(max(b.numRecords, 0)), len(raw)/minRecordSize))
	recs := bd.mem.records
	before := len(*recs)
	tsType := int8(0)
	if b.logAppendTime() {
		tsType = 1
	}
	// prev holds the previous record's headers, whose keys the next
	// record's usually repeat: their strings are shared, not made again.
	var prev []record.Header
	d := batchDecoder{buf: raw}
	for i := int32(0); i < b.numRecords; i++ {
		d.varint() // record length
		if d.err == nil && len(d.buf) > 0 {
			d.buf = d.buf[1:] // record attributes (unused)
		}
		tsDelta := d.varint()
		offset := b.baseOffset + d.varint()
		key := d.bytes()
		value := d.bytes()
		var headers []record.Header
		if n := d.varint(); n > 0 && d.err == nil {
			if n > int64(len(d.buf))/2 { // a header takes at least two bytes
				d.err = errors.New("more headers than bytes")
				break
			}
			headers = bd.headers(int(n))
			for j := range headers {
				headers[j] = record.Header{Key: d.headerKey(prev, j), Value: d.bytes()}
			}
			prev = headers
		}
		if d.err != nil {
			break
		}
		if offset < from {
			continue // a fetch inside a batch returns the batch whole
		}
		ts := b.baseTimestamp + tsDelta
		if tsType == 1 {
			ts = b.maxTimestamp
		}
		*recs = append(*recs, record.Record{
			Topic: bd.tp.Topic, Partition: int32(bd.tp.Partition), Offset: offset,
			Timestamp: time.UnixMilli(ts), TimestampType: tsType, LeaderEpoch: b.leaderEpoch,
			Key: key, Value: value, Headers: headers,
		})
	}
	if !compressed && len(*recs) > before {
		bd.fromResponse = true
	}
	if d.err != nil {
		return fmt.Errorf("record batch at offset %d of %s: %w", b.baseOffset, bd.tp, d.err)
	}
	return nil
}

// headerKey reads a header key: the string of prev's j-th key when the
// bytes are the same, else a new one.
func (d *batchDecoder) headerKey(prev []record.Header, j int) string {
	key := d.bytes()
	if j < len(prev) && prev[j].Key == string(key) {
		return prev[j].Key
	}
	return string(key)
}

// controlPrefix is how much of a compressed control batch's records is
// decompressed to read its marker: the first record's length, attributes,
// timestamp delta, offset delta and key length take 26 bytes at most,
// and its key 4.
const controlPrefix = 64

// controlType returns the type of a control batch's marker: controlAbort or
// controlCommit (or another value a future Kafka defines), or controlNone
// for a batch without records: on compacted topics the log cleaner keeps an
// empty control batch once it removed the marker, as Kafka's consumer
// expects.
func (b *recordBatch) controlType() (int16, error) {
	if b.numRecords <= 0 {
		return controlNone, nil
	}
	raw := b.records
	if b.codec() != compress.None {
		// The marker is the first record's key: a prefix is enough.
		r, err := b.decompressor(bytes.NewReader(b.records))
		if err != nil {
			return 0, err
		}
		defer r.Close()
		raw = make([]byte, controlPrefix)
		n, err := io.ReadFull(r, raw)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("control batch at offset %d: decompress %s: %w", b.baseOffset, b.codec(), err)
		}
		raw = raw[:n]
	}
	d := batchDecoder{buf: raw}
	d.varint() // record length
	if d.err == nil && len(d.buf) > 0 {
		d.buf = d.buf[1:]
	}
	d.varint() // timestamp delta
	d.varint() // offset delta
	key := d.bytes()
	if d.err != nil || len(key) < 4 {
		return 0, fmt.Errorf("control batch at offset %d has no valid marker key", b.baseOffset)
	}
	return int16(binary.BigEndian.Uint16(key[2:])), nil
}
