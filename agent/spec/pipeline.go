package spec

import "time"

// Defaults applied by [Pipeline.Normalize]; the provider shows the same values
// as attribute defaults.
const (
	DefaultStartingOffset   = StartingOffsetLatest
	DefaultIsolationLevel   = IsolationReadCommitted
	DefaultFlushInterval    = "5s"
	DefaultTargetFileSizeMB = 128
	DefaultMaxRowsPerFile   = 1_000_000
	// DefaultAutoCompactMinFiles is Delta's default of
	// spark.databricks.delta.autoCompact.minNumFiles.
	DefaultAutoCompactMinFiles = 50
)

// Upper bounds of the file size settings.
const (
	// MaxTargetFileSizeMB is 1 TiB.
	MaxTargetFileSizeMB = 1 << 20
	// MaxRowsPerFileLimit is 2^40 rows.
	MaxRowsPerFileLimit = 1 << 40
	// MinAutoCompactMinFiles and MaxAutoCompactMinFiles bound
	// auto_compact_min_files: compacting fewer than two files gains
	// nothing.
	MinAutoCompactMinFiles = 2
	MaxAutoCompactMinFiles = 100_000
)

// Starting offsets: where a partition with no committed offset in the table's
// log starts reading.
const (
	StartingOffsetLatest   = "latest"
	StartingOffsetEarliest = "earliest"
)

// StartingOffsets lists the accepted starting_offset values.
var StartingOffsets = []string{StartingOffsetLatest, StartingOffsetEarliest, StartingOffsetTimestamp, StartingOffsetSpecific, StartingOffsetGroup}

// Isolation levels: which records of transactional producers a table reads
// (the Kafka consumer's isolation.level).
const (
	// IsolationReadCommitted reads only records of committed transactions
	// (and of non-transactional producers), up to the last stable offset.
	IsolationReadCommitted = "read_committed"
	// IsolationReadUncommitted reads every record up to the high watermark,
	// including records of open and aborted transactions.
	IsolationReadUncommitted = "read_uncommitted"
)

// IsolationLevels lists the accepted isolation_level values.
var IsolationLevels = []string{IsolationReadCommitted, IsolationReadUncommitted}

// Transformer formats: what a key or value is decoded as.
const (
	FormatString   = "STRING"
	FormatJSON     = "JSON"
	FormatAvro     = "AVRO"
	FormatProtobuf = "PROTOBUF"
	// FormatDebeziumJSON is a Debezium change event in JSON: each
	// event becomes a row with _op, _source and its row image.
	FormatDebeziumJSON = "DEBEZIUM_JSON"
	// FormatCanalJSON is a Canal change event in JSON: each row of
	// its data array becomes a row with _op, _source and the row image.
	FormatCanalJSON = "CANAL_JSON"
)

// Formats lists the accepted transformer formats.
var Formats = []string{FormatString, FormatJSON, FormatAvro, FormatProtobuf, FormatDebeziumJSON, FormatCanalJSON}

// Pipeline is one ingestion pipeline: a set of destination tables fed from
// one connection, written under <root>/<catalog>/<schema>/<table>/, where
// root is StorageLocation or, by default, the agent's warehouse.
type Pipeline struct {
	// Name identifies the pipeline on the agent; see [ValidName].
	Name string `json:"name"`
	// Connection is the Name of the [Connection] the pipeline reads from.
	// Its attribute is connection_name because Terraform reserves
	// `connection` on every resource.
	Connection string `json:"connection_name"`
	// DestinationCatalog and DestinationSchema are the first two segments of
	// every destination table name.
	DestinationCatalog string `json:"destination_catalog"`
	DestinationSchema  string `json:"destination_schema"`
	// StorageLocation puts the pipeline's tables under another root than the
	// agent's warehouse: an absolute local path or a URL of one of
	// [LocationForms], without query parameters or credentials. The agent
	// accepts it only under a root it allows (see [LocationUnder]), and takes
	// the object store's options from that root and its credentials from its
	// own environment. Empty means the agent's warehouse.
	StorageLocation string `json:"storage_location,omitempty"`
	// Continuous keeps the pipeline reading new records; false makes a
	// triggered run that reads up to the end offsets seen at start, commits
	// and waits in state IDLE for the next run. Nil means true.
	Continuous *bool `json:"continuous,omitempty"`
	// FlushInterval is the longest time a record waits in a buffer before it
	// is written and committed, as a Go duration ("5s"); the flush fires even
	// when no new records arrive.
	FlushInterval string `json:"flush_interval,omitempty"`
	// TargetFileSizeMB closes a Parquet file once its data reaches this many
	// mebibytes.
	TargetFileSizeMB int64 `json:"target_file_size_mb,omitempty"`
	// MaxRowsPerFile closes a Parquet file once it holds this many rows.
	MaxRowsPerFile int64 `json:"max_rows_per_file,omitempty"`
	// AutoCompact has the agent compact the small files of the
	// pipeline's tables (those of its fanout schemas too) into files near
	// the target size, as Delta's auto compaction does. Nil means true.
	AutoCompact *bool `json:"auto_compact,omitempty"`
	// AutoCompactMinFiles is how many small files a table holds before a
	// compaction starts.
	AutoCompactMinFiles int64 `json:"auto_compact_min_files,omitempty"`
	// AutoVacuum has the agent delete the files its tables' logs removed
	// longer than delta.deletedFileRetentionDuration ago (7 days unless
	// the table says otherwise), as Delta's VACUUM does. Nil means true.
	AutoVacuum *bool `json:"auto_vacuum,omitempty"`
	// Tables lists the destination tables; none for a pipeline that only
	// carries fanout schemas.
	Tables []Table `json:"table"`
}

// Table is one destination table and the Kafka source that feeds it, shaped
// like a Lakeflow Connect table object.
type Table struct {
	// DestinationTable is the last segment of the table name.
	DestinationTable   string             `json:"destination_table"`
	ConnectorOptions   ConnectorOptions   `json:"connector_options"`
	TableConfiguration TableConfiguration `json:"table_configuration"`
}

// ConnectorOptions holds the source options of a table.
type ConnectorOptions struct {
	KafkaOptions KafkaOptions `json:"kafka_options"`
}

// KafkaOptions says which topics feed a table and how keys and values are
// decoded.
type KafkaOptions struct {
	// Topics lists topic names; exactly one of Topics, TopicPattern
	// and Assign is set.
	Topics []string `json:"topics,omitempty"`
	// TopicPattern is a regular expression matched against whole topic
	// names; topics created later that match are picked up.
	TopicPattern string `json:"topic_pattern,omitempty"`
	// Assign lists the partitions to read by topic (Spark's assign):
	// {"topicA": [0, 1]}. Partitions added later are not read.
	Assign map[string][]int `json:"assign,omitempty"`
	// StartingOffset is one of [StartingOffsets]:
	// where a partition starts when the table's log has no offset for it.
	StartingOffset string `json:"starting_offset,omitempty"`
	// StartingTimestamp, with StartingOffset "timestamp", is the time the
	// partitions start at: milliseconds since the epoch or RFC 3339. Each
	// partition starts at its first record at or after it (the end when
	// there is none). Exclusive with StartingOffsetsByTimestamp.
	StartingTimestamp string `json:"starting_timestamp,omitempty"`
	// StartingOffsets, with StartingOffset "specific", gives the offset of
	// each partition by topic and partition number ("0"): -2 earliest, -1
	// latest, as Spark's startingOffsets JSON. Partitions it leaves out
	// start at AutoOffsetReset.
	StartingOffsets map[string]map[string]int64 `json:"starting_offsets,omitempty"`
	// StartingOffsetsByTimestamp, with StartingOffset "timestamp", gives a
	// timestamp (ms since the epoch) per topic and partition; partitions
	// it leaves out start at AutoOffsetReset.
	StartingOffsetsByTimestamp map[string]map[string]int64 `json:"starting_offsets_by_timestamp,omitempty"`
	// AutoOffsetReset is where a partition starts that StartingOffset
	// "group" finds no committed offset for, or that "specific" and
	// "timestamp" leave out: one of [AutoOffsetResets]; empty means
	// [DefaultAutoOffsetReset].
	AutoOffsetReset string `json:"auto_offset_reset,omitempty"`

	// EndingOffset is where a triggered run (continuous = false) ends, one
	// of [EndingOffsets]; empty means latest. The ends are
	// fixed when a run starts.
	EndingOffset string `json:"ending_offset,omitempty"`
	// EndingOffsets, with EndingOffset "specific", gives the end offset of
	// each partition by topic and partition number: -1 latest. Partitions
	// it leaves out end at latest.
	EndingOffsets map[string]map[string]int64 `json:"ending_offsets,omitempty"`
	// EndingTimestamp, with EndingOffset "timestamp", ends every partition
	// before its first record at or after this time (ms since the epoch or
	// RFC 3339). Exclusive with EndingOffsetsByTimestamp.
	EndingTimestamp string `json:"ending_timestamp,omitempty"`
	// EndingOffsetsByTimestamp, with EndingOffset "timestamp", gives an
	// end timestamp (ms since the epoch) per topic and partition.
	EndingOffsetsByTimestamp map[string]map[string]int64 `json:"ending_offsets_by_timestamp,omitempty"`

	// MaxOffsetsPerTrigger caps the offsets one commit of the table covers,
	// split across partitions in proportion to their lag; nil is
	// no cap.
	MaxOffsetsPerTrigger *int64 `json:"max_offsets_per_trigger,omitempty"`
	// MinOffsetsPerTrigger holds a commit back until this many offsets are
	// available or MaxTriggerDelay passed since the last commit.
	MinOffsetsPerTrigger *int64 `json:"min_offsets_per_trigger,omitempty"`
	// MaxTriggerDelay is the longest MinOffsetsPerTrigger holds a commit
	// back, a duration; empty means [DefaultMaxTriggerDelay].
	MaxTriggerDelay string `json:"max_trigger_delay,omitempty"`

	// MinPartitions asks for at least this many ranges decoded in
	// parallel, splitting the backlog of the partitions with the most lag;
	// nil is one range per partition.
	MinPartitions *int64 `json:"min_partitions,omitempty"`
	// MaxRecordsPerPartition splits a partition's backlog into ranges of
	// at most this many offsets, decoded in parallel and committed in
	// order.
	MaxRecordsPerPartition *int64 `json:"max_records_per_partition,omitempty"`

	// FailOnDataLoss fails the table when records it has not read
	// are gone (retention deleted them, or the topic was deleted and
	// re-created); false goes on from the earliest offset and records the
	// gap. Nil means true.
	FailOnDataLoss *bool `json:"fail_on_data_loss,omitempty"`

	// GroupID is the Kafka consumer group the table's committed offsets
	// are mirrored to and that StartingOffset "group" reads;
	// exclusive with GroupIDPrefix. Empty: GroupIDPrefix (or
	// [DefaultGroupIDPrefix]) followed by "<pipeline>.<catalog>.<schema>.<table>".
	GroupID string `json:"group_id,omitempty"`
	// GroupIDPrefix prefixes the generated group id.
	GroupIDPrefix string `json:"group_id_prefix,omitempty"`
	// CheckDuplicatedGroupID refuses to start the table while its group
	// has members: another consumer uses it. Nil means false.
	CheckDuplicatedGroupID *bool `json:"check_duplicated_group_id,omitempty"`

	// PartitionDiscoveryInterval is how often new partitions, and new
	// topics matching TopicPattern, are looked for, a duration;
	// zero or negative turns discovery off. Empty means
	// [DefaultPartitionDiscoveryInterval].
	PartitionDiscoveryInterval string `json:"partition_discovery_interval,omitempty"`
	// BytesEstimateWindowLength is how far back the record sizes that
	// turn a lag in records into bytes are taken from, a duration, as
	// Spark's bytesEstimateWindowLength. Empty means
	// [DefaultBytesEstimateWindowLength].
	BytesEstimateWindowLength string `json:"bytes_estimate_window_length,omitempty"`

	// ClientProperties are Kafka consumer properties by their Kafka name
	// only those in [ClientProperties].
	ClientProperties map[string]string `json:"client_properties,omitempty"`
	// IsolationLevel is "read_committed" (default) or "read_uncommitted":
	// whether records of aborted and still open transactions are read.
	// Transaction markers never become rows at either level.
	IsolationLevel string `json:"isolation_level,omitempty"`
	// KeyFieldsPrefix and ValueFieldsPrefix prefix the names of the
	// columns parsed from the key and from the value; neither may
	// be a prefix of the other. They never apply to the single key or
	// value column of an unparsed side.
	KeyFieldsPrefix   string `json:"key_fields_prefix,omitempty"`
	ValueFieldsPrefix string `json:"value_fields_prefix,omitempty"`
	// DuplicateFieldStrategy says what happens when a key column and a
	// value column have the same name: one of
	// [DuplicateFieldStrategies]; empty means [DuplicateFieldException].
	DuplicateFieldStrategy string `json:"duplicate_field_strategy,omitempty"`
	// IgnoreErrors keeps a table going past records that do not decode:
	// each is counted, left out of the table and kept in the
	// pipeline's [DirtyRecordsTable]. Nil means false.
	IgnoreErrors *bool `json:"ignore_errors,omitempty"`
	// ErrorToleranceMaxCount, with IgnoreErrors, is how many bad records
	// the table takes before it fails; -1 is no limit. Nil means
	// [DefaultErrorToleranceMaxCount].
	ErrorToleranceMaxCount *int64 `json:"error_tolerance_max_count,omitempty"`

	// KeyTransformer and ValueTransformer decode the record key and value;
	// nil keeps the column as BINARY.
	KeyTransformer   *Transformer `json:"key_transformer,omitempty"`
	ValueTransformer *Transformer `json:"value_transformer,omitempty"`
}

// Transformer decodes a record key or value.
type Transformer struct {
	// Format is one of [Formats].
	Format string `json:"format"`
	// JSONOptions applies to format JSON.
	JSONOptions *JSONOptions `json:"json_options,omitempty"`
	// AvroOptions applies to, and is required by, format AVRO.
	AvroOptions *AvroOptions `json:"avro_options,omitempty"`
	// ProtobufOptions applies to, and is required by, format PROTOBUF.
	ProtobufOptions *ProtobufOptions `json:"protobuf_options,omitempty"`
	// DebeziumOptions applies to format DEBEZIUM_JSON.
	DebeziumOptions *DebeziumOptions `json:"debezium_options,omitempty"`
	// CanalOptions applies to format CANAL_JSON.
	CanalOptions *CanalOptions `json:"canal_options,omitempty"`
}

// DebeziumOptions configures the DEBEZIUM_JSON transformer.
type DebeziumOptions struct {
	// SchemaInclude says each event carries its Connect schema beside its
	// payload ({"schema": ..., "payload": ...}, Kafka Connect's
	// JsonConverter with schemas.enable=true); the row image's columns
	// are then typed by that schema instead of inferred. The converter
	// wraps the record's key the same way: a key parsed into columns (a
	// JSON key transformer with json_options) is then read from its
	// payload, and a key that is not wrapped is read as it is; its
	// Connect schema is not read (json_options type the key's columns).
	// A key kept whole (BINARY, STRING, or JSON without json_options)
	// keeps the wrapper. Nil means false.
	SchemaInclude *bool `json:"schema_include,omitempty"`
	// DistributedTables says one source table's events are spread over
	// several partitions, as Flink's distributed-tables. The agent always
	// infers and evolves one schema per table from the records of all the
	// partitions it reads, which is what Flink does with it on, so either
	// value reads the same. Nil means false.
	DistributedTables *bool `json:"distributed_tables,omitempty"`
	// MergeShardedTables says the tables of one name in several databases
	// are shards of one table: a fanout schema's default route is the
	// table name alone instead of <db>_<table>. Nil means false, except in
	// a spec an earlier agent stored, where distributed_tables had this
	// meaning (see [Transformer.MergesShards]).
	MergeShardedTables *bool `json:"merge_sharded_tables,omitempty"`
}

// CanalOptions configures the CANAL_JSON transformer.
type CanalOptions struct {
	// DatabaseInclude and TableInclude are regular expressions (RE2)
	// matched against whole database and table names: events of other
	// tables are skipped, their offsets still committed. Empty matches all.
	DatabaseInclude string `json:"database_include,omitempty"`
	TableInclude    string `json:"table_include,omitempty"`
	// InferSchemaStrategy says how the row image is typed: one of
	// [InferSchemaStrategies]; empty means [InferSchemaAuto].
	InferSchemaStrategy string `json:"infer_schema_strategy,omitempty"`
	// Tinyint1AsBoolean maps MySQL tinyint(1) to BOOLEAN. Nil means true.
	Tinyint1AsBoolean *bool `json:"tinyint1_as_boolean,omitempty"`
	// MySQLTimestampAsNTZ maps MySQL timestamp to TIMESTAMP_NTZ, as its
	// values carry no zone in Canal events; false maps it to TIMESTAMP
	// read as UTC. Nil means true.
	MySQLTimestampAsNTZ *bool `json:"mysql_timestamp_as_ntz,omitempty"`
	// DistributedTables and MergeShardedTables are as in
	// [DebeziumOptions].
	DistributedTables  *bool `json:"distributed_tables,omitempty"`
	MergeShardedTables *bool `json:"merge_sharded_tables,omitempty"`
}

// Values of canal_options.infer_schema_strategy.
const (
	// InferSchemaAuto infers the row image's types from its values, as
	// json_options configures.
	InferSchemaAuto = "AUTO"
	// InferSchemaSQLType types the row image by the event's sqlType
	// (java.sql.Types codes).
	InferSchemaSQLType = "SQL_TYPE"
	// InferSchemaMySQLType types the row image by the event's mysqlType.
	InferSchemaMySQLType = "MYSQL_TYPE"
)

// InferSchemaStrategies lists the accepted infer_schema_strategy values.
var InferSchemaStrategies = []string{InferSchemaAuto, InferSchemaSQLType, InferSchemaMySQLType}

// Values of kafka_options.duplicate_field_strategy.
const (
	// DuplicateFieldException refuses a key column and a value column of
	// the same name.
	DuplicateFieldException = "EXCEPTION"
	// DuplicateFieldPreferKey keeps the key's column and drops the value's.
	DuplicateFieldPreferKey = "PREFER_KEY"
	// DuplicateFieldPreferValue keeps the value's column and drops the key's.
	DuplicateFieldPreferValue = "PREFER_VALUE"
)

// DuplicateFieldStrategies lists the accepted duplicate_field_strategy values.
var DuplicateFieldStrategies = []string{DuplicateFieldException, DuplicateFieldPreferKey, DuplicateFieldPreferValue}

// DefaultErrorToleranceMaxCount is the bad records a table with
// ignore_errors takes before it fails: no limit, as Flink's default.
const DefaultErrorToleranceMaxCount = -1

// DirtyRecordsTable is the table of a pipeline's destination schema that
// keeps the records its tables could not decode with ignore_errors on.
const DirtyRecordsTable = "_dirty_records"

// JSONOptions configures the JSON transformer.
type JSONOptions struct {
	// Schema is an inline Spark DDL schema ("id BIGINT, name STRING");
	// exclusive with SchemaFilePath.
	Schema string `json:"schema,omitempty"`
	// SchemaFilePath names a .ddl file. The provider reads it, relative to
	// the Terraform module, and sends its text as SchemaFileContent; the
	// agent never reads the path itself.
	SchemaFilePath    string `json:"schema_file_path,omitempty"`
	SchemaFileContent string `json:"schema_file_content,omitempty"`

	// SchemaEvolutionMode turns on schema inference: one of
	// [SchemaEvolutionModes], or an Auto Loader alias of one
	// ([SchemaEvolutionAliases]); exclusive with Schema and
	// SchemaFilePath.
	SchemaEvolutionMode string `json:"schema_evolution_mode,omitempty"`
	// SchemaHints fixes the types of some columns of an inferred schema
	// (as Flink's infer-schema.fixed-types): Spark DDL where a name may
	// be a dotted path ("user.dob DATE"), with element, key and value
	// naming the parts of arrays and maps. Requires SchemaEvolutionMode.
	SchemaHints string `json:"schema_hints,omitempty"`
	// InferRecordsPerPartition is how many of the latest records of each
	// partition the first schema is inferred from, as Flink's
	// scan.max.pre.fetch.records; 0 infers nothing before the first
	// records are read (the columns start as initial_schemas and
	// schema_hints declare them). Nil means
	// [DefaultInferRecordsPerPartition].
	InferRecordsPerPartition *int64 `json:"infer_records_per_partition,omitempty"`
	// StringTypeInference infers DATE and TIMESTAMP columns from ISO 8601
	// strings (Flink's JSON string-type-inference); nil means true.
	StringTypeInference *bool `json:"string_type_inference,omitempty"`
	// PrimitiveAsString infers every number and boolean as STRING (Flink's
	// JSON primitive-as-string); nil means false.
	PrimitiveAsString *bool `json:"primitive_as_string,omitempty"`
	// RescuedDataColumn names the STRING column that holds, as a JSON
	// object, the fields of a record that do not fit the inferred schema.
	// Empty means [RescuedDataColumn] in every mode but
	// [SchemaEvolutionNone], which rescues nothing unless it is set.
	RescuedDataColumn string `json:"rescued_data_column,omitempty"`

	// The parser options of Spark's JSON source, with Spark's defaults
	// when nil or empty.
	//
	// AllowSingleQuotes accepts 'single-quoted' strings and names (nil
	// means true).
	AllowSingleQuotes *bool `json:"allow_single_quotes,omitempty"`
	// AllowNonNumericNumbers accepts the unquoted numbers NaN, Infinity,
	// +Infinity and -Infinity (nil means true).
	AllowNonNumericNumbers *bool `json:"allow_non_numeric_numbers,omitempty"`
	// TimestampFormat is a Spark datetime pattern for TIMESTAMP and
	// TIMESTAMP_NTZ strings; empty means Spark's lenient ISO 8601 parsing.
	TimestampFormat string `json:"timestamp_format,omitempty"`
	// DateFormat is a Spark datetime pattern for DATE strings; empty means
	// Spark's lenient ISO 8601 parsing.
	DateFormat string `json:"date_format,omitempty"`

	// FlattenNestedColumns makes each nested field of an inferred object
	// a top-level column named by its dotted path ("user.name") instead of
	// a STRUCT column. Nil means false.
	FlattenNestedColumns *bool `json:"flatten_nested_columns,omitempty"`
	// EmptyValueAsDelete makes a record with a null value (a tombstone) a
	// row with _op "d" and its key columns, instead of a row of nulls or
	// no row. Nil means false.
	EmptyValueAsDelete *bool `json:"empty_value_as_delete,omitempty"`
	// InitialSchemas gives, per destination table name, Spark DDL of the
	// columns a table starts with before inference adds any.
	InitialSchemas map[string]string `json:"initial_schemas,omitempty"`
}

// Names of json_options.timestamp_format beside Spark patterns.
const (
	// TimestampFormatSQL is "yyyy-MM-dd HH:mm:ss" with optional fraction.
	TimestampFormatSQL = "SQL"
	// TimestampFormatISO8601 is the lenient ISO 8601 parsing of an empty
	// timestamp_format.
	TimestampFormatISO8601 = "ISO-8601"
)

// Schema evolution modes of json_options.schema_evolution_mode, as
// Lakeflow's API spells them.
const (
	// SchemaEvolutionAddNewColumns adds a nullable column at the end of the
	// schema for every new field, in the commit of the rows that need it;
	// a value whose type does not fit is rescued.
	SchemaEvolutionAddNewColumns = "ADD_NEW_COLUMNS"
	// SchemaEvolutionAddNewColumnsWithTypeWidening also widens a column's
	// type where Delta's type widening allows it.
	SchemaEvolutionAddNewColumnsWithTypeWidening = "ADD_NEW_COLUMNS_WITH_TYPE_WIDENING"
	// SchemaEvolutionRescue never changes the schema: new and mismatched
	// fields are rescued.
	SchemaEvolutionRescue = "RESCUE"
	// SchemaEvolutionFailOnNewColumns stops the table FAILED, naming the
	// new columns, without committing the batch that holds them.
	SchemaEvolutionFailOnNewColumns = "FAIL_ON_NEW_COLUMNS"
	// SchemaEvolutionNone ignores new fields; mismatched values are
	// rescued only when RescuedDataColumn is set.
	SchemaEvolutionNone = "NONE"
)

// SchemaEvolutionModes lists the accepted schema_evolution_mode values.
var SchemaEvolutionModes = []string{
	SchemaEvolutionAddNewColumns, SchemaEvolutionAddNewColumnsWithTypeWidening,
	SchemaEvolutionRescue, SchemaEvolutionFailOnNewColumns, SchemaEvolutionNone,
}

// SchemaEvolutionAliases maps Auto Loader's camelCase mode names to the
// modes they stand for.
var SchemaEvolutionAliases = map[string]string{
	"addNewColumns":    SchemaEvolutionAddNewColumns,
	"rescue":           SchemaEvolutionRescue,
	"failOnNewColumns": SchemaEvolutionFailOnNewColumns,
	"none":             SchemaEvolutionNone,
}

// RescuedDataColumn is the default name of the column that holds the
// fields a record's inferred schema cannot take.
const RescuedDataColumn = "_rescued_data"

// DefaultInferRecordsPerPartition is how many of the latest records of
// each partition the first inferred schema is built from, as Flink's
// scan.max.pre.fetch.records.
const DefaultInferRecordsPerPartition = 50

// TableConfiguration holds options of the destination table itself.
type TableConfiguration struct {
	// SourceMetadataColumn names a struct column holding each record's topic,
	// partition, offset, timestamp, timestampType and headers.
	SourceMetadataColumn string `json:"source_metadata_column,omitempty"`
	// MetadataColumns are record metadata as top-level columns (as
	// Flink's metadata.list), each one of [MetadataColumnNames], in the
	// order given, after the source metadata column.
	MetadataColumns []string `json:"metadata_columns,omitempty"`
	// PartitionBy lists the table's partition columns, each a top-level
	// column or date(<timestamp column>) / hour(<timestamp column>) with
	// an optional AS <name> (see [ParsePartitionColumn]).
	PartitionBy []string `json:"partition_by,omitempty"`
}

// Names of table_configuration.metadata_columns, each the column's name.
const (
	MetaTopic         = "topic"
	MetaPartition     = "partition"
	MetaOffset        = "offset"
	MetaTimestamp     = "timestamp"
	MetaTimestampType = "timestamp_type"
	MetaHeaders       = "headers"
	MetaLeaderEpoch   = "leader_epoch"
	MetaRawKey        = "raw_key"
	MetaRawValue      = "raw_value"
)

// MetadataColumnNames lists the accepted metadata_columns values.
var MetadataColumnNames = []string{MetaTopic, MetaPartition, MetaOffset, MetaTimestamp, MetaTimestampType,
	MetaHeaders, MetaLeaderEpoch, MetaRawKey, MetaRawValue}

// ReadCommitted reports whether the table reads only committed records: an
// unset IsolationLevel means read_committed.
func (ko *KafkaOptions) ReadCommitted() bool { return ko.IsolationLevel != IsolationReadUncommitted }

// Compacts reports whether the agent compacts the pipeline's tables (the
// default).
func (p *Pipeline) Compacts() bool { return p.AutoCompact == nil || *p.AutoCompact }

// Vacuums reports whether the agent vacuums the pipeline's tables (the
// default).
func (p *Pipeline) Vacuums() bool { return p.AutoVacuum == nil || *p.AutoVacuum }

// IsContinuous reports whether the pipeline keeps reading (the default).
func (p *Pipeline) IsContinuous() bool { return p.Continuous == nil || *p.Continuous }

// FlushEvery returns FlushInterval parsed, or the default when unset or
// invalid (Validate reports an invalid one).
func (p *Pipeline) FlushEvery() time.Duration {
	d, err := time.ParseDuration(p.FlushInterval)
	if err != nil || d <= 0 {
		d, _ = time.ParseDuration(DefaultFlushInterval)
	}
	return d
}

// Normalize fills every unset optional attribute with its default, so the
// agent stores and returns the same values Terraform plans.
func (p *Pipeline) Normalize() {
	if p.Continuous == nil {
		t := true
		p.Continuous = &t
	}
	if p.FlushInterval == "" {
		p.FlushInterval = DefaultFlushInterval
	}
	if p.TargetFileSizeMB == 0 {
		p.TargetFileSizeMB = DefaultTargetFileSizeMB
	}
	if p.MaxRowsPerFile == 0 {
		p.MaxRowsPerFile = DefaultMaxRowsPerFile
	}
	if p.AutoCompact == nil {
		t := true
		p.AutoCompact = &t
	}
	if p.AutoCompactMinFiles == 0 {
		p.AutoCompactMinFiles = DefaultAutoCompactMinFiles
	}
	if p.AutoVacuum == nil {
		t := true
		p.AutoVacuum = &t
	}
	for i := range p.Tables {
		ko := &p.Tables[i].ConnectorOptions.KafkaOptions
		ko.normalize()
		if !p.IsContinuous() && ko.EndingOffset == "" {
			// Only a triggered run ends; a continuous pipeline refuses
			// ending_offset.
			ko.EndingOffset = DefaultEndingOffset
		}
	}
}

// normalize fills the unset Kafka options of a table or fanout schema with
// their defaults.
func (ko *KafkaOptions) normalize() {
	if ko.StartingOffset == "" {
		ko.StartingOffset = DefaultStartingOffset
	}
	if ko.IsolationLevel == "" {
		ko.IsolationLevel = DefaultIsolationLevel
	}
	ko.normalizeConsumer()
	ko.normalizeFields()
	for _, tr := range []*Transformer{ko.KeyTransformer, ko.ValueTransformer} {
		if tr == nil {
			continue
		}
		tr.normalizeChangelog()
		if tr.JSONOptions != nil {
			tr.JSONOptions.normalizeInference()
		}
	}
}

// QualifiedName returns "<catalog>.<schema>.<table>" for table t of p.
func (p *Pipeline) QualifiedName(t *Table) string {
	return p.DestinationCatalog + "." + p.DestinationSchema + "." + t.DestinationTable
}
