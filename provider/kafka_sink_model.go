package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// kafkaSinkResourceModel is the state of tributary_kafka_sink; its
// attributes are spec.KafkaSink's JSON names.
type kafkaSinkResourceModel struct {
	ID                    types.String   `tfsdk:"id"`
	Name                  types.String   `tfsdk:"name"`
	Connection            types.String   `tfsdk:"connection_name"`
	SourceTable           types.String   `tfsdk:"source_table"`
	Source                types.Object   `tfsdk:"source"`
	Topic                 types.String   `tfsdk:"topic"`
	TableTopicMapping     types.String   `tfsdk:"table_topic_mapping"`
	PartitionStrategy     types.String   `tfsdk:"partition_strategy"`
	ValueFormat           types.String   `tfsdk:"value_format"`
	KeepChangedFieldsOnly types.Bool     `tfsdk:"keep_changed_fields_only"`
	IncludeSchema         types.Bool     `tfsdk:"include_schema"`
	FullTableID           types.Bool     `tfsdk:"full_table_id"`
	IncludeHeaders        types.Bool     `tfsdk:"include_headers"`
	Compression           types.String   `tfsdk:"compression"`
	DeliveryGuarantee     types.String   `tfsdk:"delivery_guarantee"`
	EnableIdempotence     types.Bool     `tfsdk:"enable_idempotence"`
	TransactionalID       types.String   `tfsdk:"transactional_id"`
	FlushInterval         types.String   `tfsdk:"flush_interval"`
	Timeouts              timeouts.Value `tfsdk:"timeouts"`
}

// newSinkConverter is newSpecConverter for a Kafka sink.
func newSinkConverter(ctx context.Context, readFiles bool) *specConverter {
	c := newSpecConverter(ctx, readFiles)
	c.what = "Kafka sink"
	return c
}

// kafkaSink converts m into a spec Kafka sink; see specConverter.
func (c *specConverter) kafkaSink(m *kafkaSinkResourceModel) *spec.KafkaSink {
	k := &spec.KafkaSink{
		Name:                  c.str("name", m.Name),
		Connection:            c.str("connection_name", m.Connection),
		SourceTable:           c.str("source_table", m.SourceTable),
		Topic:                 c.str("topic", m.Topic),
		TableTopicMapping:     c.str("table_topic_mapping", m.TableTopicMapping),
		PartitionStrategy:     c.str("partition_strategy", m.PartitionStrategy),
		ValueFormat:           c.str("value_format", m.ValueFormat),
		KeepChangedFieldsOnly: c.boolPtr("keep_changed_fields_only", m.KeepChangedFieldsOnly),
		IncludeSchema:         c.boolPtr("include_schema", m.IncludeSchema),
		FullTableID:           c.boolPtr("full_table_id", m.FullTableID),
		IncludeHeaders:        c.boolPtr("include_headers", m.IncludeHeaders),
		Compression:           c.str("compression", m.Compression),
		DeliveryGuarantee:     c.str("delivery_guarantee", m.DeliveryGuarantee),
		EnableIdempotence:     c.boolPtr("enable_idempotence", m.EnableIdempotence),
		TransactionalID:       c.str("transactional_id", m.TransactionalID),
		FlushInterval:         c.str("flush_interval", m.FlushInterval),
	}
	if m.Source.IsUnknown() {
		c.unknown["source"] = true
	}
	if !m.Source.IsNull() && !m.Source.IsUnknown() {
		ko := c.kafkaOptions("source", m.Source)
		k.Source = &ko
	}
	return k
}

// eachSinkSchemaFile calls fn for the file attribute of every options
// object of the transformers of k's source.
func eachSinkSchemaFile(k *spec.KafkaSink, fn func(f *schemaFile)) {
	if k.Source != nil {
		eachKafkaSchemaFile("source", k.Source, fn)
	}
}

// setFromSpec sets m from a sink as the agent stores it.
func (m *kafkaSinkResourceModel) setFromSpec(ctx context.Context, k *spec.KafkaSink, diags *diag.Diagnostics) {
	k.Normalize()
	m.ID = types.StringValue(k.Name)
	m.Name = types.StringValue(k.Name)
	m.Connection = types.StringValue(k.Connection)
	m.SourceTable = stringOrNull(k.SourceTable)
	m.Source = types.ObjectNull(pipelineTypes().kafkaOptions.AttrTypes)
	if k.Source != nil {
		co := connectorOptionsToObject(ctx, &spec.ConnectorOptions{KafkaOptions: *k.Source}, diags)
		if ko, ok := co.Attributes()["kafka_options"].(types.Object); ok {
			m.Source = ko
		}
	}
	m.Topic = stringOrNull(k.Topic)
	m.TableTopicMapping = stringOrNull(k.TableTopicMapping)
	m.PartitionStrategy = types.StringValue(k.PartitionStrategy)
	m.ValueFormat = types.StringValue(k.ValueFormat)
	m.KeepChangedFieldsOnly = types.BoolPointerValue(k.KeepChangedFieldsOnly)
	m.IncludeSchema = types.BoolPointerValue(k.IncludeSchema)
	m.FullTableID = types.BoolPointerValue(k.FullTableID)
	m.IncludeHeaders = types.BoolPointerValue(k.IncludeHeaders)
	m.Compression = types.StringValue(k.Compression)
	m.DeliveryGuarantee = types.StringValue(k.DeliveryGuarantee)
	m.EnableIdempotence = types.BoolPointerValue(k.EnableIdempotence)
	m.TransactionalID = stringOrNull(k.TransactionalID)
	m.FlushInterval = types.StringValue(k.FlushInterval)
}
