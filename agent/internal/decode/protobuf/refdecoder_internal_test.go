package protobuf

// The reference decoder: the package's first Decoder, which decodes with
// dynamicpb and protoreflect, kept as the oracle of the differential tests
// (difftest_internal_test.go). Only the names changed.

import (
	"cmp"
	"fmt"
	"slices"
	"unicode/utf8"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema/protoschema"
)

// refField is a message field compiled for decoding into a column.
type refField struct {
	fd protoreflect.FieldDescriptor
	// pos is the column's index in its struct (for a top-level column,
	// from the refDecoder's first).
	pos   int
	shape shape
	// val is the value of a single field, the element of a list, the value
	// of a map; key the key of a map.
	val, key *refValue
	// defaulted says an unset field reads as its explicit proto2 default
	// rather than null.
	defaulted bool
}

// refValue is a Protobuf value compiled for decoding into a column value.
type refValue struct {
	conv conv
	// enum of a convEnum value.
	enum protoreflect.EnumDescriptor
	// inner is the `value` field of a convWrapper and wrapped its value;
	// seconds and nanos are the fields of a convTimestamp.
	inner, seconds, nanos protoreflect.FieldDescriptor
	wrapped               *refValue
	// fields of a convStruct message that have a column.
	fields []refField
}

// refCompileFields compiles the fields of md that cols name (matching by
// name; columns md lacks are left out, to stay null), at field path path.
func refCompileFields(md protoreflect.MessageDescriptor, cols []schema.Field, path string) ([]refField, error) {
	var out []refField
	for i, col := range cols {
		fd := md.Fields().ByName(protoreflect.Name(col.Name))
		if fd == nil {
			continue
		}
		f, err := refCompileField(fd, col.Type, protoschema.FieldPath(path, col.Name))
		if err != nil {
			return nil, err
		}
		f.pos = i
		out = append(out, f)
	}
	return out, nil
}

// refCompileField compiles fd into a column of type t.
func refCompileField(fd protoreflect.FieldDescriptor, t *schema.Type, path string) (refField, error) {
	f := refField{fd: fd, defaulted: fd.HasDefault()}
	var err error
	switch {
	case fd.IsMap():
		if t == nil || t.Kind != schema.Map {
			return f, mismatch(path, fd, t)
		}
		f.shape = mapping
		if f.key, err = refCompileValue(fd.MapKey(), t.Key, path+".key"); err != nil {
			return f, err
		}
		f.val, err = refCompileValue(fd.MapValue(), t.Value, path+".refValue")
	case fd.IsList():
		if t == nil || t.Kind != schema.Array {
			return f, mismatch(path, fd, t)
		}
		f.shape = list
		f.val, err = refCompileValue(fd, t.Elem, path+".element")
	default:
		f.val, err = refCompileValue(fd, t, path)
	}
	return f, err
}

// refCompileValue compiles one value of fd into a column value of type t.
func refCompileValue(fd protoreflect.FieldDescriptor, t *schema.Type, path string) (*refValue, error) {
	if t == nil {
		return nil, mismatch(path, fd, t)
	}
	if c, ok := convs[fd.Kind()]; ok {
		if k, _ := protoschema.ScalarKind(fd.Kind()); t.Kind != k {
			return nil, mismatch(path, fd, t)
		}
		return &refValue{conv: c, enum: fd.Enum()}, nil
	}
	md := fd.Message()
	if md == nil {
		return nil, fmt.Errorf("%s: unsupported refField kind %s", path, fd.Kind())
	}
	if seconds, nanos, ok := protoschema.TimestampFields(md); ok {
		if t.Kind != schema.Timestamp {
			return nil, mismatch(path, fd, t)
		}
		return &refValue{conv: convTimestamp, seconds: seconds, nanos: nanos}, nil
	}
	if w := protoschema.Wrapped(md); w != nil {
		v, err := refCompileValue(w, t, path)
		if err != nil {
			return nil, err
		}
		return &refValue{conv: convWrapper, inner: w, wrapped: v}, nil
	}
	if t.Kind != schema.Struct {
		return nil, mismatch(path, fd, t)
	}
	fields, err := refCompileFields(md, t.Fields, path)
	if err != nil {
		return nil, err
	}
	return &refValue{conv: convStruct, fields: fields}, nil
}

// refDecoder decodes Protobuf messages of one type into columns of a row. It
// reuses one dynamic message from record to record and is not safe for
// concurrent use; use one per goroutine.
type refDecoder struct {
	md     protoreflect.MessageDescriptor
	msg    *dynamicpb.Message
	fields []refField
	// entries holds the entries of the maps being written, innermost last;
	// collect appends one to it (a closure made once, as Map.Range takes
	// one).
	entries []refEntry
	collect func(protoreflect.MapKey, protoreflect.Value) bool
	// unmarshal merges a record into the cleared msg (so that msg keeps
	// its map of fields, which Reset would drop); clear clears one field.
	unmarshal proto.UnmarshalOptions
	clear     func(protoreflect.FieldDescriptor, protoreflect.Value) bool
}

// refEntry is one map entry.
type refEntry struct {
	k protoreflect.MapKey
	v protoreflect.Value
}

// newRefDecoder compiles the decoding of md messages into cols, the columns of
// a part of a table, which [protoschema.Columns] maps md to or which a table has kept
// from an earlier version of md: columns match md's fields by name, at
// every level, and must have the type Columns gives the field. Columns md
// lacks stay null; md fields without a column are skipped. maxDepth is
// checked as Columns checks it.
func newRefDecoder(md protoreflect.MessageDescriptor, maxDepth int, cols []schema.Field) (*refDecoder, error) {
	if _, err := protoschema.Columns(md, maxDepth); err != nil {
		return nil, err
	}
	fields, err := refCompileFields(md, cols, "")
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", md.FullName(), err)
	}
	d := &refDecoder{md: md, msg: dynamicpb.NewMessage(md), fields: fields}
	d.collect = func(k protoreflect.MapKey, v protoreflect.Value) bool {
		d.entries = append(d.entries, refEntry{k, v})
		return true
	}
	d.clear = func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		d.msg.Clear(fd)
		return true
	}
	// Checking that required fields are set walks the whole message: skip
	// it when there are none.
	d.unmarshal = proto.UnmarshalOptions{Merge: true, DiscardUnknown: true, AllowPartial: !refHasRequired(md, make(map[protoreflect.FullName]bool))}
	return d, nil
}

// Decode decodes the message in data into the open row of b, into its
// top-level fields first to first+len(cols)-1. Bytes that are not a valid
// message, or a timestamp out of range, return an error; the fields may
// then hold part of the message, for the caller to discard
// ([rows.Builder.DiscardFields]).
func (d *refDecoder) Decode(b *rows.Builder, first int, data []byte) error {
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
func (d *refDecoder) parse(data []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed message: %v", r)
		}
	}()
	d.msg.Range(d.clear)
	return d.unmarshal.Unmarshal(refStrip(d.md, data), d.msg)
}

// refStrip returns data, a message of md, without the numbers of closed
// enums that the enum lacks, at every level: protobuf's parsers read them
// as unknown fields, where protobuf-go keeps them as values. Malformed data
// is returned as it is.
func refStrip(md protoreflect.MessageDescriptor, data []byte) []byte {
	out := make([]byte, 0, len(data))
	for b := data; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return data
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return data
		}
		field, val := b[:n+m], b[n:n+m]
		b = b[n+m:]
		fd := md.Fields().ByNumber(num)
		if fd == nil {
			out = append(out, field...)
			continue
		}
		closed := fd.Enum() != nil && fd.Enum().IsClosed()
		known := func(v uint64) bool { return fd.Enum().Values().ByNumber(protoreflect.EnumNumber(int32(v))) != nil }
		switch {
		case closed && typ == protowire.VarintType:
			if v, _ := protowire.ConsumeVarint(val); !known(v) {
				continue
			}
		case closed && typ == protowire.BytesType && fd.IsList():
			content, _ := protowire.ConsumeBytes(val)
			var kept []byte
			for len(content) > 0 {
				v, k := protowire.ConsumeVarint(content)
				if k < 0 {
					return data
				}
				if known(v) {
					kept = append(kept, content[:k]...)
				}
				content = content[k:]
			}
			field = protowire.AppendBytes(protowire.AppendTag(nil, num, typ), kept)
		case fd.Message() != nil && typ == protowire.BytesType:
			content, _ := protowire.ConsumeBytes(val)
			field = protowire.AppendBytes(protowire.AppendTag(nil, num, typ), refStrip(fd.Message(), content))
		case fd.Message() != nil && typ == protowire.StartGroupType:
			content, _ := protowire.ConsumeGroup(num, val)
			field = append(protowire.AppendTag(nil, num, typ), refStrip(fd.Message(), content)...)
			field = protowire.AppendTag(field, num, protowire.EndGroupType)
		}
		out = append(out, field...)
	}
	return out
}

// refHasRequired reports whether md, or a message among its fields, has a
// required field; seen holds the messages already looked at.
func refHasRequired(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if seen[md.FullName()] {
		return false
	}
	seen[md.FullName()] = true
	if md.RequiredNumbers().Len() > 0 {
		return true
	}
	fds := md.Fields()
	for i := range fds.Len() {
		if m := fds.Get(i).Message(); m != nil && refHasRequired(m, seen) {
			return true
		}
	}
	return false
}

// writeFields writes fields of m into the open struct of b, whose field
// indexes start at base. A field m does not have is left null, as Spark
// does, but for lists and maps, which are empty, and proto2 fields with
// a default.
func (d *refDecoder) writeFields(b *rows.Builder, base int, fields []refField, m protoreflect.Message) error {
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
func (d *refDecoder) writeList(b *rows.Builder, f *refField, l protoreflect.List) error {
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
func (d *refDecoder) writeMap(b *rows.Builder, f *refField, mp protoreflect.Map) error {
	mark := len(d.entries)
	mp.Range(d.collect)
	es := d.entries[mark:]
	switch f.key.conv {
	case convString:
		slices.SortFunc(es, func(a, b refEntry) int { return cmp.Compare(a.k.String(), b.k.String()) })
	case convBool:
		slices.SortFunc(es, func(a, b refEntry) int { return cmp.Compare(refB2i(a.k.Bool()), refB2i(b.k.Bool())) })
	case convUint32, convUint64:
		slices.SortFunc(es, func(a, b refEntry) int { return cmp.Compare(a.k.Uint(), b.k.Uint()) })
	default:
		slices.SortFunc(es, func(a, b refEntry) int { return cmp.Compare(a.k.Int(), b.k.Int()) })
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

// refB2i orders false before true.
func refB2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

// write writes x, a value compiled as v, at the current position of b.
func (d *refDecoder) write(b *rows.Builder, v *refValue, x protoreflect.Value) error {
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
		if !utf8.ValidString(s) { // proto2: as Spark reads it
			b.Bytes(jsontext.AppendValidUTF8(b.Alloc(3 * len(s))[:0], []byte(s)))
			break
		}
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

// enumName returns the name of enum value n, or the name Spark gives a
// number e lacks (in b's arena).
func (d *refDecoder) enumName(b *rows.Builder, e protoreflect.EnumDescriptor, n protoreflect.EnumNumber) []byte {
	if ev := e.Values().ByNumber(n); ev != nil {
		s := string(ev.Name())
		return unsafe.Slice(unsafe.StringData(s), len(s))
	}
	s := fmt.Sprintf("UNKNOWN_ENUM_VALUE_%s_%d", e.Name(), n)
	out := b.Alloc(len(s))
	copy(out, s)
	return out
}
