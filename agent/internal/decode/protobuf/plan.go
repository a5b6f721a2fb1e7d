package protobuf

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/schema"
)

// field is a message field compiled for decoding into a column.
type field struct {
	fd protoreflect.FieldDescriptor
	// pos is the column's index in its struct (for a top-level column,
	// from the Decoder's first).
	pos   int
	shape shape
	// val is the value of a single field, the element of a list, the value
	// of a map; key the key of a map.
	val, key *value
	// defaulted says an unset field reads as its explicit proto2 default
	// rather than null.
	defaulted bool
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
	// enum of a convEnum value.
	enum protoreflect.EnumDescriptor
	// inner is the `value` field of a convWrapper and wrapped its value;
	// seconds and nanos are the fields of a convTimestamp.
	inner, seconds, nanos protoreflect.FieldDescriptor
	wrapped               *value
	// fields of a convStruct message that have a column.
	fields []field
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

// compileFields compiles the fields of md that cols name (matching by
// name; columns md lacks are left out, to stay null), at field path path.
func compileFields(md protoreflect.MessageDescriptor, cols []schema.Field, path string) ([]field, error) {
	var out []field
	for i, col := range cols {
		fd := md.Fields().ByName(protoreflect.Name(col.Name))
		if fd == nil {
			continue
		}
		f, err := compileField(fd, col.Type, join(path, col.Name))
		if err != nil {
			return nil, err
		}
		f.pos = i
		out = append(out, f)
	}
	return out, nil
}

// compileField compiles fd into a column of type t.
func compileField(fd protoreflect.FieldDescriptor, t *schema.Type, path string) (field, error) {
	f := field{fd: fd, defaulted: fd.HasDefault()}
	var err error
	switch {
	case fd.IsMap():
		if t == nil || t.Kind != schema.Map {
			return f, mismatch(path, fd, t)
		}
		f.shape = mapping
		if f.key, err = compileValue(fd.MapKey(), t.Key, path+".key"); err != nil {
			return f, err
		}
		f.val, err = compileValue(fd.MapValue(), t.Value, path+".value")
	case fd.IsList():
		if t == nil || t.Kind != schema.Array {
			return f, mismatch(path, fd, t)
		}
		f.shape = list
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
	if c, ok := convs[fd.Kind()]; ok {
		if k, _ := scalarKind(fd.Kind()); t.Kind != k {
			return nil, mismatch(path, fd, t)
		}
		return &value{conv: c, enum: fd.Enum()}, nil
	}
	md := fd.Message()
	if md == nil {
		return nil, fmt.Errorf("%s: unsupported field kind %s", path, fd.Kind())
	}
	if seconds, nanos, ok := timestampFields(md); ok {
		if t.Kind != schema.Timestamp {
			return nil, mismatch(path, fd, t)
		}
		return &value{conv: convTimestamp, seconds: seconds, nanos: nanos}, nil
	}
	if w := wrapped(md); w != nil {
		v, err := compileValue(w, t, path)
		if err != nil {
			return nil, err
		}
		return &value{conv: convWrapper, inner: w, wrapped: v}, nil
	}
	if t.Kind != schema.Struct {
		return nil, mismatch(path, fd, t)
	}
	fields, err := compileFields(md, t.Fields, path)
	if err != nil {
		return nil, err
	}
	return &value{conv: convStruct, fields: fields}, nil
}

// mismatch reports a column whose type cannot hold fd's values.
func mismatch(path string, fd protoreflect.FieldDescriptor, t *schema.Type) error {
	kind := fd.Kind().String()
	if fd.Message() != nil {
		kind = string(fd.Message().FullName())
	}
	return fmt.Errorf("column %s of type %s cannot hold %s values of protobuf field %s", path, t, kind, fd.FullName())
}
