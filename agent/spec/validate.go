package spec

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

var (
	nameRE       = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)
	identifierRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,254}$`)
	topicRE      = regexp.MustCompile(`^[A-Za-z0-9._-]{1,249}$`)
)

// ValidName reports whether s can name a connection or pipeline: 1 to 128
// letters, digits, '_', '.' or '-', starting with a letter or digit.
func ValidName(s string) bool { return nameRE.MatchString(s) }

// ValidIdentifier reports whether s is a valid unquoted identifier for a
// catalog, schema, table or column name: a letter or '_' followed by up to
// 254 letters, digits or '_'.
func ValidIdentifier(s string) bool { return identifierRE.MatchString(s) }

// ValidTopic reports whether s is a legal Kafka topic name: 1 to 249 of
// [A-Za-z0-9._-], and neither "." nor "..".
func ValidTopic(s string) bool { return topicRE.MatchString(s) && s != "." && s != ".." }

// CompileTopicPattern compiles a topic_pattern so that it must match a whole
// topic name, as Java's Pattern.matches does. The syntax is Go's RE2, which
// accepts the Java syntax used for topic patterns except look-around and
// back-references.
func CompileTopicPattern(pattern string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + pattern + `)$`)
}

func validateRange(col collector, attr string, v, lo, hi int64) {
	switch {
	case v < lo:
		col.add(attr, "%d is less than the minimum of %d", v, lo)
	case v > hi:
		col.add(attr, "%d is more than the maximum of %d", v, hi)
	}
}

func validateName(col collector, attr, v string) {
	if !ValidName(v) {
		col.add(attr, "%q is not a valid name: use 1 to 128 letters, digits, '_', '.' or '-', starting with a letter or digit", v)
	}
}

func validateIdentifier(col collector, attr, v string) {
	if !ValidIdentifier(v) {
		col.add(attr, "%q is not a valid identifier: use a letter or '_' followed by letters, digits or '_' (at most 255)", v)
	}
}

// validateRequiredName checks attr, the name v of the object another one
// needs (a pipeline's connection, a fanout schema's pipeline): required
// (what says what it is), and a valid name.
func validateRequiredName(col collector, attr, v, what string) {
	if v == "" {
		col.add(attr, "%s is required", what)
		return
	}
	validateName(col, attr, v)
}

// validateDestination checks the destination catalog and schema of a
// pipeline or a fanout schema.
func validateDestination(col collector, catalog, schema string) {
	validateIdentifier(col, "destination_catalog", catalog)
	validateIdentifier(col, "destination_schema", schema)
}

// Validate returns every problem with p, including those of its tables.
func (p *Pipeline) Validate() Errors {
	col := newCollector()
	validateName(col, "name", p.Name)
	validateRequiredName(col, "connection_name", p.Connection, "a connection name")
	validateDestination(col, p.DestinationCatalog, p.DestinationSchema)
	if validateMaxLen(col, "storage_location", p.StorageLocation, MaxStorageLocationLen) {
		validateStorageLocation(col, "storage_location", p.StorageLocation)
	}
	if p.FlushInterval != "" {
		d, err := time.ParseDuration(p.FlushInterval)
		switch {
		case err != nil:
			col.add("flush_interval", "%q is not a duration; write it like \"5s\", \"500ms\" or \"1m\"", p.FlushInterval)
		case d < 100*time.Millisecond:
			col.add("flush_interval", "%s is shorter than the minimum of 100ms", d)
		}
	}
	// Zero means "unset" on the wire and is replaced by the default in
	// Normalize, which the agent runs before Validate; the provider passes
	// the default for an unset attribute, so an explicit 0 is refused here.
	validateRange(col, "target_file_size_mb", p.TargetFileSizeMB, 1, MaxTargetFileSizeMB)
	validateRange(col, "max_rows_per_file", p.MaxRowsPerFile, 1, MaxRowsPerFileLimit)
	validateRange(col, "auto_compact_min_files", p.AutoCompactMinFiles, MinAutoCompactMinFiles, MaxAutoCompactMinFiles)
	if !validateMaxItems(col, "table", len(p.Tables), MaxTablesPerPipeline) {
		return *col.errs
	}
	p.validateTriggered(col)
	p.validateInitialSchemaTables(col)
	seen := map[string]int{}
	for i := range p.Tables {
		t := &p.Tables[i]
		tc := col.index("table", i)
		t.validate(tc)
		name := strings.ToLower(t.DestinationTable)
		if j, dup := seen[name]; dup && name != "" {
			tc.addInvolving("destination_table", []string{fmt.Sprintf("table[%d].destination_table", j)},
				"table %q is already declared by table[%d]; each destination table belongs to one table block", t.DestinationTable, j)
		} else {
			seen[name] = i
		}
	}
	return *col.errs
}

// ValidateTrigger returns the problem of a trigger on p, when trigger says
// one is set (or not known yet): a change of trigger starts the next run of
// a triggered pipeline (continuous = false), and a continuous pipeline has
// no runs to start. The trigger is the provider's own attribute, which the
// agent never sees; the problem involves continuous, so a caller that does
// not know it yet can drop it.
func (p *Pipeline) ValidateTrigger(trigger bool) Errors {
	if !trigger || !p.IsContinuous() {
		return nil
	}
	col := newCollector()
	col.addInvolving("trigger", []string{"continuous"}, "trigger needs a triggered pipeline: a change of trigger "+
		"starts the next run of a triggered pipeline, but this one is continuous: it reads new records as they "+
		"come, without runs. Set continuous = false, or remove trigger.")
	return *col.errs
}

func (t *Table) validate(col collector) {
	validateIdentifier(col, "destination_table", t.DestinationTable)
	if strings.EqualFold(t.DestinationTable, DirtyRecordsTable) {
		col.add("destination_table", "%q is reserved for the records a pipeline's tables could not decode (ignore_errors); choose another name",
			t.DestinationTable)
	}
	t.ConnectorOptions.KafkaOptions.validate(col.at("connector_options").at("kafka_options"))
	t.TableConfiguration.validate(col.at("table_configuration"))
	t.columns(col)
}

// validate checks metadata_columns: known names, each once. Collisions
// with the table's other columns are the layout's to find.
func (tc *TableConfiguration) validate(col collector) {
	if tc.MetadataColumns != nil && len(tc.MetadataColumns) == 0 {
		col.add("metadata_columns", "metadata_columns is empty; list the metadata columns to add, like [\"topic\", \"offset\"], or remove it")
	}
	seen := map[string]int{}
	for i, m := range tc.MetadataColumns {
		if j, dup := seen[m]; dup {
			col.index("metadata_columns", i).add("", "%q is already listed as metadata_columns[%d]", m, j)
			continue
		}
		seen[m] = i
		if MetadataColumnType(m) == nil {
			validateChoice(col.index("metadata_columns", i), "", m, MetadataColumnNames, "metadata columns")
		}
	}
	tc.validatePartitionBy(col)
}

// validateInitialSchemaTables refuses, under the pipeline collector col, an
// initial_schemas key that names none of p's destination tables: an
// initial schema applies to the table it names, of the table block whose
// transformer declares it.
func (p *Pipeline) validateInitialSchemaTables(col collector) {
	for i := range p.Tables {
		t := &p.Tables[i]
		ko := &t.ConnectorOptions.KafkaOptions
		for _, side := range []struct {
			name string
			tr   *Transformer
		}{{"key_transformer", ko.KeyTransformer}, {"value_transformer", ko.ValueTransformer}} {
			if side.tr == nil || side.tr.JSONOptions == nil {
				continue
			}
			for _, table := range slices.Sorted(maps.Keys(side.tr.JSONOptions.InitialSchemas)) {
				if table != "" && !strings.EqualFold(table, t.DestinationTable) {
					col.index("table", i).at("connector_options.kafka_options."+side.name).addInvolving("json_options.initial_schemas",
						[]string{fmt.Sprintf("table[%d].destination_table", i)},
						"initial schema for table %q: this table block writes %q; key each initial schema by the destination_table it applies to",
						table, t.DestinationTable)
				}
			}
		}
	}
}

func (ko *KafkaOptions) validate(col collector) {
	ko.validateSubscription(col)
	seen := map[string]bool{}
	topics := ko.Topics
	if !validateMaxItems(col, "topics", len(topics), MaxTopics) {
		topics = nil // checked no further
	}
	for i, topic := range topics {
		if !ValidTopic(topic) {
			col.index("topics", i).add("", "%q is not a valid Kafka topic name: use 1 to 249 of A-Z a-z 0-9 . _ -", topic)
		}
		if seen[topic] {
			col.index("topics", i).add("", "topic %q is listed twice", topic)
		}
		seen[topic] = true
	}
	if ko.TopicPattern != "" && validateMaxLen(col, "topic_pattern", ko.TopicPattern, MaxTopicPatternLen) {
		if _, err := CompileTopicPattern(ko.TopicPattern); err != nil {
			col.add("topic_pattern", "%s", regexpProblem(ko.TopicPattern, err))
		}
	}
	if ko.IsolationLevel != "" && !slices.Contains(IsolationLevels, ko.IsolationLevel) {
		col.add("isolation_level", "%q is not one of %s", ko.IsolationLevel, strings.Join(IsolationLevels, ", "))
	}
	ko.validateConsumer(col)
	ko.validateFields(col)
	ko.KeyTransformer.validate(col.at("key_transformer"))
	ko.ValueTransformer.validate(col.at("value_transformer"))
	ko.validateKeySide(col.at("key_transformer"))
}

// validateKeySide refuses, under the key_transformer collector kc, what
// only a record value can be: a change event, or a tombstone.
func (ko *KafkaOptions) validateKeySide(kc collector) {
	tr := ko.KeyTransformer
	if tr.Changelog() {
		kc.add("format", "format %s applies only to value_transformer: a change event is a record's value "+
			"(its key holds the row's primary key; decode it with format JSON)", tr.Format)
	}
	if tr.DeletesOnEmpty() {
		kc.add("json_options.empty_value_as_delete", "empty_value_as_delete applies only to value_transformer: "+
			"it makes a record whose value is null (a tombstone) a delete row")
	}
}

// validateChoice checks that v, the value of attr, is one of values, and
// reports whether it is. A value that is one of them in another case, or
// in Flink's spelling ('-' for '_', "debezium-json"), gets a hint naming
// it; noun names the values in the hint ("formats").
func validateChoice(col collector, attr, v string, values []string, noun string) bool {
	if slices.Contains(values, v) {
		return true
	}
	fold := func(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) }
	hint := ""
	for _, ours := range values {
		switch {
		case fold(ours) != fold(v):
			continue
		case !strings.EqualFold(ours, v):
			hint = fmt.Sprintf("; Flink's %q is %q here", v, ours)
		case ours == strings.ToUpper(ours):
			hint = fmt.Sprintf("; %s are upper case: %q", noun, ours)
		default:
			hint = fmt.Sprintf("; %s are lower case: %q", noun, ours)
		}
	}
	col.add(attr, "%q is not one of %s%s", v, strings.Join(values, ", "), hint)
	return false
}

func (tr *Transformer) validate(col collector) {
	if tr == nil {
		return
	}
	// Options of another format are refused rather than ignored: they say
	// the configuration is not what its author thinks.
	for _, o := range []struct {
		set    bool
		attr   string
		format string
	}{
		{tr.AvroOptions != nil, "avro_options", FormatAvro},
		{tr.ProtobufOptions != nil, "protobuf_options", FormatProtobuf},
		{tr.DebeziumOptions != nil, "debezium_options", FormatDebeziumJSON},
		{tr.CanalOptions != nil, "canal_options", FormatCanalJSON},
	} {
		if o.set && tr.Format != o.format && slices.Contains(Formats, tr.Format) {
			col.add(o.attr, "%s applies only to format %s; this transformer's format is %s", o.attr, o.format, tr.Format)
		}
	}
	if tr.JSONOptions != nil && !jsonish(tr.Format) && slices.Contains(Formats, tr.Format) {
		col.add("json_options", "json_options applies only to formats %s, %s and %s; this transformer's format is %s",
			FormatJSON, FormatDebeziumJSON, FormatCanalJSON, tr.Format)
	}
	switch tr.Format {
	case FormatString:
	case FormatJSON:
		if tr.JSONOptions != nil { // without, the side is one VARIANT column
			tr.JSONOptions.validate(col.at("json_options"))
		}
	case FormatDebeziumJSON, FormatCanalJSON:
		if tr.JSONOptions != nil { // without, the row image is inferred
			// Its row options infer when json_options declare no schema.
			tr.RowOptions().validate(col.at("json_options"))
		}
		tr.validateChangelog(col)
	case FormatAvro:
		if tr.AvroOptions == nil {
			col.add("avro_options", "format AVRO needs avro_options with one of schema, schema_file_path or schema_registry")
			return
		}
		tr.AvroOptions.validate(col.at("avro_options"))
	case FormatProtobuf:
		if tr.ProtobufOptions == nil {
			col.add("protobuf_options", "format PROTOBUF needs protobuf_options with desc_file_path and message_name, or schema_registry")
			return
		}
		tr.ProtobufOptions.validate(col.at("protobuf_options"))
	default:
		validateChoice(col, "format", tr.Format, Formats, "formats")
	}
}

// attrSet is an attribute of a group of which exactly one is set, and
// whether it is.
type attrSet struct {
	attr string
	set  bool
}

// validateExactlyOne checks that exactly one of attrs is set. With several,
// the error lands on the one at index blame among those set and says they
// "are mutually exclusive; " followed by only; with none, it lands on the
// first and lists them all. Both errors involve every attribute of attrs.
func validateExactlyOne(col collector, blame int, only string, attrs ...attrSet) {
	var set, names, all []string
	for _, a := range attrs {
		if a.set {
			set = append(set, a.attr)
		}
		names = append(names, a.attr)
		all = append(all, col.path(a.attr))
	}
	switch {
	case len(set) > 1:
		col.addInvolving(set[min(blame, len(set)-1)], all, "%s are mutually exclusive; %s", strings.Join(set, " and "), only)
	case len(set) == 0:
		col.addInvolving(names[0], all, "one of %s or %s is required", strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
	}
}

func (ao *AvroOptions) validate(col collector) {
	validateExactlyOne(col, 1, "set only one of schema, schema_file_path and schema_registry",
		attrSet{"schema", ao.Schema != ""}, attrSet{"schema_file_path", ao.SchemaFilePath != ""},
		attrSet{"schema_registry", ao.SchemaRegistry != nil})
	ao.SchemaRegistry.validate(col.at("schema_registry"), false)
	validateParseMode(col, ao.ParseMode)
}

func (po *ProtobufOptions) validate(col collector) {
	all := []string{col.path("desc_file_path"), col.path("schema_registry")}
	switch {
	case po.DescFilePath != "" && po.SchemaRegistry != nil:
		col.addInvolving("schema_registry", all, "desc_file_path and schema_registry are mutually exclusive; set only one of them")
	case po.DescFilePath == "" && po.SchemaRegistry == nil:
		col.addInvolving("desc_file_path", all, "one of desc_file_path (with message_name) or schema_registry is required")
	case po.DescFilePath != "" && po.MessageName == "":
		col.addInvolving("message_name", []string{col.path("desc_file_path")},
			"message_name is required with desc_file_path: the message type of the records, e.g. \"com.example.Event\"")
	case po.SchemaRegistry != nil && po.MessageName != "":
		col.addInvolving("message_name", []string{col.path("schema_registry")},
			"message_name goes with desc_file_path; with schema_registry set schema_registry.protobuf_message_name instead")
	}
	validateMaxLen(col, "message_name", po.MessageName, MaxShortStringLen)
	po.SchemaRegistry.validate(col.at("schema_registry"), true)
	if po.RecursiveFieldsMaxDepth != nil {
		validateRange(col, "recursive_fields_max_depth", *po.RecursiveFieldsMaxDepth, MinRecursiveDepth, MaxRecursiveDepth)
	}
	validateParseMode(col, po.ParseMode)
}

func (so *SchemaRegistryOptions) validate(col collector, protobuf bool) {
	if so == nil {
		return
	}
	cc := col.at("confluent_options")
	switch s := so.ConfluentOptions.Subject; {
	case s == "":
		cc.add("subject", "the subject is required, e.g. \"orders-value\"")
	case !validateMaxLen(cc, "subject", s, MaxShortStringLen):
	case strings.ContainsAny(s, "/\\\x00") || strings.TrimSpace(s) != s:
		cc.add("subject", "%q is not a usable subject name: no '/', '\\', NUL or surrounding spaces", s)
	}
	if so.ConnectionName != "" {
		validateName(col, "connection_name", so.ConnectionName)
	}
	if so.ProtobufMessageName != "" && !protobuf {
		col.add("protobuf_message_name", "protobuf_message_name applies only to protobuf_options.schema_registry")
	}
}

func validateParseMode(col collector, mode string) {
	if mode != "" {
		validateChoice(col, "parse_mode", mode, ParseModes, "modes")
	}
}

func (jo *JSONOptions) validate(col collector) {
	validateExactlyOne(col, 0, "set only one of schema, schema_file_path (a fixed schema) and schema_evolution_mode "+
		"(a schema inferred from the records)",
		attrSet{"schema", jo.Schema != ""}, attrSet{"schema_file_path", jo.SchemaFilePath != ""},
		attrSet{"schema_evolution_mode", jo.SchemaEvolutionMode != ""})
	if m := jo.SchemaEvolutionMode; m != "" {
		if !knownSchemaEvolutionMode(m) {
			hint := ""
			if s := suggestSchemaEvolutionMode(m); s != "" {
				hint = fmt.Sprintf("; did you mean %q?", s)
			}
			col.add("schema_evolution_mode", "%q is not one of %s, nor one of Auto Loader's names %s%s",
				m, strings.Join(SchemaEvolutionModes, ", "), strings.Join(schemaEvolutionAliasNames(), ", "), hint)
		}
	}
	if jo.SchemaHints != "" && jo.SchemaEvolutionMode != "" {
		jo.validateHints(col)
	}
	if jo.InferRecordsPerPartition != nil {
		validateRange(col, "infer_records_per_partition", *jo.InferRecordsPerPartition, 0, MaxInferRecordsPerPartition)
	}
	// The options of inference mean nothing with a fixed schema: refuse
	// them rather than ignore them.
	if jo.SchemaEvolutionMode == "" {
		for _, o := range []struct {
			attr string
			set  bool
		}{
			{"schema_hints", jo.SchemaHints != ""},
			{"infer_records_per_partition", jo.InferRecordsPerPartition != nil},
			{"string_type_inference", jo.StringTypeInference != nil},
			{"primitive_as_string", jo.PrimitiveAsString != nil},
			{"rescued_data_column", jo.RescuedDataColumn != ""},
			{"flatten_nested_columns", jo.FlattenNestedColumns != nil && *jo.FlattenNestedColumns},
			{"initial_schemas", len(jo.InitialSchemas) > 0},
		} {
			if o.set {
				col.addInvolving(o.attr, []string{col.path("schema_evolution_mode")}, "%s applies only to a schema inferred from the records: "+
					"it requires schema_evolution_mode (with schema or schema_file_path, declare the columns' types there)", o.attr)
			}
		}
	}
	jo.validateInitialSchemas(col)
	jo.validateParser(col)
}

// validateInitialSchemas checks that each initial schema is Spark DDL
// declaring at least one column, for a named table. Whether the names
// are tables of the pipeline is checked with the pipeline's tables.
func (jo *JSONOptions) validateInitialSchemas(col collector) {
	if jo.InitialSchemas != nil && len(jo.InitialSchemas) == 0 {
		col.add("initial_schemas", "initial_schemas is empty; give the columns a table starts with by table, like { orders = \"id BIGINT\" }, or remove it")
		return
	}
	if !validateMaxItems(col, "initial_schemas", len(jo.InitialSchemas), MaxTablesPerPipeline) {
		return
	}
	for _, table := range slices.Sorted(maps.Keys(jo.InitialSchemas)) {
		ddl := jo.InitialSchemas[table]
		if table == "" {
			col.add("initial_schemas", "a table name is required as the key of each initial schema")
			continue
		}
		switch fields, err := schema.ParseDDL(ddl); {
		case err != nil:
			col.add("initial_schemas", "table %q: the initial schema is not valid Spark DDL: %v", table, err)
		case len(fields) == 0:
			col.add("initial_schemas", "table %q: the initial schema declares no columns", table)
		case schema.LeafColumns(fields) > MaxLeafColumns:
			col.add("initial_schemas", "table %q: the initial schema has %d leaf columns, more than a table's %d",
				table, schema.LeafColumns(fields), MaxLeafColumns)
		}
	}
}

// validateHints parses the schema hints of jo, which infers its schema, and
// refuses a hint on a column the table reserves: the rescue column or
// _corrupt_record.
func (jo *JSONOptions) validateHints(col collector) {
	hints, err := schema.ParseHints(jo.SchemaHints)
	if err != nil {
		col.add("schema_hints", "the schema hints do not parse: %v", err)
		return
	}
	if len(hints) > MaxLeafColumns {
		col.add("schema_hints", "%d hints, more than a table's %d leaf columns", len(hints), MaxLeafColumns)
		return
	}
	rescue := jo.RescueColumn()
	for _, h := range hints {
		switch name := h.Path[0]; {
		case strings.EqualFold(name, CorruptRecordColumn):
			col.add("schema_hints", "the hint %s names %q, which is reserved for records that fail to decode", h, name)
		case rescue != "" && strings.EqualFold(name, rescue):
			col.addInvolving("schema_hints", []string{col.path("rescued_data_column")},
				"the hint %s names %q, the rescued data column; set rescued_data_column to another name to have such a column", h, name)
		}
	}
}
