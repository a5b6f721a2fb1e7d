package spec

import (
	"fmt"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// Reserved column names.
const (
	// KeyColumn holds the record key when it is not parsed into fields.
	KeyColumn = "key"
	// ValueColumn holds the record value when it is not parsed into fields.
	ValueColumn = "value"
	// CorruptRecordColumn holds the raw bytes of a key or value that could
	// not be decoded (PERMISSIVE mode); null for records that decoded.
	CorruptRecordColumn = "_corrupt_record"
	// OpColumn holds a changelog row's operation: c (insert), u (update),
	// d (delete) or r (snapshot read).
	OpColumn = "_op"
	// SourceColumn holds a changelog row's source: [SourceType].
	SourceColumn = "_source"
)

// SourceType is the struct type of the _source column of changelog
// formats: the database and table the change happened in and when.
var SourceType = &schema.Type{Kind: schema.Struct, Fields: []schema.Field{
	{Name: "db", Type: &schema.Type{Kind: schema.String}, Nullable: true},
	{Name: "table", Type: &schema.Type{Kind: schema.String}, Nullable: true},
	{Name: "ts", Type: &schema.Type{Kind: schema.Timestamp}, Nullable: true},
}}

// headersType is the type of record headers: a list, not a map, so that
// repeated keys are all kept.
var headersType = &schema.Type{Kind: schema.Array, Elem: &schema.Type{Kind: schema.Struct, Fields: []schema.Field{
	{Name: "key", Type: &schema.Type{Kind: schema.String}, Nullable: true},
	{Name: "value", Type: &schema.Type{Kind: schema.Binary}, Nullable: true},
}}}

// MetadataColumnType returns the type of the metadata column name, one of
// [MetadataColumnNames]; nil for any other name.
func MetadataColumnType(name string) *schema.Type {
	switch name {
	case MetaTopic, MetaTimestampType:
		return &schema.Type{Kind: schema.String}
	case MetaPartition, MetaLeaderEpoch:
		return &schema.Type{Kind: schema.Int}
	case MetaOffset:
		return &schema.Type{Kind: schema.Long}
	case MetaTimestamp:
		return &schema.Type{Kind: schema.Timestamp}
	case MetaHeaders:
		return headersType
	case MetaRawKey, MetaRawValue:
		return &schema.Type{Kind: schema.Binary}
	}
	return nil
}

// MetadataType is the struct type of the source metadata column.
// Every field is nullable, although the agent sets topic, partition, offset
// and timestampType on every row, as Lakeflow does: Delta writers such as
// Spark enforce NOT NULL nested fields even where the column itself is null
// (the invariants table feature), so another engine could not append rows
// without the column. Tables written before this was so are relaxed to it on
// their next commit.
var MetadataType = &schema.Type{Kind: schema.Struct, Fields: []schema.Field{
	{Name: "topic", Type: &schema.Type{Kind: schema.String}, Nullable: true},
	{Name: "partition", Type: &schema.Type{Kind: schema.Int}, Nullable: true},
	{Name: "offset", Type: &schema.Type{Kind: schema.Long}, Nullable: true},
	{Name: "timestamp", Type: &schema.Type{Kind: schema.Timestamp}, Nullable: true},
	{Name: "timestampType", Type: &schema.Type{Kind: schema.Int}, Nullable: true},
	{Name: "headers", Type: headersType, Nullable: true},
}}

// Part is the part of a table's columns that one side of a record produces.
type Part struct {
	// Format is the transformer format, "" for none (BINARY).
	Format string
	// Transformer is the side's transformer, nil for none.
	Transformer *Transformer
	// Fields are the columns the side's schema declares: the fields of a
	// JSON schema, of an Avro record or of a Protobuf message, or the one
	// column Column of a non-record Avro schema. Nil for BINARY, STRING and
	// JSON without json_options (VARIANT), which make the single column
	// Column, and for a schema that comes from a registry until the agent
	// resolves it at run time ([Part.Pending]).
	Fields []schema.Field
	// Column is KeyColumn or ValueColumn: the name of the side's single
	// column when it has one.
	Column string
	// Prefix is key_fields_prefix or value_fields_prefix: the column of a
	// parsed field is named Prefix followed by the field's name, while
	// decoding matches the field's own name. Fields hold the names without
	// it. Never applied to the single column Column.
	Prefix string
	// Rescue is the STRING column of an inferred part ([Part.Inferred])
	// that holds, per record, a JSON object of the fields the table's
	// schema cannot take; "" for none. It comes after the source metadata
	// column, not among the part's columns.
	Rescue string
	// attr is the attribute, under the transformer, that declared Fields.
	attr string
}

// Pending reports whether the part's columns come from a schema registry
// and are not resolved yet: it has no columns until they are.
func (p *Part) Pending() bool { return p.Fields == nil && p.Transformer.Registry() != nil }

// Width returns the number of top-level columns of the part.
func (p *Part) Width() int {
	switch {
	case p.Fields != nil:
		return len(p.Fields)
	case p.unresolved():
		return 0
	}
	return 1
}

// Layout is the column set of a destination table, in order: the key part,
// the value part, _op and _source of changelog rows, the source metadata
// column if configured, the metadata columns, the rescue columns of
// inferred parts (the key's, then the value's), and _corrupt_record when
// any part can fail to decode.
type Layout struct {
	Key, Value Part
	// Op and Source say whether the table has the _op and _source columns:
	// both for a changelog value format, _op alone for a JSON value with
	// json_options.empty_value_as_delete.
	Op, Source     bool
	MetadataColumn string
	// Meta lists table_configuration.metadata_columns.
	Meta []string
	// Duplicate is kafka_options.duplicate_field_strategy: which side keeps
	// a column name both parse (empty: neither, it is an error).
	Duplicate     string
	CorruptRecord bool
	// Partitions are table_configuration.partition_by parsed. The derived
	// ones (date and hour) are columns of the table, after every other
	// column, which decoders leave null and the table writer fills.
	Partitions []PartitionColumn
}

// Columns returns the table's columns in layout order: the schema of its
// Parquet files and of its Delta log. The derived partition columns come
// last.
func (l *Layout) Columns() []schema.Field {
	cols := l.dataColumns()
	for _, p := range l.Partitions {
		if p.Derived() {
			cols = append(cols, schema.Field{Name: p.Name, Type: p.Type(), Nullable: true})
		}
	}
	return cols
}

// Derived returns how many derived partition columns end
// [Layout.Columns].
func (l *Layout) Derived() int {
	n := 0
	for _, p := range l.Partitions {
		if p.Derived() {
			n++
		}
	}
	return n
}

// dataColumns returns the columns of the table but its derived partition
// columns.
func (l *Layout) dataColumns() []schema.Field {
	var cols []schema.Field
	for _, p := range []*Part{&l.Key, &l.Value} {
		if p.unresolved() {
			continue
		}
		if p.Fields != nil || p.Inferred() {
			// Parsed columns are nullable, as Spark's from_json makes them: a
			// record whose NOT NULL field is missing keeps its row, with the
			// field null and the raw bytes in _corrupt_record.
			for _, f := range p.Fields {
				f.Name = p.Prefix + f.Name
				cols = append(cols, schema.Nullable(f))
			}
			continue
		}
		cols = append(cols, schema.Field{Name: p.Column, Type: &schema.Type{Kind: p.columnKind()}, Nullable: true})
	}
	if l.Op {
		cols = append(cols, schema.Field{Name: OpColumn, Type: &schema.Type{Kind: schema.String}, Nullable: true})
	}
	if l.Source {
		cols = append(cols, schema.Field{Name: SourceColumn, Type: SourceType, Nullable: true})
	}
	if l.MetadataColumn != "" {
		// Nullable, so that adding the column to an existing table is a
		// compatible schema change; every row written has it set.
		cols = append(cols, schema.Field{Name: l.MetadataColumn, Type: MetadataType, Nullable: true})
	}
	for _, m := range l.Meta {
		if t := MetadataColumnType(m); t != nil { // Validate refuses other names
			cols = append(cols, schema.Field{Name: m, Type: t, Nullable: true})
		}
	}
	for _, p := range []*Part{&l.Key, &l.Value} {
		if p.Rescue != "" {
			cols = append(cols, schema.Field{Name: p.Rescue, Type: &schema.Type{Kind: schema.String}, Nullable: true})
		}
	}
	if l.CorruptRecord {
		cols = append(cols, schema.Field{Name: CorruptRecordColumn, Type: &schema.Type{Kind: schema.Binary}, Nullable: true})
	}
	return cols
}

// Variant reports whether the part is JSON without json_options: its
// single column Column is a VARIANT holding each key or value parsed whole.
func (p *Part) Variant() bool {
	return p.Format == FormatJSON && p.Transformer != nil && p.Transformer.JSONOptions == nil
}

// columnKind returns the type of a part's single column: STRING for
// format STRING, VARIANT for JSON without json_options, BINARY otherwise.
func (p *Part) columnKind() schema.Kind {
	switch {
	case p.Format == FormatString:
		return schema.String
	case p.Variant():
		return schema.Variant
	}
	return schema.Binary
}

// Layout returns t's column layout, or the problems that prevent one (an
// unparsable DDL, colliding column names). Call it on a table that passed
// Validate; the errors' paths are relative to the table.
func (t *Table) Layout() (*Layout, Errors) {
	col := newCollector()
	l := t.columns(col)
	return l, *col.errs
}

// columns builds the layout, reporting problems under the table collector tc.
func (t *Table) columns(tc collector) *Layout {
	kc := tc.at("connector_options").at("kafka_options")
	ko := &t.ConnectorOptions.KafkaOptions
	l := &Layout{MetadataColumn: t.TableConfiguration.SourceMetadataColumn, Meta: t.TableConfiguration.MetadataColumns,
		Duplicate: ko.DuplicateFieldStrategy, Partitions: t.TableConfiguration.Partitions()}
	var ok bool
	l.Key, ok = part(kc.at("key_transformer"), ko.KeyTransformer, KeyColumn)
	var vok bool
	l.Value, vok = part(kc.at("value_transformer"), ko.ValueTransformer, ValueColumn)
	l.Key.Prefix, l.Value.Prefix = ko.KeyFieldsPrefix, ko.ValueFieldsPrefix
	l.Source = ko.ValueTransformer.Changelog()
	l.Op = l.Source || ko.ValueTransformer.DeletesOnEmpty()
	l.CorruptRecord = l.Key.mayCorrupt() || l.Value.mayCorrupt()
	if !ok || !vok {
		return l
	}
	if l.checkInferred(kc) {
		l.checkNames(tc)
	}
	l.checkWidth(tc)
	l.checkPartitions(tc, t.TableConfiguration.PartitionBy)
	return l
}

// checkInferred reports, under the kafka_options collector kc, the sides
// of a table whose columns the agent could not tell apart at run time: an
// inferred side next to another inferred side, or next to a side whose
// schema comes from a registry. Both add columns to the table as records
// come, and the table's log does not record which side a column belongs
// to. It reports whether the layout is fine; the column names of one
// that is not are not checked (the two sides' rescue columns collide).
func (l *Layout) checkInferred(kc collector) bool {
	if !l.Key.Inferred() && !l.Value.Inferred() {
		return true
	}
	const attr = "json_options.schema_evolution_mode"
	switch {
	case l.Key.Inferred() && l.Value.Inferred():
		kc.at("key_transformer").add(attr, "only one of key and value can infer its schema: both would add "+
			"columns to the same table; give the key a schema (json_options.schema), or use format STRING or "+
			"JSON without json_options (a VARIANT column) for it")
	case l.Key.Inferred() && l.Value.Pending():
		kc.at("key_transformer").add(attr, "a key whose schema is inferred cannot go with a value whose schema "+
			"comes from a schema registry: both would add columns to the same table; give the key a schema "+
			"(json_options.schema), or use format STRING or JSON without json_options (a VARIANT column) for it")
	case l.Value.Inferred() && l.Key.Pending():
		kc.at("value_transformer").add(attr, "a value whose schema is inferred cannot go with a key whose schema "+
			"comes from a schema registry: both would add columns to the same table; give the key a fixed schema "+
			"(avro_options.schema or protobuf_options.desc_file_path) or leave it BINARY")
	default:
		return true
	}
	return false
}

// CheckColumns reports what is wrong with the names of l's columns once
// its registry parts are resolved (see [Part.Pending]): the same rules as
// [Table.Layout] applies to the columns it knows at plan time, on paths
// relative to the table. A registry schema whose fields collide with the
// table's other columns, or take a reserved name, cannot become the table's.
func (l *Layout) CheckColumns() Errors {
	col := newCollector()
	l.checkNames(col)
	l.checkWidth(col)
	return *col.errs
}

// CheckPartitions reports, on paths relative to the table, the partition
// columns that do not fit l's columns once every part's columns are known
// (see [CheckPartitions]): what plan time could not check.
func (l *Layout) CheckPartitions() Errors {
	col := newCollector()
	for _, e := range checkPartitionColumns(l.dataColumns(), l.Partitions, true) {
		col.at("table_configuration").index("partition_by", e.Index).add("", "%s", e.Detail)
	}
	return *col.errs
}

// checkNames reports, under the table collector tc, column names that
// collide (ignoring case, as Spark and Delta do) or are reserved. Any other
// name is allowed: a table whose names plain Delta cannot hold (spaces,
// dots, punctuation) gets Delta column mapping. With duplicate_field_strategy
// PREFER_KEY or PREFER_VALUE it first drops the fields of the losing side
// that the winning side's columns name (see [Layout.dropDuplicates]).
func (l *Layout) checkNames(tc collector) {
	kc := tc.at("connector_options").at("kafka_options")
	l.dropDuplicates()
	// Column names are compared case-insensitively, as Spark and Delta do.
	owner := map[string]string{}
	claim := func(c collector, attr, name, what string) {
		k := strings.ToLower(name)
		if prev, dup := owner[k]; dup {
			c.add(attr, "column %q %s collides with the column of the same name %s; rename one of them", name, what, prev)
			return
		}
		owner[k] = what
	}
	// A parsed field must not take the name of a column the agent fills.
	reserved := map[string]string{strings.ToLower(CorruptRecordColumn): "records that fail to decode"}
	if l.Op {
		reserved[OpColumn] = "the operation of changelog rows"
		owner[OpColumn] = "(the changelog operation column)"
	}
	if l.Source {
		reserved[SourceColumn] = "the source of changelog rows"
		owner[SourceColumn] = "(the changelog source column)"
	}
	for _, side := range []struct {
		p    *Part
		c    collector
		what string
	}{
		{&l.Key, kc.at("key_transformer"), "from the key schema"},
		{&l.Value, kc.at("value_transformer"), "from the value schema"},
	} {
		if r := side.p.Rescue; r != "" {
			ra := "json_options.rescued_data_column"
			switch {
			case strings.EqualFold(r, CorruptRecordColumn):
				side.c.add(ra, "%q is reserved for records that fail to decode", r)
			case !ValidIdentifier(r):
				side.c.add(ra, "%q is not a valid column name: use a letter or '_' followed by letters, digits or '_'", r)
			default:
				claim(side.c, ra, r, "(the rescued data column "+side.what+")")
			}
		}
		if side.p.unresolved() {
			continue
		}
		if side.p.Fields == nil && !side.p.Inferred() {
			claim(side.c, "", side.p.Column, "("+side.p.Column+")")
			continue
		}
		attr := side.p.attr
		if attr == "" {
			attr = side.p.registryAttr()
		}
		for _, f := range side.p.Fields {
			name := side.p.Prefix + f.Name
			if why, ok := reserved[strings.ToLower(name)]; ok {
				side.c.add(attr, "column %q is reserved for %s; rename the field%s", name, why, prefixHint(side.p.Prefix))
				continue
			}
			claim(side.c, attr, name, side.what)
		}
	}
	mc := tc.at("table_configuration")
	if m := l.MetadataColumn; m != "" {
		switch {
		case strings.EqualFold(m, KeyColumn) || strings.EqualFold(m, ValueColumn):
			mc.add("source_metadata_column", "the source metadata column must not be named %q: key and value are "+
				"reserved for the raw key and value columns, whatever the transformers", m)
		case strings.EqualFold(m, CorruptRecordColumn):
			mc.add("source_metadata_column", "%q is reserved for records that fail to decode", m)
		case !ValidIdentifier(m):
			mc.add("source_metadata_column", "%q is not a valid column name: use a letter or '_' followed by letters, digits or '_'", m)
		default:
			claim(mc, "source_metadata_column", m, "(the source metadata column)")
		}
	}
	for i, m := range l.Meta {
		if MetadataColumnType(m) != nil { // Validate reports other names
			claim(mc.index("metadata_columns", i), "", m, "(the metadata column "+m+")")
		}
	}
}

// prefixHint suggests, for a field that takes a reserved name, a prefix
// that would move it out of the way: "" when the side has one already.
func prefixHint(prefix string) string {
	if prefix != "" {
		return ""
	}
	return ", or set key_fields_prefix or value_fields_prefix"
}

// dropDuplicates applies duplicate_field_strategy PREFER_KEY or
// PREFER_VALUE: the losing side's fields whose column names (with its
// prefix) a column of the winning side takes are dropped from its Fields,
// so that they are not columns and not decoded. A side whose columns are
// not known yet (inferred, or from a registry not resolved) drops
// nothing here; an inferred losing side leaves out the names at run time.
func (l *Layout) dropDuplicates() {
	win, lose := &l.Key, &l.Value
	switch l.Duplicate {
	case DuplicateFieldPreferKey:
	case DuplicateFieldPreferValue:
		win, lose = lose, win
	default:
		return
	}
	if lose.Fields == nil {
		return
	}
	taken := map[string]bool{}
	switch {
	case win.Fields != nil:
		for _, f := range win.Fields {
			taken[strings.ToLower(win.Prefix+f.Name)] = true
		}
	case !win.unresolved() && !win.Inferred():
		taken[strings.ToLower(win.Column)] = true
	}
	kept := make([]schema.Field, 0, len(lose.Fields))
	for _, f := range lose.Fields {
		if !taken[strings.ToLower(lose.Prefix+f.Name)] {
			kept = append(kept, f)
		}
	}
	lose.Fields = kept
}

// registryAttr returns the attribute, under the transformer, of the
// schema_registry block of a part whose schema comes from a registry, or "".
func (p *Part) registryAttr() string {
	switch {
	case p.Transformer.Registry() == nil:
		return ""
	case p.Format == FormatProtobuf:
		return "protobuf_options.schema_registry"
	}
	return "avro_options.schema_registry"
}

// mayCorrupt reports whether records can fail to decode into the part and
// keep their row: JSON and the changelog formats always (with a schema,
// inferred or as a VARIANT), Avro and Protobuf in PERMISSIVE mode.
func (p *Part) mayCorrupt() bool {
	switch p.Format {
	case FormatJSON, FormatDebeziumJSON, FormatCanalJSON:
		return true
	case FormatAvro, FormatProtobuf:
		return p.Transformer.Mode() == ParseModePermissive
	}
	return false
}

// part builds one side's Part; ok is false when its schema did not parse.
// The paths of its problems are relative to the transformer.
func part(col collector, tr *Transformer, column string) (Part, bool) {
	p := Part{Format: "", Transformer: tr, Column: column}
	if tr == nil {
		return p, true
	}
	p.Format = tr.Format
	var (
		fields []schema.Field
		ok     bool
	)
	switch {
	case p.Inferred():
		p.Rescue = tr.RowOptions().RescueColumn()
		return p, true
	case jsonish(tr.Format) && tr.JSONOptions != nil:
		fields, p.attr, ok = jsonFields(col.at("json_options"), tr.JSONOptions)
		p.attr = "json_options." + p.attr
	case tr.Format == FormatAvro && tr.AvroOptions != nil && tr.AvroOptions.SchemaRegistry == nil:
		fields, p.attr, ok = avroFields(col.at("avro_options"), tr.AvroOptions, column)
		p.attr = "avro_options." + p.attr
	case tr.Format == FormatProtobuf && tr.ProtobufOptions != nil && tr.ProtobufOptions.SchemaRegistry == nil:
		fields, ok = protobufFields(col.at("protobuf_options"), tr.ProtobufOptions)
		p.attr = "protobuf_options.desc_file_path"
	default:
		return p, true
	}
	p.Fields = fields
	return p, ok
}

// jsonFields parses the DDL schema of jo; attr is the attribute it came
// from.
func jsonFields(jc collector, jo *JSONOptions) (fields []schema.Field, attr string, ok bool) {
	ddl, attr := jo.Schema, "schema"
	if jo.SchemaFilePath != "" {
		ddl, attr = jo.SchemaFileContent, "schema_file_path"
	}
	if ddl == "" && jo.SchemaFilePath == "" {
		return nil, attr, false // Validate reports the missing schema
	}
	fields, err := schema.ParseDDL(ddl)
	if err != nil {
		where := "the schema"
		if attr == "schema_file_path" {
			where = fmt.Sprintf("the schema in %s", jo.SchemaFilePath)
		}
		jc.add(attr, "%s is not valid Spark DDL: %v", where, err)
		return nil, attr, false
	}
	if len(fields) == 0 {
		jc.add(attr, "the schema declares no columns")
		return nil, attr, false
	}
	return fields, attr, true
}
