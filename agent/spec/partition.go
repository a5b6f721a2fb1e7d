package spec

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// MaxPartitionColumns is how many entries table_configuration.partition_by
// may list. Every partition column multiplies the files of a flush by the
// number of its values, so a few columns of few values each is all a
// streaming table can carry.
const MaxPartitionColumns = 4

// Partition transforms: how a partition column's value comes from its
// source column.
const (
	// PartitionIdentity partitions by the column's own value.
	PartitionIdentity = ""
	// PartitionDate partitions by the UTC date of a timestamp: a DATE
	// column generated as CAST(source AS DATE).
	PartitionDate = "date"
	// PartitionHour partitions by the UTC hour of a timestamp: a STRING
	// column generated as DATE_FORMAT(source, 'yyyy-MM-dd-HH').
	PartitionHour = "hour"
)

// PartitionColumn is one entry of table_configuration.partition_by: a
// top-level column partitioned by its own values, or a column derived
// from a timestamp column, which the table stores as a Delta generated
// column (delta.generationExpression) so that Spark prunes partitions on
// a filter of the source column too.
type PartitionColumn struct {
	// Name is the partition column of the table: the column itself for an
	// identity entry, the derived column for date and hour.
	Name string
	// Source is the path of the column the values come from: one name for
	// a top-level column, more for a field of a struct column (such as
	// _kafka.timestamp).
	Source []string
	// Transform is PartitionIdentity, PartitionDate or PartitionHour.
	Transform string
}

// Derived reports whether the column is derived from another one (date or
// hour), rather than being a column of the table's own.
func (p PartitionColumn) Derived() bool { return p.Transform != PartitionIdentity }

// Type returns the type of a derived column: DATE for date, STRING for
// hour (Delta's generated columns that Spark's partition pruning
// understands). It is nil for an identity column, whose type is its own.
func (p PartitionColumn) Type() *schema.Type {
	switch p.Transform {
	case PartitionDate:
		return &schema.Type{Kind: schema.Date}
	case PartitionHour:
		return &schema.Type{Kind: schema.String}
	}
	return nil
}

// GenerationExpression returns the Spark SQL expression a derived column
// is generated with (its delta.generationExpression), or "" for an
// identity column. The forms are those Delta's partition pruning maps a
// filter of the source column onto: CAST(ts AS DATE) and
// DATE_FORMAT(ts, 'yyyy-MM-dd-HH'). The agent computes the values in UTC;
// Spark evaluates them in its session time zone, which must be UTC for
// its own appends and its pruning to agree with the agent's values.
func (p PartitionColumn) GenerationExpression() string {
	quoted := make([]string, len(p.Source))
	for i, s := range p.Source {
		quoted[i] = "`" + strings.ReplaceAll(s, "`", "``") + "`"
	}
	src := strings.Join(quoted, ".")
	switch p.Transform {
	case PartitionDate:
		return "CAST(" + src + " AS DATE)"
	case PartitionHour:
		return "DATE_FORMAT(" + src + ", 'yyyy-MM-dd-HH')"
	}
	return ""
}

// String returns the entry as partition_by writes it.
func (p PartitionColumn) String() string {
	if !p.Derived() {
		return p.Name
	}
	return fmt.Sprintf("%s(%s) AS %s", p.Transform, strings.Join(p.Source, "."), p.Name)
}

// partitionRE matches an entry of partition_by: a column name, or
// date(<path>) or hour(<path>) with an optional AS <name>.
var partitionRE = regexp.MustCompile(`^\s*(?:(?i:(date|hour))\s*\(\s*([^()\s]+)\s*\)(?:\s+(?i:as)\s+(\S+))?|([^()\s]+))\s*$`)

// ParsePartitionColumn parses one entry of partition_by: a top-level
// column name, or date(<column path>) or hour(<column path>) with an
// optional " AS <name>". A derived column is named after its source path,
// dots as underscores, with _date or _hour appended
// (date(_kafka.timestamp) gives _kafka_timestamp_date).
func ParsePartitionColumn(entry string) (PartitionColumn, error) {
	m := partitionRE.FindStringSubmatch(entry)
	if m == nil {
		return PartitionColumn{}, fmt.Errorf("%q is not a partition column: write a top-level column name (country), "+
			"or date(<timestamp column>) or hour(<timestamp column>), optionally followed by AS <name> "+
			"(date(_kafka.timestamp) AS day)", entry)
	}
	if m[4] != "" {
		if !ValidIdentifier(m[4]) {
			return PartitionColumn{}, fmt.Errorf("%q is not a top-level column name: use a letter or '_' followed by "+
				"letters, digits or '_'; a field of a struct column cannot partition a table, only date() or hour() of one", m[4])
		}
		return PartitionColumn{Name: m[4], Source: []string{m[4]}}, nil
	}
	p := PartitionColumn{Transform: strings.ToLower(m[1]), Source: strings.Split(m[2], ".")}
	for _, s := range p.Source {
		if !ValidIdentifier(s) {
			return PartitionColumn{}, fmt.Errorf("%q: %q is not a column path: use names of letters, digits or '_' "+
				"joined by dots, like _kafka.timestamp", entry, m[2])
		}
	}
	p.Name = strings.Join(p.Source, "_") + "_" + p.Transform
	if m[3] != "" {
		if !ValidIdentifier(m[3]) {
			return PartitionColumn{}, fmt.Errorf("%q: %q is not a valid column name: use a letter or '_' followed "+
				"by letters, digits or '_'", entry, m[3])
		}
		p.Name = m[3]
	}
	return p, nil
}

// Partitions returns the entries of partition_by parsed, leaving out those
// that do not parse (Validate reports them).
func (tc *TableConfiguration) Partitions() []PartitionColumn {
	var out []PartitionColumn
	for _, e := range tc.PartitionBy {
		if p, err := ParsePartitionColumn(e); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// validatePartitionBy checks, under the table_configuration collector col,
// what partition_by says on its own: the syntax of each entry, how many
// there are, and that no column is listed twice. The columns themselves
// are checked against the table's (see [CheckPartitions]).
func (tc *TableConfiguration) validatePartitionBy(col collector) {
	if tc.PartitionBy != nil && len(tc.PartitionBy) == 0 {
		col.add("partition_by", "partition_by is empty; list the partition columns, like [\"date(_kafka.timestamp)\"], or remove it")
	}
	if len(tc.PartitionBy) > MaxPartitionColumns {
		col.add("partition_by", "partition_by lists %d columns, more than %d: every partition column multiplies the files "+
			"of each flush by its number of values; keep the few columns readers filter on most", len(tc.PartitionBy), MaxPartitionColumns)
	}
	seen := map[string]int{}
	for i, e := range tc.PartitionBy {
		p, err := ParsePartitionColumn(e)
		if err != nil {
			col.index("partition_by", i).add("", "%s", err)
			continue
		}
		k := strings.ToLower(p.Name)
		if j, dup := seen[k]; dup {
			col.index("partition_by", i).add("", "partition column %q is already listed as partition_by[%d]; list each column once", p.Name, j)
			continue
		}
		seen[k] = i
	}
}

// PartitionError is a problem of one partition_by entry found against
// the table's columns.
type PartitionError struct {
	// Index is the entry's index in partition_by.
	Index int
	// Detail says what is wrong and how to fix it.
	Detail string
}

// CheckPartitions checks the entries of partition_by against the table's
// columns cols, leaving out entries that do not parse (Validate reports
// them). complete says that cols are all the table's columns: then a
// column that is not there is an error; otherwise (a part of the table
// whose columns come later, from records or a registry) only what cols
// hold is checked, and the agent checks the rest when it knows the
// columns. An identity column must be a top-level column of a type that
// partitions (STRING, BOOLEAN, TINYINT, SMALLINT, INT, BIGINT or DATE);
// date() and hour() need a TIMESTAMP or TIMESTAMP_NTZ column, top-level or
// a field of struct columns; a derived column's name must not be a column
// of the table.
func CheckPartitions(cols []schema.Field, partitionBy []string, complete bool) []PartitionError {
	parts := make([]PartitionColumn, len(partitionBy))
	for i, e := range partitionBy {
		parts[i], _ = ParsePartitionColumn(e) // one that does not parse has no name
	}
	return checkPartitionColumns(cols, parts, complete)
}

// checkPartitionColumns is CheckPartitions of parsed entries; those
// without a name (that did not parse) are left out.
func checkPartitionColumns(cols []schema.Field, parts []PartitionColumn, complete bool) []PartitionError {
	var errs []PartitionError
	for i, p := range parts {
		if p.Name == "" {
			continue
		}
		if err := checkPartition(cols, p, complete); err != nil {
			errs = append(errs, PartitionError{Index: i, Detail: err.Error()})
		}
	}
	return errs
}

// errUnknownColumn stands for a column the table's known columns lack.
var errUnknownColumn = errors.New("unknown column")

// checkPartition returns the problem of p against cols, or nil.
func checkPartition(cols []schema.Field, p PartitionColumn, complete bool) error {
	if p.Derived() {
		if f := findField(cols, p.Name); f != nil {
			return fmt.Errorf("the %s column %q of %s would take the name of the table's column %q; name it otherwise with AS <name>",
				p.Transform, p.Name, strings.Join(p.Source, "."), f.Name)
		}
	}
	t, err := columnType(cols, p.Source)
	switch {
	case errors.Is(err, errUnknownColumn) && !complete:
		return nil
	case errors.Is(err, errUnknownColumn):
		return fmt.Errorf("the table has no column %q to partition by; name one of its columns (%s)",
			strings.Join(p.Source, "."), columnNames(cols))
	case err != nil:
		return err
	}
	if want := spelledPath(cols, p.Source); want != strings.Join(p.Source, ".") {
		return fmt.Errorf("the table's column is spelled %q; write it so: partition columns are matched as spelled", want)
	}
	if p.Derived() {
		if t.Kind != schema.Timestamp && t.Kind != schema.TimestampNTZ {
			return fmt.Errorf("%s() needs a TIMESTAMP or TIMESTAMP_NTZ column, and %q is %s",
				p.Transform, strings.Join(p.Source, "."), t)
		}
		return nil
	}
	switch t.Kind {
	case schema.String, schema.Boolean, schema.Byte, schema.Short, schema.Int, schema.Long, schema.Date:
		return nil
	case schema.Timestamp, schema.TimestampNTZ:
		return fmt.Errorf("column %q is %s: a partition per distinct timestamp is a file per row; partition by date(%s) or hour(%s)",
			p.Name, t, p.Name, p.Name)
	}
	return fmt.Errorf("column %q is %s, which cannot partition a table: use a column of type STRING, BOOLEAN, TINYINT, "+
		"SMALLINT, INT, BIGINT or DATE", p.Name, t)
}

// ColumnType returns the type of the column at path in cols, looking
// through struct columns (names compared ignoring case, as Spark does),
// and an error when there is none or the path goes through an array, a
// map or a leaf.
func ColumnType(cols []schema.Field, path []string) (*schema.Type, error) {
	t, err := columnType(cols, path)
	if errors.Is(err, errUnknownColumn) {
		return nil, fmt.Errorf("the table has no column %q", strings.Join(path, "."))
	}
	return t, err
}

// columnType is ColumnType, whose error is errUnknownColumn when there is
// no column at path.
func columnType(cols []schema.Field, path []string) (*schema.Type, error) {
	fields := cols
	for i, name := range path {
		f := findField(fields, name)
		if f == nil {
			return nil, errUnknownColumn
		}
		if i == len(path)-1 {
			return f.Type, nil
		}
		if f.Type.Kind != schema.Struct {
			return nil, fmt.Errorf("column %q is %s, not a struct: %q names no field of it",
				strings.Join(path[:i+1], "."), f.Type, strings.Join(path, "."))
		}
		fields = f.Type.Fields
	}
	return nil, errUnknownColumn
}

// spelledPath returns path, a column columnType finds in cols, as the
// columns spell it.
func spelledPath(cols []schema.Field, path []string) string {
	spelled := make([]string, 0, len(path))
	fields := cols
	for _, name := range path {
		f := findField(fields, name)
		if f == nil {
			break
		}
		spelled = append(spelled, f.Name)
		fields = f.Type.Fields
	}
	return strings.Join(spelled, ".")
}

// findField returns the field of fields named name, ignoring case, or nil.
func findField(fields []schema.Field, name string) *schema.Field {
	for i := range fields {
		if strings.EqualFold(fields[i].Name, name) {
			return &fields[i]
		}
	}
	return nil
}

// columnNames lists the names of cols for a message.
func columnNames(cols []schema.Field) string {
	names := make([]string, len(cols))
	for i, f := range cols {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// checkPartitions reports, under the table collector tc, the partition_by
// entries that do not fit the columns l knows at plan time.
func (l *Layout) checkPartitions(tc collector, partitionBy []string) {
	complete := !l.Key.unresolved() && !l.Value.unresolved()
	for _, e := range CheckPartitions(l.dataColumns(), partitionBy, complete) {
		tc.at("table_configuration").index("partition_by", e.Index).add("", "%s", e.Detail)
	}
}
