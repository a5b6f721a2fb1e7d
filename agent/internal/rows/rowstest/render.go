package rowstest

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// Render assembles a row (its values in column order, as [Rows] gives them)
// back into text by walking the Parquet schema s with the row's repetition
// and definition levels, one text per top-level column, by name. It is an
// assembler independent of the rows package and of parquet-go's
// reconstruction, so a test can check that a decoder's levels fit the
// schema and what values they carry:
//
//	5   ["a" null]   {"k":1}   {x=1 y=null}   2024-01-02T03:04:05.123Z
//
// STRING is quoted, BINARY is b"...", DATE yyyy-MM-dd, TIMESTAMP RFC 3339
// with Z, TIMESTAMP_NTZ without, DECIMAL its decimal text, a struct
// {name=value ...}, a list [v ...], a map {k:v,...}, a VARIANT
// variant(<metadata hex> <value hex>).
//
// It returns an error when the row's values do not fit s: a column's values
// out of place, a column missing or left with values, or a present value at
// the wrong definition level.
func Render(s *parquet.Schema, row parquet.Row) (map[string]string, error) {
	a := &assembler{}
	var bad error
	row.Range(func(c int, vs []parquet.Value) bool {
		for _, v := range vs {
			if v.Column() != c {
				bad = fmt.Errorf("value %v of column %d in column %d's run", v, v.Column(), c)
			}
		}
		a.cols = append(a.cols, vs)
		return true
	})
	if bad != nil {
		return nil, bad
	}
	if len(a.cols) != len(s.Columns()) {
		return nil, fmt.Errorf("row has %d columns, schema %d", len(a.cols), len(s.Columns()))
	}
	a.pos = make([]int, len(a.cols))
	out := map[string]string{}
	lo := 0
	for _, f := range s.Fields() {
		var sb strings.Builder
		if err := a.node(&sb, f, lo, 0, 0); err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name(), err)
		}
		out[f.Name()] = sb.String()
		lo += leaves(f)
	}
	for c, p := range a.pos {
		if p != len(a.cols[c]) {
			return nil, fmt.Errorf("column %d: %d values left over", c, len(a.cols[c])-p)
		}
	}
	return out, nil
}

type assembler struct {
	cols [][]parquet.Value
	pos  []int
}

func leaves(n parquet.Node) int {
	if n.Leaf() {
		return 1
	}
	k := 0
	for _, f := range n.Fields() {
		k += leaves(f)
	}
	return k
}

func (a *assembler) peek(c int) (parquet.Value, error) {
	if a.pos[c] >= len(a.cols[c]) {
		return parquet.Value{}, fmt.Errorf("column %d: out of values", c)
	}
	return a.cols[c][a.pos[c]], nil
}

// skip consumes one value in each leaf column of [lo, hi).
func (a *assembler) skip(lo, hi int) {
	for c := lo; c < hi; c++ {
		a.pos[c]++
	}
}

// node renders the value of n, whose leaves start at column lo, under a
// present parent at levels def and rep.
func (a *assembler) node(sb *strings.Builder, n parquet.Node, lo, def, rep int) error {
	hi := lo + leaves(n)
	if n.Optional() {
		def++
	}
	v, err := a.peek(lo)
	if err != nil {
		return err
	}
	if n.Optional() && v.DefinitionLevel() < def {
		a.skip(lo, hi)
		sb.WriteString("null")
		return nil
	}
	if n.Leaf() {
		a.pos[lo]++
		if v.IsNull() || v.DefinitionLevel() != def {
			return fmt.Errorf("leaf value %v at definition level %d, want %d", v, v.DefinitionLevel(), def)
		}
		sb.WriteString(leafText(n, v))
		return nil
	}
	var lv format.LogicalTypeValue
	if lt := n.Type().LogicalType(); lt != nil {
		lv = lt.Value
	}
	_, isList := lv.(*format.ListType)
	_, isMap := lv.(*format.MapType)
	_, isVariant := lv.(*format.VariantType)
	switch {
	case isVariant && len(n.Fields()) == 2:
		// metadata and value, both required: present at def.
		var parts [2][]byte
		for i := range parts {
			v, err := a.peek(lo + i)
			if err != nil {
				return err
			}
			if v.IsNull() || v.DefinitionLevel() != def {
				return fmt.Errorf("variant value %v at definition level %d, want %d", v, v.DefinitionLevel(), def)
			}
			parts[i] = v.ByteArray()
		}
		a.skip(lo, hi)
		fmt.Fprintf(sb, "variant(%x %x)", parts[0], parts[1])
	case isList || isMap:
		rg := n.Fields()[0] // repeated group
		def, rep = def+1, rep+1
		open, sep, closing := "[", " ", "]"
		if isMap {
			open, sep, closing = "{", ",", "}"
		}
		sb.WriteString(open)
		if v.DefinitionLevel() < def {
			a.skip(lo, hi)
			sb.WriteString(closing)
			return nil
		}
		for i := 0; ; i++ {
			if i > 0 {
				sb.WriteString(sep)
			}
			sub := rg.Fields()
			if isMap {
				if err := a.node(sb, sub[0], lo, def, rep); err != nil {
					return err
				}
				sb.WriteString(":")
				if err := a.node(sb, sub[1], lo+1, def, rep); err != nil {
					return err
				}
			} else if err := a.node(sb, sub[0], lo, def, rep); err != nil {
				return err
			}
			if a.pos[lo] >= len(a.cols[lo]) || a.cols[lo][a.pos[lo]].RepetitionLevel() != rep {
				break
			}
		}
		sb.WriteString(closing)
	default:
		sb.WriteString("{")
		c := lo
		for i, f := range n.Fields() {
			if i > 0 {
				sb.WriteString(" ")
			}
			sb.WriteString(f.Name() + "=")
			if err := a.node(sb, f, c, def, rep); err != nil {
				return err
			}
			c += leaves(f)
		}
		sb.WriteString("}")
	}
	return nil
}

// leafText formats a present leaf value by its logical type.
func leafText(n parquet.Node, v parquet.Value) string {
	var lv format.LogicalTypeValue
	if lt := n.Type().LogicalType(); lt != nil {
		lv = lt.Value
	}
	switch lt := lv.(type) {
	case *format.StringType:
		return fmt.Sprintf("%q", v.ByteArray())
	case *format.DateType:
		return time.Unix(int64(v.Int32())*86400, 0).UTC().Format("2006-01-02")
	case *format.TimestampType:
		ts := time.UnixMicro(v.Int64()).UTC()
		if lt.IsAdjustedToUTC {
			return ts.Format("2006-01-02T15:04:05.999999Z")
		}
		return ts.Format("2006-01-02T15:04:05.999999")
	case *format.DecimalType:
		var u big.Int
		switch v.Kind() {
		case parquet.Int32:
			u.SetInt64(int64(v.Int32()))
		case parquet.Int64:
			u.SetInt64(v.Int64())
		default:
			b := v.ByteArray()
			u.SetBytes(b)
			if len(b) > 0 && b[0]&0x80 != 0 {
				u.Sub(&u, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
			}
		}
		r := new(big.Rat).SetFrac(&u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(lt.Scale)), nil))
		return r.FloatString(int(lt.Scale))
	}
	switch v.Kind() {
	case parquet.ByteArray:
		return fmt.Sprintf("b%q", v.ByteArray())
	case parquet.Float:
		return fmt.Sprint(v.Float())
	case parquet.Double:
		return fmt.Sprint(v.Double())
	}
	return v.String()
}
