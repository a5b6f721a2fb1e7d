// Package schema holds Tributary's table type system: the column types a
// destination table can have, the Spark DDL parser that reads them from
// `json_options.schema`, and their Spark JSON form stored in the table's
// Delta log. A table's schema is data, not Go structs: decoders are handed a
// [Struct] and produce rows for it.
//
// It sits beside package spec, outside internal/, because spec's API
// carries it: the columns a table's layout gives ([spec.Layout.Columns])
// are part of the contract the provider and the agent share. The agent's
// decoders build rows for these columns and its table writer stores them in
// the Delta log.
package schema

// Kind names a Spark SQL data type.
type Kind uint8

// The kinds of the Spark SQL types the DDL parser accepts. Aliases (BYTE,
// SHORT, INTEGER, LONG, REAL, DEC, NUMERIC, CHAR(n), VARCHAR(n)) map onto
// these.
const (
	Boolean Kind = iota + 1
	Byte
	Short
	Int
	Long
	Float
	Double
	Decimal
	String
	Binary
	Date
	Timestamp
	TimestampNTZ
	Array
	Map
	Struct
	// Variant is Spark's VARIANT: any JSON-like value (object, array, string,
	// number, boolean or null) stored in the Parquet Variant binary encoding.
	// A schema treats it as a leaf: it has no nested fields to compare or
	// merge.
	Variant
)

// Type is one Spark SQL data type. Only the fields that belong to its Kind are
// set: Precision and Scale for Decimal, Length for a CHAR(n)/VARCHAR(n) string
// (0 for STRING) and Fixed for CHAR(n), Elem for Array, Key and Value for Map,
// Fields for Struct. Array elements and map values are always nullable and
// map keys never are, as for every type Spark DDL can declare.
// Types are immutable once built and safe to share between goroutines.
type Type struct {
	Kind      Kind
	Precision int
	Scale     int
	Length    int
	// Fixed marks a CHAR(Length) string, whose values Spark pads with spaces
	// to Length; it is false for VARCHAR(Length) and STRING.
	Fixed  bool
	Elem   *Type
	Key    *Type
	Value  *Type
	Fields []Field
}

// Field is one named column or struct member.
type Field struct {
	Name     string
	Type     *Type
	Nullable bool
	Comment  string
}
