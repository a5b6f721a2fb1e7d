package schema

// Equal reports whether a and b declare the same columns in the same order:
// equal names (case-sensitive), types and nullability, at every level.
// Comments are ignored. A nil and an empty list are equal.
func Equal(a, b []Field) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Nullable != b[i].Nullable || !a[i].Type.Equal(b[i].Type) {
			return false
		}
	}
	return true
}

// Equal reports whether t and u are the same type, by the rules of the
// package-level [Equal]. Two nil types are equal.
func (t *Type) Equal(u *Type) bool {
	if t == nil || u == nil {
		return t == u
	}
	if t.Kind != u.Kind {
		return false
	}
	switch t.Kind {
	case Decimal:
		return t.Precision == u.Precision && t.Scale == u.Scale
	case String:
		return t.Length == u.Length && t.Fixed == u.Fixed
	case Array:
		return t.Elem.Equal(u.Elem)
	case Map:
		return t.Key.Equal(u.Key) && t.Value.Equal(u.Value)
	case Struct:
		return Equal(t.Fields, u.Fields)
	}
	return true
}

// HasKind reports whether any column of fields has a type of kind k, at any
// depth: inside arrays, maps and structs too. The table writer uses it to
// decide which Delta table features a schema needs (TIMESTAMP_NTZ needs
// timestampNtz).
func HasKind(fields []Field, k Kind) bool {
	for _, f := range fields {
		if f.Type.hasKind(k) {
			return true
		}
	}
	return false
}

// hasKind reports whether t or a type nested in it has kind k.
func (t *Type) hasKind(k Kind) bool {
	switch {
	case t == nil:
		return false
	case t.Kind == k:
		return true
	case t.Kind == Array:
		return t.Elem.hasKind(k)
	case t.Kind == Map:
		return t.Key.hasKind(k) || t.Value.hasKind(k)
	case t.Kind == Struct:
		return HasKind(t.Fields, k)
	}
	return false
}
