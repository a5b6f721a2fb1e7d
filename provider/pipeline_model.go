package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// pipelineResourceModel is the state of tributary_pipeline. Nested objects
// are types.Object and types.List, not structs, because at plan time any of
// them may be unknown (a dynamic block, a value from another resource).
type pipelineResourceModel struct {
	ID                 types.String   `tfsdk:"id"`
	Name               types.String   `tfsdk:"name"`
	Connection         types.String   `tfsdk:"connection_name"`
	DestinationCatalog types.String   `tfsdk:"destination_catalog"`
	DestinationSchema  types.String   `tfsdk:"destination_schema"`
	StorageLocation    types.String   `tfsdk:"storage_location"`
	Continuous         types.Bool     `tfsdk:"continuous"`
	FlushInterval      types.String   `tfsdk:"flush_interval"`
	TargetFileSizeMB   types.Int64    `tfsdk:"target_file_size_mb"`
	MaxRowsPerFile     types.Int64    `tfsdk:"max_rows_per_file"`
	Table              types.List     `tfsdk:"table"`
	Timeouts           timeouts.Value `tfsdk:"timeouts"`
}

// tableModel is one table block.
type tableModel struct {
	DestinationTable   types.String `tfsdk:"destination_table"`
	ConnectorOptions   types.Object `tfsdk:"connector_options"`
	TableConfiguration types.Object `tfsdk:"table_configuration"`
}

type connectorOptionsModel struct {
	KafkaOptions types.Object `tfsdk:"kafka_options"`
}

type kafkaOptionsModel struct {
	Topics           types.List   `tfsdk:"topics"`
	TopicPattern     types.String `tfsdk:"topic_pattern"`
	StartingOffset   types.String `tfsdk:"starting_offset"`
	IsolationLevel   types.String `tfsdk:"isolation_level"`
	KeyTransformer   types.Object `tfsdk:"key_transformer"`
	ValueTransformer types.Object `tfsdk:"value_transformer"`
}

type transformerModel struct {
	Format      types.String `tfsdk:"format"`
	JSONOptions types.Object `tfsdk:"json_options"`
}

type jsonOptionsModel struct {
	Schema           types.String `tfsdk:"schema"`
	SchemaFilePath   types.String `tfsdk:"schema_file_path"`
	SchemaFileSHA256 types.String `tfsdk:"schema_file_sha256"`
}

type tableConfigurationModel struct {
	SourceMetadataColumn types.String `tfsdk:"source_metadata_column"`
}

// pipeline converts m into a spec pipeline; see specConverter.
func (c *specConverter) pipeline(m *pipelineResourceModel) *spec.Pipeline {
	p := &spec.Pipeline{
		Name:               c.str("name", m.Name),
		Connection:         c.str("connection_name", m.Connection),
		DestinationCatalog: c.str("destination_catalog", m.DestinationCatalog),
		DestinationSchema:  c.str("destination_schema", m.DestinationSchema),
		StorageLocation:    c.str("storage_location", m.StorageLocation),
		Continuous:         c.boolPtr("continuous", m.Continuous),
		FlushInterval:      c.str("flush_interval", m.FlushInterval),
		TargetFileSizeMB:   c.int64Or("target_file_size_mb", m.TargetFileSizeMB, spec.DefaultTargetFileSizeMB),
		MaxRowsPerFile:     c.int64Or("max_rows_per_file", m.MaxRowsPerFile, spec.DefaultMaxRowsPerFile),
	}
	for i, o := range c.objects("table", m.Table) {
		p.Tables = append(p.Tables, c.table(fmt.Sprintf("table[%d]", i), o))
	}
	return p
}

func (c *specConverter) table(p string, o types.Object) spec.Table {
	var t spec.Table
	var m tableModel
	if c.object(p, o, &m) != objectKnown {
		return t
	}
	t.DestinationTable = c.str(p+".destination_table", m.DestinationTable)
	var co connectorOptionsModel
	if c.object(p+".connector_options", m.ConnectorOptions, &co) == objectKnown {
		t.ConnectorOptions.KafkaOptions = c.kafkaOptions(p+".connector_options.kafka_options", co.KafkaOptions)
	}
	var tc tableConfigurationModel
	if c.object(p+".table_configuration", m.TableConfiguration, &tc) == objectKnown {
		t.TableConfiguration.SourceMetadataColumn = c.str(p+".table_configuration.source_metadata_column", tc.SourceMetadataColumn)
	}
	return t
}

func (c *specConverter) kafkaOptions(p string, o types.Object) spec.KafkaOptions {
	var ko spec.KafkaOptions
	var m kafkaOptionsModel
	if c.object(p, o, &m) != objectKnown {
		return ko
	}
	ko.Topics = c.strList(p+".topics", m.Topics)
	ko.TopicPattern = c.str(p+".topic_pattern", m.TopicPattern)
	ko.StartingOffset = c.str(p+".starting_offset", m.StartingOffset)
	ko.IsolationLevel = c.str(p+".isolation_level", m.IsolationLevel)
	ko.KeyTransformer = c.transformer(p+".key_transformer", m.KeyTransformer)
	ko.ValueTransformer = c.transformer(p+".value_transformer", m.ValueTransformer)
	return ko
}

func (c *specConverter) transformer(p string, o types.Object) *spec.Transformer {
	var m transformerModel
	switch c.object(p, o, &m) {
	case objectNull:
		return nil
	case objectUnknown:
		return &spec.Transformer{}
	}
	return &spec.Transformer{
		Format:      c.str(p+".format", m.Format),
		JSONOptions: c.jsonOptions(p+".json_options", m.JSONOptions),
	}
}

func (c *specConverter) jsonOptions(p string, o types.Object) *spec.JSONOptions {
	var m jsonOptionsModel
	switch c.object(p, o, &m) {
	case objectNull:
		return nil
	case objectUnknown:
		return &spec.JSONOptions{}
	}
	jo := &spec.JSONOptions{
		Schema:         c.str(p+".schema", m.Schema),
		SchemaFilePath: c.str(p+".schema_file_path", m.SchemaFilePath),
	}
	if c.readFiles && jo.SchemaFilePath != "" {
		content, err := readSchemaFile(jo.SchemaFilePath)
		if err != nil {
			fp := p + ".schema_file_path"
			addFieldError(&c.diags, "pipeline", spec.FieldError{Path: fp, Detail: err.Error()})
			c.unreadable[fp] = true
		}
		jo.SchemaFileContent = content
	}
	return jo
}

// eachJSONOptions calls fn with the spec path of every json_options of p
// and its value, in table order, key before value.
func eachJSONOptions(p *spec.Pipeline, fn func(path string, jo *spec.JSONOptions)) {
	for i := range p.Tables {
		ko := &p.Tables[i].ConnectorOptions.KafkaOptions
		for _, side := range []struct {
			name string
			tr   *spec.Transformer
		}{{"key_transformer", ko.KeyTransformer}, {"value_transformer", ko.ValueTransformer}} {
			if side.tr != nil && side.tr.JSONOptions != nil {
				fn(fmt.Sprintf("table[%d].connector_options.kafka_options.%s.json_options", i, side.name), side.tr.JSONOptions)
			}
		}
	}
}

// setFromSpec sets the configurable attributes of m from a pipeline as the
// agent stores it. prior (nil on import) keeps the shapes the spec cannot
// tell apart: an empty table_configuration block versus none, and
// storage_location = "" versus none.
func (m *pipelineResourceModel) setFromSpec(ctx context.Context, p *spec.Pipeline, prior *pipelineResourceModel, diags *diag.Diagnostics) {
	p.Normalize()
	m.ID = types.StringValue(p.Name)
	m.Name = types.StringValue(p.Name)
	m.Connection = types.StringValue(p.Connection)
	m.DestinationCatalog = types.StringValue(p.DestinationCatalog)
	m.DestinationSchema = types.StringValue(p.DestinationSchema)
	m.StorageLocation = stringOrNull(p.StorageLocation)
	if p.StorageLocation == "" && prior != nil && prior.StorageLocation.Equal(types.StringValue("")) {
		m.StorageLocation = prior.StorageLocation // "" means the warehouse, as null does: no diff
	}
	m.Continuous = types.BoolValue(p.IsContinuous())
	m.FlushInterval = types.StringValue(p.FlushInterval)
	m.TargetFileSizeMB = types.Int64Value(p.TargetFileSizeMB)
	m.MaxRowsPerFile = types.Int64Value(p.MaxRowsPerFile)

	var priorTables []types.Object
	if prior != nil && !prior.Table.IsNull() && !prior.Table.IsUnknown() {
		c := newSpecConverter(ctx, false)
		priorTables = c.objects("table", prior.Table)
	}
	ty := pipelineTypes()
	tables := make([]types.Object, len(p.Tables))
	for i := range p.Tables {
		keepEmptyConfig := false
		if i < len(priorTables) {
			var pt tableModel
			diags.Append(priorTables[i].As(ctx, &pt, basetypes.ObjectAsOptions{})...)
			keepEmptyConfig = !pt.TableConfiguration.IsNull()
		}
		tables[i] = tableToObject(ctx, &p.Tables[i], keepEmptyConfig, diags)
	}
	list, d := types.ListValueFrom(ctx, ty.table, tables)
	diags.Append(d...)
	m.Table = list
}

func tableToObject(ctx context.Context, t *spec.Table, keepEmptyConfig bool, diags *diag.Diagnostics) types.Object {
	ty := pipelineTypes()
	ko := &t.ConnectorOptions.KafkaOptions
	topics := types.ListNull(types.StringType)
	if len(ko.Topics) > 0 {
		var d diag.Diagnostics
		topics, d = types.ListValueFrom(ctx, types.StringType, ko.Topics)
		diags.Append(d...)
	}
	kafka := objectValue(ctx, diags, ty.kafkaOptions, kafkaOptionsModel{
		Topics:           topics,
		TopicPattern:     stringOrNull(ko.TopicPattern),
		StartingOffset:   types.StringValue(ko.StartingOffset),
		IsolationLevel:   types.StringValue(ko.IsolationLevel),
		KeyTransformer:   transformerToObject(ctx, ko.KeyTransformer, diags),
		ValueTransformer: transformerToObject(ctx, ko.ValueTransformer, diags),
	})
	tableConfig := types.ObjectNull(ty.tableConfiguration.AttrTypes)
	if t.TableConfiguration != (spec.TableConfiguration{}) || keepEmptyConfig {
		tableConfig = objectValue(ctx, diags, ty.tableConfiguration, tableConfigurationModel{
			SourceMetadataColumn: stringOrNull(t.TableConfiguration.SourceMetadataColumn),
		})
	}
	return objectValue(ctx, diags, ty.table, tableModel{
		DestinationTable:   types.StringValue(t.DestinationTable),
		ConnectorOptions:   objectValue(ctx, diags, ty.connectorOptions, connectorOptionsModel{KafkaOptions: kafka}),
		TableConfiguration: tableConfig,
	})
}

func transformerToObject(ctx context.Context, tr *spec.Transformer, diags *diag.Diagnostics) types.Object {
	ty := pipelineTypes()
	if tr == nil {
		return types.ObjectNull(ty.transformer.AttrTypes)
	}
	jo := types.ObjectNull(ty.jsonOptions.AttrTypes)
	if o := tr.JSONOptions; o != nil {
		sha := types.StringNull()
		if o.SchemaFilePath != "" {
			sha = types.StringValue(schemaSHA256(o.SchemaFileContent))
		}
		jo = objectValue(ctx, diags, ty.jsonOptions, jsonOptionsModel{
			Schema:           stringOrNull(o.Schema),
			SchemaFilePath:   stringOrNull(o.SchemaFilePath),
			SchemaFileSHA256: sha,
		})
	}
	return objectValue(ctx, diags, ty.transformer, transformerModel{
		Format:      types.StringValue(tr.Format),
		JSONOptions: jo,
	})
}
