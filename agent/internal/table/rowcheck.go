package table

import (
	"fmt"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// leafColumn is what checkRow needs to know about one leaf column.
type leafColumn struct {
	path           string
	kind           parquet.Kind
	maxDef, maxRep int
}

// leafColumns lists the leaf columns of ps by column index.
func leafColumns(ps *parquet.Schema) []leafColumn {
	paths := ps.Columns()
	leaves := make([]leafColumn, len(paths))
	for _, path := range paths {
		leaf, ok := ps.Lookup(path...)
		if !ok || leaf.ColumnIndex < 0 || leaf.ColumnIndex >= len(leaves) {
			continue
		}
		leaves[leaf.ColumnIndex] = leafColumn{
			path:   strings.Join(path, "."),
			kind:   leaf.Node.Type().Kind(),
			maxDef: leaf.MaxDefinitionLevel,
			maxRep: leaf.MaxRepetitionLevel,
		}
	}
	return leaves
}

// checkRow reports whether row is laid out as Schema.Deconstruct lays out rows
// of the schema of leaves: values grouped by column in column order, at least
// one per column, levels within the column's maximums, and non-null values of
// the column's physical kind. parquet-go does not check this itself: it
// panics on some malformed rows and silently writes a corrupt file for others
// (a value for a column that does not exist is dropped).
func checkRow(row parquet.Row, leaves []leafColumn) error {
	prev := -1
	for _, v := range row {
		c := v.Column()
		switch {
		case c < 0 || c >= len(leaves):
			return fmt.Errorf("value for column index %d; the schema has %d columns", c, len(leaves))
		case c < prev:
			return fmt.Errorf("value for column %s after column %s: values must be in column order", leaves[c].path, leaves[prev].path)
		case c > prev+1:
			return fmt.Errorf("no value for column %s", leaves[prev+1].path)
		}
		l := &leaves[c]
		d, r := v.DefinitionLevel(), v.RepetitionLevel()
		switch {
		case d > l.maxDef || r > l.maxRep:
			return fmt.Errorf("column %s: levels (repetition %d, definition %d) exceed the maximums (%d, %d)", l.path, r, d, l.maxRep, l.maxDef)
		case c != prev && r != 0:
			return fmt.Errorf("column %s: the first value of a row has repetition level %d, want 0", l.path, r)
		case v.IsNull() && d == l.maxDef:
			return fmt.Errorf("column %s: null value at the maximum definition level (the column is required)", l.path)
		case !v.IsNull() && d != l.maxDef:
			return fmt.Errorf("column %s: value at definition level %d, want %d", l.path, d, l.maxDef)
		case !v.IsNull() && v.Kind() != l.kind:
			return fmt.Errorf("column %s: %s value, want %s", l.path, v.Kind(), l.kind)
		}
		prev = c
	}
	if prev != len(leaves)-1 {
		return fmt.Errorf("no value for column %s", leaves[prev+1].path)
	}
	return nil
}
