package schema

import "strings"

// Merge returns the columns of a table whose columns were prev once next
// is added to them: prev's fields in their order, each with next's type
// where next has a field of the same name (names compare ignoring case),
// then next's other fields in their order. Structs are merged the same way,
// also inside arrays and map values, so a struct never loses a field; every
// field Merge adds to prev, at any depth, is nullable, since the rows
// written before have no value for it. A type that changes (other than a
// struct gaining fields) is taken from next: whether the table can take it
// is for the caller to check.
func Merge(prev, next []Field) []Field {
	out := make([]Field, 0, max(len(prev), len(next)))
	for _, p := range prev {
		if n, ok := find(next, p.Name); ok {
			p.Type = mergeType(p.Type, n.Type)
		}
		out = append(out, p)
	}
	for _, n := range next {
		if _, ok := find(prev, n.Name); !ok {
			out = append(out, Nullable(n))
		}
	}
	return out
}

// mergeType merges type next into prev.
func mergeType(prev, next *Type) *Type {
	if prev == nil || next == nil || prev.Kind != next.Kind {
		return next
	}
	switch prev.Kind {
	case Struct:
		return &Type{Kind: Struct, Fields: Merge(prev.Fields, next.Fields)}
	case Array:
		return &Type{Kind: Array, Elem: mergeType(prev.Elem, next.Elem)}
	case Map:
		return &Type{Kind: Map, Key: next.Key, Value: mergeType(prev.Value, next.Value)}
	}
	return next
}

// Adds reports whether next has a field that have lacks, at the top level
// or in a struct at any depth (names compare ignoring case). Types that
// differ are not additions.
func Adds(have, next []Field) bool {
	for _, n := range next {
		h, ok := find(have, n.Name)
		if !ok || addsType(h.Type, n.Type) {
			return true
		}
	}
	return false
}

// addsType reports whether next adds struct fields to have.
func addsType(have, next *Type) bool {
	if have == nil || next == nil || have.Kind != next.Kind {
		return false
	}
	switch have.Kind {
	case Struct:
		return Adds(have.Fields, next.Fields)
	case Array:
		return addsType(have.Elem, next.Elem)
	case Map:
		return addsType(have.Value, next.Value)
	}
	return false
}

// find returns the field of fields named name, ignoring case.
func find(fields []Field, name string) (Field, bool) {
	for _, f := range fields {
		if strings.EqualFold(f.Name, name) {
			return f, true
		}
	}
	return Field{}, false
}
