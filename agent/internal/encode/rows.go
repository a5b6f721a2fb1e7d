package encode

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/variant"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Rows assembles the rows of b, which a decoder of layout built from recs,
// into [Row]s. fields are the decoder's columns in layout order (those of
// layout.Columns() once its inferred parts have their columns). The
// Dremel levels of b's leaf columns are read back against fields' types,
// as the rows package wrote them.
//
// A row's image is its parsed key and value fields (named as the table's
// columns, with key_fields_prefix and value_fields_prefix), or the value's
// single column; its key the parsed key fields as a JSON object (named as
// the key's fields, without key_fields_prefix), or its record's key when
// the key is not parsed, or inferred (the columns an inferred key added
// are not told apart from the value's). _op, _source, the source
// metadata column, the metadata columns, the rescue columns and
// _corrupt_record are left out of the image; _op and _source fill
// [Row.Op], [Row.DB], [Row.Table] and [Row.TS].
func Rows(layout *spec.Layout, fields []schema.Field, b *decode.Batch, recs []record.Record) ([]Row, error) {
	if b.Rows == 0 {
		return nil, nil
	}
	leaves := 0
	for _, f := range fields {
		leaves += leafCount(f.Type)
	}
	if leaves != len(b.Columns) {
		return nil, fmt.Errorf("the batch has %d leaf columns, the table's %d columns have %d", len(b.Columns), len(fields), leaves)
	}
	roles := columnRoles(layout, fields)
	var image, key []schema.Field
	var keyFields []int // indexes into image
	for i, f := range fields {
		switch roles[i] {
		case roleKeyField:
			keyFields = append(keyFields, len(image))
			image = append(image, f)
			f.Name = strings.TrimPrefix(f.Name, layout.Key.Prefix)
			key = append(key, f)
		case roleImage, roleVariant:
			image = append(image, f)
		}
	}
	a := assembler{cols: b.Columns, pos: make([]int, len(b.Columns))}
	out := make([]Row, b.Rows)
	for i := range out {
		rec := RecordOf(b, i)
		if rec < 0 || rec >= len(recs) {
			return nil, fmt.Errorf("row %d: its record %d is not one of the %d records", i, rec, len(recs))
		}
		r := &recs[rec]
		row := &out[i]
		*row = Row{Op: 'c', Fields: image, Values: make([]any, 0, len(image)), Headers: r.Headers, Topic: r.Topic}
		lo := 0
		for c, f := range fields {
			v, err := a.column(f, roles[c], lo, r)
			if err != nil {
				return nil, fmt.Errorf("row %d (%s/%d offset %d), column %q: %w", i, r.Topic, r.Partition, r.Offset, f.Name, err)
			}
			lo += leafCount(f.Type)
			switch roles[c] {
			case roleImage, roleKeyField, roleVariant:
				row.Values = append(row.Values, v)
			case roleOp:
				if s, ok := v.(string); ok && len(s) == 1 {
					row.Op = s[0]
				}
			case roleSource:
				if m, ok := v.(map[string]any); ok {
					row.DB, _ = m["db"].(string)
					row.Table, _ = m["table"].(string)
					row.TS, _ = m["ts"].(time.Time)
				}
			}
		}
		row.Key = r.Key
		if keyFields != nil {
			values := make([]any, len(keyFields))
			for j, k := range keyFields {
				values[j] = row.Values[k]
			}
			var err error
			if row.Key, err = appendObject(nil, key, values, nil, false); err != nil {
				return nil, fmt.Errorf("row %d (%s/%d offset %d), key: %w", i, r.Topic, r.Partition, r.Offset, err)
			}
		}
	}
	return out, nil
}

// column reads the value of column f, of role ro, whose leaves start at
// column lo, for a row of record r. The value's VARIANT column of a
// record with a value is the record's own JSON, as it came; without one
// (a row of a table, or a tombstone) it is read from the batch.
func (a *assembler) column(f schema.Field, ro role, lo int, r *record.Record) (any, error) {
	if ro == roleVariant && r.Value != nil {
		a.skip(lo, leafCount(f.Type))
		return json.RawMessage(r.Value), nil
	}
	return a.value(f.Type, f.Nullable, lo, 0, 0)
}

// role is what a column of the table is to a [Row].
type role uint8

const (
	// roleOther columns are left out: metadata, rescue, _corrupt_record.
	roleOther role = iota
	// roleImage columns are value fields, or the value's single column
	// (BINARY or STRING).
	roleImage
	// roleKeyField columns are parsed key fields: in the image and the
	// key.
	roleKeyField
	// roleVariant is the value's single VARIANT column: in the image as
	// the record's own JSON, or for a row of a table as the VARIANT
	// rendered as JSON.
	roleVariant
	// roleOp is _op, roleSource _source.
	roleOp
	roleSource
)

// columnRoles returns the role of each of fields, a table of layout. The
// parsed key fields are those of layout's key part; an inferred key's
// columns are not told from the value's, so they count as value fields.
func columnRoles(layout *spec.Layout, fields []schema.Field) []role {
	other := map[string]role{spec.CorruptRecordColumn: roleOther}
	if layout.Op {
		other[spec.OpColumn] = roleOp
	}
	if layout.Source {
		other[spec.SourceColumn] = roleSource
	}
	if layout.MetadataColumn != "" {
		other[layout.MetadataColumn] = roleOther
	}
	for _, m := range layout.Meta {
		other[m] = roleOther
	}
	keyFields := map[string]bool{}
	keyParsed := layout.Key.Fields != nil || layout.Key.Inferred()
	if !layout.Key.Inferred() {
		for _, f := range layout.Key.Fields {
			keyFields[layout.Key.Prefix+f.Name] = true
		}
	}
	for _, p := range []*spec.Part{&layout.Key, &layout.Value} {
		if p.Rescue != "" {
			other[p.Rescue] = roleOther
		}
	}
	roles := make([]role, len(fields))
	for i, f := range fields {
		r, ok := other[f.Name]
		switch {
		case ok:
		case i == 0 && !keyParsed && f.Name == layout.Key.Column:
			// The key's single column: the row's key is the record's.
			r = roleOther
		case keyFields[f.Name]:
			r = roleKeyField
		case f.Type.Kind == schema.Variant && layout.Value.Variant() && f.Name == layout.Value.Column:
			r = roleVariant
		default:
			r = roleImage
		}
		roles[i] = r
	}
	return roles
}

// leafCount returns the number of leaf columns of a column of type t, as
// the rows package lays them out.
func leafCount(t *schema.Type) int {
	switch t.Kind {
	case schema.Struct:
		n := 0
		for _, f := range t.Fields {
			n += leafCount(f.Type)
		}
		return n
	case schema.Array:
		return leafCount(t.Elem)
	case schema.Map:
		return leafCount(t.Key) + leafCount(t.Value)
	case schema.Variant:
		return 2
	}
	return 1
}

// assembler reads rows back from leaf columns: pos is the next value of
// each column.
type assembler struct {
	cols [][]parquet.Value
	pos  []int
}

// peek returns the next value of column c.
func (a *assembler) peek(c int) (parquet.Value, error) {
	if c >= len(a.cols) || a.pos[c] >= len(a.cols[c]) {
		return parquet.Value{}, fmt.Errorf("leaf column %d has too few values", c)
	}
	return a.cols[c][a.pos[c]], nil
}

// skip consumes one value of each of the n leaf columns from lo.
func (a *assembler) skip(lo, n int) {
	for c := lo; c < lo+n; c++ {
		a.pos[c]++
	}
}

// value reads one value of type t, whose leaves start at column lo, under
// a present parent at definition level def and repetition level rep.
func (a *assembler) value(t *schema.Type, nullable bool, lo int, def, rep uint8) (any, error) {
	if nullable {
		def++
	}
	v, err := a.peek(lo)
	if err != nil {
		return nil, err
	}
	n := leafCount(t)
	if nullable && int(v.DefinitionLevel()) < int(def) {
		a.skip(lo, n)
		return nil, nil
	}
	switch t.Kind {
	case schema.Struct:
		m := make(map[string]any, len(t.Fields))
		c := lo
		for _, f := range t.Fields {
			if m[f.Name], err = a.value(f.Type, f.Nullable, c, def, rep); err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			c += leafCount(f.Type)
		}
		return m, nil
	case schema.Array, schema.Map:
		return a.repeated(t, lo, def, rep, n)
	case schema.Variant:
		return a.variant(lo)
	}
	a.pos[lo]++
	if v.IsNull() {
		return nil, fmt.Errorf("a null value in a NOT NULL column")
	}
	return leafValue(t, v)
}

// variant reads a present VARIANT, whose metadata and value leaves are
// columns lo and lo+1, as its JSON text (see [variant.AppendJSON]).
func (a *assembler) variant(lo int) (any, error) {
	m, err := a.peek(lo)
	if err != nil {
		return nil, err
	}
	v, err := a.peek(lo + 1)
	if err != nil {
		return nil, err
	}
	a.skip(lo, 2)
	text, err := variant.AppendJSON(nil, m.ByteArray(), v.ByteArray())
	if err != nil {
		return nil, fmt.Errorf("render its VARIANT as JSON: %w", err)
	}
	return json.RawMessage(text), nil
}

// repeated reads an ARRAY as []any or a MAP as [][2]any.
func (a *assembler) repeated(t *schema.Type, lo int, def, rep uint8, n int) (any, error) {
	def, rep = def+1, rep+1
	v, _ := a.peek(lo)
	var list []any
	var pairs [][2]any
	if int(v.DefinitionLevel()) < int(def) { // empty
		a.skip(lo, n)
	} else {
		for {
			if t.Kind == schema.Array {
				e, err := a.value(t.Elem, true, lo, def, rep)
				if err != nil {
					return nil, fmt.Errorf("element %d: %w", len(list), err)
				}
				list = append(list, e)
			} else {
				k, err := a.value(t.Key, false, lo, def, rep)
				if err != nil {
					return nil, fmt.Errorf("map key %d: %w", len(pairs), err)
				}
				e, err := a.value(t.Value, true, lo+leafCount(t.Key), def, rep)
				if err != nil {
					return nil, fmt.Errorf("map value %d: %w", len(pairs), err)
				}
				pairs = append(pairs, [2]any{k, e})
			}
			if a.pos[lo] >= len(a.cols[lo]) || int(a.cols[lo][a.pos[lo]].RepetitionLevel()) != int(rep) {
				break
			}
		}
	}
	if t.Kind == schema.Map {
		if pairs == nil {
			pairs = [][2]any{}
		}
		return pairs, nil
	}
	if list == nil {
		list = []any{}
	}
	return list, nil
}

// leafValue returns the Go value of a present leaf value of type t.
func leafValue(t *schema.Type, v parquet.Value) (any, error) {
	switch t.Kind {
	case schema.Boolean:
		return v.Boolean(), nil
	case schema.Byte, schema.Short, schema.Int:
		return v.Int32(), nil
	case schema.Long:
		return v.Int64(), nil
	case schema.Float:
		return v.Float(), nil
	case schema.Double:
		return v.Double(), nil
	case schema.String:
		return string(v.ByteArray()), nil
	case schema.Binary:
		return v.ByteArray(), nil
	case schema.Date:
		return time.Unix(int64(v.Int32())*86400, 0).UTC(), nil
	case schema.Timestamp, schema.TimestampNTZ:
		return time.UnixMicro(v.Int64()).UTC(), nil
	case schema.Decimal:
		return rows.DecimalString(rows.Unscaled(v), t.Scale), nil
	}
	return nil, fmt.Errorf("no Go value for type %s", t)
}

// CorruptRow returns the index of the first row of b, whose columns are
// fields, that has _corrupt_record set (its key or value did not decode),
// or -1 when none has.
func CorruptRow(fields []schema.Field, b *decode.Batch) int {
	for i, v := range corruptColumn(fields, b) {
		if !v.IsNull() {
			return i
		}
	}
	return -1
}

// corruptColumn returns the _corrupt_record values of b, whose columns are
// fields, one a row (a top-level BINARY column); nil when no row is
// corrupt.
func corruptColumn(fields []schema.Field, b *decode.Batch) []parquet.Value {
	if b.Corrupt == 0 {
		return nil
	}
	leaf := 0
	for _, f := range fields {
		if f.Name == spec.CorruptRecordColumn {
			return b.Columns[leaf]
		}
		leaf += leafCount(f.Type)
	}
	return nil
}
