package schema

// LeafColumns returns how many Parquet leaf columns fields make: one per
// primitive, the leaves of a struct's fields, of an array's element and of
// a map's key and value, and two for a VARIANT (its metadata and value).
func LeafColumns(fields []Field) int {
	n := 0
	for _, f := range fields {
		n += leafColumns(f.Type)
	}
	return n
}

// leafColumns returns how many Parquet leaf columns a column of type t
// makes.
func leafColumns(t *Type) int {
	switch t.Kind {
	case Struct:
		return LeafColumns(t.Fields)
	case Array:
		return leafColumns(t.Elem)
	case Map:
		return leafColumns(t.Key) + leafColumns(t.Value)
	case Variant:
		return 2 // metadata and value
	}
	return 1
}
