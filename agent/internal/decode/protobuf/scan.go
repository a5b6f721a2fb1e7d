package protobuf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
)

// A message is decoded in two passes. The first (scan) reads its tags and
// records, per tracked field, the occurrences of the field in wire order:
// fields may come in any order and repeat, and a list's elements must reach
// the Builder together. The second (write, in write.go) walks the plan's
// fields in column order and writes each from its occurrences: the last for
// a single value, all of them for a list or a map, all of them for a
// message, whose occurrences merge as protobuf specifies, as though their
// bytes were concatenated, by scanning each in turn into the same slots.
// Unknown fields, and known fields with another wire type (unknown fields
// to protobuf), are skipped by protowire, which bounds the nesting of
// groups.

// occ is one occurrence of a field: the bytes of its value in the record
// (for a group, between its start and end tags) and, for a varint or a
// fixed-size number, its wire bits.
type occ struct {
	start, end int32
	bits       uint64
	// next is the index in Decoder.occs of the field's next occurrence, 0
	// for none.
	next int32
	wire protowire.Type
}

// slot lists the occurrences of one field of a message being decoded:
// indexes in Decoder.occs of the first and last, 0 for none.
type slot struct{ head, tail int32 }

// message decodes the message whose occurrences start at d.occs[head]
// (only that one when one is set) with plan p into the open struct of b,
// whose field indexes start at base.
func (d *Decoder) message(b *rows.Builder, p *msgPlan, base int, head int32, one bool) error {
	mark, occMark := len(d.slots), len(d.occs)
	d.slots = slices.Grow(d.slots, len(p.fields))[:mark+len(p.fields)]
	clear(d.slots[mark:])
	for h := head; h != 0; h = d.occs[h].next {
		if err := d.scan(p, mark, int(d.occs[h].start), int(d.occs[h].end)); err != nil {
			return err
		}
		if one {
			break
		}
	}
	err := d.write(b, p, base, mark)
	d.slots, d.occs = d.slots[:mark], d.occs[:occMark]
	return err
}

// scan records the occurrences of p's fields in d.data[off:end] into the
// slots from d.slots[mark].
func (d *Decoder) scan(p *msgPlan, mark, off, end int) error {
	data := d.data[:end]
	for off < end {
		num, typ, n := consumeTag(data[off:])
		if n < 0 || num > protowire.MaxValidNumber {
			return badTag(p, off, n)
		}
		off += n
		i := p.lookup(num)
		if i < 0 || (typ != p.fields[i].wire && (typ != protowire.BytesType || !p.fields[i].packed)) {
			m := protowire.ConsumeFieldValue(num, typ, data[off:])
			if m < 0 {
				return badValue(p, num, off, m)
			}
			off += m
			continue
		}
		f := &p.fields[i]
		switch typ {
		case protowire.VarintType:
			v, n := uint64(0), 1
			if off < end && data[off] < 0x80 {
				v = uint64(data[off])
			} else if v, n = protowire.ConsumeVarint(data[off:]); n < 0 {
				return badValue(p, num, off, n)
			}
			if f.closed != nil && !f.closed.has(v) {
				// A number a closed enum lacks is an unknown field: the
				// field keeps its earlier value, or none.
				off += n
				continue
			}
			o := d.record(f, mark, i)
			o.wire, o.start, o.end, o.bits = typ, int32(off), int32(off+n), v
			off += n
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(data[off:])
			if n < 0 {
				return badValue(p, num, off, n)
			}
			o := d.record(f, mark, i)
			o.wire, o.start, o.end = typ, int32(off+n-len(v)), int32(off+n)
			if f.utf8 && !utf8.Valid(v) {
				return invalidUTF8(f.fd.FullName())
			}
			off += n
		default:
			next, err := d.consumeInto(d.record(f, mark, i), num, typ, off, end)
			if err != nil {
				return fmt.Errorf("%s: %w", f.fd.FullName(), err)
			}
			off = next
		}
	}
	return nil
}

// record returns the occurrence to fill for a new occurrence of f, the i-th
// field of a plan whose slots start at d.slots[mark]: a new one, or, for a
// single value that is not a message, which keeps only its last, the
// previous one. A oneof member's first occurrence clears the other
// members.
func (d *Decoder) record(f *field, mark, i int) *occ {
	s := &d.slots[mark+i]
	switch {
	case s.head == 0:
		for _, j := range f.siblings {
			d.slots[mark+j] = slot{}
		}
	case f.shape == single && !f.message:
		return &d.occs[s.tail]
	}
	k := int32(len(d.occs))
	d.occs = append(d.occs, occ{})
	if s.head == 0 {
		s.head = k
	} else {
		d.occs[s.tail].next = k
	}
	s.tail = k
	return &d.occs[k]
}

// consumeTag is protowire.ConsumeTag with a fast path for one-byte tags.
func consumeTag(b []byte) (protowire.Number, protowire.Type, int) {
	if len(b) > 0 && b[0]-8 < 0x78 { // 8 <= b[0] < 0x80: field numbers 1 to 15
		t := b[0]
		return protowire.Number(t >> 3), protowire.Type(t & 7), 1
	}
	return protowire.ConsumeTag(b)
}

// consumeInto reads the value of field num, of wire type typ, at
// d.data[off:end] into o and returns the offset that follows it.
func (d *Decoder) consumeInto(o *occ, num protowire.Number, typ protowire.Type, off, end int) (int, error) {
	b := d.data[off:end]
	o.wire = typ
	switch typ {
	case protowire.VarintType:
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return 0, protowire.ParseError(n)
		}
		o.start, o.end, o.bits = int32(off), int32(off+n), v
		return off + n, nil
	case protowire.Fixed32Type:
		if len(b) < 4 {
			return 0, errTruncated
		}
		o.start, o.end, o.bits = int32(off), int32(off+4), uint64(binary.LittleEndian.Uint32(b))
		return off + 4, nil
	case protowire.Fixed64Type:
		if len(b) < 8 {
			return 0, errTruncated
		}
		o.start, o.end, o.bits = int32(off), int32(off+8), binary.LittleEndian.Uint64(b)
		return off + 8, nil
	case protowire.BytesType:
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return 0, protowire.ParseError(n)
		}
		o.start, o.end = int32(off+n-len(v)), int32(off+n)
		return off + n, nil
	case protowire.StartGroupType:
		v, n := protowire.ConsumeGroup(num, b)
		if n < 0 {
			return 0, protowire.ParseError(n)
		}
		o.start, o.end = int32(off), int32(off+len(v))
		return off + n, nil
	}
	return 0, fmt.Errorf("unexpected wire type %d", typ)
}

// errTruncated reports a fixed-size number cut short.
var errTruncated = errors.New("unexpected EOF")

// badTag reports a malformed tag at byte off of the record.
func badTag(p *msgPlan, off, n int) error {
	return fmt.Errorf("%s: the tag at byte %d: %w", p.name, off, tagError(n))
}

// badValue reports the malformed value of field num at byte off of the
// record.
func badValue(p *msgPlan, num protowire.Number, off, n int) error {
	return fmt.Errorf("%s: field %d at byte %d: %w", p.name, num, off, protowire.ParseError(n))
}

// invalidUTF8 reports a string field that is not valid UTF-8.
func invalidUTF8(name protoreflect.FullName) error {
	return fmt.Errorf("%s: string field is not valid UTF-8", name)
}
