package schema

import "slices"

// Unify returns the type that holds the values of both a and b, as schema
// inference merges the types of the values of one field (Spark's
// JsonInferSchema.compatibleType):
//
//   - nil (only nulls seen) unifies to the other type;
//   - numbers take the wider type: integers the wider integer, an integer
//     and a FLOAT or DOUBLE the floating type (BIGINT+DOUBLE is DOUBLE),
//     FLOAT and DOUBLE DOUBLE, an integer and a DECIMAL a DECIMAL with
//     room for both, two DECIMALs one with the larger integer part and the
//     larger scale, and a DECIMAL with a FLOAT or DOUBLE, or DECIMALs
//     needing more than 38 digits, DOUBLE (Spark gives STRING for FLOAT
//     with DECIMAL, a pair inference never yields);
//   - DATE and TIMESTAMP are TIMESTAMP, TIMESTAMP and TIMESTAMP_NTZ
//     TIMESTAMP, DATE and TIMESTAMP_NTZ TIMESTAMP_NTZ;
//   - structs merge their members by name (case-sensitive), a's in their
//     order and then b's new ones, each member's types unified;
//   - arrays unify their elements, and maps with equal keys their values;
//   - CHAR and VARCHAR with another string type are STRING;
//   - anything else, such as BOOLEAN with BIGINT or a struct with an
//     array, is STRING: every JSON value can be read as a string.
//
// Unify returns a itself when a already holds b, so callers can tell a
// change by comparing pointers; it never modifies a or b.
func Unify(a, b *Type) *Type {
	switch {
	case a == nil:
		return b
	case b == nil || a == b:
		return a
	case a.Kind == b.Kind:
		return unifySame(a, b)
	case isNumeric(a.Kind) && isNumeric(b.Kind):
		return unifyNumbers(a, b)
	}
	switch {
	case isDateTime(a.Kind) && isDateTime(b.Kind):
		// Of two different kinds of DATE, TIMESTAMP and TIMESTAMP_NTZ,
		// TIMESTAMP wins, and TIMESTAMP_NTZ over DATE.
		if a.Kind == Timestamp || a.Kind == TimestampNTZ && b.Kind == Date {
			return a
		}
		return b
	case a.Kind == String && a.Length == 0:
		return a
	}
	return typeString
}

// unifySame unifies two types of the same kind.
func unifySame(a, b *Type) *Type {
	switch a.Kind {
	case Struct:
		fs, changed := unifyFields(a.Fields, b.Fields)
		if !changed {
			return a
		}
		return &Type{Kind: Struct, Fields: fs}
	case Array:
		e := Unify(a.Elem, b.Elem)
		if e == a.Elem {
			return a
		}
		return &Type{Kind: Array, Elem: e}
	case Map:
		if !a.Key.Equal(b.Key) {
			return typeString
		}
		v := Unify(a.Value, b.Value)
		if v == a.Value {
			return a
		}
		return &Type{Kind: Map, Key: a.Key, Value: v}
	case Decimal:
		return unifyDecimals(a, b)
	case String:
		if a.Equal(b) || a.Length == 0 {
			return a
		}
		return typeString
	}
	return a
}

// unifyFields merges the members of b into a (see [Unify]) and reports
// whether the result differs from a; a is never modified.
func unifyFields(a, b []Field) (_ []Field, changed bool) {
	out := a
	for _, f := range b {
		i := indexOf(out, f.Name)
		if i < 0 {
			if !changed {
				out, changed = slices.Clip(out), true
			}
			out = append(out, Field{Name: f.Name, Type: f.Type, Nullable: true})
			continue
		}
		t := Unify(out[i].Type, f.Type)
		if t == out[i].Type {
			continue
		}
		if !changed {
			out, changed = slices.Clone(out), true
		}
		out[i].Type = t
	}
	return out, changed
}

// indexOf returns the index of the field of fields named exactly name, or
// -1.
func indexOf(fields []Field, name string) int {
	for i := range fields {
		if fields[i].Name == name {
			return i
		}
	}
	return -1
}

// isNumeric reports whether k is an integer, floating or decimal kind.
func isNumeric(k Kind) bool { return k >= Byte && k <= Decimal }

// isDateTime reports whether k is DATE, TIMESTAMP or TIMESTAMP_NTZ.
func isDateTime(k Kind) bool { return k == Date || k == Timestamp || k == TimestampNTZ }

// integerDigits holds the decimal digits the values of each integer kind
// need, as Spark's DecimalType.forType.
var integerDigits = map[Kind]int{Byte: 3, Short: 5, Int: 10, Long: 20}

// unifyNumbers unifies two numeric types of different kinds.
func unifyNumbers(a, b *Type) *Type {
	if b.Kind == Decimal {
		a, b = b, a
	}
	switch {
	case a.Kind != Decimal:
		// Byte < Short < Int < Long < Float < Double.
		if a.Kind > b.Kind {
			return a
		}
		return b
	case b.Kind == Float || b.Kind == Double:
		return typeDouble
	case a.Precision-a.Scale >= integerDigits[b.Kind]:
		return a
	}
	return unifyDecimals(a, &Type{Kind: Decimal, Precision: integerDigits[b.Kind]})
}

// unifyDecimals returns the DECIMAL that holds the values of DECIMALs a
// and b, or DOUBLE when that needs more than 38 digits.
func unifyDecimals(a, b *Type) *Type {
	scale := max(a.Scale, b.Scale)
	whole := max(a.Precision-a.Scale, b.Precision-b.Scale)
	switch {
	case whole+scale > maxPrecision:
		return typeDouble
	case whole+scale == a.Precision && scale == a.Scale:
		return a
	case whole+scale == b.Precision && scale == b.Scale:
		return b
	}
	return &Type{Kind: Decimal, Precision: whole + scale, Scale: scale}
}
