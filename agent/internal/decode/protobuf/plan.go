package protobuf

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema/protoschema"
)

// msgPlan is a message compiled for decoding: the fields the decoder tracks
// and their look-up by field number. It is built from the columns, so that
// a recursive message has one plan per level its columns expand, and the
// plans form a tree as deep as the columns.
type msgPlan struct {
	name protoreflect.FullName
	// fields are the fields with a column, in column order, then those
	// tracked without one: the other members of a oneof (which clear the
	// member that has a column) and required fields (which must be there).
	fields []field
	// index maps a field number below len(index) to 1 + its position in
	// fields, 0 for a field not tracked; far maps the larger numbers.
	index []uint16
	far   map[protowire.Number]int
}

// maxIndexed bounds the field numbers msgPlan.index holds directly.
const maxIndexed = 1024

// lookup returns the position in p.fields of field number num, -1 when p
// does not track it.
func (p *msgPlan) lookup(num protowire.Number) int {
	if uint64(num) < uint64(len(p.index)) {
		return int(p.index[num]) - 1
	}
	if i, ok := p.far[num]; ok {
		return i
	}
	return -1
}

// field is a message field compiled for decoding into a column.
type field struct {
	fd  protoreflect.FieldDescriptor
	num protowire.Number
	// col is the column's index in its struct (for a top-level column,
	// from the Decoder's first), -1 for a field tracked without a column.
	col   int
	shape shape
	// wire is the wire type of one value; packed says a list of numbers
	// also takes the packed encoding (BytesType).
	wire   protowire.Type
	packed bool
	// utf8 says a string value must be valid UTF-8 (proto3); message that
	// the value is a message, whose occurrences merge.
	utf8, message bool
	// val is the value of a single field, the element of a list, the value
	// of a map; key the key of a map. Nil without a column.
	val, key *value
	// siblings are the positions in the plan's fields of the other members
	// of the field's oneof.
	siblings []int
	// closed names the values of a closed (proto2) enum field, nil for
	// other fields: a number it lacks is an unknown field, as protobuf
	// parses it, and leaves the field as it was.
	closed *enumNames
	// presence says a single field set to its zero value is not null;
	// defaulted says an unset field reads as its explicit proto2 default
	// rather than null; required that an unset field is an error.
	presence, defaulted, required bool
}

// shape says whether a field holds one value, a list or a map.
type shape uint8

const (
	single shape = iota
	list
	mapping
)

// value is a Protobuf value compiled for decoding into a column value.
type value struct {
	conv conv
	kind protoreflect.Kind
	wire protowire.Type
	utf8 bool
	// def is the value of a field that is not on the wire where a value is
	// still written (a map entry, a wrapper, a proto2 default): its bits
	// as [canonical] gives them, or its bytes.
	def raw
	// enum names the values of a convEnum; closed says the enum is closed
	// (proto2), so that a number it lacks is an unknown field.
	enum   *enumNames
	closed bool
	// msg is the plan of a convStruct message.
	msg *msgPlan
	// inner is the value field of a convWrapper, or the seconds and nanos
	// fields of a convTimestamp with nanos; num and num2 their numbers.
	inner, nanos *value
	num, num2    protowire.Number
}

// raw is a scalar value read from the wire: its bits as [canonical] gives
// them, or, for strings and bytes, its bytes.
type raw struct {
	bits  uint64
	bytes []byte
}

// conv says how a Protobuf value becomes a column value.
type conv uint8

const (
	convBool      conv = iota
	convInt32          // int32, sint32, sfixed32: INT
	convUint32         // uint32, fixed32: INT of the same bits
	convInt64          // int64, sint64, sfixed64: BIGINT
	convUint64         // uint64, fixed64: BIGINT of the same bits
	convFloat          // float: FLOAT
	convDouble         // double: DOUBLE
	convString         // string: STRING
	convBytes          // bytes: BINARY
	convEnum           // enum: STRING, the value's name
	convTimestamp      // google.protobuf.Timestamp: TIMESTAMP
	convWrapper        // google.protobuf.XxxValue: the wrapped value
	convStruct         // other messages: STRUCT
)

// convs gives the conv of each scalar field kind.
var convs = map[protoreflect.Kind]conv{
	protoreflect.BoolKind: convBool, protoreflect.Int32Kind: convInt32, protoreflect.Sint32Kind: convInt32,
	protoreflect.Sfixed32Kind: convInt32, protoreflect.Uint32Kind: convUint32, protoreflect.Fixed32Kind: convUint32,
	protoreflect.Int64Kind: convInt64, protoreflect.Sint64Kind: convInt64, protoreflect.Sfixed64Kind: convInt64,
	protoreflect.Uint64Kind: convUint64, protoreflect.Fixed64Kind: convUint64, protoreflect.FloatKind: convFloat,
	protoreflect.DoubleKind: convDouble, protoreflect.StringKind: convString, protoreflect.BytesKind: convBytes,
	protoreflect.EnumKind: convEnum,
}

// compileMessage compiles md for decoding into the columns cols (matching
// by name; columns md lacks are left out, to stay null), at field path
// path.
func compileMessage(md protoreflect.MessageDescriptor, cols []schema.Field, path string) (*msgPlan, error) {
	p := &msgPlan{name: md.FullName()}
	fds := md.Fields()
	tracked := make(map[protoreflect.FieldNumber]bool)
	for i, col := range cols {
		fd := fds.ByName(protoreflect.Name(col.Name))
		if fd == nil || tracked[fd.Number()] {
			continue
		}
		f, err := compileField(fd, col.Type, protoschema.FieldPath(path, col.Name))
		if err != nil {
			return nil, err
		}
		f.col = i
		p.fields = append(p.fields, f)
		tracked[fd.Number()] = true
	}
	for i := range fds.Len() {
		fd := fds.Get(i)
		if !tracked[fd.Number()] && (realOneof(fd) != nil || fd.Cardinality() == protoreflect.Required) {
			p.fields = append(p.fields, newField(fd))
		}
	}
	p.link()
	return p, nil
}

// link fills p's index and the oneof siblings of its fields.
func (p *msgPlan) link() {
	for i := range p.fields {
		f := &p.fields[i]
		if num := f.num; num < maxIndexed {
			if int(num) >= len(p.index) {
				p.index = append(p.index, make([]uint16, int(num)+1-len(p.index))...)
			}
			p.index[num] = uint16(i + 1)
		} else {
			if p.far == nil {
				p.far = make(map[protowire.Number]int)
			}
			p.far[num] = i
		}
		if o := realOneof(f.fd); o != nil {
			for j := range p.fields {
				if j != i && realOneof(p.fields[j].fd) == o {
					f.siblings = append(f.siblings, j)
				}
			}
		}
	}
}

// realOneof returns the oneof of fd, nil when it has none or a synthetic
// one (a proto3 optional field).
func realOneof(fd protoreflect.FieldDescriptor) protoreflect.OneofDescriptor {
	if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() {
		return o
	}
	return nil
}

// newField returns fd tracked without a column.
func newField(fd protoreflect.FieldDescriptor) field {
	f := field{
		fd: fd, num: fd.Number(), col: -1, wire: wireType(fd.Kind()), utf8: enforceUTF8(fd), message: fd.Message() != nil,
		presence: fd.HasPresence(), defaulted: fd.HasDefault(), required: fd.Cardinality() == protoreflect.Required,
	}
	if e := fd.Enum(); e != nil && e.IsClosed() && !fd.IsMap() {
		f.closed = newEnumNames(e)
	}
	switch {
	case fd.IsMap():
		f.shape, f.wire = mapping, protowire.BytesType
	case fd.IsList():
		f.shape = list
		f.packed = f.wire == protowire.VarintType || f.wire == protowire.Fixed32Type || f.wire == protowire.Fixed64Type
	}
	return f
}

// compileField compiles fd into a column of type t.
func compileField(fd protoreflect.FieldDescriptor, t *schema.Type, path string) (field, error) {
	f := newField(fd)
	var err error
	switch {
	case fd.IsMap():
		if t == nil || t.Kind != schema.Map {
			return f, mismatch(path, fd, t)
		}
		if f.key, err = compileValue(fd.MapKey(), t.Key, path+".key"); err != nil {
			return f, err
		}
		f.val, err = compileValue(fd.MapValue(), t.Value, path+".value")
	case fd.IsList():
		if t == nil || t.Kind != schema.Array {
			return f, mismatch(path, fd, t)
		}
		f.val, err = compileValue(fd, t.Elem, path+".element")
	default:
		f.val, err = compileValue(fd, t, path)
	}
	return f, err
}

// compileValue compiles one value of fd into a column value of type t.
func compileValue(fd protoreflect.FieldDescriptor, t *schema.Type, path string) (*value, error) {
	if t == nil {
		return nil, mismatch(path, fd, t)
	}
	v := &value{kind: fd.Kind(), wire: wireType(fd.Kind()), utf8: enforceUTF8(fd)}
	if c, ok := convs[fd.Kind()]; ok {
		if k, _ := protoschema.ScalarKind(fd.Kind()); t.Kind != k {
			return nil, mismatch(path, fd, t)
		}
		v.conv, v.def = c, defaultRaw(fd)
		if e := fd.Enum(); e != nil {
			v.enum, v.closed = newEnumNames(e), e.IsClosed()
		}
		return v, nil
	}
	md := fd.Message()
	if md == nil {
		return nil, fmt.Errorf("%s: unsupported field kind %s", path, fd.Kind())
	}
	if seconds, nanos, ok := protoschema.TimestampFields(md); ok {
		if t.Kind != schema.Timestamp {
			return nil, mismatch(path, fd, t)
		}
		v.conv, v.num, v.num2 = convTimestamp, seconds.Number(), nanos.Number()
		v.inner = &value{kind: seconds.Kind(), wire: wireType(seconds.Kind())}
		v.nanos = &value{kind: nanos.Kind(), wire: wireType(nanos.Kind())}
		return v, nil
	}
	if w := protoschema.Wrapped(md); w != nil {
		inner, err := compileValue(w, t, path)
		if err != nil {
			return nil, err
		}
		v.conv, v.inner, v.num = convWrapper, inner, w.Number()
		return v, nil
	}
	if t.Kind != schema.Struct {
		return nil, mismatch(path, fd, t)
	}
	msg, err := compileMessage(md, t.Fields, path)
	if err != nil {
		return nil, err
	}
	v.conv, v.msg = convStruct, msg
	return v, nil
}

// wireType returns the wire type of one value of kind k.
func wireType(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.BoolKind, protoreflect.EnumKind, protoreflect.Int32Kind, protoreflect.Sint32Kind,
		protoreflect.Uint32Kind, protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Uint64Kind:
		return protowire.VarintType
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	case protoreflect.GroupKind:
		return protowire.StartGroupType
	}
	return protowire.BytesType
}

// enforceUTF8 reports whether a string field's values must be valid
// UTF-8, as protobuf-go decides it: in proto3, and in editions as the
// utf8_validation feature says.
func enforceUTF8(fd protoreflect.FieldDescriptor) bool {
	if fd.Kind() != protoreflect.StringKind {
		return false
	}
	if fd.Syntax() == protoreflect.Editions {
		if e, ok := fd.(interface{ EnforceUTF8() bool }); ok {
			return e.EnforceUTF8()
		}
	}
	return fd.Syntax() == protoreflect.Proto3
}

// mismatch reports a column whose type cannot hold fd's values.
func mismatch(path string, fd protoreflect.FieldDescriptor, t *schema.Type) error {
	kind := fd.Kind().String()
	if fd.Message() != nil {
		kind = string(fd.Message().FullName())
	}
	return fmt.Errorf("column %s of type %s cannot hold %s values of protobuf field %s", path, t, kind, fd.FullName())
}
