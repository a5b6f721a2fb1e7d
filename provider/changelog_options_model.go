package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// debeziumOptionsModel is debezium_options of a transformer.
type debeziumOptionsModel struct {
	SchemaInclude      types.Bool `tfsdk:"schema_include"`
	DistributedTables  types.Bool `tfsdk:"distributed_tables"`
	MergeShardedTables types.Bool `tfsdk:"merge_sharded_tables"`
}

// canalOptionsModel is canal_options of a transformer.
type canalOptionsModel struct {
	DatabaseInclude     types.String `tfsdk:"database_include"`
	TableInclude        types.String `tfsdk:"table_include"`
	InferSchemaStrategy types.String `tfsdk:"infer_schema_strategy"`
	Tinyint1AsBoolean   types.Bool   `tfsdk:"tinyint1_as_boolean"`
	MySQLTimestampAsNTZ types.Bool   `tfsdk:"mysql_timestamp_as_ntz"`
	DistributedTables   types.Bool   `tfsdk:"distributed_tables"`
	MergeShardedTables  types.Bool   `tfsdk:"merge_sharded_tables"`
}

// debeziumOptions converts debezium_options at p.
func (c *specConverter) debeziumOptions(p string, o types.Object) *spec.DebeziumOptions {
	return convertObject(c, p, o, func(m *debeziumOptionsModel) *spec.DebeziumOptions {
		return &spec.DebeziumOptions{
			SchemaInclude:      c.boolPtr(p+".schema_include", m.SchemaInclude),
			DistributedTables:  c.boolPtr(p+".distributed_tables", m.DistributedTables),
			MergeShardedTables: c.boolPtr(p+".merge_sharded_tables", m.MergeShardedTables),
		}
	})
}

// canalOptions converts canal_options at p.
func (c *specConverter) canalOptions(p string, o types.Object) *spec.CanalOptions {
	return convertObject(c, p, o, func(m *canalOptionsModel) *spec.CanalOptions {
		return &spec.CanalOptions{
			DatabaseInclude:     c.str(p+".database_include", m.DatabaseInclude),
			TableInclude:        c.str(p+".table_include", m.TableInclude),
			InferSchemaStrategy: c.str(p+".infer_schema_strategy", m.InferSchemaStrategy),
			Tinyint1AsBoolean:   c.boolPtr(p+".tinyint1_as_boolean", m.Tinyint1AsBoolean),
			MySQLTimestampAsNTZ: c.boolPtr(p+".mysql_timestamp_as_ntz", m.MySQLTimestampAsNTZ),
			DistributedTables:   c.boolPtr(p+".distributed_tables", m.DistributedTables),
			MergeShardedTables:  c.boolPtr(p+".merge_sharded_tables", m.MergeShardedTables),
		}
	})
}

// fieldOptions sets the options of fieldAttributes of ko from m, the
// kafka_options at spec path p.
func (c *specConverter) fieldOptions(p string, m *kafkaOptionsModel, ko *spec.KafkaOptions) {
	ko.KeyFieldsPrefix = c.str(p+".key_fields_prefix", m.KeyFieldsPrefix)
	ko.ValueFieldsPrefix = c.str(p+".value_fields_prefix", m.ValueFieldsPrefix)
	ko.DuplicateFieldStrategy = c.str(p+".duplicate_field_strategy", m.DuplicateFieldStrategy)
	ko.IgnoreErrors = c.boolPtr(p+".ignore_errors", m.IgnoreErrors)
	ko.ErrorToleranceMaxCount = c.int64Ptr(p+".error_tolerance_max_count", m.ErrorToleranceMaxCount)
}

// setFieldOptions sets the attributes of fieldAttributes of m from ko, as
// the agent stores it (normalized).
func (m *kafkaOptionsModel) setFieldOptions(ko *spec.KafkaOptions) {
	m.KeyFieldsPrefix = stringOrNull(ko.KeyFieldsPrefix)
	m.ValueFieldsPrefix = stringOrNull(ko.ValueFieldsPrefix)
	m.DuplicateFieldStrategy = stringOrDefault(ko.DuplicateFieldStrategy, spec.DuplicateFieldException)
	m.IgnoreErrors = types.BoolValue(ko.IgnoresErrors())
	m.ErrorToleranceMaxCount = types.Int64Null()
	if ko.IgnoresErrors() {
		m.ErrorToleranceMaxCount = types.Int64Value(ko.MaxErrors())
	}
}

// debeziumOptionsToObject is debezium_options; null for nil.
func debeziumOptionsToObject(ctx context.Context, o *spec.DebeziumOptions, diags *diag.Diagnostics) types.Object {
	return objectOrNull(ctx, diags, pipelineTypes().debeziumOptions, o, func(o *spec.DebeziumOptions) debeziumOptionsModel {
		tr := &spec.Transformer{Format: spec.FormatDebeziumJSON, DebeziumOptions: o}
		return debeziumOptionsModel{
			SchemaInclude:      types.BoolValue(o.SchemaIncluded()),
			DistributedTables:  types.BoolValue(tr.Distributed()),
			MergeShardedTables: types.BoolValue(tr.MergesShards()),
		}
	})
}

// canalOptionsToObject is canal_options; null for nil.
func canalOptionsToObject(ctx context.Context, o *spec.CanalOptions, diags *diag.Diagnostics) types.Object {
	return objectOrNull(ctx, diags, pipelineTypes().canalOptions, o, func(o *spec.CanalOptions) canalOptionsModel {
		tr := &spec.Transformer{Format: spec.FormatCanalJSON, CanalOptions: o}
		return canalOptionsModel{
			DatabaseInclude:     stringOrNull(o.DatabaseInclude),
			TableInclude:        stringOrNull(o.TableInclude),
			InferSchemaStrategy: types.StringValue(o.Strategy()),
			Tinyint1AsBoolean:   types.BoolValue(o.TinyintAsBoolean()),
			MySQLTimestampAsNTZ: types.BoolValue(o.TimestampAsNTZ()),
			DistributedTables:   types.BoolValue(tr.Distributed()),
			MergeShardedTables:  types.BoolValue(tr.MergesShards()),
		}
	})
}
