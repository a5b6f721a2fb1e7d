// Package rowstest turns column batches back into rows, for tests that
// compare what a [rows.Builder] or a decoder built with expected
// [parquet.Row] values, and renders a row as text per column ([Render]),
// for tests that compare it with expected values.
//
// [rows.Builder]: github.com/tributary-io/terraform-provider-tributary/agent/internal/rows.Builder
package rowstest

import "github.com/parquet-go/parquet-go"

// Rows returns the rows of a batch given column by column (each column's
// values in row order, a row starting at each value of repetition level 0),
// each row holding its values in column order as [parquet.Schema.Deconstruct]
// lays them out. The values are copied; the byte slices they point to are not.
func Rows(cols [][]parquet.Value) []parquet.Row {
	var out []parquet.Row
	for c, values := range cols {
		r := -1
		for _, v := range values {
			if v.RepetitionLevel() == 0 {
				r++
				if c == 0 {
					out = append(out, nil)
				}
			}
			if r >= 0 && r < len(out) {
				out[r] = append(out[r], v)
			}
		}
	}
	return out
}
