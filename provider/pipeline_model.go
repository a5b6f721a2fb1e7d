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
	ID                  types.String   `tfsdk:"id"`
	Name                types.String   `tfsdk:"name"`
	Connection          types.String   `tfsdk:"connection_name"`
	DestinationCatalog  types.String   `tfsdk:"destination_catalog"`
	DestinationSchema   types.String   `tfsdk:"destination_schema"`
	StorageLocation     types.String   `tfsdk:"storage_location"`
	Continuous          types.Bool     `tfsdk:"continuous"`
	FlushInterval       types.String   `tfsdk:"flush_interval"`
	TargetFileSizeMB    types.Int64    `tfsdk:"target_file_size_mb"`
	MaxRowsPerFile      types.Int64    `tfsdk:"max_rows_per_file"`
	AutoCompact         types.Bool     `tfsdk:"auto_compact"`
	AutoCompactMinFiles types.Int64    `tfsdk:"auto_compact_min_files"`
	AutoVacuum          types.Bool     `tfsdk:"auto_vacuum"`
	Table               types.List     `tfsdk:"table"`
	Timeouts            timeouts.Value `tfsdk:"timeouts"`
	// Trigger is the provider's own: the agent never sees it.
	Trigger types.String `tfsdk:"trigger"`
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

	// The attributes of consumerAttributes.
	Assign                     types.Map    `tfsdk:"assign"`
	StartingTimestamp          types.String `tfsdk:"starting_timestamp"`
	StartingOffsets            types.Map    `tfsdk:"starting_offsets"`
	StartingOffsetsByTimestamp types.Map    `tfsdk:"starting_offsets_by_timestamp"`
	AutoOffsetReset            types.String `tfsdk:"auto_offset_reset"`
	EndingOffset               types.String `tfsdk:"ending_offset"`
	EndingOffsets              types.Map    `tfsdk:"ending_offsets"`
	EndingTimestamp            types.String `tfsdk:"ending_timestamp"`
	EndingOffsetsByTimestamp   types.Map    `tfsdk:"ending_offsets_by_timestamp"`
	MaxOffsetsPerTrigger       types.Int64  `tfsdk:"max_offsets_per_trigger"`
	MinOffsetsPerTrigger       types.Int64  `tfsdk:"min_offsets_per_trigger"`
	MaxTriggerDelay            types.String `tfsdk:"max_trigger_delay"`
	MinPartitions              types.Int64  `tfsdk:"min_partitions"`
	MaxRecordsPerPartition     types.Int64  `tfsdk:"max_records_per_partition"`
	FailOnDataLoss             types.Bool   `tfsdk:"fail_on_data_loss"`
	GroupID                    types.String `tfsdk:"group_id"`
	GroupIDPrefix              types.String `tfsdk:"group_id_prefix"`
	CheckDuplicatedGroupID     types.Bool   `tfsdk:"check_duplicated_group_id"`
	PartitionDiscoveryInterval types.String `tfsdk:"partition_discovery_interval"`
	BytesEstimateWindowLength  types.String `tfsdk:"bytes_estimate_window_length"`
	ClientProperties           types.Map    `tfsdk:"client_properties"`

	// The attributes of fieldAttributes.
	KeyFieldsPrefix        types.String `tfsdk:"key_fields_prefix"`
	ValueFieldsPrefix      types.String `tfsdk:"value_fields_prefix"`
	DuplicateFieldStrategy types.String `tfsdk:"duplicate_field_strategy"`
	IgnoreErrors           types.Bool   `tfsdk:"ignore_errors"`
	ErrorToleranceMaxCount types.Int64  `tfsdk:"error_tolerance_max_count"`
}

type transformerModel struct {
	Format          types.String `tfsdk:"format"`
	JSONOptions     types.Object `tfsdk:"json_options"`
	AvroOptions     types.Object `tfsdk:"avro_options"`
	ProtobufOptions types.Object `tfsdk:"protobuf_options"`
	DebeziumOptions types.Object `tfsdk:"debezium_options"`
	CanalOptions    types.Object `tfsdk:"canal_options"`
}

type jsonOptionsModel struct {
	Schema                   types.String `tfsdk:"schema"`
	SchemaFilePath           types.String `tfsdk:"schema_file_path"`
	SchemaFileSHA256         types.String `tfsdk:"schema_file_sha256"`
	SchemaEvolutionMode      types.String `tfsdk:"schema_evolution_mode"`
	SchemaHints              types.String `tfsdk:"schema_hints"`
	InferRecordsPerPartition types.Int64  `tfsdk:"infer_records_per_partition"`
	StringTypeInference      types.Bool   `tfsdk:"string_type_inference"`
	PrimitiveAsString        types.Bool   `tfsdk:"primitive_as_string"`
	RescuedDataColumn        types.String `tfsdk:"rescued_data_column"`
	AllowSingleQuotes        types.Bool   `tfsdk:"allow_single_quotes"`
	AllowNonNumericNumbers   types.Bool   `tfsdk:"allow_non_numeric_numbers"`
	TimestampFormat          types.String `tfsdk:"timestamp_format"`
	DateFormat               types.String `tfsdk:"date_format"`
	FlattenNestedColumns     types.Bool   `tfsdk:"flatten_nested_columns"`
	EmptyValueAsDelete       types.Bool   `tfsdk:"empty_value_as_delete"`
	InitialSchemas           types.Map    `tfsdk:"initial_schemas"`
}

type avroOptionsModel struct {
	Schema           types.String `tfsdk:"schema"`
	SchemaFilePath   types.String `tfsdk:"schema_file_path"`
	SchemaFileSHA256 types.String `tfsdk:"schema_file_sha256"`
	SchemaRegistry   types.Object `tfsdk:"schema_registry"`
	ParseMode        types.String `tfsdk:"parse_mode"`
}

type protobufOptionsModel struct {
	DescFilePath            types.String `tfsdk:"desc_file_path"`
	DescFileSHA256          types.String `tfsdk:"desc_file_sha256"`
	MessageName             types.String `tfsdk:"message_name"`
	SchemaRegistry          types.Object `tfsdk:"schema_registry"`
	RecursiveFieldsMaxDepth types.Int64  `tfsdk:"recursive_fields_max_depth"`
	ParseMode               types.String `tfsdk:"parse_mode"`
}

// registryModel is schema_registry of avro_options.
type registryModel struct {
	ConfluentOptions types.Object `tfsdk:"confluent_options"`
	ConnectionName   types.String `tfsdk:"connection_name"`
}

// protobufRegistryModel is schema_registry of protobuf_options: that of
// avro_options and protobuf_message_name.
type protobufRegistryModel struct {
	registryModel
	ProtobufMessageName types.String `tfsdk:"protobuf_message_name"`
}

type confluentOptionsModel struct {
	Subject types.String `tfsdk:"subject"`
}

type tableConfigurationModel struct {
	SourceMetadataColumn types.String `tfsdk:"source_metadata_column"`
	MetadataColumns      types.List   `tfsdk:"metadata_columns"`
	PartitionBy          types.List   `tfsdk:"partition_by"`
}

// pipeline converts m into a spec pipeline; see specConverter.
func (c *specConverter) pipeline(m *pipelineResourceModel) *spec.Pipeline {
	p := &spec.Pipeline{
		Name:                c.str("name", m.Name),
		Connection:          c.str("connection_name", m.Connection),
		DestinationCatalog:  c.str("destination_catalog", m.DestinationCatalog),
		DestinationSchema:   c.str("destination_schema", m.DestinationSchema),
		StorageLocation:     c.str("storage_location", m.StorageLocation),
		Continuous:          c.boolPtr("continuous", m.Continuous),
		FlushInterval:       c.str("flush_interval", m.FlushInterval),
		TargetFileSizeMB:    c.int64Or("target_file_size_mb", m.TargetFileSizeMB, spec.DefaultTargetFileSizeMB),
		MaxRowsPerFile:      c.int64Or("max_rows_per_file", m.MaxRowsPerFile, spec.DefaultMaxRowsPerFile),
		AutoCompact:         c.boolPtr("auto_compact", m.AutoCompact),
		AutoCompactMinFiles: c.int64Or("auto_compact_min_files", m.AutoCompactMinFiles, spec.DefaultAutoCompactMinFiles),
		AutoVacuum:          c.boolPtr("auto_vacuum", m.AutoVacuum),
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
	t.ConnectorOptions = c.connectorOptions(p+".connector_options", m.ConnectorOptions)
	t.TableConfiguration = c.tableConfiguration(p+".table_configuration", m.TableConfiguration)
	return t
}

// connectorOptions converts connector_options at p, of a table or a fanout
// schema.
func (c *specConverter) connectorOptions(p string, o types.Object) spec.ConnectorOptions {
	var co spec.ConnectorOptions
	var m connectorOptionsModel
	if c.object(p, o, &m) == objectKnown {
		co.KafkaOptions = c.kafkaOptions(p+".kafka_options", m.KafkaOptions)
	}
	return co
}

// tableConfiguration converts table_configuration at p, of a table or a
// fanout schema.
func (c *specConverter) tableConfiguration(p string, o types.Object) spec.TableConfiguration {
	var tc spec.TableConfiguration
	var m tableConfigurationModel
	if c.object(p, o, &m) == objectKnown {
		tc.SourceMetadataColumn = c.str(p+".source_metadata_column", m.SourceMetadataColumn)
		tc.MetadataColumns = c.strList(p+".metadata_columns", m.MetadataColumns)
		tc.PartitionBy = c.strList(p+".partition_by", m.PartitionBy)
	}
	return tc
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
	c.consumerOptions(p, &m, &ko)
	c.fieldOptions(p, &m, &ko)
	return ko
}

func (c *specConverter) transformer(p string, o types.Object) *spec.Transformer {
	return convertObject(c, p, o, func(m *transformerModel) *spec.Transformer {
		return &spec.Transformer{
			Format:          c.str(p+".format", m.Format),
			JSONOptions:     c.jsonOptions(p+".json_options", m.JSONOptions),
			AvroOptions:     c.avroOptions(p+".avro_options", m.AvroOptions),
			ProtobufOptions: c.protobufOptions(p+".protobuf_options", m.ProtobufOptions),
			DebeziumOptions: c.debeziumOptions(p+".debezium_options", m.DebeziumOptions),
			CanalOptions:    c.canalOptions(p+".canal_options", m.CanalOptions),
		}
	})
}

func (c *specConverter) jsonOptions(p string, o types.Object) *spec.JSONOptions {
	return convertObject(c, p, o, func(m *jsonOptionsModel) *spec.JSONOptions {
		jo := &spec.JSONOptions{
			Schema:                   c.str(p+".schema", m.Schema),
			SchemaFilePath:           c.str(p+".schema_file_path", m.SchemaFilePath),
			SchemaEvolutionMode:      c.str(p+".schema_evolution_mode", m.SchemaEvolutionMode),
			SchemaHints:              c.str(p+".schema_hints", m.SchemaHints),
			InferRecordsPerPartition: c.int64Ptr(p+".infer_records_per_partition", m.InferRecordsPerPartition),
			StringTypeInference:      c.boolPtr(p+".string_type_inference", m.StringTypeInference),
			PrimitiveAsString:        c.boolPtr(p+".primitive_as_string", m.PrimitiveAsString),
			RescuedDataColumn:        c.str(p+".rescued_data_column", m.RescuedDataColumn),
			AllowSingleQuotes:        c.boolPtr(p+".allow_single_quotes", m.AllowSingleQuotes),
			AllowNonNumericNumbers:   c.boolPtr(p+".allow_non_numeric_numbers", m.AllowNonNumericNumbers),
			TimestampFormat:          c.str(p+".timestamp_format", m.TimestampFormat),
			DateFormat:               c.str(p+".date_format", m.DateFormat),
			FlattenNestedColumns:     trueOrNil(c.boolPtr(p+".flatten_nested_columns", m.FlattenNestedColumns)),
			EmptyValueAsDelete:       trueOrNil(c.boolPtr(p+".empty_value_as_delete", m.EmptyValueAsDelete)),
			InitialSchemas:           convertMap[string](c, p+".initial_schemas", m.InitialSchemas),
		}
		jo.SchemaFileContent = string(c.readFile(p+".schema_file_path", jo.SchemaFilePath, "schema file", "schema.ddl"))
		return jo
	})
}

// trueOrNil returns b when it is true, and nil otherwise: an option whose
// default is false is sent only when set, so that the agent keeps the
// json_options as configured before the option existed.
func trueOrNil(b *bool) *bool {
	if b != nil && *b {
		return b
	}
	return nil
}

func (c *specConverter) avroOptions(p string, o types.Object) *spec.AvroOptions {
	return convertObject(c, p, o, func(m *avroOptionsModel) *spec.AvroOptions {
		ao := &spec.AvroOptions{
			Schema:         c.str(p+".schema", m.Schema),
			SchemaFilePath: c.str(p+".schema_file_path", m.SchemaFilePath),
			SchemaRegistry: c.schemaRegistry(p+".schema_registry", m.SchemaRegistry, false),
			ParseMode:      c.str(p+".parse_mode", m.ParseMode),
		}
		ao.SchemaFileContent = string(c.readFile(p+".schema_file_path", ao.SchemaFilePath, "schema file", "schema.avsc"))
		return ao
	})
}

func (c *specConverter) protobufOptions(p string, o types.Object) *spec.ProtobufOptions {
	return convertObject(c, p, o, func(m *protobufOptionsModel) *spec.ProtobufOptions {
		po := &spec.ProtobufOptions{
			DescFilePath:            c.str(p+".desc_file_path", m.DescFilePath),
			MessageName:             c.str(p+".message_name", m.MessageName),
			SchemaRegistry:          c.schemaRegistry(p+".schema_registry", m.SchemaRegistry, true),
			RecursiveFieldsMaxDepth: c.int64Ptr(p+".recursive_fields_max_depth", m.RecursiveFieldsMaxDepth),
			ParseMode:               c.str(p+".parse_mode", m.ParseMode),
		}
		// An unreadable file leaves DescFileContent empty, so that the
		// problems that need the file (the message, its recursion) are not
		// looked for; those of message_name and recursive_fields_max_depth
		// that do not need it are reported.
		po.DescFileContent = c.readFile(p+".desc_file_path", po.DescFilePath, "descriptor set file", "events.desc")
		return po
	})
}

// schemaRegistry converts schema_registry of avro_options or, with
// protobuf, of protobuf_options.
func (c *specConverter) schemaRegistry(p string, o types.Object, protobuf bool) *spec.SchemaRegistryOptions {
	var m protobufRegistryModel
	var target any = &m.registryModel
	if protobuf {
		target = &m
	}
	switch c.object(p, o, target) {
	case objectNull:
		return nil
	case objectUnknown:
		return &spec.SchemaRegistryOptions{}
	}
	so := &spec.SchemaRegistryOptions{
		ConnectionName:      c.str(p+".connection_name", m.ConnectionName),
		ProtobufMessageName: c.str(p+".protobuf_message_name", m.ProtobufMessageName),
	}
	var co confluentOptionsModel
	if c.object(p+".confluent_options", m.ConfluentOptions, &co) == objectKnown {
		so.ConfluentOptions.Subject = c.str(p+".confluent_options.subject", co.Subject)
	}
	return so
}

// schemaFile is a file named by the options of a transformer, which the
// provider reads and whose hash the state keeps.
type schemaFile struct {
	// options is the spec path of the options object
	// ("table[0]....value_transformer.avro_options").
	options string
	// pathAttr names the file ("schema_file_path"), shaAttr its hash
	// ("schema_file_sha256").
	pathAttr, shaAttr string
	// name is the configured path, "" when not set; content is what was
	// read from it.
	name    string
	content []byte
}

// schemaFiles calls fn for each schema file of an object; see
// eachSchemaFile.
type schemaFiles func(fn func(f *schemaFile))

// eachSchemaFile calls fn for the file attribute of every json_options,
// avro_options and protobuf_options of p, in table order, key before
// value, whether or not it names a file.
func eachSchemaFile(p *spec.Pipeline, fn func(f *schemaFile)) {
	for i := range p.Tables {
		eachKafkaSchemaFile(fmt.Sprintf("table[%d].connector_options.kafka_options", i), &p.Tables[i].ConnectorOptions.KafkaOptions, fn)
	}
}

// eachKafkaSchemaFile calls fn for the file attribute of every options
// object of the transformers of ko, the kafka_options at spec path p, key
// before value.
func eachKafkaSchemaFile(p string, ko *spec.KafkaOptions, fn func(f *schemaFile)) {
	for _, side := range []struct {
		name string
		tr   *spec.Transformer
	}{{"key_transformer", ko.KeyTransformer}, {"value_transformer", ko.ValueTransformer}} {
		if side.tr == nil {
			continue
		}
		tp := p + "." + side.name + "."
		if o := side.tr.JSONOptions; o != nil {
			fn(jsonSchemaFile(tp+"json_options", o))
		}
		if o := side.tr.AvroOptions; o != nil {
			fn(&schemaFile{tp + "avro_options", "schema_file_path", "schema_file_sha256", o.SchemaFilePath, []byte(o.SchemaFileContent)})
		}
		if o := side.tr.ProtobufOptions; o != nil {
			fn(&schemaFile{tp + "protobuf_options", "desc_file_path", "desc_file_sha256", o.DescFilePath, o.DescFileContent})
		}
	}
}

// jsonSchemaFile is the file attribute of o, the json_options at spec path p.
func jsonSchemaFile(p string, o *spec.JSONOptions) *schemaFile {
	return &schemaFile{p, "schema_file_path", "schema_file_sha256", o.SchemaFilePath, []byte(o.SchemaFileContent)}
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
	m.AutoCompact = types.BoolValue(p.Compacts())
	m.AutoCompactMinFiles = types.Int64Value(p.AutoCompactMinFiles)
	m.AutoVacuum = types.BoolValue(p.Vacuums())

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
	return objectValue(ctx, diags, pipelineTypes().table, tableModel{
		DestinationTable:   types.StringValue(t.DestinationTable),
		ConnectorOptions:   connectorOptionsToObject(ctx, &t.ConnectorOptions, diags),
		TableConfiguration: tableConfigurationToObject(ctx, &t.TableConfiguration, keepEmptyConfig, diags),
	})
}

// connectorOptionsToObject is connector_options of a table or a fanout
// schema.
func connectorOptionsToObject(ctx context.Context, co *spec.ConnectorOptions, diags *diag.Diagnostics) types.Object {
	ty := pipelineTypes()
	ko := &co.KafkaOptions
	m := kafkaOptionsModel{
		Topics:           listOrNull(ctx, diags, types.StringType, ko.Topics, false),
		TopicPattern:     stringOrNull(ko.TopicPattern),
		StartingOffset:   types.StringValue(ko.StartingOffset),
		IsolationLevel:   types.StringValue(ko.IsolationLevel),
		KeyTransformer:   transformerToObject(ctx, ko.KeyTransformer, diags),
		ValueTransformer: transformerToObject(ctx, ko.ValueTransformer, diags),
	}
	m.setConsumerOptions(ctx, ko, diags)
	m.setFieldOptions(ko)
	kafka := objectValue(ctx, diags, ty.kafkaOptions, m)
	return objectValue(ctx, diags, ty.connectorOptions, connectorOptionsModel{KafkaOptions: kafka})
}

// tableConfigurationToObject is table_configuration of a table or a fanout
// schema: null when tc is empty, unless keepEmpty (the configuration has
// an empty block, which the spec cannot tell from none).
func tableConfigurationToObject(ctx context.Context, tc *spec.TableConfiguration, keepEmpty bool, diags *diag.Diagnostics) types.Object {
	ty := pipelineTypes()
	if tc.SourceMetadataColumn == "" && len(tc.MetadataColumns) == 0 && len(tc.PartitionBy) == 0 && !keepEmpty {
		return types.ObjectNull(ty.tableConfiguration.AttrTypes)
	}
	return objectValue(ctx, diags, ty.tableConfiguration, tableConfigurationModel{
		SourceMetadataColumn: stringOrNull(tc.SourceMetadataColumn),
		MetadataColumns:      listOrNull(ctx, diags, types.StringType, tc.MetadataColumns, false),
		PartitionBy:          listOrNull(ctx, diags, types.StringType, tc.PartitionBy, false),
	})
}

func transformerToObject(ctx context.Context, tr *spec.Transformer, diags *diag.Diagnostics) types.Object {
	ty := pipelineTypes()
	if tr == nil {
		return types.ObjectNull(ty.transformer.AttrTypes)
	}
	ao := types.ObjectNull(ty.avroOptions.AttrTypes)
	if o := tr.AvroOptions; o != nil {
		ao = objectValue(ctx, diags, ty.avroOptions, avroOptionsModel{
			Schema:           stringOrNull(o.Schema),
			SchemaFilePath:   stringOrNull(o.SchemaFilePath),
			SchemaFileSHA256: fileSHA256(o.SchemaFilePath, []byte(o.SchemaFileContent)),
			SchemaRegistry:   registryToObject(ctx, o.SchemaRegistry, false, diags),
			ParseMode:        stringOrDefault(o.ParseMode, spec.DefaultParseMode),
		})
	}
	po := types.ObjectNull(ty.protobufOptions.AttrTypes)
	if o := tr.ProtobufOptions; o != nil {
		po = objectValue(ctx, diags, ty.protobufOptions, protobufOptionsModel{
			DescFilePath:            stringOrNull(o.DescFilePath),
			DescFileSHA256:          fileSHA256(o.DescFilePath, o.DescFileContent),
			MessageName:             stringOrNull(o.MessageName),
			SchemaRegistry:          registryToObject(ctx, o.SchemaRegistry, true, diags),
			RecursiveFieldsMaxDepth: types.Int64Value(int64(o.RecursiveDepth())),
			ParseMode:               stringOrDefault(o.ParseMode, spec.DefaultParseMode),
		})
	}
	jo := tr.JSONOptions
	if tr.RowOptionsImplied() {
		jo = nil // the agent's, for a changelog format configured without json_options
	}
	return objectValue(ctx, diags, ty.transformer, transformerModel{
		Format:          types.StringValue(tr.Format),
		JSONOptions:     jsonOptionsToObject(ctx, jo, diags),
		AvroOptions:     ao,
		ProtobufOptions: po,
		DebeziumOptions: debeziumOptionsToObject(ctx, tr.DebeziumOptions, diags),
		CanalOptions:    canalOptionsToObject(ctx, tr.CanalOptions, diags),
	})
}

// jsonOptionsToObject is json_options of a transformer or a fanout
// transform; null for nil.
func jsonOptionsToObject(ctx context.Context, o *spec.JSONOptions, diags *diag.Diagnostics) types.Object {
	ty := pipelineTypes()
	if o == nil {
		return types.ObjectNull(ty.jsonOptions.AttrTypes)
	}
	return objectValue(ctx, diags, ty.jsonOptions, jsonOptionsModel{
		Schema:                   stringOrNull(o.Schema),
		SchemaFilePath:           stringOrNull(o.SchemaFilePath),
		SchemaFileSHA256:         fileSHA256(o.SchemaFilePath, []byte(o.SchemaFileContent)),
		SchemaEvolutionMode:      stringOrNull(o.SchemaEvolutionMode),
		SchemaHints:              stringOrNull(o.SchemaHints),
		InferRecordsPerPartition: types.Int64PointerValue(o.InferRecordsPerPartition),
		StringTypeInference:      types.BoolPointerValue(o.StringTypeInference),
		PrimitiveAsString:        types.BoolPointerValue(o.PrimitiveAsString),
		RescuedDataColumn:        stringOrNull(o.RescuedDataColumn),
		AllowSingleQuotes:        types.BoolValue(o.SingleQuotes()),
		AllowNonNumericNumbers:   types.BoolValue(o.NonNumericNumbers()),
		TimestampFormat:          stringOrNull(o.TimestampFormat),
		DateFormat:               stringOrNull(o.DateFormat),
		FlattenNestedColumns:     types.BoolValue(o.FlattenNestedColumns != nil && *o.FlattenNestedColumns),
		EmptyValueAsDelete:       types.BoolValue(o.EmptyValueAsDelete != nil && *o.EmptyValueAsDelete),
		InitialSchemas:           mapOrNull(ctx, diags, types.MapType{ElemType: types.StringType}, o.InitialSchemas),
	})
}

// registryToObject is the schema_registry of avro_options or, with
// protobuf, of protobuf_options.
func registryToObject(ctx context.Context, so *spec.SchemaRegistryOptions, protobuf bool, diags *diag.Diagnostics) types.Object {
	ty := pipelineTypes()
	t := ty.avroRegistry
	if protobuf {
		t = ty.protobufRegistry
	}
	if so == nil {
		return types.ObjectNull(t.AttrTypes)
	}
	m := registryModel{
		ConfluentOptions: objectValue(ctx, diags, ty.confluentOptions, confluentOptionsModel{
			Subject: types.StringValue(so.ConfluentOptions.Subject),
		}),
		ConnectionName: stringOrNull(so.ConnectionName),
	}
	if !protobuf {
		return objectValue(ctx, diags, t, m)
	}
	return objectValue(ctx, diags, t, protobufRegistryModel{registryModel: m, ProtobufMessageName: stringOrNull(so.ProtobufMessageName)})
}
