package table

import (
	"fmt"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// leafColumn is what checkColumns needs to know about one leaf column.
type leafColumn struct {
	index          int
	path           string
	kind           parquet.Kind
	maxDef, maxRep int
	// size is the length of a FIXED_LEN_BYTE_ARRAY value.
	size int
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
			index:  leaf.ColumnIndex,
			path:   strings.Join(path, "."),
			kind:   leaf.Node.Type().Kind(),
			maxDef: leaf.MaxDefinitionLevel,
			maxRep: leaf.MaxRepetitionLevel,
		}
		if leaves[leaf.ColumnIndex].kind == parquet.FixedLenByteArray {
			leaves[leaf.ColumnIndex].size = leaf.Node.Type().Length()
		}
	}
	return leaves
}

// checkColumns reports whether cols holds rows rows of the schema of leaves
// laid out column by column as Schema.Deconstruct lays out their values: a
// slice per column, and in each, every row's values in order, the first of
// a row at repetition level 0, levels within the column's maximums,
// non-null values of the column's physical kind at the maximum definition
// level and nulls below it. parquet-go does not check this itself: it
// panics on some malformed input and silently writes a corrupt file for
// other.
func checkColumns(cols [][]parquet.Value, rows int, leaves []leafColumn) error {
	if len(cols) != len(leaves) {
		return fmt.Errorf("%d columns, the schema has %d", len(cols), len(leaves))
	}
	for c, values := range cols {
		if err := checkColumn(values, rows, &leaves[c]); err != nil {
			return fmt.Errorf("column %s: %w", leaves[c].path, err)
		}
	}
	return nil
}

// checkColumn checks the values of column l, which must hold rows rows. It
// is one tight pass over the column; the error path describes what is wrong.
func checkColumn(values []parquet.Value, rows int, l *leafColumn) error {
	starts := 0
	for i := range values {
		v := &values[i]
		d, r := v.DefinitionLevel(), v.RepetitionLevel()
		if r == 0 {
			starts++
		} else if i == 0 || r > l.maxRep {
			return badValue(v, i, l)
		}
		if v.IsNull() {
			if d >= l.maxDef || v.Column() != l.index {
				return badValue(v, i, l)
			}
		} else if d != l.maxDef || v.Kind() != l.kind || v.Column() != l.index || l.size > 0 && len(v.ByteArray()) != l.size {
			return badValue(v, i, l)
		}
	}
	if starts != rows {
		return fmt.Errorf("values for %d rows, want %d", starts, rows)
	}
	return nil
}

// badValue says what is wrong with value v, the i-th of column l.
func badValue(v *parquet.Value, i int, l *leafColumn) error {
	d, r := v.DefinitionLevel(), v.RepetitionLevel()
	switch {
	case v.Column() != l.index:
		return fmt.Errorf("value %d has column index %d", i, v.Column())
	case i == 0 && r != 0:
		return fmt.Errorf("the first value has repetition level %d, want 0", r)
	case d > l.maxDef || r > l.maxRep:
		return fmt.Errorf("value %d: levels (repetition %d, definition %d) exceed the maximums (%d, %d)", i, r, d, l.maxRep, l.maxDef)
	case v.IsNull() && d == l.maxDef:
		return fmt.Errorf("value %d: null at the maximum definition level (the column is required)", i)
	case !v.IsNull() && d != l.maxDef:
		return fmt.Errorf("value %d at definition level %d, want %d", i, d, l.maxDef)
	case !v.IsNull() && v.Kind() != l.kind:
		return fmt.Errorf("value %d: %s value, want %s", i, v.Kind(), l.kind)
	case !v.IsNull() && l.size > 0 && len(v.ByteArray()) != l.size:
		return fmt.Errorf("value %d: %d bytes, want %d", i, len(v.ByteArray()), l.size)
	default:
		return fmt.Errorf("value %d: repetition level %d in a row's first value", i, r)
	}
}

// rowStart returns the index in values, a column's values of whole rows,
// of the first value of row n; a column that is not repeated has one value
// per row.
func rowStart(values []parquet.Value, n, maxRep int) int {
	if maxRep == 0 {
		return n
	}
	for i := range values {
		if values[i].RepetitionLevel() == 0 {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return len(values)
}
