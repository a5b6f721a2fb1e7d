package deltasink

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// partitioner lays a partitioned table's rows out by their partition
// values: it fills the derived partition columns (the UTC date or hour of
// a timestamp column), which decoders leave null, and splits each batch
// into one batch per partition value.
type partitioner struct {
	parts []spec.PartitionColumn
	// kinds are the types of the parts' source columns.
	kinds []schema.Kind
	// leaves caches, per Parquet schema of a batch, the leaf column of
	// each part's source and of each derived column.
	leaves map[*parquet.Schema]*partLeaves
}

// partLeaves are the leaf column indexes of a Parquet schema that a
// partitioner reads and fills: per part, its source and (derived parts
// only, else -1) its own column.
type partLeaves struct {
	source, own []int
}

// partitionedBatch is the rows of a batch that share their partition
// values.
type partitionedBatch struct {
	values []table.PartitionValue
	cols   [][]parquet.Value
	rows   int
}

// newPartitioner returns the partitioner of the table of layout, nil for
// an unpartitioned one, and the table's partition layout. A partition
// column that does not fit the table's columns (known only now for a part
// whose columns come from records or a registry) fails the table.
func newPartitioner(layout *spec.Layout) (*partitioner, table.Partitioning, error) {
	tp := table.Partitioning{Columns: []string{}}
	if len(layout.Partitions) == 0 {
		return nil, tp, nil
	}
	if errs := layout.CheckPartitions(); len(errs) > 0 {
		return nil, tp, runner.Fatal(fmt.Errorf("partition columns: %w", errs))
	}
	p := &partitioner{parts: layout.Partitions, leaves: map[*parquet.Schema]*partLeaves{}}
	cols := layout.Columns()
	for _, part := range p.parts {
		t, err := spec.ColumnType(cols, part.Source)
		if err != nil {
			return nil, tp, runner.Fatal(fmt.Errorf("table_configuration.partition_by %s: %w", part, err))
		}
		p.kinds = append(p.kinds, t.Kind)
		tp.Columns = append(tp.Columns, part.Name)
		if part.Derived() {
			if tp.Generated == nil {
				tp.Generated = map[string]string{}
			}
			tp.Generated[part.Name] = part.GenerationExpression()
		}
	}
	return p, tp, nil
}

// leavesOf returns the leaf columns p uses in ps.
func (p *partitioner) leavesOf(ps *parquet.Schema) (*partLeaves, error) {
	if l, ok := p.leaves[ps]; ok {
		return l, nil
	}
	l := &partLeaves{}
	for _, part := range p.parts {
		src, ok := ps.Lookup(part.Source...)
		if !ok {
			return nil, fmt.Errorf("a bug: the rows have no column %s to partition by", strings.Join(part.Source, "."))
		}
		own := -1
		if part.Derived() {
			c, ok := ps.Lookup(part.Name)
			if !ok {
				return nil, fmt.Errorf("a bug: the rows have no partition column %s", part.Name)
			}
			own = c.ColumnIndex
		}
		l.source, l.own = append(l.source, src.ColumnIndex), append(l.own, own)
	}
	p.leaves[ps] = l
	return l, nil
}

// split fills the derived partition columns of a batch of n rows of
// Parquet schema ps, given column by column, and returns its rows grouped
// by partition values, each group in row order, groups in the order of
// their first row.
func (p *partitioner) split(ps *parquet.Schema, cols [][]parquet.Value, n int) ([]partitionedBatch, error) {
	l, err := p.leavesOf(ps)
	if err != nil {
		return nil, err
	}
	// A partition's source is a column outside arrays and maps: one value
	// per row.
	keys := make([]string, n)
	groups := map[string]*partitionedBatch{}
	var order []string
	vals := make([]string, len(p.parts))
	for r := range n {
		for i, part := range p.parts {
			v := cols[l.source[i]][r]
			vals[i] = p.value(i, v)
			if part.Derived() {
				cols[l.own[i]][r] = derivedValue(part.Transform, v).Level(0, 1, l.own[i])
				if v.IsNull() {
					cols[l.own[i]][r] = parquet.NullValue().Level(0, 0, l.own[i])
				}
			}
		}
		key := strings.Join(vals, "\x00")
		keys[r] = key
		if _, ok := groups[key]; !ok {
			g := &partitionedBatch{values: make([]table.PartitionValue, len(p.parts))}
			for i, part := range p.parts {
				g.values[i] = table.PartitionValue{Column: part.Name, Value: vals[i]}
			}
			groups[key] = g
			order = append(order, key)
		}
		groups[key].rows++
	}
	if len(order) == 1 {
		g := groups[order[0]]
		g.cols = cols
		return []partitionedBatch{*g}, nil
	}
	gather(cols, keys, groups)
	out := make([]partitionedBatch, len(order))
	for i, k := range order {
		out[i] = *groups[k]
	}
	return out, nil
}

// gather copies the values of each row of cols into the columns of the
// group its key names.
func gather(cols [][]parquet.Value, keys []string, groups map[string]*partitionedBatch) {
	for _, g := range groups {
		g.cols = make([][]parquet.Value, len(cols))
	}
	for c, col := range cols {
		r := -1
		for _, v := range col {
			// A row's values of a column start with repetition level 0.
			if v.RepetitionLevel() == 0 {
				r++
			}
			g := groups[keys[r]]
			g.cols[c] = append(g.cols[c], v)
		}
	}
}

// value returns the partition value of part i in row value v, in Delta's
// partition value serialization ("" for null).
func (p *partitioner) value(i int, v parquet.Value) string {
	if v.IsNull() {
		return ""
	}
	switch p.parts[i].Transform {
	case spec.PartitionDate:
		return utcMicros(v).Format(time.DateOnly)
	case spec.PartitionHour:
		return utcMicros(v).Format(hourLayout)
	}
	switch p.kinds[i] {
	case schema.Boolean:
		return strconv.FormatBool(v.Boolean())
	case schema.Date:
		return time.Unix(int64(v.Int32())*secondsPerDay, 0).UTC().Format(time.DateOnly)
	case schema.String:
		return string(v.ByteArray())
	}
	if v.Kind() == parquet.Int32 {
		return strconv.FormatInt(int64(v.Int32()), 10)
	}
	return strconv.FormatInt(v.Int64(), 10)
}

// hourLayout is the format of an hour partition value, Spark's
// DATE_FORMAT pattern yyyy-MM-dd-HH.
const hourLayout = "2006-01-02-15"

const secondsPerDay = 24 * 60 * 60

// utcMicros returns the time of a TIMESTAMP or TIMESTAMP_NTZ value
// (microseconds since the epoch; for TIMESTAMP_NTZ, of the wall clock read
// as UTC).
func utcMicros(v parquet.Value) time.Time { return time.UnixMicro(v.Int64()).UTC() }

// derivedValue returns the value of the derived column of transform for
// the non-null timestamp v: the days since the epoch of a DATE, or the
// hour as a STRING.
func derivedValue(transform string, v parquet.Value) parquet.Value {
	if v.IsNull() {
		return parquet.NullValue()
	}
	t := utcMicros(v)
	if transform == spec.PartitionHour {
		return parquet.ByteArrayValue([]byte(t.Format(hourLayout)))
	}
	days := t.Unix() / secondsPerDay
	if t.Unix() < 0 && t.Unix()%secondsPerDay != 0 {
		days-- // floor: a time before 1970 belongs to the day that starts before it
	}
	return parquet.Int32Value(int32(days))
}

// partitionDirKey is the key of a partition's file in a file set.
func partitionDirKey(values []table.PartitionValue) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = v.Value
	}
	return strings.Join(parts, "\x00")
}

// partitionChange returns the error of a table whose partition columns
// are not those of table_configuration.partition_by, saying what to do.
func partitionChange(err error) error {
	var pc *table.PartitionChangeError
	if !errors.As(err, &pc) {
		return err
	}
	if pc.Detail != "" {
		return fmt.Errorf("table_configuration.partition_by: %w", err)
	}
	return fmt.Errorf("table_configuration.partition_by gives the partition columns %s, but the table is partitioned by %s: "+
		"a table's partition columns cannot change, since its files are laid out by them; set partition_by back to "+
		"match the table, or write to a new table (another destination_table) partitioned the new way: %w",
		columnList(pc.Want), columnList(pc.Table), err)
}

// columnList formats partition columns for a message.
func columnList(cols []string) string {
	if len(cols) == 0 {
		return "none (unpartitioned)"
	}
	return "[" + strings.Join(cols, ", ") + "]"
}

// sortedKeys returns the keys of a file set in order, for a flush that
// commits its files in the same order each time.
func sortedKeys(files map[string]*table.FileWriter) []string {
	return slices.Sorted(maps.Keys(files))
}
