// Package protobuf decodes Protobuf-encoded records into a [rows.Builder],
// in the columns protoschema maps a message to, as Spark's spark-protobuf
// connector (from_protobuf) does with its default options.
//
// Descriptors come from a serialized FileDescriptorSet
// ([protoschema.LoadDescriptorSet], then [protoschema.FindMessage]) or from the schemas a schema registry returns, .proto
// source text or base64 serialized FileDescriptorProtos ([Compile], then
// [MessageByIndexes] with the message indexes of Confluent's wire format).
//
// # Mapping
//
// [protoschema.Columns] maps a message's fields to columns, every one nullable, named
// after the Protobuf field:
//
//	int32, sint32, sfixed32        INT
//	uint32, fixed32                INT     (bit pattern: 2^31 and above read negative)
//	int64, sint64, sfixed64        BIGINT
//	uint64, fixed64                BIGINT  (bit pattern: 2^63 and above read negative)
//	float, double                  FLOAT, DOUBLE
//	bool                           BOOLEAN
//	string                         STRING
//	bytes                          BINARY
//	enum                           STRING  (the value's name; an open enum's unknown number UNKNOWN_ENUM_VALUE_<enum>_<n>)
//	message, group                 STRUCT  (a message with no fields is dropped)
//	repeated T                     ARRAY<T>
//	map<K, V>                      MAP<K, V>
//	oneof members                  one nullable column each
//	google.protobuf.Timestamp      TIMESTAMP (microseconds; nanoseconds truncated)
//	google.protobuf.XxxValue       the wrapped scalar, unwrapped: Int32Value INT, StringValue STRING, ...
//
// Unsigned integers keep Spark's default (upcast.unsigned.ints off): uint32
// is IntegerType and uint64 LongType, holding the same bits. Other
// well-known types are ordinary messages: google.protobuf.Duration is
// STRUCT<seconds BIGINT, nanos INT> (Spark's DayTimeIntervalType has no
// Delta type), Any is STRUCT<type_url STRING, value BINARY>, Empty is
// dropped. Timestamp and Duration are matched by full name, where Spark
// matches any message of that simple name with seconds and nanos fields:
// another package's Timestamp stays a STRUCT. A wrapper present on the
// wire is its value, 0 included, where Spark reads a wrapped zero as null.
// An enum number a closed (proto2) enum lacks is an unknown field, as
// protobuf parses it; an open enum's is named as protobuf-java names it
// for Spark. A proto2 string that is not valid UTF-8 has its broken bytes
// replaced by U+FFFD, as Spark reads it. The docs' mapping table lists
// these differences from Spark with their reasons.
//
// # Presence
//
// As Spark's ProtobufDeserializer with emit.default.values off, a field
// reads as null unless the message has it: a proto3 scalar without presence
// that holds its zero value (and so is not on the wire) is null, a proto3
// `optional` scalar or a message field set to its zero value is not, and an
// unset proto2 field with an explicit [default = ...] reads as that default.
// Repeated and map fields are never null: absent, they are empty. Unknown
// fields are ignored.
//
// # Decoding
//
// A [Decoder] reads the wire format itself, with a plan compiled from the
// descriptor and the columns, and writes straight into the row, strings
// and bytes aliasing the record. It follows protobuf's parsing rules, as
// protobuf-go does: fields come in any order; the last occurrence of a
// single value wins; a list takes packed and unpacked elements, mixed, in
// order; occurrences of a message field merge; the last member of a oneof
// wins; a known field with another wire type is an unknown field (Spark
// refuses the record when that field is a top-level one); a proto3 string
// must be valid UTF-8 and a proto2 required field present. A map
// is written in key order, of entries with the same key the last, a key or
// a value missing from its entry reading as its default. The contents of
// fields that have no column (columns left out, recursive fields dropped)
// and of a oneof's message member that a later member replaced are skipped
// as unknown fields are, not checked, where protobuf-go parses them; group
// nesting in skipped fields is bounded as protobuf-go bounds it (10,000).
//
// # Recursion
//
// maxDepth is the table's recursive_fields_max_depth, as the product
// reference defines it: -1 (the default) refuses a recursive message with
// an error naming the cycle ([protoschema.ErrRecursive]), 0 drops recursive fields, and
// 1 to 10 expand them that many times. For
// `message Node { string name = 1; repeated Node children = 2; }`:
//
//	-1  error: recursive message Node: Node.children → Node
//	0   name STRING
//	1   name STRING, children ARRAY<STRUCT<name: STRING>>
//	2   name STRING, children ARRAY<STRUCT<name: STRING, children: ARRAY<STRUCT<name: STRING>>>>
//
// A message may appear maxDepth+1 times on a path from the root, the root
// included; a recursive field beyond is dropped, a dropped field inside an
// array or map drops the array or map, and a message left with no fields
// is dropped, as in Spark. This is one less than Spark counts
// recursive.fields.max.depth (in its guide and its SchemaConverters alike),
// where 0 refuses like -1, 1 drops and 2 expands once: the product
// reference defines 0 as dropping, and that is the definition followed
// here.
//
//go:generate go run ../../../../tools/gendesc -I testdata -o testdata/events.desc events.proto
package protobuf
