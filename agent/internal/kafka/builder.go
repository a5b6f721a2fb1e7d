package kafka

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unsafe"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
)

// headerSize is the memory a record header takes besides its key and the
// bytes its value points into.
const headerSize = int64(unsafe.Sizeof(record.Header{}))

// Sizing of decompression buffers. A compressed batch is expected to grow
// by the ratio the previous batch of the fetch grew by (initialRatio for
// the first), plus an eighth; ratios are in sixteenths, and the expected
// ratio is capped at maxRatio, so that one batch of zeros does not make
// the next ones take huge buffers. A new buffer makes room for the rest of
// the fetch too, up to lookahead bytes, so that the batches of a fetch
// share few buffers. A batch that outgrows its buffer moves to one twice
// the size it reached: that is the only copy.
const (
	initialRatio = 4 * 16
	maxRatio     = 32 * 16
	lookahead    = 1 << 20
)

// held is the pooled memory of one batch, which its records point into:
// [Batch.Release] gives it back to the pools.
type held struct {
	// buffers are the fetch response, when records point into it, and
	// the buffers compressed record batches were decompressed into; a
	// buffer's length is how much of it is used.
	buffers []*[]byte
	// records holds the batch's records; nil until room for them is
	// first reserved.
	records *[]record.Record
	// headers are the slices the records' headers are cut from, the last
	// one being cut; a slice's length is how much of it is cut.
	headers []*[]record.Header
}

// size returns the memory the batch holds through h.
func (h *held) size() int64 {
	var n int64
	for _, b := range h.buffers {
		n += int64(cap(*b))
	}
	if h.records != nil {
		n += int64(cap(*h.records)) * recordSize
	}
	for _, s := range h.headers {
		n += int64(cap(*s)) * headerSize
	}
	return n
}

// release gives h's memory back to the pools and forgets it, so that
// releasing again gives nothing back twice. Their pools zero records and
// headers: pooled, they would keep what they point to alive.
func (h *held) release() {
	for _, b := range h.buffers {
		bytePool.put(b)
	}
	if h.records != nil {
		recordPool.put(h.records)
	}
	for _, s := range h.headers {
		headerPool.put(s)
	}
	*h = held{}
}

// builder lays out the records of one fetched partition in memory taken
// from the pools, which mem holds.
type builder struct {
	tp  TopicPartition
	mem *held
	// sizeHint is the number of records the records slice starts with
	// room for.
	sizeHint int
	// cur is the buffer of mem.buffers compressed batches are being
	// decompressed into; nil before the first.
	cur *[]byte
	// ratio is how much the next compressed batch is expected to grow
	// when decompressed, in sixteenths.
	ratio int
	// limit is the largest a record batch may decompress to:
	// maxBatchBytes.
	limit int
	// fromResponse is whether a record points into the fetch response.
	fromResponse bool
	// src reads the compressed batch being decompressed, and probe the
	// byte that tells whether a full buffer holds the whole batch.
	src   bytes.Reader
	probe [1]byte
}

// newBuilder returns a builder of records of tp, whose records slice
// starts with room for sizeHint records.
func newBuilder(tp TopicPartition, sizeHint int) *builder {
	return &builder{tp: tp, mem: &held{}, sizeHint: sizeHint, ratio: initialRatio, limit: maxBatchBytes}
}

// records returns the records appended so far.
func (bd *builder) records() []record.Record {
	if bd.mem.records == nil {
		return nil
	}
	return *bd.mem.records
}

// reserve makes room for n more records, moving those appended so far to
// a larger slice from the pool if need be.
func (bd *builder) reserve(n int) {
	old := bd.mem.records
	if old == nil {
		bd.mem.records = recordPool.get(max(n, bd.sizeHint))
		return
	}
	if cap(*old)-len(*old) >= n {
		return
	}
	grown := recordPool.get(max(len(*old)+n, 2*len(*old)))
	*grown = append(*grown, *old...)
	bd.mem.records = grown
	recordPool.put(old)
}

// headers returns room for n record headers, cut from the last header
// slice, or from a new one from the pool when the last one is full.
func (bd *builder) headers(n int) []record.Header {
	var cur *[]record.Header
	if k := len(bd.mem.headers); k > 0 {
		cur = bd.mem.headers[k-1]
	}
	if cur == nil || cap(*cur)-len(*cur) < n {
		size := 64
		if cur != nil {
			size = 2 * cap(*cur)
		}
		cur = headerPool.get(max(n, size))
		bd.mem.headers = append(bd.mem.headers, cur)
	}
	i := len(*cur)
	*cur = (*cur)[:i+n]
	return (*cur)[i : i+n : i+n]
}

// inflate decompresses b's record section once, into the current
// decompression buffer after the batches already there, or into a new
// buffer from the pool when the estimate of its size does not fit, and
// returns it. ahead is the size of the fetched batches after b, which a
// new buffer makes room for too. A section larger than the limit is an
// error.
func (bd *builder) inflate(b *recordBatch, ahead int) ([]byte, error) {
	bd.src.Reset(b.records)
	r, err := b.decompressor(&bd.src)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	want := bd.estimate(len(b.records))
	if bd.cur == nil || cap(*bd.cur)-len(*bd.cur) < want {
		bd.newBuffer(max(want, min(bd.estimate(len(b.records)+ahead), lookahead)))
	}
	start := len(*bd.cur)
	for {
		if len(*bd.cur)-start > bd.limit {
			return nil, bd.tooLarge(b)
		}
		buf := *bd.cur
		var n int
		if len(buf) < cap(buf) {
			n, err = r.Read(buf[len(buf):cap(buf)])
			*bd.cur = buf[:len(buf)+n]
		} else if n, err = r.Read(bd.probe[:]); n > 0 {
			// The buffer is full and the section goes on.
			bd.grow(start)
			start = 0
			*bd.cur = append(*bd.cur, bd.probe[0])
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("record batch at offset %d: decompress %s: %w", b.baseOffset, b.codec(), err)
		}
	}
	section := (*bd.cur)[start:len(*bd.cur):len(*bd.cur)]
	if len(section) > bd.limit {
		return nil, bd.tooLarge(b)
	}
	if len(b.records) > 0 {
		ratio := (int64(len(section))*16 + int64(len(b.records)) - 1) / int64(len(b.records))
		bd.ratio = int(min(max(ratio, 16), maxRatio))
	}
	return section, nil
}

// tooLarge returns the error for batch b decompressing to more than the
// limit.
func (bd *builder) tooLarge(b *recordBatch) error {
	return fmt.Errorf("record batch at offset %d decompresses to more than %d MiB", b.baseOffset, bd.limit>>20)
}

// estimate returns the expected decompressed size of n compressed bytes,
// up to one byte past the limit.
func (bd *builder) estimate(n int) int {
	e := int64(n) * int64(bd.ratio) / 16
	return int(min(e+e/8, int64(bd.limit)+1))
}

// newBuffer takes a buffer of at least n bytes from the pool into mem and
// makes it the current decompression buffer.
func (bd *builder) newBuffer(n int) {
	bd.cur = bytePool.get(n)
	bd.mem.buffers = append(bd.mem.buffers, bd.cur)
}

// grow moves the part of a section decompressed so far, from start in the
// full current buffer, to the start of a new buffer twice its size (up to
// one byte past the limit). The old buffer goes back to the pool when it
// held nothing else.
func (bd *builder) grow(start int) {
	old := bd.cur
	part := (*old)[start:]
	bd.newBuffer(min(max(2*len(part), 1<<10), bd.limit+1))
	*bd.cur = append(*bd.cur, part...)
	if start == 0 {
		k := len(bd.mem.buffers)
		bd.mem.buffers[k-2] = bd.cur
		bd.mem.buffers = bd.mem.buffers[:k-1]
		bytePool.put(old)
	}
}
