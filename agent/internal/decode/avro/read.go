package avro

import (
	"encoding/binary"
	"math"
)

// The primitive readers: each reads one value at d.pos, or records why it
// cannot (for n's value) and returns false.

// long reads a zig-zag varint of up to 10 bytes; as in the Java library,
// the tenth byte's bits beyond the 64th are ignored.
func (d *Decoder) long(n *node) (int64, bool) {
	var u uint64
	for shift := uint(0); ; shift += 7 {
		if d.pos >= len(d.data) {
			return 0, d.fail(n, "truncated data")
		}
		c := d.data[d.pos]
		d.pos++
		u |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return int64(u>>1) ^ -int64(u&1), true
		}
		if shift == 63 {
			return 0, d.fail(n, "varint longer than 10 bytes")
		}
	}
}

// int reads a long, or an int when isInt, which must fit 32 bits.
func (d *Decoder) int(n *node, isInt bool) (int64, bool) {
	if d.pos < len(d.data) && d.data[d.pos] < 0x80 {
		c := int64(d.data[d.pos])
		d.pos++
		return c>>1 ^ -(c & 1), true
	}
	v, ok := d.long(n)
	if ok && isInt && v != int64(int32(v)) {
		return 0, d.fail(n, "int out of range")
	}
	return v, ok
}

// boolean reads a byte 0 or 1.
func (d *Decoder) boolean(n *node) (bool, bool) {
	if d.pos >= len(d.data) {
		return false, d.fail(n, "truncated data")
	}
	c := d.data[d.pos]
	if c > 1 {
		return false, d.fail(n, "boolean byte is neither 0 nor 1")
	}
	d.pos++
	return c == 1, true
}

// float reads a little-endian float.
func (d *Decoder) float(n *node) (float32, bool) {
	if len(d.data)-d.pos < 4 {
		return 0, d.fail(n, "truncated data")
	}
	v := math.Float32frombits(binary.LittleEndian.Uint32(d.data[d.pos:]))
	d.pos += 4
	return v, true
}

// double reads a little-endian double.
func (d *Decoder) double(n *node) (float64, bool) {
	if len(d.data)-d.pos < 8 {
		return 0, d.fail(n, "truncated data")
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.data[d.pos:]))
	d.pos += 8
	return v, true
}

// bytes reads a length-prefixed string or bytes, aliasing the data.
func (d *Decoder) bytes(n *node) ([]byte, bool) {
	l, ok := d.int(n, false)
	switch {
	case !ok:
		return nil, false
	case l < 0:
		return nil, d.fail(n, "negative length")
	case l > int64(len(d.data)-d.pos):
		return nil, d.fail(n, "length past the end of the data")
	}
	v := d.data[d.pos : d.pos+int(l) : d.pos+int(l)]
	d.pos += int(l)
	return v, true
}

// fixed reads n.size bytes, aliasing the data.
func (d *Decoder) fixed(n *node) ([]byte, bool) {
	if len(d.data)-d.pos < n.size {
		return nil, d.fail(n, "truncated data")
	}
	v := d.data[d.pos : d.pos+n.size : d.pos+n.size]
	d.pos += n.size
	return v, true
}

// block reads the header of an array or map block: its item count, 0 for
// the end, and for a negative count (made positive) the block's size in
// bytes that follows it, checked against the data left; size is -1 when
// absent.
func (d *Decoder) block(n *node) (count, size int64, ok bool) {
	count, ok = d.int(n, false)
	if !ok || count >= 0 {
		return count, -1, ok
	}
	if count == math.MinInt64 {
		return 0, 0, d.fail(n, "block count out of range")
	}
	size, ok = d.int(n, false)
	switch {
	case !ok:
		return 0, 0, false
	case size < 0:
		return 0, 0, d.fail(n, "negative block size")
	case size > int64(len(d.data)-d.pos):
		return 0, 0, d.fail(n, "block size past the end of the data")
	}
	return -count, size, true
}

// claim checks that count items of at least minSize bytes each fit the data
// left; items of no size draw on the datum's budget of free items instead.
func (d *Decoder) claim(n *node, count int64, minSize int) bool {
	if minSize > 0 {
		if count > int64(len(d.data)-d.pos)/int64(minSize) {
			return d.fail(n, "block count past the end of the data")
		}
		return true
	}
	if count > int64(d.free) {
		return d.fail(n, "too many items that take no bytes")
	}
	d.free -= int(count)
	return true
}

// skip passes over a writer value that has no column.
func (d *Decoder) skip(n *node, depth int) bool {
	switch n.op {
	case opSkipNull:
		return true
	case opSkipBool:
		_, ok := d.boolean(n)
		return ok
	case opSkipVarint:
		_, ok := d.long(n)
		return ok
	case opSkipN:
		_, ok := d.fixed(n)
		return ok
	case opSkipBytes:
		_, ok := d.bytes(n)
		return ok
	case opSkipRecord:
		if depth > maxDepth {
			return d.fail(n, "records nested too deeply")
		}
		for i := range n.fields {
			if !d.skip(n.fields[i].n, depth+1) {
				return false
			}
		}
		return true
	case opSkipUnion:
		i, ok := d.int(n, false)
		if !ok {
			return false
		}
		if i < 0 || i >= int64(len(n.branches)) {
			return d.fail(n, "union index out of range")
		}
		return d.skip(n.branches[i], depth)
	default: // opSkipArray, opSkipMap
		return d.skipBlocks(n, depth)
	}
}

// skipBlocks passes over an array's or map's blocks; a block that gives its
// size in bytes is jumped over.
func (d *Decoder) skipBlocks(n *node, depth int) bool {
	minSize := n.elem.minSize
	if n.op == opSkipMap {
		minSize++
	}
	for {
		count, size, ok := d.block(n)
		switch {
		case !ok:
			return false
		case count == 0:
			return true
		case size >= 0:
			d.pos += int(size)
			continue
		case !d.claim(n, count, minSize):
			return false
		}
		for range count {
			if n.op == opSkipMap {
				if _, ok := d.bytes(n); !ok {
					return false
				}
			}
			if !d.skip(n.elem, depth+1) {
				return false
			}
		}
	}
}
