// Package avroschema reads Avro schemas as table schemas. It sits beside
// the table types (internal/schema), before any record flows: [Parse]
// parses a schema in its JSON form, and [Columns] maps it to table columns
// as spark-avro's SchemaConverters does. The plan-time rules (agent/spec)
// use it to know a table's columns, and the Avro decoder (decode/avro) to
// compile the program that writes records into those columns, with the
// helpers both read schemas with ([Deref], [NonNull], [Widened],
// [MemberName], [Logical], [Decimal]).
package avroschema
