package table

import (
	"encoding/json"
	"math"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
)

// statsStringPrefix is how many characters of a string column's minimum
// the stats keep, as Spark's Delta does (dataSkippingStringPrefixLength):
// a prefix of the minimum is still a lower bound. A longer maximum is left
// out, since its prefix would not be an upper bound.
const statsStringPrefix = 32

// fileStatistics returns the stats of a data file with schema ps and
// footer md, as an add action carries them (the protocol's "Per-file
// Statistics"): numRecords, and minValues, maxValues and nullCount nested
// like the schema's structs. They are folded from the column chunk
// statistics of every row group.
//
// Columns inside a LIST or a MAP have no stats: the chunk statistics count
// their elements, not the rows where the column is null. Columns without a
// meaningful order (BOOLEAN, BINARY, VARIANT) get only a nullCount, as in
// Spark; timestamps are written in ISO 8601, truncated to milliseconds as
// the protocol says (with a Z when adjusted to UTC), dates as yyyy-mm-dd and
// decimals as JSON numbers. A bound that cannot be written exactly (a
// float NaN, a string not in UTF-8) is left out.
func fileStatistics(ps *parquet.Schema, md *format.FileMetaData) (string, error) {
	var mins, maxes, nulls object
	addStats(ps, md, ps, nil, &mins, &maxes, &nulls)
	stats := object{{"numRecords", md.NumRows}}
	for _, m := range []member{{"minValues", mins}, {"maxValues", maxes}, {"nullCount", nulls}} {
		if len(m.value.(object)) > 0 {
			stats = append(stats, m)
		}
	}
	b, err := json.Marshal(stats)
	return string(b), err
}

// addStats adds the stats of node's fields, at path, to mins, maxes and
// nulls.
func addStats(ps *parquet.Schema, md *format.FileMetaData, node parquet.Node, path []string, mins, maxes, nulls *object) {
	for _, f := range node.Fields() {
		p := append(slices.Clone(path), f.Name())
		switch {
		case f.Repeated():
		case !f.Leaf() && groupKind(f) == variantGroup:
			// A VARIANT has no order: only a null count, which its
			// metadata column, never null inside a present variant, holds.
			if leaf, ok := ps.Lookup(append(p, "metadata")...); ok {
				_, _, n := chunkStats(md, leaf.ColumnIndex, leaf.Node.Type())
				*nulls = append(*nulls, member{f.Name(), n})
			}
		case !f.Leaf():
			if groupKind(f) != structNode {
				continue
			}
			var fmins, fmaxes, fnulls object
			addStats(ps, md, f, p, &fmins, &fmaxes, &fnulls)
			mins.addObject(f.Name(), fmins)
			maxes.addObject(f.Name(), fmaxes)
			nulls.addObject(f.Name(), fnulls)
		default:
			leaf, ok := ps.Lookup(p...)
			if !ok {
				continue
			}
			lo, hi, n := chunkStats(md, leaf.ColumnIndex, f.Type())
			*nulls = append(*nulls, member{f.Name(), n})
			if v, ok := statValue(f.Type(), lo, false); ok {
				*mins = append(*mins, member{f.Name(), v})
			}
			if v, ok := statValue(f.Type(), hi, true); ok {
				*maxes = append(*maxes, member{f.Name(), v})
			}
		}
	}
}

// chunkStats folds the statistics of column c over the row groups: its
// bounds (null values when unknown) and null count.
func chunkStats(md *format.FileMetaData, c int, t parquet.Type) (lo, hi parquet.Value, nulls int64) {
	less := func(a, b parquet.Value) bool { return t.Compare(a, b) < 0 }
	// parquet-go orders the bytes of a DECIMAL held in a byte array as
	// unsigned, but they are a two's complement integer: its bounds of a
	// row group hold only when they have the same sign, and are folded
	// as integers.
	twos := isDecimal(t) && (t.Kind() == parquet.FixedLenByteArray || t.Kind() == parquet.ByteArray)
	if twos {
		less = func(a, b parquet.Value) bool { return rows.Unscaled(a).Cmp(rows.Unscaled(b)) < 0 }
	}
	bounded := true
	for i := range md.RowGroups {
		cc := &md.RowGroups[i].Columns[c].MetaData
		st := &cc.Statistics
		nulls += st.NullCount
		if cc.NumValues == st.NullCount {
			continue // only nulls: no bounds to fold
		}
		if st.MinValue == nil || st.MaxValue == nil {
			bounded = false
			continue
		}
		mn, mx := t.Kind().Value(st.MinValue), t.Kind().Value(st.MaxValue)
		if twos && rows.Unscaled(mn).Sign() < 0 != (rows.Unscaled(mx).Sign() < 0) {
			bounded = false
			continue
		}
		if lo.IsNull() || less(mn, lo) {
			lo = mn
		}
		if hi.IsNull() || less(hi, mx) {
			hi = mx
		}
	}
	if !bounded {
		return parquet.Value{}, parquet.Value{}, nulls
	}
	return lo, hi, nulls
}

// isDecimal reports whether t is a DECIMAL.
func isDecimal(t parquet.Type) bool {
	lt := t.LogicalType()
	if lt == nil {
		return false
	}
	_, ok := lt.Value.(*format.DecimalType)
	return ok
}

// statValue converts bound v of a column of type t into its JSON stats
// form; ok is false when the column takes no such bound or v cannot be
// written. isMax tells a maximum from a minimum.
func statValue(t parquet.Type, v parquet.Value, isMax bool) (_ any, ok bool) {
	if v.IsNull() {
		return nil, false
	}
	var lt format.LogicalTypeValue
	if l := t.LogicalType(); l != nil {
		lt = l.Value
	}
	switch lt := lt.(type) {
	case *format.StringType:
		s := string(v.ByteArray())
		if !utf8.ValidString(s) {
			return nil, false
		}
		if utf8.RuneCountInString(s) <= statsStringPrefix {
			return s, true
		}
		if isMax {
			return nil, false
		}
		return string([]rune(s)[:statsStringPrefix]), true
	case *format.DateType:
		return time.Unix(int64(v.Int32())*86400, 0).UTC().Format(time.DateOnly), true
	case *format.TimestampType:
		var at time.Time
		switch lt.Unit.Value.(type) {
		case *format.MilliSeconds:
			at = time.UnixMilli(v.Int64())
		case *format.MicroSeconds:
			at = time.UnixMicro(v.Int64())
		case *format.NanoSeconds:
			at = time.Unix(0, v.Int64())
		default:
			return nil, false
		}
		layout := "2006-01-02T15:04:05.000"
		if lt.IsAdjustedToUTC {
			layout += "Z"
		}
		return at.UTC().Truncate(time.Millisecond).Format(layout), true
	case *format.DecimalType:
		return json.Number(rows.DecimalString(rows.Unscaled(v), int(lt.Scale))), true
	case *format.IntType:
		if !lt.IsSigned {
			return nil, false
		}
	case nil:
	default:
		return nil, false
	}
	switch v.Kind() {
	case parquet.Int32:
		return int64(v.Int32()), true
	case parquet.Int64:
		return v.Int64(), true
	case parquet.Float:
		f := float64(v.Float())
		return f, !math.IsNaN(f) && !math.IsInf(f, 0)
	case parquet.Double:
		f := v.Double()
		return f, !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return nil, false
}

// object is a JSON object that keeps its members in order.
type object []member

type member struct {
	key   string
	value any
}

// addObject adds a non-empty nested object.
func (o *object) addObject(key string, v object) {
	if len(v) > 0 {
		*o = append(*o, member{key, v})
	}
}

// MarshalJSON writes the members in order.
func (o object) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, m := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}
