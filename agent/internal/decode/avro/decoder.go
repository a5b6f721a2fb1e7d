package avro

import (
	"fmt"
	"unicode/utf8"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
)

// maxFreeItems bounds the array and map items per datum whose encoding
// takes no bytes (nulls, records of nulls): their count, read from the
// input, cannot be checked against the bytes left, so hostile input could
// otherwise have a few bytes write billions of values.
const maxFreeItems = 1 << 16

// maxDepth bounds the nesting of a skipped recursive writer record, so that
// hostile input cannot exhaust the stack.
const maxDepth = 1000

// Decoder decodes Avro binary data written with one writer schema into a
// part's columns. It is compiled once by [NewDecoder], reused for every
// datum, and not safe for concurrent use.
type Decoder struct {
	top *node
	// column is the top-level column a non-record reader fills, -1 for a
	// record reader, whose fields are the columns.
	column int

	// The datum being decoded.
	b     *rows.Builder
	data  []byte
	pos   int
	first int
	free  int
	// The first malformation met: its message, the path of the value and
	// the byte offset.
	msg  string
	path string
	off  int
}

// Decode writes one datum into b's open row, at top-level fields first to
// first+len(cols)-1. Strings and bytes alias data, which must stay
// unchanged until the batch is written; decimals that need converting go to
// [rows.Builder.Alloc]. Malformed data returns an error naming the field
// and the byte offset, and leaves the fields partly written: the caller
// discards them with [rows.Builder.DiscardFields]. Malformed is: truncated
// data, a varint over 10 bytes, an int out of its 32 bits, a boolean byte
// other than 0 or 1, a union or enum index out of range (or an enum symbol
// the reader lacks, without a default), a negative length or block size, a
// length or item count past the end of the data, more than 65536 items
// that take no bytes, bytes left after the datum, a STRING value that is
// not valid UTF-8 (Spark would store it as is; a Parquet STRING must be
// UTF-8, so such a record is corrupt, as in the JSON decoder), an empty
// decimal, a decimal beyond its column's precision, a timestamp in
// milliseconds beyond the microseconds a BIGINT holds, and a writer union
// branch the reader cannot resolve.
func (d *Decoder) Decode(b *rows.Builder, first int, data []byte) error {
	d.b, d.data, d.pos, d.first, d.free = b, data, 0, first, maxFreeItems
	d.msg, d.path, d.off = "", "", 0
	if d.column >= 0 {
		b.Field(first + d.column)
	}
	ok := d.value(d.top)
	if ok && d.pos != len(d.data) {
		ok = d.fail(&node{}, "bytes left after the datum")
	}
	d.b, d.data = nil, nil
	if !ok {
		return fmt.Errorf("malformed avro datum: %s at byte %d: %s", nameOr(d.path), d.off, d.msg)
	}
	return nil
}

// fail records the first malformation, at n's value, and returns false.
func (d *Decoder) fail(n *node, msg string) bool {
	if d.msg == "" {
		d.msg, d.path, d.off = msg, n.path, d.pos
	}
	return false
}

// value decodes the value of node n into the Builder's current position.
func (d *Decoder) value(n *node) bool {
	switch n.op {
	case opNull:
		d.b.Null()
	case opBool:
		v, ok := d.boolean(n)
		if !ok {
			return false
		}
		d.b.Bool(v)
	case opInt32:
		v, ok := d.int(n, true)
		if !ok {
			return false
		}
		d.b.Int32(int32(v))
	case opInt64:
		v, ok := d.int(n, n.isInt)
		if !ok {
			return false
		}
		d.b.Int64(v)
	case opMicros:
		v, ok := d.int(n, n.isInt)
		if !ok {
			return false
		}
		if v > maxMillis || v < -maxMillis {
			return d.fail(n, "timestamp out of range")
		}
		d.b.Int64(v * 1000)
	case opLongFloat:
		v, ok := d.int(n, n.isInt)
		if !ok {
			return false
		}
		d.b.Float(float32(v))
	case opLongDouble:
		v, ok := d.int(n, n.isInt)
		if !ok {
			return false
		}
		d.b.Double(float64(v))
	case opFloat, opFloatDouble:
		v, ok := d.float(n)
		if !ok {
			return false
		}
		if n.op == opFloat {
			d.b.Float(v)
		} else {
			d.b.Double(float64(v))
		}
	case opDouble:
		v, ok := d.double(n)
		if !ok {
			return false
		}
		d.b.Double(v)
	case opString, opBinary:
		v, ok := d.bytes(n)
		if !ok {
			return false
		}
		if n.op == opString && !utf8.Valid(v) {
			return d.fail(n, "invalid UTF-8 in a string")
		}
		d.b.Bytes(v)
	case opFixed:
		v, ok := d.fixed(n)
		if !ok {
			return false
		}
		d.b.Bytes(v)
	case opEnum:
		i, ok := d.int(n, true)
		if !ok {
			return false
		}
		if i < 0 || i >= int64(len(n.symbols)) || n.symbols[i] == nil {
			return d.fail(n, fmt.Sprintf("enum index %d has no symbol in the reader's schema", i))
		}
		d.b.Bytes(n.symbols[i])
	case opDecimal:
		v, ok := d.bytes(n)
		return ok && d.decimal(n, v)
	case opDecimalFixed:
		v, ok := d.fixed(n)
		return ok && d.decimal(n, v)
	case opRecord:
		return d.record(n)
	case opArray:
		return d.array(n)
	case opMap:
		return d.mapping(n)
	case opUnion:
		i, ok := d.int(n, false)
		if !ok {
			return false
		}
		if i < 0 || i >= int64(len(n.branches)) {
			return d.fail(n, fmt.Sprintf("union index %d out of range", i))
		}
		return d.value(n.branches[i])
	case opMember:
		d.b.BeginStruct()
		d.b.Field(n.member)
		if !d.value(n.elem) {
			return false
		}
		d.b.EndStruct()
	case opFail:
		return d.fail(n, n.msg)
	default:
		return d.skip(n, 0)
	}
	return true
}

// maxMillis is the largest magnitude of milliseconds whose microseconds
// fit 64 bits.
const maxMillis = (1<<63 - 1) / 1000

// record decodes a record's fields and then its reader-only fields'
// defaults.
func (d *Decoder) record(n *node) bool {
	base := 0
	if n.top {
		base = d.first
	} else {
		d.b.BeginStruct()
	}
	for i := range n.fields {
		f := &n.fields[i]
		if f.index < 0 {
			if !d.skip(f.n, 0) {
				return false
			}
			continue
		}
		d.b.Field(base + f.index)
		if !d.value(f.n) {
			return false
		}
	}
	for i := range n.defaults {
		f := &n.defaults[i]
		d.b.Field(base + f.index)
		data, pos := d.data, d.pos
		d.data, d.pos = f.encoded, 0
		ok := d.value(f.n)
		d.data, d.pos = data, pos
		if !ok {
			return false
		}
	}
	if !n.top {
		d.b.EndStruct()
	}
	return true
}

// array decodes an array's blocks into a list.
func (d *Decoder) array(n *node) bool {
	d.b.BeginList()
	for {
		count, _, ok := d.block(n)
		if !ok || count > 0 && !d.claim(n, count, n.elem.minSize) {
			return false
		}
		if count == 0 {
			break
		}
		for range count {
			if !d.value(n.elem) {
				return false
			}
		}
	}
	d.b.EndList()
	return true
}

// mapping decodes a map's blocks into a map.
func (d *Decoder) mapping(n *node) bool {
	d.b.BeginMap()
	for {
		count, _, ok := d.block(n)
		if !ok || count > 0 && !d.claim(n, count, 1+n.elem.minSize) {
			return false
		}
		if count == 0 {
			break
		}
		for range count {
			k, ok := d.bytes(n)
			if !ok {
				return false
			}
			if !utf8.Valid(k) {
				return d.fail(n, "invalid UTF-8 in a map key")
			}
			d.b.Bytes(k)
			if !d.value(n.elem) {
				return false
			}
		}
	}
	d.b.EndMap()
	return true
}
