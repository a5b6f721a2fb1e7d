// Package protoschema reads Protobuf descriptors as table schemas. It sits
// beside the table types (internal/schema), before any record flows:
// [LoadDescriptorSet] and [FindMessage] find a message in a serialized
// FileDescriptorSet, and [Columns] maps its fields to table columns as
// Spark's spark-protobuf connector (from_protobuf) does with its default
// options. The plan-time rules (agent/spec) use it to know a table's
// columns, and the Protobuf decoder (decode/protobuf) to plan how a
// message's fields fill them, with the helpers both read descriptors with
// ([ScalarKind], [TimestampFields], [Wrapped], [FieldPath]).
//
// # Mapping
//
// [Columns] maps a message's fields to columns, every one nullable, named
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
// another package's Timestamp stays a STRUCT.
//
// # Recursion
//
// The maxDepth of [Columns] is the table's recursive_fields_max_depth, as
// the product reference defines it: -1 (the default) refuses a recursive
// message with an error naming the cycle ([ErrRecursive]), 0 drops
// recursive fields, and 1 to 10 expand them that many times. For
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
package protoschema
