package provider

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// defaultPipelineTimeout bounds create and update, which wait for the agent
// to report the pipeline RUNNING, IDLE or FAILED.
const defaultPipelineTimeout = defaultTimeoutMinutes * time.Minute

// defaultTimeoutMinutes is defaultPipelineTimeout in minutes, for the docs.
const defaultTimeoutMinutes = 5

// runTimeoutsBlock is the timeouts block of a kind of object (as
// "pipeline") whose create and update wait for it to run.
func runTimeoutsBlock(ctx context.Context, kind string) schema.Block {
	return timeouts.Block(ctx, timeouts.Opts{
		Create:            true,
		Update:            true,
		CreateDescription: fmt.Sprintf("How long create waits for the agent to report the %s `RUNNING`, `IDLE` or `FAILED`, as a duration like `\"10m\"`. Defaults to `\"%dm\"`.", kind, defaultTimeoutMinutes),
		UpdateDescription: fmt.Sprintf("Same as `create`, for updates. Defaults to `\"%dm\"`.", defaultTimeoutMinutes),
	})
}

// quoted renders values as a Markdown list of code spans: `a`, `b`.
func quoted(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = "`" + v + "`"
	}
	return strings.Join(q, ", ")
}

// storageLocationForms lists the URL forms of storage_location.
func storageLocationForms() []string {
	forms := make([]string, len(spec.LocationForms))
	for i, f := range spec.LocationForms {
		forms[i] = f.Form
	}
	return forms
}

// pipelineResourceSchema is the schema of tributary_pipeline, version 0.
//
// The computed state and table_status attributes of earlier releases were
// removed without a new version: for a stored state of the current version
// the framework drops the attributes the schema no longer has, so no
// upgrader is needed (see TestUpgradeStateWithStatus).
func pipelineResourceSchema(ctx context.Context) schema.Schema {
	return schema.Schema{
		Version: 0,
		MarkdownDescription: "A pipeline ingests Kafka topics, read through a `tributary_connection`, into " +
			"append-only destination tables of Parquet files with a Delta-Lake-compatible transaction log, exactly once. " +
			"Each `table` block declares one destination table `<destination_catalog>.<destination_schema>.<destination_table>` " +
			"and the topics that feed it. Destroying the pipeline stops it; its tables, logs and offsets stay on disk. " +
			"The resource holds only what does not change while the pipeline runs, so a refresh-only plan stays empty " +
			"as it ingests; read its state and progress (rows, files, log versions, offsets and lag) with the " +
			"`tributary_pipeline_status` data source.",
		Attributes: map[string]schema.Attribute{
			"id":   idAttribute(),
			"name": nameAttribute("pipeline", " (the tables stay)"),
			"connection_name": schema.StringAttribute{
				MarkdownDescription: "`name` of the `tributary_connection` to read from; reference it " +
					"(`tributary_connection.x.name`) so that Terraform creates the connection first.",
				Required: true,
			},
			"destination_catalog": schema.StringAttribute{
				MarkdownDescription: "First segment of every destination table name, an identifier (a letter or `_` " +
					"followed by letters, digits or `_`). Tables are written under `<root>/<catalog>/<schema>/<table>/`, " +
					"where the root is `storage_location` or, by default, the agent's warehouse.",
				Required: true,
			},
			"destination_schema": schema.StringAttribute{
				MarkdownDescription: "Second segment of every destination table name, an identifier.",
				Required:            true,
			},
			"storage_location": schema.StringAttribute{
				MarkdownDescription: "Root the pipeline's tables are written under instead of the agent's warehouse, like " +
					"the storage location of a Lakeflow pipeline: each table lives at " +
					"`<storage_location>/<destination_catalog>/<destination_schema>/<destination_table>/`. An absolute path " +
					"on the agent's machine (`/srv/lake`) or a URL: " + quoted(storageLocationForms()) + ". " +
					"The agent must allow the root: start it with `tributary-agent serve --warehouse-allow <url>` " +
					"naming this location or a root above it, with the object store's options as query parameters there " +
					"(`?region=...`, `?endpoint=...`), not here; otherwise the agent refuses the pipeline (422) and the " +
					"apply fails (and the plan, when the agent answers its dry run). Credentials come from the agent's " +
					"environment (each cloud's standard credential chain), never from Terraform. Not set: the agent's " +
					"warehouse (`--warehouse`). Changing it is an update that restarts the pipeline's tables under the " +
					"new root; nothing is moved: tables there keep their own logs and offsets, and a new one starts at " +
					"`starting_offset`.",
				Optional: true,
			},
			"continuous": schema.BoolAttribute{
				MarkdownDescription: "`true` (default) keeps reading new records. `false` makes a triggered run: it " +
					"reads up to the end offsets seen when it starts (the last stable offset under `isolation_level = \"" +
					spec.IsolationReadCommitted + "\"`, the high watermark under `\"" + spec.IsolationReadUncommitted +
					"\"`), commits, and waits in state `" + spec.StateIdle + "`; a change of `trigger` starts the next run.",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(true),
			},
			"trigger": schema.StringAttribute{
				MarkdownDescription: "Any value, kept in the Terraform state only (the agent never sees it), whose change " +
					"starts the next run of a triggered pipeline (`continuous = false`): the update asks the agent for a run " +
					"(`POST /v1/pipelines/{name}/runs`) and waits until the pipeline is `" + spec.StateIdle + "` again, at most " +
					"the `update` timeout; a table that fails the run fails the apply with its error. A run the same update " +
					"started by changing a table ends first. Like `triggers_replace` of `terraform_data`, but an update: " +
					"set it to a timestamp or a version (`trigger = var.load_id`) to run the pipeline when it changes. " +
					"Removing it starts nothing. Only for triggered pipelines.",
				Optional: true,
			},
			"flush_interval": schema.StringAttribute{
				MarkdownDescription: "Longest time a record waits in a buffer before it is written and committed, as a " +
					"duration like `\"500ms\"`, `\"5s\"` or `\"1m\"`; at least `100ms`. The flush fires even when no new " +
					"records arrive. Defaults to `\"" + spec.DefaultFlushInterval + "\"`.",
				Optional: true,
				Computed: true,
				Default:  stringdefault.StaticString(spec.DefaultFlushInterval),
			},
			"target_file_size_mb": schema.Int64Attribute{
				MarkdownDescription: fmt.Sprintf("A Parquet file is closed once its data reaches this many mebibytes, "+
					"from 1 to %d. Defaults to `%d`.", spec.MaxTargetFileSizeMB, spec.DefaultTargetFileSizeMB),
				Optional: true,
				Computed: true,
				Default:  int64default.StaticInt64(spec.DefaultTargetFileSizeMB),
			},
			"max_rows_per_file": schema.Int64Attribute{
				MarkdownDescription: fmt.Sprintf("A Parquet file of a destination table is closed once it holds this many rows, from 1 to "+
					"%d; no file holds more (a batch that would take it past is split across files). "+
					"Defaults to `%d`.", int64(spec.MaxRowsPerFileLimit), spec.DefaultMaxRowsPerFile),
				Optional: true,
				Computed: true,
				Default:  int64default.StaticInt64(spec.DefaultMaxRowsPerFile),
			},
			"auto_compact": schema.BoolAttribute{
				MarkdownDescription: "`true` (default): the agent compacts the small files of the pipeline's tables (its fanout " +
					"schemas' tables too) into files near the target size (`target_file_size_mb`, or the table property " +
					"`delta.targetFileSize` where another engine set it), as Delta's auto compaction and `OPTIMIZE` do: a " +
					"commit of `remove` and `add` actions with `dataChange = false`, beside ingestion, never across partition " +
					"values. Set `false` where another engine compacts the tables.",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(true),
			},
			"auto_compact_min_files": schema.Int64Attribute{
				MarkdownDescription: fmt.Sprintf("A table is compacted once it holds more than this many small files "+
					"(files below two thirds of the target size), from %d to %d. Defaults to `%d`, the default of "+
					"Delta's `spark.databricks.delta.autoCompact.minNumFiles`.",
					spec.MinAutoCompactMinFiles, spec.MaxAutoCompactMinFiles, spec.DefaultAutoCompactMinFiles),
				Optional: true,
				Computed: true,
				Default:  int64default.StaticInt64(spec.DefaultAutoCompactMinFiles),
			},
			"auto_vacuum": schema.BoolAttribute{
				MarkdownDescription: "`true` (default): the agent deletes the data files its tables' logs removed (by a " +
					"compaction, the agent's or another engine's) longer ago than the table property " +
					"`delta.deletedFileRetentionDuration` (`interval 7 days` unless set), as Delta's `VACUUM` does. Readers " +
					"of older versions (time travel) need those files until then. Set `false` where another engine vacuums " +
					"the tables.",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(true),
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": runTimeoutsBlock(ctx, "pipeline"),
			"table": schema.ListNestedBlock{
				MarkdownDescription: "One destination table and the Kafka source that feeds it; none or more (a pipeline " +
					"may carry only `tributary_fanout_schema`s). A destination table belongs to one `table` block of one pipeline.",
				NestedObject: schema.NestedBlockObject{Attributes: map[string]schema.Attribute{
					"destination_table": schema.StringAttribute{
						MarkdownDescription: "Last segment of the table name, an identifier (a letter or `_` followed by letters, " +
							"digits or `_`). Names are compared case-insensitively and must be unique within the pipeline.",
						Required: true,
					},
					"connector_options":   connectorOptionsSchema("the table"),
					"table_configuration": tableConfigurationSchema("the destination table itself"),
				}},
			},
		},
	}
}

// connectorOptionsSchema is connector_options of a table or a fanout
// schema; feeds names what its topics feed ("the table").
func connectorOptionsSchema(feeds string) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "Source options of " + feeds + ".",
		Required:            true,
		Attributes: map[string]schema.Attribute{
			"kafka_options": kafkaOptionsSchema(feeds),
		},
	}
}

// tableConfigurationSchema is table_configuration of a table or a fanout
// schema; of names the tables it configures.
func tableConfigurationSchema(of string) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "Options of " + of + ".",
		Optional:            true,
		Attributes: map[string]schema.Attribute{
			"source_metadata_column": schema.StringAttribute{
				MarkdownDescription: "Name of a struct column holding each record's `topic`, `partition`, " +
					"`offset`, `timestamp`, `timestampType` and `headers` (an array of `key`/`value` structs). " +
					"Not set: no metadata column. It must not be named `key`, `value` or `_corrupt_record`, " +
					"nor collide with a column from the key or value schema.",
				Optional: true,
			},
			"metadata_columns": schema.ListAttribute{
				MarkdownDescription: "Record metadata as top-level columns, as Flink's `metadata.list`, after " +
					"`source_metadata_column`, in the order given; each a name of " + quoted(spec.MetadataColumnNames) +
					" and the column's name: `topic` STRING, `partition` INT, `offset` BIGINT, `timestamp` TIMESTAMP, " +
					"`timestamp_type` STRING (`CreateTime`, `LogAppendTime` or `NoTimestampType`), `headers` " +
					"ARRAY<STRUCT<key STRING, value BINARY>> (a list, so repeated keys are all kept, where Flink's map " +
					"keeps one), `leader_epoch` INT (null when the record's batch has none), `raw_key` and `raw_value` " +
					"BINARY (the record's bytes, beside their decoded columns). A name listed twice, or colliding with " +
					"another column of the table, fails the plan; `key_fields_prefix` and `value_fields_prefix` move " +
					"parsed fields out of the way.",
				Optional:    true,
				ElementType: types.StringType,
			},
			"partition_by": schema.ListAttribute{
				MarkdownDescription: "Partition columns of the table (Delta `partitionColumns`), at most " +
					fmt.Sprint(spec.MaxPartitionColumns) + ", each either a top-level column of type STRING, BOOLEAN, " +
					"TINYINT, SMALLINT, INT, BIGINT or DATE, or `date(<column>)` or `hour(<column>)` of a TIMESTAMP or " +
					"TIMESTAMP_NTZ column (top-level or a struct field, such as `date(_kafka.timestamp)`), optionally " +
					"followed by `AS <name>`. A derived column is a Delta generated column, named `<column path with . " +
					"as _>_date` or `_hour` unless `AS` names it: `date()` is a DATE generated as `CAST(col AS DATE)`, " +
					"`hour()` a STRING generated as `DATE_FORMAT(col, 'yyyy-MM-dd-HH')`, so that Spark prunes " +
					"partitions on a filter of the source column too. The agent computes them in UTC: Spark's session " +
					"time zone must be UTC for its own appends and its pruning to agree. A column that does not exist, " +
					"or whose type cannot partition, fails the plan when the columns are known then (else the agent " +
					"fails the table when it starts). The partition columns of a table are fixed when it is created: " +
					"changing `partition_by` later fails the table; write to a new table instead. Not available on " +
					"fanout schemas.",
				Optional:    true,
				ElementType: types.StringType,
			},
		},
	}
}

// kafkaOptionsSchema is kafka_options; feeds names what its topics feed.
func kafkaOptionsSchema(feeds string) schema.SingleNestedAttribute {
	attrs := map[string]schema.Attribute{
		"topics": schema.ListAttribute{
			MarkdownDescription: "Topic names to read. Exactly one of `topics`, `topic_pattern` and `assign` is required. " +
				"Flink's `;`-separated `topic` is a list here: `topic = \"a;b\"` becomes `topics = [\"a\", \"b\"]`.",
			Optional:    true,
			ElementType: types.StringType,
		},
		"topic_pattern": schema.StringAttribute{
			MarkdownDescription: "Regular expression (RE2 syntax, which covers Java's except look-around and " +
				"back-references) matched against whole topic names; topics created later that match are picked up " +
				"(see `partition_discovery_interval`). Exactly one of `topics`, `topic_pattern` and `assign` is required.",
			Optional: true,
		},
		"starting_offset": schema.StringAttribute{
			MarkdownDescription: "Where the partitions read at the table's first start begin: one of " +
				quoted(spec.StartingOffsets) + ". Defaults to `\"" + spec.DefaultStartingOffset + "\"`. `" +
				spec.StartingOffsetTimestamp + "` starts at `starting_timestamp` or `starting_offsets_by_timestamp`, `" +
				spec.StartingOffsetSpecific + "` at `starting_offsets`, and `" + spec.StartingOffsetGroup + "` at the " +
				"offsets committed to the consumer group `group_id`, as Flink's `group-offsets`; partitions these leave " +
				"without a position start at `auto_offset_reset`. It applies only " +
				"then: once the table has a log entry, every partition resumes from the offset recorded in the log, and " +
				"every partition without a recorded offset (partitions added to a topic later, new topics matching " +
				"`topic_pattern`, topics added to `topics` later) starts at `" + spec.StartingOffsetEarliest + "`, so " +
				"that nothing written while the agent was down is skipped. Changing it on a table that has a log entry " +
				"changes nothing.",
			Optional: true,
			Computed: true,
			Default:  stringdefault.StaticString(spec.DefaultStartingOffset),
		},
		"isolation_level": schema.StringAttribute{
			MarkdownDescription: "Which records of transactional producers the table reads, like the Kafka consumer's " +
				"`isolation.level`: one of " + quoted(spec.IsolationLevels) + ". Defaults to `\"" + spec.DefaultIsolationLevel +
				"\"`. `" + spec.IsolationReadCommitted + "` reads only records of committed transactions and of " +
				"non-transactional producers, and reads each partition only up to its last stable offset, so an open " +
				"transaction holds back later records until it ends; a triggered run (`continuous = false`) ends at the " +
				"last stable offset. `" + spec.IsolationReadUncommitted + "` reads every record up to the high watermark, " +
				"including records of aborted and still open transactions. Transaction markers (control records) never " +
				"become rows at either level.",
			Optional: true,
			Computed: true,
			Default:  stringdefault.StaticString(spec.DefaultIsolationLevel),
		},
		"key_transformer":   transformerSchema("key"),
		"value_transformer": transformerSchema("value"),
	}
	maps.Copy(attrs, consumerAttributes())
	maps.Copy(attrs, fieldAttributes())
	return schema.SingleNestedAttribute{
		MarkdownDescription: "Which Kafka topics and partitions feed " + feeds + ", where reading starts and ends, " +
			"how fast it goes, what happens when records are gone, and how record keys and values are decoded.",
		Required:   true,
		Attributes: attrs,
	}
}

func transformerSchema(side string) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "Decodes the record " + side + ". Not set: the " + side + " is kept as a BINARY column named `" +
			side + "`.",
		Optional: true,
		Attributes: map[string]schema.Attribute{
			"format": schema.StringAttribute{
				MarkdownDescription: "One of " + quoted(spec.Formats) + ". `" + spec.FormatString + "` makes a STRING column `" +
					side + "`; `" + spec.FormatJSON + "`, `" + spec.FormatAvro + "` and `" + spec.FormatProtobuf + "` decode the " +
					side + " into one top-level column per field of the schema of `json_options`, `avro_options` or " +
					"`protobuf_options`, the one that goes with the format (required with it, except that `" + spec.FormatJSON +
					"` without `json_options` keeps the whole " + side + " in one VARIANT column `" + side + "`; the others must not be set). " +
					changelogFormats + " (values only; Flink's `debezium-json` and `canal-json`) decode change events: " +
					"each event becomes rows with `_op`, `_source` and the columns of its row image, typed by `json_options` " +
					"(inferred with `" + spec.SchemaEvolutionAddNewColumnsWithTypeWidening + "` when it declares no schema), and configured " +
					"by `debezium_options` or `canal_options`.",
				Required: true,
			},
			"json_options":     jsonOptionsSchema(),
			"avro_options":     avroOptionsSchema(),
			"protobuf_options": protobufOptionsSchema(),
			"debezium_options": debeziumOptionsSchema(),
			"canal_options":    canalOptionsSchema(),
		},
	}
}

func jsonOptionsSchema() schema.SingleNestedAttribute {
	attrs := map[string]schema.Attribute{
		"schema": schema.StringAttribute{
			MarkdownDescription: "Inline Spark DDL schema, e.g. `\"id BIGINT, user STRING, tags ARRAY<STRING>\"`. " +
				"Each field becomes a top-level column.",
			Optional: true,
		},
		"schema_file_path": schema.StringAttribute{
			MarkdownDescription: "Path of a file holding the Spark DDL schema. " + moduleFileNote("schema.ddl"),
			Optional:            true,
		},
		"schema_file_sha256": fileSHA256Attribute("schema_file_path"),
		"allow_single_quotes": schema.BoolAttribute{
			MarkdownDescription: "Accept `'single-quoted'` strings and field names, as Spark's " +
				"`allowSingleQuotes`. Defaults to `true`, Spark's default.",
			Optional: true,
			Computed: true,
			Default:  booldefault.StaticBool(true),
		},
		"allow_non_numeric_numbers": schema.BoolAttribute{
			MarkdownDescription: "Accept the unquoted numbers `NaN`, `Infinity`, `+Infinity` and `-Infinity`, " +
				"and the strings `\"NaN\"`, `\"Infinity\"`, `\"+Infinity\"`, `\"+INF\"`, `\"-Infinity\"` and `\"-INF\"` " +
				"for FLOAT and DOUBLE fields, as Spark's `allowNonNumericNumbers`. Defaults to `true`, Spark's default.",
			Optional: true,
			Computed: true,
			Default:  booldefault.StaticBool(true),
		},
		"timestamp_format": schema.StringAttribute{
			MarkdownDescription: "Spark datetime pattern of TIMESTAMP strings, as Spark's `timestampFormat`, " +
				"e.g. `\"dd/MM/yyyy HH:mm:ss\"` or `\"yyyy-MM-dd'T'HH:mm:ss.SSSXXX\"`, or one of Flink's names " +
				"`\"" + spec.TimestampFormatSQL + "\"` (`yyyy-MM-dd HH:mm:ss` with an optional fraction) and `\"" +
				spec.TimestampFormatISO8601 + "\"` (`yyyy-MM-ddTHH:mm:ss`, optional fraction and zone), as Flink's " +
				"`json.timestamp-format.standard`. Unset (the default, for the changelog formats too, where Flink's " +
				"default is `SQL`), TIMESTAMP strings are read as Spark reads them without the option: leniently, ISO " +
				"8601 and its variants, the `SQL` form included. The pattern letters are " + patternLetters + "; other letters and optional sections " +
				"(`[...]`) are refused at plan time. TIMESTAMP_NTZ strings are always read leniently.",
			Optional: true,
		},
		"empty_value_as_delete": schema.BoolAttribute{
			MarkdownDescription: "`true`: a record whose value is null (a tombstone, as Debezium writes after a delete) " +
				"becomes a row with `_op = \"d\"`, its key columns and null value columns; the table gets an `_op` " +
				"column. Not set or `false`: a tombstone of a changelog format gives no row, and of `" + spec.FormatJSON +
				"` a row of nulls. Value transformers only. Defaults to `false`.",
			Optional: true,
			Computed: true,
			Default:  booldefault.StaticBool(false),
		},
		"date_format": schema.StringAttribute{
			MarkdownDescription: "Spark datetime pattern of DATE strings, as Spark's `dateFormat`, e.g. " +
				"`\"yyyyMMdd\"`. Unset (the default), DATE strings are read as Spark reads them without the " +
				"option: leniently. Same pattern letters as `timestamp_format`.",
			Optional: true,
		},
	}
	maps.Copy(attrs, inferenceAttributes())
	return schema.SingleNestedAttribute{
		MarkdownDescription: "Options of format `" + spec.FormatJSON + "`. Exactly one of `schema`, " +
			"`schema_file_path` (a fixed schema) and `schema_evolution_mode` (a schema inferred from the records) " +
			"is required. Not set: the whole key or value is one VARIANT column.",
		Optional:   true,
		Attributes: attrs,
	}
}

// inferenceAttributes are the attributes of json_options that infer the
// table's columns from the records: the records sampled, the types they
// infer, hints, and how the columns evolve when later records bring new
// fields.
func inferenceAttributes() map[string]schema.Attribute {
	aliases := make([]string, 0, len(spec.SchemaEvolutionAliases))
	for _, m := range spec.SchemaEvolutionModes {
		for a, to := range spec.SchemaEvolutionAliases {
			if to == m {
				aliases = append(aliases, "`"+a+"` for `"+m+"`")
			}
		}
	}
	requires := " Requires a schema inferred from the records (`schema_evolution_mode`, or a changelog format without a schema)."
	return map[string]schema.Attribute{
		"flatten_nested_columns": schema.BoolAttribute{
			MarkdownDescription: "`true`: each field of a nested object becomes a top-level column named by its dotted " +
				"path (`user.name`) instead of a STRUCT column `user`. Defaults to `false`: a STRUCT column, as Spark " +
				"infers it, where Flink keeps the object's JSON text in a STRING column (hint the column `STRING` in " +
				"`schema_hints` for that)." + requires,
			Optional: true,
			Computed: true,
			Default:  booldefault.StaticBool(false),
		},
		"initial_schemas": schema.MapAttribute{
			MarkdownDescription: "Columns a table starts with before inference adds any, in Spark DDL, by table: on a " +
				"pipeline table the key is its `destination_table`; on a fanout schema the routed table's name (lower " +
				"case). As Flink's `initial-schema` per table. It applies when the table is created." + requires,
			Optional:    true,
			ElementType: types.StringType,
		},
		"schema_evolution_mode": schema.StringAttribute{
			MarkdownDescription: "Infers the columns from the records instead of declaring them, and says what " +
				"happens when later records do not fit: one of " + quoted(spec.SchemaEvolutionModes) + ", as " +
				"Lakeflow spells them; Auto Loader's names are accepted too (" + strings.Join(aliases, ", ") + ") and " +
				"kept as written. The first schema is inferred from the latest `infer_records_per_partition` records of " +
				"each partition and `schema_hints`. `" + spec.SchemaEvolutionAddNewColumns + "` adds a nullable column " +
				"at the end for each new field, in the commit of the rows that need it, and never drops one; `" +
				spec.SchemaEvolutionAddNewColumnsWithTypeWidening + "` also widens a column's type where Delta's type " +
				"widening allows it; `" + spec.SchemaEvolutionRescue + "` never changes the schema; `" +
				spec.SchemaEvolutionFailOnNewColumns + "` stops the table `" + spec.StateFailed + "`, naming the new " +
				"columns, without committing the records that hold them (change the hints or the mode and apply again " +
				"to resume from there); `" + spec.SchemaEvolutionNone + "` ignores new fields. A value that does not " +
				"fit its column goes to the rescued data column (see `rescued_data_column`). The table's current " +
				"columns are shown by the `tributary_table` data source. Exclusive with `schema` and `schema_file_path`. " +
				"On a changelog format (" + changelogFormats + ") it defaults to `" +
				spec.SchemaEvolutionAddNewColumnsWithTypeWidening + "` (Flink's default `continuous` inference, which " +
				"adds new fields and widens types) when neither `schema` nor `schema_file_path` is set; `" +
				spec.SchemaEvolutionNone + "` or `" + spec.SchemaEvolutionRescue + "` keep the first schema (Flink's " +
				"`static` inference from `infer_records_per_partition` records).",
			Optional:      true,
			Computed:      true,
			PlanModifiers: []planmodifier.String{changelogModeDefault},
		},
		"schema_hints": schema.StringAttribute{
			MarkdownDescription: "Fixes the types of some inferred columns, in Spark DDL where a name may be a dotted " +
				"path into structs, with `element`, `key` and `value` naming the parts of arrays and maps, e.g. " +
				"`\"id BIGINT, ts TIMESTAMP, user.dob DATE, tags ARRAY<STRING>, attrs MAP<STRING,STRING>\"`. A hint " +
				"may declare a column no record has shown yet." + requires,
			Optional: true,
		},
		"infer_records_per_partition": schema.Int64Attribute{
			MarkdownDescription: fmt.Sprintf("How many of the latest records of each partition a new table's first "+
				"schema is inferred from, from 0 to %d, as Flink's `scan.max.pre.fetch.records`: the newest records, "+
				"whatever offset the table starts at. `0` infers nothing before reading: the table starts with the "+
				"columns of `initial_schemas` and `schema_hints` (Flink's fixed types), and `schema_evolution_mode` "+
				"says what the records then add. Defaults to `%d` when `schema_evolution_mode` is set.%s",
				spec.MaxInferRecordsPerPartition, spec.DefaultInferRecordsPerPartition, requires),
			Optional:      true,
			Computed:      true,
			PlanModifiers: []planmodifier.Int64{inferenceDefaultInt64{inferenceDefault{fmt.Sprint(spec.DefaultInferRecordsPerPartition)}, spec.DefaultInferRecordsPerPartition}},
		},
		"string_type_inference": schema.BoolAttribute{
			MarkdownDescription: "Infers `DATE` and `TIMESTAMP` columns from ISO 8601 strings, as Flink's " +
				"`string-type-inference`; `false` keeps them `STRING`. Defaults to `true` when `schema_evolution_mode` " +
				"is set." + requires,
			Optional:      true,
			Computed:      true,
			PlanModifiers: []planmodifier.Bool{inferenceDefaultBool{inferenceDefault{"true"}, true}},
		},
		"primitive_as_string": schema.BoolAttribute{
			MarkdownDescription: "Infers every number and boolean as `STRING`, as Spark's `primitivesAsString`. " +
				"Defaults to `false` when `schema_evolution_mode` is set." + requires,
			Optional:      true,
			Computed:      true,
			PlanModifiers: []planmodifier.Bool{inferenceDefaultBool{inferenceDefault{"false"}, false}},
		},
		"rescued_data_column": schema.StringAttribute{
			MarkdownDescription: "Name of the `STRING` column that holds, as a JSON object, the fields of a record " +
				"that do not fit the schema (a value of another type; in `" + spec.SchemaEvolutionRescue + "` also new " +
				"fields). Not set: `" + spec.RescuedDataColumn + "`, except in `" + spec.SchemaEvolutionNone + "`, " +
				"where setting it is what turns rescuing on. A letter or `_` followed by letters, digits or `_`; it must " +
				"not collide with another column of the table, be `_corrupt_record` or be named by a schema hint." + requires,
			Optional: true,
		},
	}
}

// fileSHA256Attribute is the computed hash of the file named by the
// attribute pathAttr.
func fileSHA256Attribute(pathAttr string) schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "SHA-256 of the content of the file `" + pathAttr + "` names, so that an edit of the file " +
			"shows as an update in the plan.",
		Computed: true,
	}
}

// parseModeAttribute is parse_mode of avro_options and protobuf_options.
// patternLetters lists the Spark datetime pattern letters of
// timestamp_format and date_format.
const patternLetters = "`y` (year), `M` (month), `d` (day), `H` (hour 0-23), `h` (hour 1-12, with `a`), `m`, `s`, " +
	"`S` (fraction of a second), `a` (AM/PM), `X`, `x` and `Z` (zone offsets), and text in single quotes"

func parseModeAttribute(format string) schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "What a record whose " + format + " does not decode does: one of " + quoted(spec.ParseModes) +
			". Defaults to `\"" + spec.DefaultParseMode + "\"`. `" + spec.ParseModePermissive + "` writes its raw bytes to " +
			"the `_corrupt_record` BINARY column, leaves the columns of this part null and goes on. `" +
			spec.ParseModeFailFast + "` stops the table in `" + spec.StateFailed + "` at that record, without committing " +
			"it, so that a restart reads it again.",
		Optional: true,
		Computed: true,
		Default:  stringdefault.StaticString(spec.DefaultParseMode),
	}
}

// moduleFileNote says how the provider reads a file attribute; example is a
// file name.
func moduleFileNote(example string) string {
	return "The provider reads it at plan time and sends its content to the agent, which never reads the path. " +
		"It must be a regular file of at most " + strconv.Itoa(maxModuleFileSize>>20) + " MiB. A relative path is resolved against the directory Terraform runs in (the root module); in a child module " +
		"use `\"${path.module}/" + example + "\"`."
}

func avroOptionsSchema() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "Options of format `" + spec.FormatAvro + "`, required with it. Exactly one of `schema`, " +
			"`schema_file_path` and `schema_registry` is required. The schema is a record schema; each of its " +
			"top-level fields becomes a column.",
		Optional: true,
		Attributes: map[string]schema.Attribute{
			"schema": schema.StringAttribute{
				MarkdownDescription: "Inline Avro schema in its JSON form, e.g. `jsonencode({ type = \"record\", " +
					"name = \"Click\", fields = [...] })`. Records are plain binary Avro written with it, without framing.",
				Optional: true,
			},
			"schema_file_path": schema.StringAttribute{
				MarkdownDescription: "Path of an `.avsc` file holding the Avro schema; records are plain binary Avro " +
					"written with it, without framing. " + moduleFileNote("click.avsc"),
				Optional: true,
			},
			"schema_file_sha256": fileSHA256Attribute("schema_file_path"),
			"schema_registry":    schemaRegistrySchema(false),
			"parse_mode":         parseModeAttribute("Avro"),
		},
	}
}

func protobufOptionsSchema() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "Options of format `" + spec.FormatProtobuf + "`, required with it. Exactly one of " +
			"`desc_file_path` (with `message_name`) and `schema_registry` is required. Each top-level field of the " +
			"message becomes a column.",
		Optional: true,
		Attributes: map[string]schema.Attribute{
			"desc_file_path": schema.StringAttribute{
				MarkdownDescription: "Path of a compiled descriptor set, a serialized `FileDescriptorSet` as " +
					"`protoc --include_imports --descriptor_set_out=events.desc events.proto` writes it. Records are " +
					"plain Protobuf messages of `message_name`, without framing. " + moduleFileNote("events.desc"),
				Optional: true,
			},
			"desc_file_sha256": fileSHA256Attribute("desc_file_path"),
			"message_name": schema.StringAttribute{
				MarkdownDescription: "Message type of the records in `desc_file_path`, fully qualified " +
					"(`\"com.example.Event\"`) or, when unique in the set, simple (`\"Event\"`). Required with " +
					"`desc_file_path`; with `schema_registry` use `schema_registry.protobuf_message_name`.",
				Optional: true,
			},
			"schema_registry": schemaRegistrySchema(true),
			"recursive_fields_max_depth": schema.Int64Attribute{
				MarkdownDescription: fmt.Sprintf("How deep recursive message fields are expanded, from %d to %d: "+
					"`-1` refuses a recursive message, `0` drops recursive fields, `1` to `%d` expand them that many "+
					"levels. Defaults to `%d`. Spark's `recursive.fields.max.depth` counts one more: its `n + 1` "+
					"gives the columns `n` gives here (its `0` refuses, its `1` drops).",
					spec.MinRecursiveDepth, spec.MaxRecursiveDepth, spec.MaxRecursiveDepth, spec.DefaultRecursiveDepth),
				Optional: true,
				Computed: true,
				Default:  int64default.StaticInt64(spec.DefaultRecursiveDepth),
			},
			"parse_mode": parseModeAttribute("Protobuf"),
		},
	}
}

// schemaRegistrySchema is schema_registry of avro_options and, with
// protobuf_message_name, of protobuf_options.
func schemaRegistrySchema(protobuf bool) schema.SingleNestedAttribute {
	framing := "a zero byte and the 4-byte schema id"
	if protobuf {
		framing += ", then the message indexes"
	}
	attrs := map[string]schema.Attribute{
		"confluent_options": schema.SingleNestedAttribute{
			MarkdownDescription: "Options of a Confluent-compatible registry.",
			Required:            true,
			Attributes: map[string]schema.Attribute{
				"subject": schema.StringAttribute{
					MarkdownDescription: "Registry subject, e.g. `\"orders-value\"`. Its latest version when the table " +
						"starts sets the table's columns; each record is decoded with the version its schema id names.",
					Required: true,
				},
			},
		},
		"connection_name": schema.StringAttribute{
			MarkdownDescription: "`name` of the `tributary_connection` whose `schema_registry` (URL and credentials) " +
				"is used. Not set: the pipeline's connection.",
			Optional: true,
		},
	}
	if protobuf {
		attrs["protobuf_message_name"] = schema.StringAttribute{
			MarkdownDescription: "Message of the subject's schema that sets the table's columns, by simple or fully " +
				"qualified name, when the schema defines several. Not set: its first message.",
			Optional: true,
		}
	}
	return schema.SingleNestedAttribute{
		MarkdownDescription: "Resolves the schema from a Confluent-compatible schema registry when the table starts. " +
			"Records carry Confluent's framing: " + framing + ". The registry's URL and credentials come from a " +
			"connection's `schema_registry`.",
		Optional:   true,
		Attributes: attrs,
	}
}

// pipelineTypes are the object types of the pipeline schema, derived once
// from the schema itself.
var pipelineTypes = sync.OnceValue(func() (t struct {
	table, connectorOptions, kafkaOptions, transformer, jsonOptions, tableConfiguration types.ObjectType
	avroOptions, protobufOptions, avroRegistry, protobufRegistry, confluentOptions      types.ObjectType
	debeziumOptions, canalOptions                                                       types.ObjectType
}) {
	s := pipelineResourceSchema(context.Background())
	t.table, _ = s.Blocks["table"].(schema.ListNestedBlock).NestedObject.Type().(types.ObjectType)
	t.connectorOptions = attrObjectType(t.table, "connector_options")
	t.kafkaOptions = attrObjectType(t.connectorOptions, "kafka_options")
	t.transformer = attrObjectType(t.kafkaOptions, "key_transformer")
	t.jsonOptions = attrObjectType(t.transformer, "json_options")
	t.avroOptions = attrObjectType(t.transformer, "avro_options")
	t.protobufOptions = attrObjectType(t.transformer, "protobuf_options")
	t.debeziumOptions = attrObjectType(t.transformer, "debezium_options")
	t.canalOptions = attrObjectType(t.transformer, "canal_options")
	t.avroRegistry = attrObjectType(t.avroOptions, "schema_registry")
	t.protobufRegistry = attrObjectType(t.protobufOptions, "schema_registry")
	t.confluentOptions = attrObjectType(t.avroRegistry, "confluent_options")
	t.tableConfiguration = attrObjectType(t.table, "table_configuration")
	return t
})
