// Package rows turns table columns ([schema.Field]) into a Spark-compatible
// Parquet schema and builds batches of rows for it column by column: per
// leaf column, the [parquet.Value] of every row, each carrying its
// repetition level, definition level and column index, ready for a Parquet
// column writer.
//
// Decoders (JSON, and later Avro and Protobuf) fill rows through a [Builder],
// which accepts the fields of a struct in any order and appends each value
// to its column.
package rows

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// SchemaName is the name of the Parquet root group, as Spark writes it.
const SchemaName = "spark_schema"

// Schema returns the Parquet schema of a table with the given columns, in
// Spark's mapping:
//
//	BOOLEAN                 boolean
//	TINYINT, SMALLINT       int32 INT(8|16, signed)
//	INT, BIGINT             int32, int64
//	FLOAT, DOUBLE           float, double
//	DECIMAL(p,s)            int32 (p<=9), int64 (p<=18), else fixed_len_byte_array of the
//	                        fewest bytes holding p digits; all DECIMAL(p,s)
//	STRING, CHAR, VARCHAR   binary STRING
//	BINARY                  binary
//	DATE                    int32 DATE
//	TIMESTAMP               int64 TIMESTAMP(MICROS, adjustedToUTC=true)
//	TIMESTAMP_NTZ           int64 TIMESTAMP(MICROS, adjustedToUTC=false)
//	ARRAY<T>                <name> (LIST) { repeated group list { optional element } }
//	MAP<K,V>                <name> (MAP) { repeated group key_value { required key; optional value } }
//	STRUCT<...>             group
//	VARIANT                 <name> (VARIANT(1)) { required binary metadata; required binary value }
//
// Nullable fields are optional, NOT NULL fields required; array elements and
// map values are always optional (the type system has no containsNull).
// Columns keep their declared order (parquet.Group would sort them by name).
// It returns an error naming the field when a type cannot be represented: a
// nil type, an unknown kind, a DECIMAL precision outside 1..38 or scale
// outside 0..precision, or a STRUCT with no fields.
func Schema(fields []schema.Field) (*parquet.Schema, error) {
	p, err := compile(fields)
	if err != nil {
		return nil, err
	}
	return p.schema, nil
}

// plan is a compiled schema: the Parquet schema and the node tree the
// Builder walks.
type plan struct {
	schema *parquet.Schema
	root   *node
	leaves []*node // leaf nodes by column index
}

// node is one compiled type in the tree: its levels and leaf column range.
type node struct {
	typ *schema.Type
	// name is the field path, for error messages.
	name     string
	optional bool
	// def is the definition level of a present (non-null) value of the node.
	def uint8
	// rep is, for a LIST or MAP, the repetition level of its repeated group.
	rep uint8
	// lo and hi bound the node's leaf columns, [lo, hi).
	lo, hi int
	// phys is the Parquet physical kind of a leaf; size the length of a
	// fixed_len_byte_array leaf.
	phys parquet.Kind
	size int
	// children are a struct's fields, a list's element, or a map's key and
	// value.
	children []*node
}

// compile checks fields and builds their plan.
func compile(fields []schema.Field) (*plan, error) {
	c := &compiler{}
	root := &node{typ: &schema.Type{Kind: schema.Struct, Fields: fields}, name: SchemaName}
	pn, err := c.group(root, fields, "", 0, 0)
	if err != nil {
		return nil, err
	}
	root.hi = len(c.leaves)
	if len(c.leaves) > parquet.MaxColumnIndex+1 {
		return nil, fmt.Errorf("the schema has %d leaf columns, more than Parquet's %d", len(c.leaves), parquet.MaxColumnIndex+1)
	}
	return &plan{schema: parquet.NewSchema(SchemaName, pn), root: root, leaves: c.leaves}, nil
}

// compiler accumulates leaves in column order while compiling.
type compiler struct {
	leaves []*node
}

// errNoFields is returned for a STRUCT without fields, which Parquet cannot
// store.
var errNoFields = errors.New("a struct needs at least one field")

// group compiles the struct fields into n's children and returns the ordered
// Parquet group; def and rep are the levels of a present struct.
func (c *compiler) group(n *node, fields []schema.Field, path string, def, rep uint8) (parquet.Node, error) {
	if len(fields) == 0 {
		return nil, fmt.Errorf("%s: %w", nameOr(path), errNoFields)
	}
	g := &group{fields: make([]parquet.Field, len(fields))}
	n.children = make([]*node, len(fields))
	n.lo = len(c.leaves)
	for i, f := range fields {
		fp := f.Name
		if path != "" {
			fp = path + "." + f.Name
		}
		child, pn, err := c.field(f.Type, fp, f.Nullable, def, rep)
		if err != nil {
			return nil, err
		}
		n.children[i] = child
		g.fields[i] = &field{Node: pn, name: f.Name}
	}
	n.hi = len(c.leaves)
	return g, nil
}

// field compiles one field (or list element, map key or value) of type t
// whose parent is present at levels def and rep.
func (c *compiler) field(t *schema.Type, path string, nullable bool, def, rep uint8) (*node, parquet.Node, error) {
	if t == nil {
		return nil, nil, fmt.Errorf("%s: missing type", nameOr(path))
	}
	if def >= 250 {
		return nil, nil, fmt.Errorf("%s: types are nested too deeply", nameOr(path))
	}
	n := &node{typ: t, name: path, optional: nullable, def: def, lo: len(c.leaves)}
	if nullable {
		n.def++
	}
	var pn parquet.Node
	switch t.Kind {
	case schema.Struct:
		g, err := c.group(n, t.Fields, path, n.def, rep)
		if err != nil {
			return nil, nil, err
		}
		pn = g
	case schema.Array:
		// optional group <name> (LIST) { repeated group list { optional element } }
		n.rep = rep + 1
		elem, en, err := c.field(t.Elem, path+".element", true, n.def+1, n.rep)
		if err != nil {
			return nil, nil, err
		}
		n.children = []*node{elem}
		pn = parquet.List(en)
	case schema.Map:
		// optional group <name> (MAP) { repeated group key_value { required key; optional value } }
		n.rep = rep + 1
		key, kn, err := c.field(t.Key, path+".key", false, n.def+1, n.rep)
		if err != nil {
			return nil, nil, err
		}
		val, vn, err := c.field(t.Value, path+".value", true, n.def+1, n.rep)
		if err != nil {
			return nil, nil, err
		}
		n.children = []*node{key, val}
		pn = parquet.Map(kn, vn)
	case schema.Variant:
		// <name> (VARIANT) { required binary metadata; required binary value },
		// unshredded: two leaves at the variant's own levels.
		n.children = []*node{c.binaryLeaf(path+".metadata", n.def), c.binaryLeaf(path+".value", n.def)}
		pn = variantNode{parquet.Variant()}
	default:
		leaf, phys, size, err := leafNode(t)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", nameOr(path), err)
		}
		n.phys, n.size = phys, size
		c.leaves = append(c.leaves, n)
		pn = leaf
	}
	n.hi = len(c.leaves)
	if nullable {
		return n, parquet.Optional(pn), nil
	}
	return n, parquet.Required(pn), nil
}

// binaryLeaf adds a required binary leaf column at definition level def.
func (c *compiler) binaryLeaf(path string, def uint8) *node {
	n := &node{typ: &schema.Type{Kind: schema.Binary}, name: path, def: def, lo: len(c.leaves), phys: parquet.ByteArray}
	c.leaves = append(c.leaves, n)
	n.hi = len(c.leaves)
	return n
}

// leafNode returns the Parquet leaf of a primitive type, its physical kind
// and, for fixed_len_byte_array, its length.
func leafNode(t *schema.Type) (parquet.Node, parquet.Kind, int, error) {
	switch t.Kind {
	case schema.Boolean:
		return parquet.Leaf(parquet.BooleanType), parquet.Boolean, 0, nil
	case schema.Byte:
		return parquet.Int(8), parquet.Int32, 0, nil
	case schema.Short:
		return parquet.Int(16), parquet.Int32, 0, nil
	case schema.Int:
		return parquet.Leaf(parquet.Int32Type), parquet.Int32, 0, nil
	case schema.Long:
		return parquet.Leaf(parquet.Int64Type), parquet.Int64, 0, nil
	case schema.Float:
		return parquet.Leaf(parquet.FloatType), parquet.Float, 0, nil
	case schema.Double:
		return parquet.Leaf(parquet.DoubleType), parquet.Double, 0, nil
	case schema.Decimal:
		p, s := t.Precision, t.Scale
		if p < 1 || p > MaxDecimalPrecision {
			return nil, 0, 0, fmt.Errorf("DECIMAL precision %d is outside 1..%d", p, MaxDecimalPrecision)
		}
		if s < 0 || s > p {
			return nil, 0, 0, fmt.Errorf("DECIMAL(%d,%d) scale is outside 0..%d", p, s, p)
		}
		switch {
		case p <= 9:
			return parquet.Decimal(s, p, parquet.Int32Type), parquet.Int32, 0, nil
		case p <= 18:
			return parquet.Decimal(s, p, parquet.Int64Type), parquet.Int64, 0, nil
		default:
			n := DecimalBytes(p)
			return parquet.Decimal(s, p, parquet.FixedLenByteArrayType(n)), parquet.FixedLenByteArray, n, nil
		}
	case schema.String:
		return parquet.String(), parquet.ByteArray, 0, nil
	case schema.Binary:
		return parquet.Leaf(parquet.ByteArrayType), parquet.ByteArray, 0, nil
	case schema.Date:
		return parquet.Date(), parquet.Int32, 0, nil
	case schema.Timestamp:
		return parquet.TimestampAdjusted(parquet.Microsecond, true), parquet.Int64, 0, nil
	case schema.TimestampNTZ:
		return parquet.TimestampAdjusted(parquet.Microsecond, false), parquet.Int64, 0, nil
	}
	return nil, 0, 0, fmt.Errorf("unknown type kind %d", t.Kind)
}

// MaxDecimalPrecision is the largest DECIMAL precision, as in Spark.
const MaxDecimalPrecision = 38

// DecimalBytes returns the fewest bytes of a two's-complement big-endian
// integer that hold every unscaled value of precision p, computed as Spark's
// minBytesForPrecision does: 9 for DECIMAL(19..20), 16 for DECIMAL(38).
func DecimalBytes(p int) int {
	n := 1
	for math.Pow(2, float64(8*n-1)) < math.Pow(10, float64(p)) {
		n++
	}
	return n
}

// nameOr returns path, or "the schema" for the root.
func nameOr(path string) string {
	if path == "" {
		return "the schema"
	}
	return "field " + path
}

// group is a Parquet group node whose fields keep their declared order;
// parquet.Group is a map and returns its fields sorted by name.
type group struct {
	parquet.Group // never populated: provides Type, Encoding, Compression, ...
	fields        []parquet.Field
}

// Fields returns the fields in declared order.
func (g *group) Fields() []parquet.Field { return g.fields }

// String prints the group in Parquet schema syntax.
func (g *group) String() string {
	var sb strings.Builder
	_ = parquet.PrintSchema(&sb, "", g)
	return sb.String()
}

// GoType returns a struct type with one field per group field, in order.
func (g *group) GoType() reflect.Type {
	sf := make([]reflect.StructField, len(g.fields))
	for i, f := range g.fields {
		sf[i] = reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: f.GoType(), Tag: reflect.StructTag(fmt.Sprintf("parquet:%q", f.Name()))}
	}
	return reflect.StructOf(sf)
}

// field names a node within its group.
type field struct {
	parquet.Node
	name string
}

// Name returns the field's name in its group.
func (f *field) Name() string { return f.name }

// Value returns the Go value of the field in base, a value of the group's
// GoType (a struct, or a map keyed by field name).
func (f *field) Value(base reflect.Value) reflect.Value {
	switch base.Kind() {
	case reflect.Map:
		return base.MapIndex(reflect.ValueOf(f.name))
	case reflect.Struct:
		for i := range base.NumField() {
			if base.Type().Field(i).Tag.Get("parquet") == f.name {
				return base.Field(i)
			}
		}
	}
	return reflect.Value{}
}

// variantNode is parquet.Variant() with the specification_version of its
// VARIANT logical type set to 1, as the Parquet format asks writers to.
// parquet-go's own node writes the annotation without the version (its
// format.VariantType has the field, its Variant() leaves it zero, which the
// Thrift encoder omits); readers then assume version 1 anyway. The library
// cannot shred variants on write from raw bytes, so the group always holds
// just metadata and value.
type variantNode struct{ parquet.Node }

// Type returns the variant type with the versioned logical type.
func (n variantNode) Type() parquet.Type { return variantType{n.Node.Type()} }

// Fields returns the group's metadata and value, the metadata dictionary
// encoded: the values of one kind of record carry the same dictionary of
// keys (about 400 bytes each in the 1 KB events), which a Parquet
// dictionary stores once per row group instead of copying and compressing
// it row by row; parquet-mr, and so Spark, dictionary-encode every column
// by default. The value stays as parquet-go encodes it by default.
func (n variantNode) Fields() []parquet.Field {
	fields := slices.Clone(n.Node.Fields())
	for i, f := range fields {
		if f.Name() == "metadata" {
			fields[i] = dictionaryField{f}
		}
	}
	return fields
}

// dictionaryField is a field whose leaf is dictionary encoded.
type dictionaryField struct{ parquet.Field }

// Encoding returns RLE_DICTIONARY, Parquet's dictionary encoding.
func (dictionaryField) Encoding() encoding.Encoding { return &parquet.RLEDictionary }

// variantType overrides LogicalType of parquet-go's variant type.
type variantType struct{ parquet.Type }

// variantLogicalType is the VARIANT annotation with specification_version 1.
var variantLogicalType = format.LogicalType{Value: &format.VariantType{SpecificationVersion: VariantSpecVersion}}

// VariantSpecVersion is the Parquet variant specification version the
// logical type annotation declares.
const VariantSpecVersion = 1

// LogicalType returns the VARIANT annotation with specification_version 1.
func (variantType) LogicalType() *format.LogicalType { return &variantLogicalType }
