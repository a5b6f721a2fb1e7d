// Package protobuf decodes Protobuf-encoded records into a [rows.Builder],
// in the columns protoschema maps a message to, as Spark's spark-protobuf
// connector (from_protobuf) does with its default options.
//
// Descriptors come from a serialized FileDescriptorSet
// ([protoschema.LoadDescriptorSet], then [protoschema.FindMessage]) or
// from the schemas a schema registry returns, .proto source text or base64
// serialized FileDescriptorProtos ([Compile], then [MessageByIndexes] with
// the message indexes of Confluent's wire format).
//
// # Values
//
// Records decode into the columns [protoschema.Columns] maps a message to
// (its package documentation has the mapping, and the recursion rule of
// recursive_fields_max_depth, which is [NewDecoder]'s maxDepth). A wrapper
// present on the wire is its value, 0 included, where Spark reads a
// wrapped zero as null.
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
//go:generate go run ../../../../tools/gendesc -I testdata -o testdata/events.desc events.proto
package protobuf
