package avroschema

import (
	"fmt"

	"github.com/hamba/avro/v2"
)

// Schema is a parsed Avro schema, as hamba/avro represents it.
type Schema = avro.Schema

// Parse parses an Avro schema in its JSON form (what .avsc files and a
// schema registry hold). Each call parses with a cache of its own: hamba's
// global cache would let a later version of a named record clash with an
// earlier one, or silently stand in for it.
func Parse(text string) (avro.Schema, error) {
	s, err := avro.ParseWithCache(text, "", &avro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("parsing avro schema: %w", err)
	}
	return s, nil
}

// Deref returns the schema a reference to a named type stands for.
func Deref(s avro.Schema) avro.Schema {
	if r, ok := s.(*avro.RefSchema); ok {
		return r.Schema()
	}
	return s
}

// Logical returns the logical type of s, "" when it has none.
func Logical(s avro.Schema) avro.LogicalType {
	if l, ok := s.(avro.LogicalTypeSchema); ok && l.Logical() != nil {
		return l.Logical().Type()
	}
	return ""
}

// Decimal returns the decimal logical type of a bytes or fixed schema.
func Decimal(s avro.Schema) (*avro.DecimalLogicalSchema, bool) {
	l, ok := s.(avro.LogicalTypeSchema)
	if !ok {
		return nil, false
	}
	d, ok := l.Logical().(*avro.DecimalLogicalSchema)
	return d, ok
}

// NonNull returns the branches of a union other than null, and whether it
// has a null branch.
func NonNull(u *avro.UnionSchema) (branches []avro.Schema, nullable bool) {
	for _, t := range u.Types() {
		if t.Type() == avro.Null {
			nullable = true
		} else {
			branches = append(branches, t)
		}
	}
	return branches, nullable
}

// Widened reports spark-avro's two special unions of two non-null
// branches: [int, long] is a BIGINT and [float, double] a DOUBLE.
func Widened(branches []avro.Schema) (schema avro.Type, ok bool) {
	if len(branches) != 2 {
		return "", false
	}
	a, b := branches[0].Type(), branches[1].Type()
	switch {
	case a == avro.Int && b == avro.Long || a == avro.Long && b == avro.Int:
		return avro.Long, true
	case a == avro.Float && b == avro.Double || a == avro.Double && b == avro.Float:
		return avro.Double, true
	}
	return "", false
}

// MemberName names the struct field of a union's k-th non-null branch, as
// spark-avro does.
func MemberName(k int) string { return fmt.Sprintf("member%d", k) }
