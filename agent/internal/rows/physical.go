package rows

import (
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// Column names how a struct field of a table is stored in a Parquet file:
// its physical name and field id.
type Column struct {
	// Name is the field's name in the file.
	Name string
	// ID is the field_id of its schema element; 0 writes none.
	ID int
}

// Renamed returns the Parquet schema ps (one [Schema] returned) with every
// struct field, at any depth, stored as column returns for its field path:
// the names of the struct fields from the top, with "element" for a list's
// element and "key" or "value" for a map's, as in [FieldPaths]. Lists and
// maps keep their inner groups (list, element, key_value, key, value) and
// leaf columns keep their order, so that rows built for ps fit the new
// schema. Delta tables with column mapping store their columns this way.
func Renamed(ps *parquet.Schema, column func(path []string) Column) *parquet.Schema {
	return parquet.NewSchema(ps.Name(), renameGroup(ps, nil, column))
}

// renameGroup renames the fields of struct group g at path.
func renameGroup(g parquet.Node, path []string, column func([]string) Column) parquet.Node {
	fields := g.Fields()
	out := &group{fields: make([]parquet.Field, len(fields))}
	for i, f := range fields {
		p := append(slices.Clip(path), f.Name())
		c := column(p)
		var n parquet.Node = f
		if !isLeaf(f) {
			n = repeat(f, renameNested(f, p, column))
		}
		if c.ID != 0 {
			n = parquet.FieldID(n, c.ID)
		}
		out.fields[i] = &field{Node: n, name: c.Name}
	}
	return out
}

// renameNested renames the struct fields inside n, the node of a struct,
// list or map at path, and returns it without its repetition (the caller
// wraps it again).
func renameNested(n parquet.Node, path []string, column func([]string) Column) parquet.Node {
	switch nestedKind(n) {
	case nestedList:
		elem := n.Fields()[0].Fields()[0]
		return parquet.List(renameChild(elem, append(slices.Clip(path), "element"), column))
	case nestedMap:
		kv := n.Fields()[0].Fields() // key, value
		key, value := kv[0], kv[1]
		return parquet.Map(renameChild(key, append(slices.Clip(path), "key"), column),
			renameChild(value, append(slices.Clip(path), "value"), column))
	}
	return renameGroup(n, path, column)
}

// renameChild renames the struct fields inside a list element or map key
// or value at path, keeping its repetition.
func renameChild(n parquet.Node, path []string, column func([]string) Column) parquet.Node {
	if isLeaf(n) {
		return n
	}
	return repeat(n, renameNested(n, path, column))
}

// repeat gives n the repetition of like.
func repeat(like, n parquet.Node) parquet.Node {
	switch {
	case like.Optional():
		return parquet.Optional(n)
	case like.Repeated():
		return parquet.Repeated(n)
	}
	return parquet.Required(n)
}

// FieldPaths returns the field path of every struct field of ps (one
// [Schema] or [Renamed] returned), at any depth, parents before their
// fields: the names of the struct fields from the top, with "element" for
// a list's element and "key" or "value" for a map's.
func FieldPaths(ps *parquet.Schema) [][]string {
	var paths [][]string
	var walk func(n parquet.Node, path []string, structField bool)
	walk = func(n parquet.Node, path []string, structField bool) {
		if structField {
			paths = append(paths, path)
		}
		if isLeaf(n) {
			return
		}
		switch nestedKind(n) {
		case nestedList:
			walk(n.Fields()[0].Fields()[0], append(slices.Clip(path), "element"), false)
		case nestedMap:
			for _, f := range n.Fields()[0].Fields() {
				walk(f, append(slices.Clip(path), f.Name()), false)
			}
		default:
			for _, f := range n.Fields() {
				walk(f, append(slices.Clip(path), f.Name()), true)
			}
		}
	}
	for _, f := range ps.Fields() {
		walk(f, []string{f.Name()}, true)
	}
	return paths
}

// The kinds of group nodes [Schema] writes.
const (
	nestedStruct = iota
	nestedList
	nestedMap
)

// nestedKind tells a LIST or MAP group from a struct's.
func nestedKind(n parquet.Node) int {
	if lt := n.Type().LogicalType(); lt != nil {
		switch lt.Value.(type) {
		case *format.ListType:
			return nestedList
		case *format.MapType:
			return nestedMap
		}
	}
	return nestedStruct
}

// isLeaf reports whether n holds no struct fields to rename: a leaf
// column, or a group of a logical type other than LIST and MAP (a VARIANT,
// whose metadata and value keep their names).
func isLeaf(n parquet.Node) bool {
	if n.Leaf() {
		return true
	}
	lt := n.Type().LogicalType()
	return lt != nil && nestedKind(n) == nestedStruct
}
