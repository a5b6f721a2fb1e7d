package avro

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/schema"
)

// render assembles one row (its values in column order, as rowstest.Rows
// gives them) back into text per top-level column by walking the table
// types with the values' levels: null, 5, "str", b"bin", 12.34 (decimals),
// [a b], {k:v ...}, {name=v ...}.
func render(fields []schema.Field, row parquet.Row) (map[string]string, error) {
	a := &assembler{}
	for _, v := range row {
		for len(a.cols) <= v.Column() {
			a.cols = append(a.cols, nil)
		}
		a.cols[v.Column()] = append(a.cols[v.Column()], v)
	}
	a.pos = make([]int, len(a.cols))
	out := map[string]string{}
	for _, f := range fields {
		var sb strings.Builder
		if err := a.node(&sb, f.Type, f.Nullable, 0, 0); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		out[f.Name] = sb.String()
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
	leaf int // the next leaf column
}

// leaves counts t's leaf columns.
func leaves(t *schema.Type) int {
	switch t.Kind {
	case schema.Struct:
		n := 0
		for _, f := range t.Fields {
			n += leaves(f.Type)
		}
		return n
	case schema.Array:
		return leaves(t.Elem)
	case schema.Map:
		return 1 + leaves(t.Value)
	}
	return 1
}

// peek returns the next value of column c.
func (a *assembler) peek(c int) (parquet.Value, error) {
	if c >= len(a.cols) || a.pos[c] >= len(a.cols[c]) {
		return parquet.Value{}, fmt.Errorf("column %d has no value left", c)
	}
	return a.cols[c][a.pos[c]], nil
}

// node renders a value of type t whose present parent is at levels def and
// rep, starting at leaf column a.leaf.
func (a *assembler) node(sb *strings.Builder, t *schema.Type, nullable bool, def, rep int) error {
	lo, n := a.leaf, leaves(t)
	v, err := a.peek(lo)
	if err != nil {
		return err
	}
	if nullable {
		def++
		if v.DefinitionLevel() < def {
			for c := lo; c < lo+n; c++ {
				a.pos[c]++
			}
			a.leaf = lo + n
			sb.WriteString("null")
			return nil
		}
	}
	switch t.Kind {
	case schema.Struct:
		sb.WriteString("{")
		for i, f := range t.Fields {
			if i > 0 {
				sb.WriteString(" ")
			}
			sb.WriteString(f.Name + "=")
			if err := a.node(sb, f.Type, f.Nullable, def, rep); err != nil {
				return err
			}
		}
		sb.WriteString("}")
		return nil
	case schema.Array, schema.Map:
		open, end := "[", "]"
		if t.Kind == schema.Map {
			open, end = "{", "}"
		}
		sb.WriteString(open)
		if v.DefinitionLevel() == def { // empty
			for c := lo; c < lo+n; c++ {
				a.pos[c]++
			}
			a.leaf = lo + n
			sb.WriteString(end)
			return nil
		}
		for i := 0; ; i++ {
			a.leaf = lo
			if i > 0 {
				sb.WriteString(" ")
			}
			if t.Kind == schema.Array {
				err = a.node(sb, t.Elem, true, def+1, rep+1)
			} else {
				if err = a.node(sb, t.Key, false, def+1, rep+1); err == nil {
					sb.WriteString(":")
					err = a.node(sb, t.Value, true, def+1, rep+1)
				}
			}
			if err != nil {
				return err
			}
			if next, err := a.peek(lo); err != nil || next.RepetitionLevel() != rep+1 {
				break
			}
		}
		sb.WriteString(end)
		return nil
	}
	a.pos[lo]++
	a.leaf = lo + 1
	switch t.Kind {
	case schema.String:
		fmt.Fprintf(sb, "%q", v.ByteArray())
	case schema.Binary:
		fmt.Fprintf(sb, "b%q", v.ByteArray())
	case schema.Decimal:
		u := new(big.Int)
		switch v.Kind() {
		case parquet.Int32:
			u.SetInt64(int64(v.Int32()))
		case parquet.Int64:
			u.SetInt64(v.Int64())
		default:
			b := v.ByteArray()
			u.SetBytes(b)
			if len(b) > 0 && b[0]&0x80 != 0 {
				u.Sub(u, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
			}
		}
		sb.WriteString(new(big.Rat).SetFrac(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Scale)), nil)).FloatString(t.Scale))
	default:
		sb.WriteString(v.String())
	}
	return nil
}
