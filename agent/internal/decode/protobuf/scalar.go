package protobuf

import (
	"math"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// canonical returns the bits of a number of kind k read from the wire as
// w (a varint, or the bits of a fixed32 or fixed64), as protobuf-go
// converts it: 32-bit kinds are truncated to their low 32 bits (zig-zag
// decoded for sint32), sint64 is zig-zag decoded, bool is 0 or 1. The bits
// are 0 exactly when the value is the zero value a field without presence
// leaves off the wire (-0.0 is not).
func canonical(k protoreflect.Kind, w uint64) uint64 {
	switch k {
	case protoreflect.BoolKind:
		if w != 0 {
			return 1
		}
		return 0
	case protoreflect.Sint32Kind:
		return uint64(uint32(protowire.DecodeZigZag(w & math.MaxUint32)))
	case protoreflect.Sint64Kind:
		return uint64(protowire.DecodeZigZag(w))
	case protoreflect.EnumKind, protoreflect.Int32Kind, protoreflect.Uint32Kind:
		return uint64(uint32(w))
	}
	return w
}

// defaultRaw returns the default value of fd: its proto2 default, or the
// zero value (for an enum, its first value in proto2); a list has none.
func defaultRaw(fd protoreflect.FieldDescriptor) raw {
	if fd.IsList() {
		return raw{}
	}
	v := fd.Default()
	switch fd.Kind() {
	case protoreflect.BoolKind:
		if v.Bool() {
			return raw{bits: 1}
		}
	case protoreflect.EnumKind:
		return raw{bits: uint64(uint32(v.Enum()))}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return raw{bits: uint64(uint32(int32(v.Int())))}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return raw{bits: uint64(uint32(v.Uint()))}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return raw{bits: uint64(v.Int())}
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return raw{bits: v.Uint()}
	case protoreflect.FloatKind:
		return raw{bits: uint64(math.Float32bits(float32(v.Float())))}
	case protoreflect.DoubleKind:
		return raw{bits: math.Float64bits(v.Float())}
	case protoreflect.StringKind:
		return raw{bytes: stringBytes(v.String())}
	case protoreflect.BytesKind:
		return raw{bytes: v.Bytes()}
	}
	return raw{}
}

// enumNames holds the names of an enum's values by number.
type enumNames struct {
	// dense[n] is the name of value n for 0 <= n < len(dense), nil when
	// there is none; sparse holds the other numbers.
	dense  [][]byte
	sparse map[int32][]byte
	// unknown prefixes the number of a value the enum lacks:
	// "UNKNOWN_ENUM_VALUE_<enum's name>_", as protobuf-java names it for
	// Spark.
	unknown []byte
}

// maxDense bounds the enum numbers enumNames.dense holds.
const maxDense = 256

// newEnumNames collects the value names of e; of values sharing a number
// (allow_alias), the first declared names it, as protobuf-go's ByNumber
// finds it.
func newEnumNames(e protoreflect.EnumDescriptor) *enumNames {
	names := &enumNames{sparse: make(map[int32][]byte), unknown: []byte("UNKNOWN_ENUM_VALUE_" + string(e.Name()) + "_")}
	vs := e.Values()
	for i := range vs.Len() {
		v := vs.Get(i)
		n, name := int32(v.Number()), stringBytes(string(v.Name()))
		if n >= 0 && n < maxDense {
			if int(n) >= len(names.dense) {
				names.dense = append(names.dense, make([][]byte, int(n)+1-len(names.dense))...)
			}
			if names.dense[n] == nil {
				names.dense[n] = name
			}
		} else if _, dup := names.sparse[n]; !dup {
			names.sparse[n] = name
		}
	}
	return names
}

// name returns the name of value n, false when the enum has none.
func (e *enumNames) name(n int32) ([]byte, bool) {
	if n >= 0 && int(n) < len(e.dense) {
		return e.dense[n], e.dense[n] != nil
	}
	name, ok := e.sparse[n]
	return name, ok
}

// has reports whether the enum has a value of number bits, the bits of an
// enum value as [canonical] gives them.
func (e *enumNames) has(bits uint64) bool {
	_, ok := e.name(int32(uint32(bits)))
	return ok
}

// stringBytes returns the bytes of s without copying them; they must not
// be modified.
func stringBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
