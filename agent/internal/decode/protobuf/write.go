package protobuf

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
)

// write writes the fields of plan p, whose occurrences the slots from
// d.slots[mark] list, into the open struct of b, whose field indexes start
// at base. A field the message does not have is left null, as Spark does,
// but for lists and maps, which are empty, and proto2 fields with a
// default; a proto3 field without presence that holds its zero value is
// null too.
func (d *Decoder) write(b *rows.Builder, p *msgPlan, base, mark int) error {
	for i := range p.fields {
		f := &p.fields[i]
		s := d.slots[mark+i]
		switch {
		case s.head == 0 && f.required:
			return fmt.Errorf("required field %s not set", f.fd.FullName())
		case f.col < 0:
		case f.shape == list:
			b.Field(base + f.col)
			b.BeginList()
			for h := s.head; h != 0; h = d.occs[h].next {
				if err := d.elements(b, f, h); err != nil {
					return err
				}
			}
			b.EndList()
		case f.shape == mapping:
			b.Field(base + f.col)
			if err := d.writeMap(b, f, s.head); err != nil {
				return err
			}
		case s.head == 0:
			if f.defaulted {
				b.Field(base + f.col)
				d.put(b, f.val, f.val.def)
			}
		case f.val.conv < convTimestamp:
			r := d.rawOf(f.val, &d.occs[s.tail])
			if f.presence || r.bits != 0 || len(r.bytes) != 0 {
				b.Field(base + f.col)
				d.put(b, f.val, r)
			}
		default:
			b.Field(base + f.col)
			if err := d.compound(b, f.val, s.head, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// elements writes the list elements of occurrence h of list field f: one,
// or those packed in it.
func (d *Decoder) elements(b *rows.Builder, f *field, h int32) error {
	o := d.occs[h]
	switch {
	case o.wire == protowire.BytesType && f.packed:
		for off, end := int(o.start), int(o.end); off < end; {
			r, next, err := d.read(f.val, f.wire, off, end)
			if err != nil {
				return fmt.Errorf("%s: packed: %w", f.fd.FullName(), err)
			}
			if f.closed == nil || f.closed.has(r.bits) { // else an unknown field
				d.put(b, f.val, r)
			}
			off = next
		}
	case f.val.conv < convTimestamp:
		d.put(b, f.val, d.rawOf(f.val, &o))
	default:
		return d.compound(b, f.val, h, true)
	}
	return nil
}

// compound writes the message value v whose occurrences start at
// d.occs[head] (only that one when one is set; none when head is 0, for
// an empty message): a struct, a timestamp or a wrapped value.
func (d *Decoder) compound(b *rows.Builder, v *value, head int32, one bool) error {
	switch v.conv {
	case convStruct:
		b.BeginStruct()
		if err := d.message(b, v.msg, 0, head, one); err != nil {
			return err
		}
		b.EndStruct()
	case convTimestamp:
		seconds, nanos, err := d.scalars(v, head, one)
		if err != nil {
			return err
		}
		micros, ok := timestampMicros(int64(seconds.bits), int64(int32(uint32(nanos.bits))))
		if !ok {
			return errTimestampRange
		}
		b.Int64(micros)
	default: // convWrapper
		r, _, err := d.scalars(v, head, one)
		if err != nil {
			return err
		}
		d.put(b, v.inner, r)
	}
	return nil
}

// scalars reads the last values of the fields of a timestamp (seconds and
// nanos) or a wrapper (its value) whose occurrences start at d.occs[head],
// as compound does; a field the message lacks reads as its default.
func (d *Decoder) scalars(v *value, head int32, one bool) (first, second raw, err error) {
	first = v.inner.def
	for h := head; h != 0; h = d.occs[h].next {
		off, end := int(d.occs[h].start), int(d.occs[h].end)
		for off < end {
			num, typ, n := consumeTag(d.data[off:end])
			if n < 0 || num > protowire.MaxValidNumber {
				return first, second, fmt.Errorf("the tag at byte %d: %w", off, tagError(n))
			}
			off += n
			var r raw
			switch {
			case num == v.num && typ == v.inner.wire:
				r, off, err = d.read(v.inner, typ, off, end)
				first = r
			case v.nanos != nil && num == v.num2 && typ == v.nanos.wire:
				r, off, err = d.read(v.nanos, typ, off, end)
				second = r
			default:
				m := protowire.ConsumeFieldValue(num, typ, d.data[off:end])
				if m < 0 {
					return first, second, fmt.Errorf("field %d at byte %d: %w", num, off, protowire.ParseError(m))
				}
				off += m
			}
			if err != nil {
				return first, second, err
			}
		}
		if one {
			break
		}
	}
	return first, second, nil
}

// tagError explains a tag that ConsumeTag returned n for: a parse error, or
// a field number too large.
func tagError(n int) error {
	if n < 0 {
		return protowire.ParseError(n)
	}
	return fmt.Errorf("field number above %d", protowire.MaxValidNumber)
}

// read reads one scalar value of v, of wire type typ, at d.data[off:end];
// it returns the offset that follows it.
func (d *Decoder) read(v *value, typ protowire.Type, off, end int) (raw, int, error) {
	var o occ
	next, err := d.consumeInto(&o, 0, typ, off, end)
	if err != nil {
		return raw{}, 0, err
	}
	r := d.rawOf(v, &o)
	if v.utf8 && !utf8.Valid(r.bytes) {
		return raw{}, 0, errors.New("string value is not valid UTF-8")
	}
	return r, next, nil
}

// rawOf returns the value of occurrence o of a scalar v.
func (d *Decoder) rawOf(v *value, o *occ) raw {
	if o.wire == protowire.BytesType {
		return raw{bytes: d.data[o.start:o.end]}
	}
	return raw{bits: canonical(v.kind, o.bits)}
}

// put writes the scalar value r of v at the current position of b.
func (d *Decoder) put(b *rows.Builder, v *value, r raw) {
	switch v.conv {
	case convBool:
		b.Bool(r.bits != 0)
	case convInt32, convUint32:
		b.Int32(int32(uint32(r.bits)))
	case convInt64, convUint64:
		b.Int64(int64(r.bits))
	case convFloat:
		b.Float(math.Float32frombits(uint32(r.bits)))
	case convDouble:
		b.Double(math.Float64frombits(r.bits))
	case convString:
		b.Bytes(validText(b, v, r.bytes))
	case convBytes:
		b.Bytes(r.bytes)
	case convEnum:
		b.Bytes(d.enumName(b, v.enum, int32(uint32(r.bits))))
	}
}

// validText returns s, the bytes of a string value of v, or, when v is a
// string protobuf does not check (proto2, or editions' utf8_validation
// NONE) and s is not valid UTF-8, a copy in b's arena with the broken bytes
// replaced by U+FFFD as Spark reads them (Java's decoder makes the
// String): a STRING column holds only UTF-8.
func validText(b *rows.Builder, v *value, s []byte) []byte {
	if v.utf8 || utf8.Valid(s) {
		return s
	}
	return jsontext.AppendValidUTF8(b.Alloc(3 * len(s))[:0], s)
}

// enumName returns the name of enum value n or, when the enum has no such
// value (an open enum's number a newer schema added), the name Spark gives
// it, UNKNOWN_ENUM_VALUE_<enum's name>_<n>, in b's arena.
func (d *Decoder) enumName(b *rows.Builder, e *enumNames, n int32) []byte {
	if name, ok := e.name(n); ok {
		return name
	}
	digits := strconv.AppendInt(d.num[:0], int64(n), 10)
	out := b.Alloc(len(e.unknown) + len(digits))
	copy(out[copy(out, e.unknown):], digits)
	return out
}

// errTimestampRange reports a timestamp beyond the microseconds an int64
// holds.
var errTimestampRange = errors.New("timestamp out of range")

// timestampMicros returns seconds and nanos since the epoch in
// microseconds, the nanoseconds truncated toward zero as Spark does; ok is
// false when the result overflows.
func timestampMicros(seconds, nanos int64) (int64, bool) {
	const perSecond = 1_000_000
	if seconds > math.MaxInt64/perSecond || seconds < math.MinInt64/perSecond {
		return 0, false
	}
	base := seconds * perSecond
	micros := base + nanos/1_000
	if (nanos > 0 && micros < base) || (nanos < 0 && micros > base) {
		return 0, false
	}
	return micros, true
}
