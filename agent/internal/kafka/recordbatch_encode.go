package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/segmentio/kafka-go/compress"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
)

// This file encodes Kafka record batches (message format v2), the mirror of
// recordbatch.go's decoder. kafka-go's own record writer always writes
// producer id, epoch and base sequence -1, which a transactional producer
// cannot use: its batches must carry the id and epoch InitProducerId gave
// and a sequence number per partition.

// OutRecord is one record to write.
type OutRecord struct {
	// Key and Value are the record's bytes; nil is null (a tombstone
	// value).
	Key, Value []byte
	// Headers are the record's headers; a nil header value is null.
	Headers []record.Header
	// Timestamp is the record's CreateTime; the zero Time means the time
	// it is encoded.
	Timestamp time.Time
}

// batchProducer is the producer part of a record batch header: the id and
// epoch InitProducerId gave (-1 and -1 for a producer without one), the
// sequence number of the batch's first record (-1 without a producer id),
// and whether the batch belongs to a transaction.
type batchProducer struct {
	id            int64
	epoch         int16
	sequence      int32
	transactional bool
}

// noProducer is the header of a batch written without a producer id.
var noProducer = batchProducer{id: -1, epoch: -1, sequence: -1}

// errNoRecords is returned for a batch of no records, which Kafka refuses.
var errNoRecords = errors.New("a record batch needs at least one record")

// appendRecordBatch appends to dst a v2 record batch of recs, written by
// p, its records compressed with codec, and returns the extended slice.
// The base offset is 0 (the broker assigns offsets) and the partition
// leader epoch -1 (the broker sets it). A codec kafka-go does not know is
// an error; so is an empty recs.
func appendRecordBatch(dst []byte, p batchProducer, codec compress.Compression, recs []OutRecord) ([]byte, error) {
	if len(recs) == 0 {
		return dst, errNoRecords
	}
	now := time.Now().UnixMilli()
	base, maxTS := int64(-1), int64(-1)
	for i := range recs {
		ts := timestampOf(&recs[i], now)
		if i == 0 {
			base = ts
		}
		maxTS = max(maxTS, ts)
	}
	start := len(dst)
	dst = binary.BigEndian.AppendUint64(dst, 0)          // base offset
	dst = binary.BigEndian.AppendUint32(dst, 0)          // batch length, set below
	dst = binary.BigEndian.AppendUint32(dst, 0xffffffff) // partition leader epoch -1
	dst = append(dst, 2)                                 // magic
	dst = binary.BigEndian.AppendUint32(dst, 0)          // CRC, set below
	crcFrom := len(dst)
	dst = binary.BigEndian.AppendUint16(dst, uint16(attributesOf(p, codec)))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(recs)-1)) // last offset delta
	dst = binary.BigEndian.AppendUint64(dst, uint64(base))
	dst = binary.BigEndian.AppendUint64(dst, uint64(maxTS))
	dst = binary.BigEndian.AppendUint64(dst, uint64(p.id))
	dst = binary.BigEndian.AppendUint16(dst, uint16(p.epoch))
	dst = binary.BigEndian.AppendUint32(dst, uint32(p.sequence))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(recs)))
	if codec == compress.None {
		dst = appendRecords(dst, base, now, recs)
	} else {
		c := codec.Codec()
		if c == nil {
			return dst[:start], fmt.Errorf("%w: unknown compression codec %d", ErrUnsupportedRecords, codec)
		}
		var out bytes.Buffer
		out.Write(dst)
		w := c.NewWriter(&out)
		if _, err := w.Write(appendRecords(nil, base, now, recs)); err != nil {
			return dst[:start], fmt.Errorf("compress a record batch with %s: %w", codec, err)
		}
		if err := w.Close(); err != nil {
			return dst[:start], fmt.Errorf("compress a record batch with %s: %w", codec, err)
		}
		dst = out.Bytes()
	}
	binary.BigEndian.PutUint32(dst[start+8:], uint32(len(dst)-start-12))
	binary.BigEndian.PutUint32(dst[crcFrom-4:], crc32.Checksum(dst[crcFrom:], castagnoli))
	return dst, nil
}

// attributesOf returns the attributes of a batch written by p with codec.
func attributesOf(p batchProducer, codec compress.Compression) int16 {
	a := int16(codec) & attrCompression
	if p.transactional {
		a |= attrTransactional
	}
	return a
}

// timestampOf returns r's timestamp in milliseconds since the epoch, now
// for none.
func timestampOf(r *OutRecord, now int64) int64 {
	if r.Timestamp.IsZero() {
		return now
	}
	return r.Timestamp.UnixMilli()
}

// appendRecords appends the record section of recs to dst: each record
// framed by its varint length, with timestamps relative to base.
func appendRecords(dst []byte, base, now int64, recs []OutRecord) []byte {
	var rec []byte
	for i := range recs {
		r := &recs[i]
		rec = append(rec[:0], 0) // record attributes
		rec = binary.AppendVarint(rec, timestampOf(r, now)-base)
		rec = binary.AppendVarint(rec, int64(i)) // offset delta
		rec = appendVarBytes(rec, r.Key)
		rec = appendVarBytes(rec, r.Value)
		rec = binary.AppendVarint(rec, int64(len(r.Headers)))
		for _, h := range r.Headers {
			rec = binary.AppendVarint(rec, int64(len(h.Key)))
			rec = append(rec, h.Key...)
			rec = appendVarBytes(rec, h.Value)
		}
		dst = binary.AppendVarint(dst, int64(len(rec)))
		dst = append(dst, rec...)
	}
	return dst
}

// appendVarBytes appends b framed by its varint length, -1 for nil.
func appendVarBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}
