package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The attributes of the changelog formats on the ingest side: the options
// of the Debezium and Canal envelopes (debezium_options, canal_options), the
// options of field names and the error budget in kafka_options (their
// models and conversions are in changelog_options_model.go).

// changelogFormats names the changelog formats for descriptions.
var changelogFormats = "`" + spec.FormatDebeziumJSON + "` or `" + spec.FormatCanalJSON + "`"

// shardAttributes are distributed_tables and merge_sharded_tables of
// debezium_options and canal_options.
func shardAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"distributed_tables": schema.BoolAttribute{
			MarkdownDescription: "`true`: one table's events are spread over several partitions, as Flink CDC's " +
				"`distributed-tables`. The agent always infers and evolves one schema per table from the records of " +
				"all the partitions it reads (what Flink does with this option on), so both values read the same; " +
				"it is accepted so that Flink configurations carry over. It no longer merges sharded databases: on a " +
				"fanout schema routed by the format's default route, `true` requires `merge_sharded_tables` to be set. " +
				"Defaults to `false`.",
			Optional: true,
			Computed: true,
			Default:  booldefault.StaticBool(false),
		},
		"merge_sharded_tables": schema.BoolAttribute{
			MarkdownDescription: "`true`: the tables of one name in several databases are shards of one table: a " +
				"fanout schema without `fanout_by` routes each event to `<table>` instead of `<db>_<table>`. " +
				"`distributed_tables` had this meaning before it took Flink's. Defaults to `false`.",
			Optional: true,
			Computed: true,
			Default:  booldefault.StaticBool(false),
		},
	}
}

func debeziumOptionsSchema() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "Options of format `" + spec.FormatDebeziumJSON + "`. Not set: every default.",
		Optional:            true,
		Attributes: withAttributes(map[string]schema.Attribute{
			"schema_include": schema.BoolAttribute{
				MarkdownDescription: "`true`: each event is wrapped with its Kafka Connect schema, " +
					"`{\"schema\": ..., \"payload\": ...}` (the JSON converter's `schemas.enable`), and the row image's " +
					"columns are typed by that schema instead of inferred from the values. As Flink's " +
					"`debezium-json.schema-include`. The key, wrapped the same way, is then read from its `payload` " +
					"when parsed into columns (`JSON` with `json_options`). " +
					"Exclusive with `json_options.schema` and `schema_file_path`. " +
					"Defaults to `false`; events with the wrapper are read either way.",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
			},
		}, shardAttributes()),
	}
}

func canalOptionsSchema() schema.SingleNestedAttribute {
	patternNote := " A regular expression (RE2: Java's syntax without look-around or back-references, refused at " +
		"plan time) matched against the whole name. Events of other tables give no row; their offsets are committed. " +
		"Not set: every "
	return schema.SingleNestedAttribute{
		MarkdownDescription: "Options of format `" + spec.FormatCanalJSON + "`. Not set: every default.",
		Optional:            true,
		Attributes: withAttributes(map[string]schema.Attribute{
			"database_include": schema.StringAttribute{
				MarkdownDescription: "Keeps the events of the databases it matches, as Flink's `canal-json.database.include`." +
					patternNote + "database.",
				Optional: true,
			},
			"table_include": schema.StringAttribute{
				MarkdownDescription: "Keeps the events of the tables it matches, as Flink's `canal-json.table.include`." +
					patternNote + "table.",
				Optional: true,
			},
			"infer_schema_strategy": schema.StringAttribute{
				MarkdownDescription: "How the row image is typed: one of " + quoted(spec.InferSchemaStrategies) + ". `" +
					spec.InferSchemaAuto + "` (the default) infers the types from the values as `json_options` says; `" +
					spec.InferSchemaSQLType + "` types each column by the event's `sqlType` (JDBC type codes); `" +
					spec.InferSchemaMySQLType + "` by its `mysqlType` (`decimal(10,2)` is `DECIMAL(10,2)`, `datetime` is " +
					"`TIMESTAMP_NTZ`). Canal writes every value as a string; they are read into the column's type. " +
					"`" + spec.InferSchemaSQLType + "` and `" + spec.InferSchemaMySQLType + "` are exclusive with a fixed " +
					"`json_options.schema`.",
				Optional: true,
				Computed: true,
				Default:  stringdefault.StaticString(spec.InferSchemaAuto),
			},
			"tinyint1_as_boolean": schema.BoolAttribute{
				MarkdownDescription: "Types MySQL `tinyint(1)` as `BOOLEAN` (`" + spec.InferSchemaMySQLType + "`). Defaults to `true`.",
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(true),
			},
			"mysql_timestamp_as_ntz": schema.BoolAttribute{
				MarkdownDescription: "Types MySQL `timestamp` as `TIMESTAMP_NTZ`, as Canal writes its values without a " +
					"zone; `false` types it `TIMESTAMP`, its values read as UTC. Defaults to `true`.",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(true),
			},
		}, shardAttributes()),
	}
}

// fieldAttributes are the attributes of kafka_options that name the
// columns parsed from keys and values and set the error budget.
func fieldAttributes() map[string]schema.Attribute {
	prefix := func(side string) string {
		return "Prefix of the names of the columns parsed from the record " + side + " (a column is the prefix followed by " +
			"the field's name; decoding still matches the field's own name), as Flink's `" + side + ".fields-prefix`. It " +
			"never applies to the single `" + side + "` column of a " + side + " that is not parsed into fields. " +
			"Neither of `key_fields_prefix` and `value_fields_prefix` may be a prefix of the other. Not set: no prefix."
	}
	return map[string]schema.Attribute{
		"key_fields_prefix":   schema.StringAttribute{MarkdownDescription: prefix("key"), Optional: true},
		"value_fields_prefix": schema.StringAttribute{MarkdownDescription: prefix("value"), Optional: true},
		"duplicate_field_strategy": schema.StringAttribute{
			MarkdownDescription: "What happens when a column parsed from the key and one parsed from the value have the " +
				"same name (ignoring case): one of " + quoted(spec.DuplicateFieldStrategies) + ". Defaults to `\"" +
				spec.DuplicateFieldException + "\"`: the plan fails, naming the column. `" + spec.DuplicateFieldPreferKey +
				"` keeps the key's column and does not decode the value's field; `" + spec.DuplicateFieldPreferValue +
				"` the other way round. An inferred side never takes a column of the other side's: its field of that " +
				"name is rescued or ignored, whatever `duplicate_field_strategy` says.",
			Optional: true,
			Computed: true,
			Default:  stringdefault.StaticString(spec.DuplicateFieldException),
		},
		"ignore_errors": schema.BoolAttribute{
			MarkdownDescription: "`true`: a record whose key or value does not decode (what would otherwise go to " +
				"`_corrupt_record`, fail a `FAILFAST` table or fail on a malformed change event) gets no row in the " +
				"table; it is counted (`error_records` of the `tributary_table` data source, the metric " +
				"`tributary_table_error_records_total`) and kept in the table `" + spec.DirtyRecordsTable + "` of the " +
				"pipeline's destination schema with its raw key, value, metadata, destination table, error and time. " +
				"As Flink's `ignore-parse-errors`. Defaults to `false`. Two pipelines with `ignore_errors` cannot share a " +
				"destination schema.",
			Optional: true,
			Computed: true,
			Default:  booldefault.StaticBool(false),
		},
		"error_tolerance_max_count": schema.Int64Attribute{
			MarkdownDescription: "With `ignore_errors = true`: how many records that do not decode the table takes; the " +
				"next one stops it `" + spec.StateFailed + "`, naming the count, the limit and `" + spec.DirtyRecordsTable +
				"`, without committing the chunk (up to 1024 records of one partition) that holds the record past the " +
				"limit, its good records included. The count is kept in the table's log, so it " +
				"survives restarts. `-1` is no limit. Defaults to `" + fmt.Sprint(spec.DefaultErrorToleranceMaxCount) +
				"` when `ignore_errors = true`.",
			Optional:      true,
			Computed:      true,
			PlanModifiers: []planmodifier.Int64{errorToleranceDefault{}},
		},
	}
}

// errorToleranceDefault plans error_tolerance_max_count: the default when
// the sibling ignore_errors is true, null otherwise (the option does not
// apply, and the spec refuses it when set).
type errorToleranceDefault struct{}

// Description implements planmodifier.Describer.
func (d errorToleranceDefault) Description(ctx context.Context) string {
	return strings.ReplaceAll(d.MarkdownDescription(ctx), "`", "")
}

// MarkdownDescription implements planmodifier.Describer.
func (errorToleranceDefault) MarkdownDescription(context.Context) string {
	return fmt.Sprintf("defaults to `%d` when `ignore_errors = true`", spec.DefaultErrorToleranceMaxCount)
}

// PlanModifyInt64 implements planmodifier.Int64.
func (errorToleranceDefault) PlanModifyInt64(ctx context.Context, req planmodifier.Int64Request, resp *planmodifier.Int64Response) {
	if !req.ConfigValue.IsNull() {
		return
	}
	var ignore types.Bool
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, req.Path.ParentPath().AtName("ignore_errors"), &ignore)...)
	switch {
	case ignore.IsUnknown():
		resp.PlanValue = types.Int64Unknown()
	case ignore.ValueBool():
		resp.PlanValue = types.Int64Value(spec.DefaultErrorToleranceMaxCount)
	default:
		resp.PlanValue = types.Int64Null()
	}
}

// rowInfers reads, from config, whether the json_options at p infer the
// columns: schema_evolution_mode is set, or the transformer's format is a
// changelog format and json_options declare no schema (see
// spec.Transformer.RowOptions). unknown says a value it needs is not
// known yet.
func rowInfers(ctx context.Context, config tfsdk.Config, p path.Path) (infers, unknown bool, diags diag.Diagnostics) {
	var mode, ddl, file, format types.String
	for _, a := range []struct {
		p path.Path
		v *types.String
	}{
		{p.AtName("schema_evolution_mode"), &mode}, {p.AtName("schema"), &ddl}, {p.AtName("schema_file_path"), &file},
		{p.ParentPath().AtName("format"), &format},
	} {
		diags.Append(config.GetAttribute(ctx, a.p, a.v)...)
	}
	if diags.HasError() {
		return false, false, diags
	}
	if mode.IsUnknown() {
		return false, true, diags
	}
	if mode.ValueString() != "" {
		return true, false, diags
	}
	changelog := (&spec.Transformer{Format: format.ValueString()}).Changelog()
	if !changelog || !ddl.IsNull() && !ddl.IsUnknown() || !file.IsNull() && !file.IsUnknown() {
		return false, format.IsUnknown(), diags
	}
	return true, ddl.IsUnknown() || file.IsUnknown(), diags
}

// changelogModeDefault plans schema_evolution_mode when it is not set:
// ADD_NEW_COLUMNS_WITH_TYPE_WIDENING on the json_options of a changelog
// format that declare no schema, as the agent infers such row images
// (Flink's continuous strategy); null otherwise.
var changelogModeDefault = dependentDefault{
	shown: "on a changelog format (" + changelogFormats + ") whose `json_options` set neither `schema` nor `schema_file_path`",
	value: spec.SchemaEvolutionAddNewColumnsWithTypeWidening,
	applies: func(ctx context.Context, config tfsdk.Config, p path.Path) (bool, bool) {
		infers, unknown, _ := rowInfers(ctx, config, p.ParentPath())
		return infers, unknown
	},
}
