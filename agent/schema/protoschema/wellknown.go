package protoschema

import (
	"google.golang.org/protobuf/reflect/protoreflect"
	// The well-known types LoadDescriptorSet and Compile resolve imports to
	// are the ones linked into the binary.
	_ "google.golang.org/protobuf/types/known/anypb"
	_ "google.golang.org/protobuf/types/known/apipb"
	_ "google.golang.org/protobuf/types/known/durationpb"
	_ "google.golang.org/protobuf/types/known/emptypb"
	_ "google.golang.org/protobuf/types/known/fieldmaskpb"
	_ "google.golang.org/protobuf/types/known/sourcecontextpb"
	_ "google.golang.org/protobuf/types/known/structpb"
	_ "google.golang.org/protobuf/types/known/timestamppb"
	_ "google.golang.org/protobuf/types/known/typepb"
	_ "google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// timestampName is the message that maps to TIMESTAMP.
const timestampName protoreflect.FullName = "google.protobuf.Timestamp"

// wrappers are the wrapper messages that map to the type of their `value`
// field, unwrapped.
var wrappers = map[protoreflect.FullName]bool{
	"google.protobuf.DoubleValue": true, "google.protobuf.FloatValue": true,
	"google.protobuf.Int64Value": true, "google.protobuf.UInt64Value": true,
	"google.protobuf.Int32Value": true, "google.protobuf.UInt32Value": true,
	"google.protobuf.BoolValue": true, "google.protobuf.StringValue": true,
	"google.protobuf.BytesValue": true,
}

// Wrapped returns the `value` field of a wrapper message, nil for other
// messages.
func Wrapped(md protoreflect.MessageDescriptor) protoreflect.FieldDescriptor {
	if !wrappers[md.FullName()] {
		return nil
	}
	return md.Fields().ByName("value")
}

// TimestampFields returns the seconds and nanos fields of a
// google.protobuf.Timestamp, ok false for other messages.
func TimestampFields(md protoreflect.MessageDescriptor) (seconds, nanos protoreflect.FieldDescriptor, ok bool) {
	if md.FullName() != timestampName {
		return nil, nil, false
	}
	seconds, nanos = md.Fields().ByName("seconds"), md.Fields().ByName("nanos")
	ok = seconds != nil && seconds.Kind() == protoreflect.Int64Kind && nanos != nil && nanos.Kind() == protoreflect.Int32Kind
	return seconds, nanos, ok
}

// ScalarKind returns the column kind of a non-message field kind.
func ScalarKind(k protoreflect.Kind) (schema.Kind, bool) {
	switch k {
	case protoreflect.BoolKind:
		return schema.Boolean, true
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return schema.Int, true
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return schema.Long, true
	case protoreflect.FloatKind:
		return schema.Float, true
	case protoreflect.DoubleKind:
		return schema.Double, true
	case protoreflect.StringKind, protoreflect.EnumKind:
		return schema.String, true
	case protoreflect.BytesKind:
		return schema.Binary, true
	}
	return 0, false
}
