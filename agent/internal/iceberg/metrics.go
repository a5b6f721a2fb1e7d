package iceberg

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"
)

// Metrics are the column statistics a manifest keeps of a data file, by
// field id (the spec's value_counts, null_value_counts, lower_bounds and
// upper_bounds): readers skip files whose bounds exclude a filter.
type Metrics struct {
	ValueCounts, NullCounts map[int]int64
	Lower, Upper            map[int][]byte
}

// MetricsFromDelta returns the metrics of a data file of records rows
// from its Delta stats JSON (numRecords, minValues, maxValues, nullCount),
// for the top-level columns of s; physical gives the name a column has in
// the stats (its physical name with column mapping). Only what holds for
// every row is kept: Delta truncates a timestamp's maximum to the
// millisecond, so its upper bound is the end of that millisecond, and a
// long string's maximum is missing. A malformed stats string is an error;
// an empty one gives no metrics.
func MetricsFromDelta(s *Schema, stats string, records int64, physical func(name string) string) (Metrics, error) {
	var m Metrics
	if stats == "" {
		return m, nil
	}
	var st struct {
		MinValues map[string]json.RawMessage `json:"minValues"`
		MaxValues map[string]json.RawMessage `json:"maxValues"`
		NullCount map[string]json.RawMessage `json:"nullCount"`
	}
	if err := json.Unmarshal([]byte(stats), &st); err != nil {
		return m, fmt.Errorf("reading stats: %w", err)
	}
	m = Metrics{ValueCounts: map[int]int64{}, NullCounts: map[int]int64{}, Lower: map[int][]byte{}, Upper: map[int][]byte{}}
	for _, f := range s.Fields {
		if f.Type.Primitive == "" {
			continue // nested: the stats of its leaves are not the field's
		}
		key := physical(f.Name)
		raw, ok := st.NullCount[key]
		if !ok {
			continue // not in the file: a partition column, or no stats
		}
		var nulls int64
		if err := json.Unmarshal(raw, &nulls); err != nil {
			return Metrics{}, fmt.Errorf("nullCount of %s: %w", key, err)
		}
		m.ValueCounts[f.ID], m.NullCounts[f.ID] = records, nulls
		if b, ok := bound(f.Type.Primitive, st.MinValues[key], false); ok {
			m.Lower[f.ID] = b
		}
		if b, ok := bound(f.Type.Primitive, st.MaxValues[key], true); ok {
			m.Upper[f.ID] = b
		}
	}
	return m, nil
}

// bound returns the single-value serialization (the spec's appendix D) of
// the Delta stat raw of a column of Iceberg type prim, and false when it
// has none or the type keeps no bounds here.
func bound(prim string, raw json.RawMessage, isMax bool) ([]byte, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false
	}
	switch prim {
	case "int", "long":
		var n int64
		if json.Unmarshal(raw, &n) != nil {
			return nil, false
		}
		if prim == "int" {
			return binary.LittleEndian.AppendUint32(nil, uint32(int32(n))), true
		}
		return binary.LittleEndian.AppendUint64(nil, uint64(n)), true
	case "string":
		var v string
		if json.Unmarshal(raw, &v) != nil {
			return nil, false
		}
		if isMax && utf8.RuneCountInString(v) > maxStatString {
			// Truncated, with a last character meant to sort after what
			// was cut in UTF-16 order (Spark's), which need not hold in
			// the UTF-8 byte order Iceberg compares in.
			return nil, false
		}
		return []byte(v), true
	case "date":
		var v string
		if json.Unmarshal(raw, &v) != nil {
			return nil, false
		}
		d, err := time.Parse(time.DateOnly, v)
		if err != nil {
			return nil, false
		}
		return binary.LittleEndian.AppendUint32(nil, uint32(int32(d.Unix()/86400))), true
	case "timestamp", "timestamptz":
		var v string
		if json.Unmarshal(raw, &v) != nil {
			return nil, false
		}
		at, ok := parseStatTime(v)
		if !ok {
			return nil, false
		}
		us := at.UnixMicro()
		if isMax {
			us += 999 // the stat is truncated to the millisecond
		}
		return binary.LittleEndian.AppendUint64(nil, uint64(us)), true
	}
	return nil, false
}

// maxStatString is the length in characters of the string stats Delta
// writers keep whole; a longer maximum is truncated.
const maxStatString = 32

// parseStatTime parses a timestamp of Delta stats: ISO 8601 with
// milliseconds, with a zone (TIMESTAMP) or without (TIMESTAMP_NTZ, read
// as UTC).
func parseStatTime(v string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if at, err := time.Parse(layout, v); err == nil {
			return at, true
		}
	}
	return time.Time{}, false
}

// sortedIDs returns the keys of m in order.
func sortedIDs[V any](m map[int]V) []int {
	ids := make([]int, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
