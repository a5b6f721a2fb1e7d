package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// kafkaSinkResourceSchema is the schema of tributary_kafka_sink, version 0.
func kafkaSinkResourceSchema(ctx context.Context) schema.Schema {
	source := kafkaOptionsSchema("the sink")
	source.Required, source.Optional = false, true
	source.MarkdownDescription = "The topics the sink reads, with the attributes of a pipeline table's " +
		"`connector_options.kafka_options`: `topics` (or `topic_pattern`), `starting_offset`, `isolation_level`, " +
		"`key_transformer` and `value_transformer`. Each record is decoded as such a table would decode it, and " +
		"each row written to Kafka. Exactly one of `source` and `source_table` is required. `starting_offset` " +
		"applies to partitions the sink has no position for yet; the positions are committed to the consumer " +
		"group `tributary-sink.<name>`. What a sink does not honour is refused at plan time: the `ending_*` " +
		"attributes (a sink never ends), the trigger and split options, `ignore_errors`, `group_id`, " +
		"`group_id_prefix`, `fail_on_data_loss = false` (a sink cannot skip lost records: it fails), and the " +
		"`json_options` `initial_schemas` and `infer_records_per_partition` (the sink keeps no table: its columns " +
		"come from the records it fetches, at every start)."
	return schema.Schema{
		Version: 0,
		MarkdownDescription: "A Kafka sink writes the decoded records of Kafka topics back to Kafka, as change " +
			"events (`DEBEZIUM_JSON`, `CANAL_JSON`) or JSON rows, Flink's Kafka/Upsert sink with its " +
			"`sink.*` options. With `delivery_guarantee = \"" + spec.DeliveryExactlyOnce + "\"` the records and the " +
			"source positions are committed in one Kafka transaction: a `read_committed` consumer sees each " +
			"source record's output exactly once, across crashes and restarts of the agent. The position lives " +
			"in the consumer group `tributary-sink.<name>`, which destroying the sink keeps: a sink created again " +
			"with the same name resumes there.",
		Attributes: map[string]schema.Attribute{
			"id":   idAttribute(),
			"name": nameAttribute("Kafka sink", " (it resumes from the positions of the sink of its new name, if any)"),
			"connection_name": schema.StringAttribute{
				MarkdownDescription: "`name` of the `tributary_connection` the sink writes to, and that `source` reads " +
					"from; reference it (`tributary_connection.x.name`) so that Terraform creates the connection first.",
				Required: true,
			},
			"source_table": schema.StringAttribute{
				MarkdownDescription: "`<catalog>.<schema>.<table>` of a table a pipeline of the agent writes, whose " +
					"changelog the sink writes: every row the table's commits appended, in commit order, from its first " +
					"version. Exactly one of `source` and `source_table` is required. Build it from the pipeline's " +
					"attributes (`\"${tributary_pipeline.p.destination_catalog}.${tributary_pipeline.p.destination_schema}.events\"`) " +
					"so that Terraform creates the pipeline first: a table no pipeline of the agent writes is a warning " +
					"at plan time and an error at apply. The position, the next table version to write, is committed to " +
					"the consumer group `tributary-sink.<name>` on partition 0 of the topic `_tributary_sink_positions`, " +
					"which the sink creates when it is missing.",
				Optional: true,
			},
			"source": source,
			"topic": schema.StringAttribute{
				MarkdownDescription: "The topic every row is written to; it must exist. It overrides a `topic` " +
					"column of the rows, as Spark's `topic` option does. Conflicts with `table_topic_mapping`. With " +
					"neither, a row goes to the topic its `topic` column names, else to the topic named by its table " +
					"id: `<db>.<table>` with `full_table_id`, `<table>` without (Flink writes to `<db>.<table>`: set " +
					"`full_table_id = true` for that), from the change event's source. A source that is not a change " +
					"stream (`DEBEZIUM_JSON`, `CANAL_JSON`) must set `topic` or `table_topic_mapping`. No target may " +
					"be a topic the source reads (refused at plan time, and a row routed there fails the sink).",
				Optional: true,
			},
			"table_topic_mapping": schema.StringAttribute{
				MarkdownDescription: "Flink's `sink.tableId-to-topic.mapping`: `\"db.t1,db.t2:topic1;db.t3:topic2\"`, " +
					"entries separated by `;`, each a comma-separated list of table id patterns (RE2, each matched " +
					"against the whole id; a comma inside `[]`, `{}` or `()`, or escaped, stays in its pattern), `:` " +
					"and the topic they share. The first match wins; an unmatched table goes to its own topic (see " +
					"`topic`); a row's `topic` column overrides. A pattern that can match no table id of the source " +
					"is an error: at plan time for a `source` whose values are not change events (its table ids are " +
					"its `topics`), at apply for a `source_table` without `_source` (its id is `<schema>.<table>`).",
				Optional: true,
			},
			"partition_strategy": enumAttribute("Which partition of the topic a record goes to: `"+spec.PartitionAllToZero+
				"` (partition 0) or `"+spec.PartitionHashByKey+"` (the murmur2 hash of the key, as Kafka's Java producer "+
				"does). Flink's `all-to-zero` and `hash-by-key`.", spec.PartitionStrategies, spec.PartitionAllToZero),
			"value_format": enumAttribute("The format of the records' values: `"+spec.SinkFormatDebeziumJSON+"` "+
				"(Debezium change events `{before, after, source, op, ts_ms}`), `"+spec.SinkFormatCanalJSON+"` (Canal "+
				"events `{data, old, type, database, table, ...}`) or `"+spec.SinkFormatJSON+"` (each row as a JSON "+
				"object). Keys are the row's key columns as JSON, or the source record's key when it was not parsed.",
				spec.SinkFormats, spec.SinkFormatDebeziumJSON),
			"keep_changed_fields_only": boolAttribute("Writes, in an update's before image (Debezium) or `old` "+
				"image (Canal), only the fields that changed. The before image comes from the source's own "+
				"`DEBEZIUM_JSON` (`before`) or `CANAL_JSON` (`old`) update events; other updates have none: "+
				"`before` (`old`) is null.", false),
			"include_schema": boolAttribute("Writes Debezium events with their Connect schema, "+
				"`{\"schema\": ..., \"payload\": ...}`; only with `value_format = \""+spec.SinkFormatDebeziumJSON+"\"`.", false),
			"full_table_id": boolAttribute("Names a row's table `<db>.<table>` in the default topic name and in "+
				"the event, instead of `<table>`.", false),
			"include_headers": boolAttribute("Passes each source record's headers to the records written from it; "+
				"false writes records without headers. The sink passes records through, so it keeps them by default "+
				"(Spark's `includeHeaders`, false by default, is an option of its reader; its writer writes the "+
				"headers of rows that have them).", true),
			"compression": enumAttribute("The codec of the record batches written: Kafka's `compression.type` "+
				"(Flink's `properties.compression.type`) in upper case. Consumers decompress them without any setting.", spec.Compressions, spec.CompressionNone),
			"delivery_guarantee": enumAttribute("`"+spec.DeliveryAtLeastOnce+"`: records are acked by every in-sync "+
				"replica before the source positions are committed, so a crash may write some again. `"+
				spec.DeliveryExactlyOnce+"`: records and positions are committed in one Kafka transaction every "+
				"`flush_interval`; read the topics with `isolation.level=read_committed`.",
				spec.DeliveryGuarantees, spec.DeliveryAtLeastOnce),
			"enable_idempotence": boolAttribute("Writes with an idempotent producer (Spark's "+
				"`kafka.enable.idempotence`, Kafka's `enable.idempotence`): each batch carries a producer id, its "+
				"epoch and a sequence number per partition, so a batch the sink sends again after a lost answer is "+
				"written once. It does not make a restart after a crash exactly once (that is `"+spec.DeliveryExactlyOnce+
				"`). `false` writes plain batches (no `IDEMPOTENT_WRITE` needed on clusters that still check it); it is "+
				"refused with `"+spec.DeliveryExactlyOnce+"`, whose transactions are always idempotent.", true),
			"transactional_id": schema.StringAttribute{
				MarkdownDescription: "The Kafka `transactional.id` of an exactly-once sink. Defaults to " +
					"`tributary-sink.<name>`. Two agents running the same sink share it: the one that starts later " +
					"fences the other, which stops `" + spec.StateFailed + "`. The agent refuses a sink whose " +
					"transactional id another of its sinks has.",
				Optional: true,
			},
			"flush_interval": schema.StringAttribute{
				MarkdownDescription: "How long a record waits at most before it is written (and, exactly once, " +
					"before its transaction commits), a duration such as `\"5s\"`; at least `100ms`, at most `1m` " +
					"exactly once. Defaults to `\"" + spec.DefaultFlushInterval + "\"`.",
				Optional: true,
				Computed: true,
				Default:  stringdefault.StaticString(spec.DefaultFlushInterval),
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": runTimeoutsBlock(ctx, "Kafka sink"),
		},
	}
}

// enumAttribute is an optional string attribute with a default, one of
// allowed; the spec's Validate gives Flink's spellings a hint.
func enumAttribute(doc string, allowed []string, def string) schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: doc + " One of " + quoted(allowed) + "; defaults to `\"" + def + "\"`.",
		Optional:            true,
		Computed:            true,
		Default:             stringdefault.StaticString(def),
	}
}

// boolAttribute is an optional bool attribute with a default.
func boolAttribute(doc string, def bool) schema.BoolAttribute {
	d := "false"
	if def {
		d = "true"
	}
	return schema.BoolAttribute{
		MarkdownDescription: doc + " Defaults to `" + d + "`.",
		Optional:            true,
		Computed:            true,
		Default:             booldefault.StaticBool(def),
	}
}
