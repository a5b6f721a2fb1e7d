// Package protoschema reads Protobuf descriptors as table schemas. It sits
// beside the table types (internal/schema), before any record flows:
// [LoadDescriptorSet] and [FindMessage] find a message in a serialized
// FileDescriptorSet, and [Columns] maps its fields to table columns as
// Spark's spark-protobuf connector does (the mapping table, its differences
// from Spark and the recursion rule are in the package documentation of
// decode/protobuf, which decodes records into these columns). The
// plan-time rules (agent/spec) use it to know a table's columns, and the
// decoder to plan how a message's fields fill them, with the helpers both
// read descriptors with ([ScalarKind], [TimestampFields], [Wrapped],
// [FieldPath]).
package protoschema
