package avro

import (
	"fmt"
	"slices"

	"github.com/hamba/avro/v2"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema/avroschema"
)

// leaf compiles a primitive, enum or fixed writer schema w read as reader
// schema r into column type col.
func leaf(w, r avro.Schema, col *schema.Type, path string) (*node, error) {
	if !promotes(w, r) {
		return nil, fmt.Errorf("%s: the writer's %s cannot be read as the reader's %s", nameOr(path), w.Type(), r.Type())
	}
	rt, err := avroschema.ColumnType(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", nameOr(path), err)
	}
	if !fits(rt, col) {
		return nil, fmt.Errorf("%s: the reader's %s does not fit the column's %s", nameOr(path), rt, col)
	}
	n := &node{path: path, minSize: 1, isInt: w.Type() == avro.Int}
	wt := w.Type()
	switch col.Kind {
	case schema.Boolean:
		n.op = opBool
	case schema.Int, schema.Date:
		n.op = opInt32
	case schema.Long, schema.Timestamp, schema.TimestampNTZ:
		n.op = opInt64
		if l := avroschema.Logical(r); l == avro.TimestampMillis || l == avro.LocalTimestampMillis {
			n.op = opMicros
		}
	case schema.Float:
		n.op = opLongFloat
		if wt == avro.Float {
			n.op, n.minSize = opFloat, 4
		}
	case schema.Double:
		switch wt {
		case avro.Float:
			n.op, n.minSize = opFloatDouble, 4
		case avro.Double:
			n.op, n.minSize = opDouble, 8
		default:
			n.op = opLongDouble
		}
	case schema.String:
		n.op = opString
		if wt == avro.Enum {
			n.op, n.symbols = opEnum, symbols(w.(*avro.EnumSchema), r.(*avro.EnumSchema))
		}
	case schema.Binary:
		n.op = opBinary
		if f, ok := w.(*avro.FixedSchema); ok {
			n.op, n.size, n.minSize = opFixed, f.Size(), f.Size()
		}
	case schema.Decimal:
		if wd, ok := avroschema.Decimal(w); ok && wd.Scale() != col.Scale {
			return nil, fmt.Errorf("%s: the writer's decimal scale %d differs from the reader's %d", nameOr(path), wd.Scale(), col.Scale)
		}
		n.op, n.precision = opDecimal, col.Precision
		if col.Precision > 18 {
			n.width = rows.DecimalBytes(col.Precision)
		}
		if f, ok := w.(*avro.FixedSchema); ok {
			n.op, n.size, n.minSize = opDecimalFixed, f.Size(), f.Size()
		}
	}
	return n, nil
}

// promotes reports whether Avro's schema resolution reads writer schema w
// as reader schema r, both primitive, enum or fixed.
func promotes(w, r avro.Schema) bool {
	wt, rt := w.Type(), r.Type()
	switch {
	case wt == avro.Fixed && rt == avro.Fixed:
		return w.(*avro.FixedSchema).Size() == r.(*avro.FixedSchema).Size()
	case wt == rt:
		return true
	case wt == avro.Int:
		return rt == avro.Long || rt == avro.Float || rt == avro.Double
	case wt == avro.Long:
		return rt == avro.Float || rt == avro.Double
	case wt == avro.Float:
		return rt == avro.Double
	case wt == avro.String:
		return rt == avro.Bytes
	case wt == avro.Bytes:
		return rt == avro.String
	}
	return false
}

// fits reports whether values of table type t can be written to a column of
// type col: the same type, or a wider one.
func fits(t, col *schema.Type) bool {
	switch {
	case t == nil || col == nil:
		return false
	case t.Kind == schema.Decimal:
		return col.Kind == schema.Decimal && col.Scale == t.Scale
	case t.Kind == col.Kind:
		return true
	case t.Kind == schema.Int:
		return col.Kind == schema.Long || col.Kind == schema.Double
	case t.Kind == schema.Float:
		return col.Kind == schema.Double
	}
	return false
}

// symbols maps the writer enum's symbols to the reader's: the same symbol,
// else the reader's default, else nil (an error when data holds it).
func symbols(w, r *avro.EnumSchema) [][]byte {
	out := make([][]byte, len(w.Symbols()))
	for i, s := range w.Symbols() {
		switch {
		case slices.Contains(r.Symbols(), s):
			out[i] = []byte(s)
		case r.HasDefault():
			out[i] = []byte(r.Default())
		}
	}
	return out
}
