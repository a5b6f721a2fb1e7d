package protobuf

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unsafe"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/schema"
)

// Decoder decodes Protobuf messages of one type into columns of a row. It
// reuses one dynamic message from record to record and is not safe for
// concurrent use; use one per goroutine.
type Decoder struct {
	md     protoreflect.MessageDescriptor
	msg    *dynamicpb.Message
	fields []field
	// entries holds the entries of the maps being written, innermost last;
	// collect appends one to it (a closure made once, as Map.Range takes
	// one).
	entries []entry
	collect func(protoreflect.MapKey, protoreflect.Value) bool
	// unmarshal merges a record into the cleared msg (so that msg keeps
	// its map of fields, which Reset would drop); clear clears one field.
	unmarshal proto.UnmarshalOptions
	clear     func(protoreflect.FieldDescriptor, protoreflect.Value) bool
	// num holds the decimal digits of an unknown enum number.
	num [20]byte
}

// entry is one map entry.
type entry struct {
	k protoreflect.MapKey
	v protoreflect.Value
}

// NewDecoder compiles the decoding of md messages into cols, the columns of
// a part of a table, which [Columns] maps md to or which a table has kept
// from an earlier version of md: columns match md's fields by name, at
// every level, and must have the type Columns gives the field. Columns md
// lacks stay null; md fields without a column are skipped. maxDepth is
// checked as Columns checks it.
func NewDecoder(md protoreflect.MessageDescriptor, maxDepth int, cols []schema.Field) (*Decoder, error) {
	if _, err := Columns(md, maxDepth); err != nil {
		return nil, err
	}
	fields, err := compileFields(md, cols, "")
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", md.FullName(), err)
	}
	d := &Decoder{md: md, msg: dynamicpb.NewMessage(md), fields: fields}
	d.collect = func(k protoreflect.MapKey, v protoreflect.Value) bool {
		d.entries = append(d.entries, entry{k, v})
		return true
	}
	d.clear = func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		d.msg.Clear(fd)
		return true
	}
	// Checking that required fields are set walks the whole message: skip
	// it when there are none.
	d.unmarshal = proto.UnmarshalOptions{Merge: true, DiscardUnknown: true, AllowPartial: !hasRequired(md, make(map[protoreflect.FullName]bool))}
	return d, nil
}

// Decode decodes the message in data into the open row of b, into its
// top-level fields first to first+len(cols)-1. Bytes that are not a valid
// message, or a timestamp out of range, return an error; the fields may
// then hold part of the message, for the caller to discard
// ([rows.Builder.DiscardFields]).
func (d *Decoder) Decode(b *rows.Builder, first int, data []byte) error {
	if err := d.parse(data); err != nil {
		return fmt.Errorf("decoding %s: %w", d.md.FullName(), err)
	}
	if err := d.writeFields(b, first, d.fields, d.msg); err != nil {
		return fmt.Errorf("decoding %s: %w", d.md.FullName(), err)
	}
	return nil
}

// parse clears d.msg and unmarshals data into it. protobuf-go's reflective
// decoder, which dynamic messages use, panics on some malformed map
// entries (v1.36.12: a key followed by a key of another wire type); parse
// reports that as an error.
func (d *Decoder) parse(data []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed message: %v", r)
		}
	}()
	d.msg.Range(d.clear)
	return d.unmarshal.Unmarshal(data, d.msg)
}

// hasRequired reports whether md, or a message among its fields, has a
// required field; seen holds the messages already looked at.
func hasRequired(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if seen[md.FullName()] {
		return false
	}
	seen[md.FullName()] = true
	if md.RequiredNumbers().Len() > 0 {
		return true
	}
	fds := md.Fields()
	for i := range fds.Len() {
		if m := fds.Get(i).Message(); m != nil && hasRequired(m, seen) {
			return true
		}
	}
	return false
}

// writeFields writes fields of m into the open struct of b, whose field
// indexes start at base. A field m does not have is left null, as Spark
// does, but for lists and maps, which are empty, and proto2 fields with
// a default.
func (d *Decoder) writeFields(b *rows.Builder, base int, fields []field, m protoreflect.Message) error {
	for i := range fields {
		f := &fields[i]
		switch {
		case f.shape == list:
			b.Field(base + f.pos)
			if err := d.writeList(b, f, m.Get(f.fd).List()); err != nil {
				return err
			}
		case f.shape == mapping:
			b.Field(base + f.pos)
			if err := d.writeMap(b, f, m.Get(f.fd).Map()); err != nil {
				return err
			}
		case f.defaulted || m.Has(f.fd):
			b.Field(base + f.pos)
			if err := d.write(b, f.val, m.Get(f.fd)); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeList writes the elements of l.
func (d *Decoder) writeList(b *rows.Builder, f *field, l protoreflect.List) error {
	b.BeginList()
	for i := range l.Len() {
		if err := d.write(b, f.val, l.Get(i)); err != nil {
			return err
		}
	}
	b.EndList()
	return nil
}

// writeMap writes the entries of mp in key order, so that a message always
// gives the same row (the dynamic message does not keep the wire order).
func (d *Decoder) writeMap(b *rows.Builder, f *field, mp protoreflect.Map) error {
	mark := len(d.entries)
	mp.Range(d.collect)
	es := d.entries[mark:]
	switch f.key.conv {
	case convString:
		slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(a.k.String(), b.k.String()) })
	case convBool:
		slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(b2i(a.k.Bool()), b2i(b.k.Bool())) })
	case convUint32, convUint64:
		slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(a.k.Uint(), b.k.Uint()) })
	default:
		slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(a.k.Int(), b.k.Int()) })
	}
	b.BeginMap()
	for _, e := range es {
		if err := d.write(b, f.key, e.k.Value()); err != nil {
			return err
		}
		if err := d.write(b, f.val, e.v); err != nil {
			return err
		}
	}
	b.EndMap()
	d.entries = d.entries[:mark]
	return nil
}

// b2i orders false before true.
func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

// errTimestampRange reports a timestamp beyond the microseconds an int64
// holds.
var errTimestampRange = errors.New("timestamp out of range")

// write writes x, a value compiled as v, at the current position of b.
func (d *Decoder) write(b *rows.Builder, v *value, x protoreflect.Value) error {
	switch v.conv {
	case convBool:
		b.Bool(x.Bool())
	case convInt32:
		b.Int32(int32(x.Int()))
	case convUint32:
		b.Int32(int32(uint32(x.Uint())))
	case convInt64:
		b.Int64(x.Int())
	case convUint64:
		b.Int64(int64(x.Uint()))
	case convFloat:
		b.Float(float32(x.Float()))
	case convDouble:
		b.Double(x.Float())
	case convString:
		s := x.String()
		b.Bytes(unsafe.Slice(unsafe.StringData(s), len(s)))
	case convBytes:
		b.Bytes(x.Bytes())
	case convEnum:
		b.Bytes(d.enumName(b, v.enum, x.Enum()))
	case convTimestamp:
		m := x.Message()
		micros, ok := timestampMicros(m.Get(v.seconds).Int(), m.Get(v.nanos).Int())
		if !ok {
			return errTimestampRange
		}
		b.Int64(micros)
	case convWrapper:
		return d.write(b, v.wrapped, x.Message().Get(v.inner))
	case convStruct:
		b.BeginStruct()
		if err := d.writeFields(b, 0, v.fields, x.Message()); err != nil {
			return err
		}
		b.EndStruct()
	}
	return nil
}

// enumName returns the name of enum value n, or its decimal digits (in b's
// arena) when e has no such value.
func (d *Decoder) enumName(b *rows.Builder, e protoreflect.EnumDescriptor, n protoreflect.EnumNumber) []byte {
	if ev := e.Values().ByNumber(n); ev != nil {
		s := string(ev.Name())
		return unsafe.Slice(unsafe.StringData(s), len(s))
	}
	digits := strconv.AppendInt(d.num[:0], int64(n), 10)
	out := b.Alloc(len(digits))
	copy(out, digits)
	return out
}

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
