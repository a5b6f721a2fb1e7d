package schema

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Validate checks that fields is a schema ParseDDL could have produced: every
// name non-empty, valid UTF-8 and unique (ignoring case) at its level; every
// type set, of a known kind, with its parameters in range (DECIMAL precision
// 1..38 and 0 <= scale <= precision, CHAR/VARCHAR length >= 1, Fixed only with
// a length); no struct without fields; no nesting deeper than [MaxDepth].
// The error names the offending column by its dotted path.
func Validate(fields []Field) error {
	return checkFields(fields, "", 0)
}

// checkFields validates the fields of one level; prefix is the path of the
// struct that holds them ("" at the top).
func checkFields(fields []Field, prefix string, depth int) error {
	seen := make(map[string]bool, len(fields))
	for _, f := range fields {
		path := prefix + QuoteName(f.Name)
		switch {
		case f.Name == "":
			return fmt.Errorf("column %s: the name is empty", prefix+"``")
		case !utf8.ValidString(f.Name):
			return fmt.Errorf("column %q: the name is not valid UTF-8", f.Name)
		case !utf8.ValidString(f.Comment):
			return fmt.Errorf("column %s: the comment is not valid UTF-8", path)
		case seen[strings.ToLower(f.Name)]:
			return fmt.Errorf("column %s is declared twice (names are case-insensitive)", path)
		}
		seen[strings.ToLower(f.Name)] = true
		if err := checkType(f.Type, path, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// checkType validates t, the type of the column at path, at nesting depth.
func checkType(t *Type, path string, depth int) error {
	if depth > MaxDepth {
		return fmt.Errorf("column %s: types nest more than %d levels deep", path, MaxDepth)
	}
	if t == nil {
		return fmt.Errorf("column %s has no type", path)
	}
	switch t.Kind {
	case Boolean, Byte, Short, Int, Long, Float, Double, Binary, Date, Timestamp, TimestampNTZ, Variant:
	case Decimal:
		if t.Precision < 1 || t.Precision > maxPrecision || t.Scale < 0 || t.Scale > t.Precision {
			return fmt.Errorf("column %s: DECIMAL(%d,%d) is out of range: precision must be 1 to %d and scale 0 to the precision",
				path, t.Precision, t.Scale, maxPrecision)
		}
	case String:
		if t.Length < 0 || t.Length > maxLength || t.Fixed && t.Length == 0 {
			return fmt.Errorf("column %s: string length %d is out of range (CHAR and VARCHAR need 1 to %d)", path, t.Length, maxLength)
		}
	case Array:
		return checkType(t.Elem, path+".element", depth+1)
	case Map:
		if err := checkType(t.Key, path+".key", depth+1); err != nil {
			return err
		}
		return checkType(t.Value, path+".value", depth+1)
	case Struct:
		if len(t.Fields) == 0 {
			return fmt.Errorf("column %s: a STRUCT needs at least one field", path)
		}
		return checkFields(t.Fields, path+".", depth)
	default:
		return fmt.Errorf("column %s: unknown type kind %s", path, t.Kind)
	}
	return nil
}
