package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The Terraform types of the maps of kafka_options.
var (
	assignType       = types.MapType{ElemType: types.ListType{ElemType: types.Int64Type}}
	partitionMapType = types.MapType{ElemType: types.MapType{ElemType: types.Int64Type}}
)

// tablesOnly ends the description of an option fanout schemas refuse.
const tablesOnly = " Tables only: a `tributary_fanout_schema` refuses it."

// consumerAttributes are the attributes of kafka_options that say which
// partitions are read, from where to where, how fast, what happens when
// records are gone, and how the Kafka client behaves.
func consumerAttributes() map[string]schema.Attribute {
	partitionMapNote := " Topics and partitions must be ones the table reads (in `topics`, matching `topic_pattern`, or listed in `assign`)."
	timeForms := "milliseconds since the epoch as a string (`\"1700000000000\"`) or an RFC 3339 time (`\"2023-11-14T22:13:20Z\"`)"
	return map[string]schema.Attribute{
		"assign": schema.MapAttribute{
			MarkdownDescription: "Partitions to read, by topic: `{ \"events\" = [0, 1] }`, as Spark's `assign`. " +
				"Exactly one of `topics`, `topic_pattern` and `assign` is required. Partitions added to a topic later are not " +
				"read: `partition_discovery_interval` does not apply.",
			Optional:    true,
			ElementType: assignType.ElemType,
		},
		"starting_timestamp": schema.StringAttribute{
			MarkdownDescription: "With `starting_offset = \"" + spec.StartingOffsetTimestamp + "\"`: the time every partition " +
				"starts at, " + timeForms + ". Each partition starts at its first record whose timestamp is at or after it; a " +
				"partition without such a record starts at its end (`latest`), where Spark fails by default. Exclusive with " +
				"`starting_offsets_by_timestamp`.",
			Optional: true,
		},
		"starting_offsets": schema.MapAttribute{
			MarkdownDescription: "With `starting_offset = \"" + spec.StartingOffsetSpecific + "\"` (and required by it): " +
				"the offset each partition starts at, by topic and partition number, " +
				"`{ \"events\" = { \"0\" = 23, \"1\" = -2 } }`; `-2` means earliest and `-1` latest, as in Spark's " +
				"`startingOffsets` JSON. Partitions it leaves out start at `auto_offset_reset`." + partitionMapNote,
			Optional:    true,
			ElementType: partitionMapType.ElemType,
		},
		"starting_offsets_by_timestamp": schema.MapAttribute{
			MarkdownDescription: "With `starting_offset = \"" + spec.StartingOffsetTimestamp + "\"`: a start time per " +
				"partition in milliseconds since the epoch, by topic and partition number, " +
				"`{ \"events\" = { \"0\" = 1700000000000 } }`, as Spark's `startingOffsetsByTimestamp`. Each partition starts " +
				"at its first record at or after its time (its end when there is none); partitions it leaves out start at " +
				"`auto_offset_reset`. Exclusive with `starting_timestamp`." + partitionMapNote,
			Optional:    true,
			ElementType: partitionMapType.ElemType,
		},
		"auto_offset_reset": schema.StringAttribute{
			MarkdownDescription: "Where a partition starts at the table's first start when `starting_offset` gives it no " +
				"position: a partition `\"" + spec.StartingOffsetGroup + "\"` finds no committed offset for, or one that " +
				"`\"" + spec.StartingOffsetSpecific + "\"` and `\"" + spec.StartingOffsetTimestamp + "\"` leave out. One of " +
				quoted(spec.AutoOffsetResets) + ". Defaults to `\"" + spec.DefaultAutoOffsetReset + "\"`. `" +
				spec.AutoOffsetResetNone + "` fails the table, naming the topic and partition.",
			Optional: true,
			Computed: true,
			Default:  stringdefault.StaticString(spec.DefaultAutoOffsetReset),
		},
		"ending_offset": schema.StringAttribute{
			MarkdownDescription: "Where each run of a triggered pipeline (`continuous = false`) ends: one of " +
				quoted(spec.EndingOffsets) + ". `" + spec.EndingOffsetLatest + "` is the end of each partition when the run " +
				"starts; `" + spec.EndingOffsetSpecific + "` reads `ending_offsets`; `" + spec.EndingOffsetTimestamp + "` reads " +
				"`ending_timestamp` or `ending_offsets_by_timestamp`. The ends are fixed when a run starts; the run commits " +
				"up to them and the pipeline goes `" + spec.StateIdle + "`. On a table of a triggered pipeline it defaults to `\"" +
				spec.DefaultEndingOffset + "\"`; a continuous pipeline refuses every `ending_*` attribute at plan time. On a fanout " +
				"schema, not set means `\"" + spec.DefaultEndingOffset + "\"`, and the agent refuses `ending_*` when the " +
				"fanout schema's pipeline is continuous.",
			Optional:      true,
			Computed:      true,
			PlanModifiers: []planmodifier.String{endingOffsetDefault},
		},
		"ending_offsets": schema.MapAttribute{
			MarkdownDescription: "With `ending_offset = \"" + spec.EndingOffsetSpecific + "\"` (and required by it): the " +
				"offset each partition ends at (that offset is not read), by topic and partition number, " +
				"`{ \"events\" = { \"0\" = 100, \"1\" = -1 } }`; `-1` means latest, as in Spark's `endingOffsets` JSON. " +
				"Partitions it leaves out end at latest. An end before the partition's `starting_offsets` is refused." + partitionMapNote,
			Optional:    true,
			ElementType: partitionMapType.ElemType,
		},
		"ending_timestamp": schema.StringAttribute{
			MarkdownDescription: "With `ending_offset = \"" + spec.EndingOffsetTimestamp + "\"`: the time every partition " +
				"ends at, " + timeForms + ". Each partition ends before its first record whose timestamp is at or after it; " +
				"a partition without such a record ends at its end (`latest`). Exclusive with `ending_offsets_by_timestamp`.",
			Optional: true,
		},
		"ending_offsets_by_timestamp": schema.MapAttribute{
			MarkdownDescription: "With `ending_offset = \"" + spec.EndingOffsetTimestamp + "\"`: an end time per partition " +
				"in milliseconds since the epoch, by topic and partition number, as Spark's `endingOffsetsByTimestamp`. " +
				"Partitions it leaves out end at latest. Exclusive with `ending_timestamp`." + partitionMapNote,
			Optional:    true,
			ElementType: partitionMapType.ElemType,
		},
		"max_offsets_per_trigger": schema.Int64Attribute{
			MarkdownDescription: "Caps how many offsets one commit of the table covers, as Spark's `maxOffsetsPerTrigger`: " +
				"at each commit the cap is split across the partitions in proportion to their lag (each partition with lag " +
				"gets at least 1). A triggered run reads up to its end in as many capped commits as it needs. At least 1; " +
				"not set: no cap." + tablesOnly,
			Optional: true,
		},
		"min_offsets_per_trigger": schema.Int64Attribute{
			MarkdownDescription: "A commit waits until at least this many new offsets are available in total, or " +
				"`max_trigger_delay` has passed since the last commit, as Spark's `minOffsetsPerTrigger`. At least 1, and " +
				"at most `max_offsets_per_trigger`." + tablesOnly,
			Optional: true,
		},
		"max_trigger_delay": schema.StringAttribute{
			MarkdownDescription: "Longest time `min_offsets_per_trigger` holds a commit back, as a duration like `\"15m\"`, " +
				"as Spark's `maxTriggerDelay`. Requires `min_offsets_per_trigger`, and defaults to `\"" +
				spec.DefaultMaxTriggerDelay + "\"` when it is set." + tablesOnly,
			Optional:      true,
			Computed:      true,
			PlanModifiers: []planmodifier.String{maxTriggerDelayDefault},
		},
		"min_partitions": schema.Int64Attribute{
			MarkdownDescription: fmt.Sprintf("Asks for at least this many offset ranges read in parallel, as Spark's "+
				"`minPartitions`: the backlogs of the partitions with the most lag are split into ranges that are fetched "+
				"and decoded in parallel and added to the table in offset order, so commits stay in order and exactly once. "+
				"The live tail is read as usual. A range is never cut below 1,024 offsets. From 1 to %d; not set: one range per partition.%s", spec.MaxMinPartitions, tablesOnly),
			Optional: true,
		},
		"max_records_per_partition": schema.Int64Attribute{
			MarkdownDescription: "Splits a partition's backlog into ranges of at most this many offsets, fetched and " +
				"decoded in parallel and added to the table in offset order, as Spark's `maxRecordsPerPartition`. At least 1." +
				tablesOnly,
			Optional: true,
		},
		"fail_on_data_loss": schema.BoolAttribute{
			MarkdownDescription: "What happens when records the table has not read yet are gone: retention deleted them, " +
				"or the topic was deleted and re-created. `true` (default) fails the table, naming the exact gap of offsets. " +
				"`false` goes on from the earliest offset still there and records the gap (topic, partition, offsets, reason) " +
				"in the table status (`data_loss`), the metric `tributary_table_data_loss_offsets_total`, the agent's log and " +
				"the table's next commit. As Spark's `failOnDataLoss`.",
			Optional: true,
			Computed: true,
			Default:  booldefault.StaticBool(true),
		},
		"group_id": schema.StringAttribute{
			MarkdownDescription: "Kafka consumer group that the table's offsets are committed to after each table commit " +
				"(so that Kafka's tools, such as `kafka-consumer-groups.sh --describe`, show its lag) and that " +
				"`starting_offset = \"" + spec.StartingOffsetGroup + "\"` reads. The agent never joins the group. Not set: " +
				"`group_id_prefix` followed by `<pipeline>.<catalog>.<schema>.<table>` (a fanout schema's name in place of " +
				"the table for a fanout schema). Exclusive with `group_id_prefix`. Spark's `kafka.group.id`, Flink's " +
				"`properties.group.id`.",
			Optional: true,
		},
		"group_id_prefix": schema.StringAttribute{
			MarkdownDescription: "Prefix of the generated consumer group id (see `group_id`), as Spark's `groupIdPrefix`. " +
				"Not set: `\"" + spec.DefaultGroupIDPrefix + "\"`. Exclusive with `group_id`.",
			Optional: true,
		},
		"check_duplicated_group_id": schema.BoolAttribute{
			MarkdownDescription: "`true`: the table does not start while its consumer group has members (another " +
				"consumer uses the group); it stays `" + spec.StateStarting + "`, naming the members, and tries again, so " +
				"an apply fails after its wait. As Flink's `scan.check.duplicated.group.id`. Defaults to `false`.",
			Optional: true,
			Computed: true,
			Default:  booldefault.StaticBool(false),
		},
		"partition_discovery_interval": schema.StringAttribute{
			MarkdownDescription: "How often the table looks for new partitions of its topics and, with `topic_pattern`, " +
				"new matching topics, as a duration like `\"30s\"`; new ones are read from the earliest offset. `\"0s\"` " +
				"or a negative duration turns discovery off; otherwise at least `1s`. Ignored with `assign`. As Flink's " +
				"`scan.topic-partition-discovery.interval`. Defaults to `\"" + spec.DefaultPartitionDiscoveryInterval + "\"`.",
			Optional: true,
			Computed: true,
			Default:  stringdefault.StaticString(spec.DefaultPartitionDiscoveryInterval),
		},
		"bytes_estimate_window_length": schema.StringAttribute{
			MarkdownDescription: "How far back, as a duration like `\"10m\"` or `\"600s\"` (at least `1s`), the sizes of " +
				"the records fetched from a partition are averaged to turn its lag in records into the estimate `lag_bytes`, " +
				"as Spark's `bytesEstimateWindowLength` does for `estimatedTotalBytesBehindLatest`. The window ends at the " +
				"partition's latest fetch, so a partition that stopped fetching keeps the estimate of its last window. " +
				"Defaults to `\"" + spec.DefaultBytesEstimateWindowLength + "\"` (Spark's `300s`).",
			Optional: true,
			Computed: true,
			Default:  stringdefault.StaticString(spec.DefaultBytesEstimateWindowLength),
		},
		"client_properties": schema.MapAttribute{
			MarkdownDescription: "Kafka consumer properties by their Kafka name, as strings: " + clientPropertiesDoc() +
				". Any other key fails the plan, naming the key; properties that have an attribute of their own " +
				"(`group.id`, `auto.offset.reset`, `isolation.level`, `security.protocol`, `sasl.*`, `ssl.*`) say which " +
				"to set, and properties of group membership (`session.timeout.ms`, `heartbeat.interval.ms`, " +
				"`enable.auto.commit`, ...) are refused because the agent does not join the group. Write the keys " +
				"without Spark's `kafka.` and Flink's `properties.` prefixes. Tables with different client properties " +
				"use Kafka clients of their own.",
			Optional:    true,
			ElementType: types.StringType,
		},
	}
}

// clientPropertiesDoc lists the supported client properties with their
// bounds.
func clientPropertiesDoc() string {
	parts := make([]string, len(spec.ClientProperties))
	for i, key := range spec.ClientProperties {
		parts[i] = "`" + key + "`"
		if b := spec.ClientPropertyBounds(key); b != "" {
			parts[i] += " (" + b + ")"
		}
	}
	return strings.Join(parts, ", ")
}

// dependentDefault plans the default of a string option whose default
// depends on another value of the configuration: value when applies says
// so, unknown while that value is unknown, and null otherwise (the option
// does not apply, and the spec refuses it when set).
type dependentDefault struct {
	// shown says when the default applies, in Markdown.
	shown string
	value string
	// applies reads the configuration for the option at p.
	applies func(ctx context.Context, config tfsdk.Config, p path.Path) (applies, unknown bool)
}

// Description implements planmodifier.Describer.
func (d dependentDefault) Description(ctx context.Context) string {
	return strings.ReplaceAll(d.MarkdownDescription(ctx), "`", "")
}

// MarkdownDescription implements planmodifier.Describer.
func (d dependentDefault) MarkdownDescription(context.Context) string {
	return "defaults to `\"" + d.value + "\"` " + d.shown
}

// PlanModifyString implements planmodifier.String.
func (d dependentDefault) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if !req.ConfigValue.IsNull() {
		return
	}
	switch applies, unknown := d.applies(ctx, req.Config, req.Path); {
	case unknown:
		resp.PlanValue = types.StringUnknown()
	case applies:
		resp.PlanValue = types.StringValue(d.value)
	default:
		resp.PlanValue = types.StringNull()
	}
}

// maxTriggerDelayDefault plans max_trigger_delay: the default when the
// sibling min_offsets_per_trigger is set.
var maxTriggerDelayDefault = dependentDefault{
	shown: "when `min_offsets_per_trigger` is set",
	value: spec.DefaultMaxTriggerDelay,
	applies: func(ctx context.Context, config tfsdk.Config, p path.Path) (bool, bool) {
		var minOffsets types.Int64
		if d := config.GetAttribute(ctx, p.ParentPath().AtName("min_offsets_per_trigger"), &minOffsets); d.HasError() {
			return false, false
		}
		return !minOffsets.IsNull() && !minOffsets.IsUnknown(), minOffsets.IsUnknown()
	},
}

// endingOffsetDefault plans ending_offset: the default on a table of a
// triggered pipeline. A fanout schema has no continuous attribute of its
// own, so there it stays null.
var endingOffsetDefault = dependentDefault{
	shown: "on a table of a triggered pipeline (`continuous = false`)",
	value: spec.DefaultEndingOffset,
	applies: func(ctx context.Context, config tfsdk.Config, _ path.Path) (bool, bool) {
		var continuous types.Bool
		if d := config.GetAttribute(ctx, path.Root("continuous"), &continuous); d.HasError() {
			return false, false
		}
		return !continuous.IsNull() && !continuous.IsUnknown() && !continuous.ValueBool(), continuous.IsUnknown()
	},
}
