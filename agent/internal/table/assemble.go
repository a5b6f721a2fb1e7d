package table

import (
	"errors"
	"fmt"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// An assembler turns the flat rows of a Parquet file back into nested
// values, as JSON would hold them: a struct becomes a map[string]any, a LIST
// a []any, a MAP a map[string]any, and a leaf a bool, int64, float64 or
// string. It follows the file's own schema, so that it reads the checkpoints
// of every writer whatever their columns' optionality and the names inside
// their LIST and MAP groups (both the three-level lists of the Parquet spec
// and two-level legacy ones). It is record assembly as Dremel describes it,
// one row at a time: every leaf column holds its values for the row, with
// repetition and definition levels, and each node consumes its part.
type assembler struct {
	vals [][]parquet.Value // by column index, the current row's values
	pos  []int             // by column index, the next value to consume
	err  error             // the first malformed row found
}

// nodeKind is how the assembler reads a node.
type nodeKind uint8

const (
	leafNode nodeKind = iota
	structNode
	listNode
	mapNode
	// variantGroup is a VARIANT group (metadata and value), which the
	// assembler reads as a struct; the stats give it only a null count.
	variantGroup
)

// asmNode is a node of the file's schema, prepared for assembly.
type asmNode struct {
	name string
	kind nodeKind
	// def is the definition level at which the node is present: values
	// below it under the node mean the node is null (or an empty LIST or
	// MAP at entryDef).
	def int
	// rep is, for LIST and MAP nodes, the repetition level of their
	// entries; entryDef is the definition level of an entry.
	rep, entryDef int
	// leaves are the column indexes of the leaves under the node, in
	// order; the first one tells the node's presence and repetition.
	leaves []int
	// children are a struct's fields, a LIST's element, or a MAP's key and
	// value.
	children []*asmNode
}

// newAsmNode prepares column c, whose parent is present at definition level
// def and repeats at level rep.
func newAsmNode(c *parquet.Column, def, rep int) (*asmNode, error) {
	if c.Repeated() {
		return nil, fmt.Errorf("column %s: a repeated field outside a LIST or MAP is not supported", strings.Join(c.Path(), "."))
	}
	if c.Optional() {
		def++
	}
	return presentNode(c, def, rep)
}

// presentNode prepares column c, present at definition level def.
func presentNode(c *parquet.Column, def, rep int) (*asmNode, error) {
	n := &asmNode{name: c.Name(), def: def}
	path := strings.Join(c.Path(), ".")
	if c.Leaf() {
		n.kind, n.leaves = leafNode, []int{c.Index()}
		return n, nil
	}
	children := c.Columns()
	switch groupKind(c) {
	case listNode, mapNode:
		if len(children) != 1 || !children[0].Repeated() {
			return nil, fmt.Errorf("column %s: a LIST or MAP must hold one repeated group", path)
		}
		entry := children[0]
		n.kind, n.rep, n.entryDef = groupKind(c), rep+1, def+1
		var err error
		switch entries := entry.Columns(); {
		case n.kind == mapNode:
			if len(entries) != 2 {
				return nil, fmt.Errorf("column %s: a MAP entry must hold a key and a value", path)
			}
			n.children, err = childNodes(entries, n.entryDef, n.rep)
		case entry.Leaf() || len(entries) > 1:
			// Two-level list: the repeated field is the element.
			var elem *asmNode
			elem, err = presentNode(entry, n.entryDef, n.rep)
			n.children = []*asmNode{elem}
		default:
			n.children, err = childNodes(entries, n.entryDef, n.rep)
		}
		if err != nil {
			return nil, err
		}
	default:
		n.kind = structNode
		var err error
		if n.children, err = childNodes(children, def, rep); err != nil {
			return nil, err
		}
	}
	for _, ch := range n.children {
		n.leaves = append(n.leaves, ch.leaves...)
	}
	if len(n.leaves) == 0 {
		return nil, fmt.Errorf("column %s: an empty group", path)
	}
	return n, nil
}

func childNodes(cols []*parquet.Column, def, rep int) ([]*asmNode, error) {
	nodes := make([]*asmNode, len(cols))
	for i, c := range cols {
		var err error
		if nodes[i], err = newAsmNode(c, def, rep); err != nil {
			return nil, err
		}
	}
	return nodes, nil
}

// groupKind tells a LIST or MAP group (by logical or legacy converted type)
// from a struct.
func groupKind(n parquet.Node) nodeKind {
	t := n.Type()
	if lt := t.LogicalType(); lt != nil {
		switch lt.Value.(type) {
		case *format.ListType:
			return listNode
		case *format.MapType:
			return mapNode
		case *format.VariantType:
			return variantGroup
		}
	}
	if ct := t.ConvertedType(); ct != nil {
		switch *ct {
		case deprecated.List:
			return listNode
		case deprecated.Map, deprecated.MapKeyValue:
			return mapNode
		}
	}
	return structNode
}

// errMalformedRow is the assembler's error for levels that do not match
// the schema.
var errMalformedRow = errors.New("malformed row: the values' levels do not match the schema")

// reset makes row the current row.
func (a *assembler) reset(row parquet.Row, columns int) {
	if len(a.vals) != columns {
		a.vals, a.pos = make([][]parquet.Value, columns), make([]int, columns)
	}
	clear(a.vals)
	clear(a.pos)
	row.Range(func(c int, vals []parquet.Value) bool {
		if c >= 0 && c < columns {
			a.vals[c] = vals
		}
		return true
	})
}

// peek returns the next value of n's first leaf.
func (a *assembler) peek(n *asmNode) (parquet.Value, bool) {
	c := n.leaves[0]
	if a.pos[c] >= len(a.vals[c]) {
		a.err = errMalformedRow
		return parquet.Value{}, false
	}
	return a.vals[c][a.pos[c]], true
}

// skip consumes one value of every leaf under n: n, or its entries, are
// absent, which every leaf says with one value.
func (a *assembler) skip(n *asmNode) {
	for _, c := range n.leaves {
		a.pos[c]++
	}
}

// present reports whether n is present (not null) at the current position;
// when it is not, its values are consumed.
func (a *assembler) present(n *asmNode) bool {
	v, ok := a.peek(n)
	if ok && v.DefinitionLevel() < n.def {
		a.skip(n)
		return false
	}
	return ok
}

// read returns the value of n at the current position, nil when null.
func (a *assembler) read(n *asmNode) any {
	if a.err != nil || !a.present(n) {
		return nil
	}
	switch n.kind {
	case leafNode:
		v, _ := a.peek(n)
		a.pos[n.leaves[0]]++
		return leafValue(v)
	case structNode:
		m := make(map[string]any, len(n.children))
		for _, ch := range n.children {
			m[ch.name] = a.read(ch)
		}
		return m
	}
	var list []any
	m := map[string]any{}
	if v, _ := a.peek(n); v.DefinitionLevel() < n.entryDef {
		a.skip(n) // empty
	} else {
		for a.err == nil {
			if n.kind == mapNode {
				k := a.read(n.children[0])
				m[fmt.Sprint(k)] = a.read(n.children[1])
			} else {
				list = append(list, a.read(n.children[0]))
			}
			// The next value of the first leaf starts another entry
			// when it repeats at the entries' level.
			c := n.leaves[0]
			if a.pos[c] >= len(a.vals[c]) || a.vals[c][a.pos[c]].RepetitionLevel() != n.rep {
				break
			}
		}
	}
	if n.kind == mapNode {
		return m
	}
	if list == nil {
		list = []any{}
	}
	return list
}

// leafValue converts a non-null leaf value; byte arrays become strings,
// since every byte array of a checkpoint is a string.
func leafValue(v parquet.Value) any {
	switch v.Kind() {
	case parquet.Boolean:
		return v.Boolean()
	case parquet.Int32:
		return int64(v.Int32())
	case parquet.Int64:
		return v.Int64()
	case parquet.Float:
		return float64(v.Float())
	case parquet.Double:
		return v.Double()
	}
	return string(v.ByteArray())
}
