package table

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// Partitioning is the partition layout a writer gives a table's new data
// files, which [Commit.Partitioning] states.
//
// The partition columns stay inside the data files as well, after the
// columns they come from: the Delta protocol lets a writer materialize
// them (Spark reads partitionValues and ignores them), IcebergCompatV1
// and V2 require it, and an Iceberg mirror of the table needs the source
// columns of its transforms in the files. Readers that take a table's
// files as plain Parquet (the agent's Kafka sink) find every column there.
type Partitioning struct {
	// Columns are the partition columns, in order: the metaData action's
	// partitionColumns. Each must be a top-level column of the schema.
	Columns []string
	// Generated maps the generated columns the writer fills to their
	// Spark SQL expressions, which the table schema records in the
	// columns' delta.generationExpression metadata. A table with
	// generated columns gets the generatedColumns writer feature.
	Generated map[string]string
}

// PartitionValue is the value of one partition column of a data file.
type PartitionValue struct {
	// Column is the partition column.
	Column string
	// Value is the value in Delta's partition value serialization (see
	// the protocol's "Partition Value Serialization"): the decimal digits
	// of a number, yyyy-mm-dd of a date, true or false, a string as it
	// is. Empty is a null value, as the protocol says.
	Value string
}

// PartitionChangeError is what a commit gets whose [Commit.Partitioning]
// differs from the table's: a table's partition columns are fixed when it
// is created, since its files are laid out by them.
type PartitionChangeError struct {
	// Table is the table's partition layout, Want the commit's.
	Table, Want []string
	// Detail says what differs, when the columns are the same but a
	// generated column is not.
	Detail string
}

func (e *PartitionChangeError) Error() string {
	if e.Detail != "" {
		return e.Detail
	}
	return fmt.Sprintf("the table is partitioned by %s, not by %s", listOrNone(e.Table), listOrNone(e.Want))
}

// listOrNone formats partition columns for a message.
func listOrNone(cols []string) string {
	if len(cols) == 0 {
		return "no column"
	}
	return "[" + strings.Join(cols, ", ") + "]"
}

// CheckPartitioning returns a [*PartitionChangeError] when the table,
// once it has a log, is not laid out by p: other partition columns, or a
// generated column whose expression p does not compute (the writer could
// not keep the column's values what its expression says). A table without
// a log yet takes any p.
func (t *Table) CheckPartitioning(p Partitioning) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.checkPartitioning(&p)
}

// checkPartitioning is CheckPartitioning; t.mu must be held.
func (t *Table) checkPartitioning(p *Partitioning) error {
	st := t.st
	if st.meta == nil {
		return nil
	}
	if !slices.Equal(st.meta.PartitionColumns, p.Columns) {
		return &PartitionChangeError{Table: st.meta.PartitionColumns, Want: p.Columns}
	}
	for path, kv := range st.extra {
		raw, ok := kv[metaGeneration]
		if !ok {
			continue
		}
		var expr string
		if err := json.Unmarshal(raw, &expr); err != nil {
			return fmt.Errorf("column %s: %s is not a string: %w", path, metaGeneration, err)
		}
		var want string
		for col, e := range p.Generated {
			if schema.FieldPath(col) == path {
				want = e
			}
		}
		if want != expr {
			return &PartitionChangeError{Table: st.meta.PartitionColumns, Want: p.Columns, Detail: fmt.Sprintf(
				"the table's generated column %s is %s, which this writer does not compute (it computes %s); "+
					"only a table whose generated columns are the writer's own partition columns can be appended to",
				path, expr, cmp.Or(want, "nothing for it"))}
		}
	}
	return nil
}

// checkPartitionValues checks that the files of c carry a value for each
// partition column of the table, and for nothing else. t.mu must be held.
func (t *Table) checkPartitionValues(c *Commit) error {
	cols := []string{}
	switch {
	case t.st.meta != nil:
		cols = t.st.meta.PartitionColumns
	case c.Partitioning != nil:
		cols = c.Partitioning.Columns
	}
	for _, f := range c.Files {
		got := slices.Sorted(maps.Keys(f.PartitionValues))
		if !slices.Equal(got, slices.Sorted(slices.Values(cols))) {
			return fmt.Errorf("file %q has partition values for %s; the table is partitioned by %s", f.Path, listOrNone(got), listOrNone(cols))
		}
	}
	return nil
}

// generatedMetadata adds the delta.generationExpression metadata of the
// generated columns to extra.
func generatedMetadata(extra schema.Metadata, generated map[string]string) error {
	for col, expr := range generated {
		raw, err := json.Marshal(expr)
		if err != nil {
			return err
		}
		path := schema.FieldPath(col)
		if extra[path] == nil {
			extra[path] = map[string]json.RawMessage{}
		}
		extra[path][metaGeneration] = raw
	}
	return nil
}

// hasGenerated reports whether field metadata extra holds a generated
// column.
func hasGenerated(extra schema.Metadata) bool {
	for _, kv := range extra {
		if _, ok := kv[metaGeneration]; ok {
			return true
		}
	}
	return false
}

// hiveNull is the folder name of a null partition value, as Hive and
// Spark write it.
const hiveNull = "__HIVE_DEFAULT_PARTITION__"

// partitionDir returns the folder of the data files of partition values,
// "" for none: <column>=<value>/ for each, names and values escaped as
// Spark escapes them (ExternalCatalogUtils.escapePathName).
func partitionDir(values []PartitionValue) string {
	var b strings.Builder
	for _, v := range values {
		b.WriteString(escapePathName(v.Column))
		b.WriteByte('=')
		if v.Value == "" {
			b.WriteString(hiveNull)
		} else {
			b.WriteString(escapePathName(v.Value))
		}
		b.WriteByte('/')
	}
	return b.String()
}

// escapePathName percent-encodes, as %XX in upper case, the characters
// Spark escapes in partition folder names: control characters and
// "#%'*/:=?\{[]^ and DEL.
func escapePathName(s string) string {
	const special = "\"#%'*/:=?\\\x7f{[]^"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || strings.IndexByte(special, c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// encodePath returns the path of a file relative to the table folder as
// add and remove actions hold it: a relative URI, each segment
// percent-encoded (decodePath reverses it). Names without special
// characters, as unpartitioned data files are, stay as they are.
func encodePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
