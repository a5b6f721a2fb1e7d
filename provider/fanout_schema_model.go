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

// fanoutSchemaResourceModel is the state of tributary_fanout_schema. Nested
// objects are types.Object and types.List for the reason given at
// pipelineResourceModel.
type fanoutSchemaResourceModel struct {
	ID                 types.String   `tfsdk:"id"`
	Name               types.String   `tfsdk:"name"`
	Pipeline           types.String   `tfsdk:"pipeline_name"`
	DestinationCatalog types.String   `tfsdk:"destination_catalog"`
	DestinationSchema  types.String   `tfsdk:"destination_schema"`
	ConnectorOptions   types.Object   `tfsdk:"connector_options"`
	FanoutOptions      types.Object   `tfsdk:"fanout_options"`
	TableConfiguration types.Object   `tfsdk:"table_configuration"`
	Tables             types.List     `tfsdk:"tables"`
	Timeouts           timeouts.Value `tfsdk:"timeouts"`
}

type fanoutOptionsModel struct {
	FanoutBy       types.String `tfsdk:"fanout_by"`
	TableIDFields  types.List   `tfsdk:"table_id_fields"`
	OnInvalidRoute types.String `tfsdk:"on_invalid_route"`
	Transforms     types.List   `tfsdk:"transforms"`
}

type fanoutTransformModel struct {
	Format       types.String `tfsdk:"format"`
	InputColumn  types.String `tfsdk:"input_column"`
	OutputColumn types.String `tfsdk:"output_column"`
	JSONOptions  types.Object `tfsdk:"json_options"`
}

// newFanoutConverter is newSpecConverter for a fanout schema.
func newFanoutConverter(ctx context.Context, readFiles bool) *specConverter {
	c := newSpecConverter(ctx, readFiles)
	c.what = "fanout schema"
	return c
}

// fanoutSchema converts m into a spec fanout schema; see specConverter.
func (c *specConverter) fanoutSchema(m *fanoutSchemaResourceModel) *spec.FanoutSchema {
	return &spec.FanoutSchema{
		Name:               c.str("name", m.Name),
		Pipeline:           c.str("pipeline_name", m.Pipeline),
		DestinationCatalog: c.str("destination_catalog", m.DestinationCatalog),
		DestinationSchema:  c.str("destination_schema", m.DestinationSchema),
		ConnectorOptions:   c.connectorOptions("connector_options", m.ConnectorOptions),
		FanoutOptions:      c.fanoutOptions("fanout_options", m.FanoutOptions),
		TableConfiguration: c.tableConfiguration("table_configuration", m.TableConfiguration),
	}
}

func (c *specConverter) fanoutOptions(p string, o types.Object) spec.FanoutOptions {
	var fo spec.FanoutOptions
	var m fanoutOptionsModel
	if c.object(p, o, &m) != objectKnown {
		return fo
	}
	fo.FanoutBy = c.str(p+".fanout_by", m.FanoutBy)
	fo.TableIDFields = c.strList(p+".table_id_fields", m.TableIDFields)
	fo.OnInvalidRoute = c.str(p+".on_invalid_route", m.OnInvalidRoute)
	for i, t := range c.objects(p+".transforms", m.Transforms) {
		fo.Transforms = append(fo.Transforms, c.fanoutTransform(fmt.Sprintf("%s.transforms[%d]", p, i), t))
	}
	return fo
}

func (c *specConverter) fanoutTransform(p string, o types.Object) spec.FanoutTransform {
	var t spec.FanoutTransform
	var m fanoutTransformModel
	if c.object(p, o, &m) != objectKnown {
		return t
	}
	t.Format = c.str(p+".format", m.Format)
	t.InputColumn = c.str(p+".input_column", m.InputColumn)
	t.OutputColumn = c.str(p+".output_column", m.OutputColumn)
	t.JSONOptions = c.jsonOptions(p+".json_options", m.JSONOptions)
	return t
}

// eachFanoutSchemaFile calls fn for the file attribute of every options
// object of f: those of its key and value transformers, then the
// json_options of its transforms.
func eachFanoutSchemaFile(f *spec.FanoutSchema, fn func(f *schemaFile)) {
	eachKafkaSchemaFile("connector_options.kafka_options", &f.ConnectorOptions.KafkaOptions, fn)
	for i, t := range f.FanoutOptions.Transforms {
		if t.JSONOptions != nil {
			fn(jsonSchemaFile(fmt.Sprintf("fanout_options.transforms[%d].json_options", i), t.JSONOptions))
		}
	}
}

// setFromSpec sets m from a fanout schema as the agent stores it and its
// status, which gives tables. prior (nil on import) keeps the shapes the
// spec cannot tell apart: an empty list or block versus none.
func (m *fanoutSchemaResourceModel) setFromSpec(ctx context.Context, f *spec.FanoutSchema, st *spec.FanoutStatus, prior *fanoutSchemaResourceModel, diags *diag.Diagnostics) {
	f.Normalize()
	m.ID = types.StringValue(f.Name)
	m.Name = types.StringValue(f.Name)
	m.Pipeline = types.StringValue(f.Pipeline)
	m.DestinationCatalog = types.StringValue(f.DestinationCatalog)
	m.DestinationSchema = types.StringValue(f.DestinationSchema)
	m.ConnectorOptions = connectorOptionsToObject(ctx, &f.ConnectorOptions, diags)

	var priorOptions fanoutOptionsModel
	keepEmptyConfig := false
	if prior != nil {
		if o := prior.FanoutOptions; !o.IsNull() && !o.IsUnknown() {
			diags.Append(o.As(ctx, &priorOptions, basetypes.ObjectAsOptions{})...)
		}
		keepEmptyConfig = !prior.TableConfiguration.IsNull()
	}
	m.FanoutOptions = fanoutOptionsToObject(ctx, &f.FanoutOptions, &priorOptions, diags)
	if (prior == nil || prior.FanoutOptions.IsNull()) && fanoutOptionsDefault(&f.FanoutOptions) {
		m.FanoutOptions = types.ObjectNull(fanoutTypes().fanoutOptions.AttrTypes)
	}
	m.TableConfiguration = tableConfigurationToObject(ctx, &f.TableConfiguration, keepEmptyConfig, diags)
	m.Tables = fanoutTables(ctx, st, diags)
}

// fanoutOptionsDefault reports whether fo is what a fanout schema without
// fanout_options has: the default route, no transforms, failing on a
// record that cannot be routed. Such options stay null in the state
// unless the configuration wrote the block.
func fanoutOptionsDefault(fo *spec.FanoutOptions) bool {
	return fo.FanoutBy == "" && len(fo.TableIDFields) == 0 && len(fo.Transforms) == 0 &&
		(fo.OnInvalidRoute == "" || fo.OnInvalidRoute == spec.OnInvalidRouteFail)
}

// fanoutOptionsToObject is fanout_options; an empty table_id_fields or
// transforms is null unless prior has it empty, not null.
func fanoutOptionsToObject(ctx context.Context, fo *spec.FanoutOptions, prior *fanoutOptionsModel, diags *diag.Diagnostics) types.Object {
	ty := fanoutTypes()
	transforms := make([]types.Object, len(fo.Transforms))
	for i, t := range fo.Transforms {
		transforms[i] = objectValue(ctx, diags, ty.transform, fanoutTransformModel{
			Format:       stringOrDefault(t.Format, spec.FormatJSON),
			InputColumn:  types.StringValue(t.InputColumn),
			OutputColumn: stringOrNull(t.OutputColumn),
			JSONOptions:  jsonOptionsToObject(ctx, t.JSONOptions, diags),
		})
	}
	return objectValue(ctx, diags, ty.fanoutOptions, fanoutOptionsModel{
		FanoutBy:       stringOrNull(fo.FanoutBy),
		TableIDFields:  listOrNull(ctx, diags, types.StringType, fo.TableIDFields, isEmptyList(prior.TableIDFields)),
		OnInvalidRoute: stringOrDefault(fo.OnInvalidRoute, spec.OnInvalidRouteFail),
		Transforms:     listOrNull(ctx, diags, ty.transform, transforms, isEmptyList(prior.Transforms)),
	})
}

// isEmptyList reports whether l is a known list without elements (a zero
// types.List is null).
func isEmptyList(l types.List) bool {
	return !l.IsNull() && !l.IsUnknown() && len(l.Elements()) == 0
}

// fanoutTables is the tables attribute: the names of the tables st reports.
func fanoutTables(ctx context.Context, st *spec.FanoutStatus, diags *diag.Diagnostics) types.List {
	names := make([]string, len(st.Tables))
	for i, t := range st.Tables {
		names[i] = t.DestinationTable
	}
	l, d := types.ListValueFrom(ctx, types.StringType, names)
	diags.Append(d...)
	return l
}
