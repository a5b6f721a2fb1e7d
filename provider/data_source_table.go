package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

var _ datasource.DataSourceWithConfigure = (*tableDataSource)(nil)

// tableDataSource is tributary_table: one destination table of a pipeline,
// with its current columns, so that Terraform users see what schema
// inference decided.
type tableDataSource struct {
	agentDataSource
}

// NewTableDataSource returns the tributary_table data source.
func NewTableDataSource() datasource.DataSource { return &tableDataSource{} }

// tableDataSourceModel is the state of tributary_table.
type tableDataSourceModel struct {
	PipelineName     types.String  `tfsdk:"pipeline_name"`
	DestinationTable types.String  `tfsdk:"destination_table"`
	Location         types.String  `tfsdk:"location"`
	State            types.String  `tfsdk:"state"`
	Version          types.Int64   `tfsdk:"version"`
	ErrorRecords     types.Int64   `tfsdk:"error_records"`
	Columns          []columnModel `tfsdk:"columns"`
	// The table's registrations in its catalog (see tributary_catalog).
	IcebergMirrorVersion    types.Int64  `tfsdk:"iceberg_mirror_version"`
	IcebergMirrorLag        types.Int64  `tfsdk:"iceberg_mirror_lag"`
	HiveMetastoreRegistered types.Bool   `tfsdk:"hive_metastore_registered"`
	CatalogError            types.String `tfsdk:"catalog_error"`
}

// columnModel is one column of a table's current schema, as
// tributary_table and tributary_pipeline_status show it.
type columnModel struct {
	Name     string `tfsdk:"name"`
	Type     string `tfsdk:"type"`
	Nullable bool   `tfsdk:"nullable"`
}

// columnsAttribute is the computed list of a table's current columns.
func columnsAttribute() schema.ListNestedAttribute {
	return schema.ListNestedAttribute{
		MarkdownDescription: "The table's current columns, top-level columns in table order, as its transaction " +
			"log records them: the columns the key and value schemas declare, or those schema inference decided " +
			"(`json_options.schema_evolution_mode`), which grow as the records do. Empty before the table has a schema.",
		Computed: true,
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{MarkdownDescription: "Column name.", Computed: true},
			"type": schema.StringAttribute{
				MarkdownDescription: "Spark SQL type of the column as DDL writes it: `BIGINT`, `STRING`, " +
					"`STRUCT<a: STRING>`, `ARRAY<DOUBLE>`, `VARIANT`.",
				Computed: true,
			},
			"nullable": schema.BoolAttribute{MarkdownDescription: "Whether the column may hold nulls.", Computed: true},
		}},
	}
}

// columnModels converts the columns of a table status.
func columnModels(cols []spec.ColumnStatus) []columnModel {
	out := make([]columnModel, len(cols))
	for i, c := range cols {
		out[i] = columnModel(c)
	}
	return out
}

// Metadata implements datasource.DataSource.
func (d *tableDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_table"
}

// Schema implements datasource.DataSource.
func (d *tableDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "One destination table of a pipeline as the agent reports it when Terraform reads the " +
			"data source: where it lives, its state, its log version and its current columns with their types, " +
			"such as those schema inference decided.",
		Attributes: map[string]schema.Attribute{
			"pipeline_name": schema.StringAttribute{
				MarkdownDescription: "`name` of the pipeline; reference it (`tributary_pipeline.x.name`) so that the " +
					"table is read after the pipeline is created or updated. Reading a pipeline the agent does not " +
					"have is an error.",
				Required: true,
			},
			"destination_table": schema.StringAttribute{
				MarkdownDescription: "`destination_table` of one of the pipeline's `table` blocks, compared " +
					"case-insensitively.",
				Required: true,
			},
			"location": schema.StringAttribute{
				MarkdownDescription: "Where the table lives on the agent: a folder, or an object store URL.",
				Computed:            true,
			},
			"state": schema.StringAttribute{
				MarkdownDescription: "State of the table: one of `" + strings.Join([]string{spec.StateStarting,
					spec.StateRunning, spec.StateIdle, spec.StateFailed, spec.StateStopped}, "`, `") + "`.",
				Computed: true,
			},
			"version": schema.Int64Attribute{
				MarkdownDescription: "Latest committed version of the table's transaction log; `-1` before the first commit.",
				Computed:            true,
			},
			"error_records": schema.Int64Attribute{
				MarkdownDescription: errorRecordsDoc,
				Computed:            true,
			},
			"columns": columnsAttribute(),
			"iceberg_mirror_version": schema.Int64Attribute{
				MarkdownDescription: "Delta log version the table's Iceberg mirror mirrors, when its `destination_catalog` " +
					"names a `tributary_catalog` with `iceberg_rest`; `-1` before the first snapshot; null without a mirror.",
				Computed: true,
			},
			"iceberg_mirror_lag": schema.Int64Attribute{
				MarkdownDescription: "Delta log versions the table's Iceberg mirror has not mirrored yet; null without a mirror. " +
					"The mirror never holds ingestion back: a catalog that is down makes it grow, and `catalog_error` says why.",
				Computed: true,
			},
			"hive_metastore_registered": schema.BoolAttribute{
				MarkdownDescription: "Whether the Hive Metastore of the table's `tributary_catalog` holds the table; null " +
					"without a metastore.",
				Computed: true,
			},
			"catalog_error": schema.StringAttribute{
				MarkdownDescription: "Why the last registration or mirror sync of the table failed; empty when they succeeded, " +
					"null without a catalog.",
				Computed: true,
			},
		},
	}
}

// Read implements datasource.DataSource.
func (d *tableDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m tableDataSourceModel
	st := d.readStatus(ctx, req.Config, &m, "pipeline_name", &resp.Diagnostics)
	if st == nil {
		return
	}
	name, table := m.PipelineName.ValueString(), m.DestinationTable.ValueString()
	ts := findTableStatus(st, table)
	if ts == nil {
		names := make([]string, len(st.Tables))
		for i, t := range st.Tables {
			names[i] = t.DestinationTable
		}
		resp.Diagnostics.AddAttributeError(path.Root("destination_table"), "Table not found",
			fmt.Sprintf("Pipeline %q has no table %q; its tables are %s.", name, table, quoted(names)))
		return
	}
	m.Location = types.StringValue(ts.Location)
	m.State = types.StringValue(ts.State)
	m.Version = types.Int64Value(ts.Version)
	m.ErrorRecords = types.Int64Value(ts.ErrorRecords)
	m.Columns = columnModels(ts.Columns)
	m.setCatalog(ts.Catalog)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// findTableStatus returns the status of the table named table in st,
// compared case-insensitively as the pipeline compares table names, or nil.
func findTableStatus(st *spec.PipelineStatus, table string) *spec.TableStatus {
	for i := range st.Tables {
		if strings.EqualFold(st.Tables[i].DestinationTable, table) {
			return &st.Tables[i]
		}
	}
	return nil
}

// setCatalog sets the catalog attributes of m from c, the table's
// registrations (nil: none).
func (m *tableDataSourceModel) setCatalog(c *spec.CatalogStatus) {
	m.IcebergMirrorVersion, m.IcebergMirrorLag = types.Int64Null(), types.Int64Null()
	m.HiveMetastoreRegistered, m.CatalogError = types.BoolNull(), types.StringNull()
	if c == nil {
		return
	}
	var errs []string
	if ice := c.Iceberg; ice != nil {
		m.IcebergMirrorVersion, m.IcebergMirrorLag = types.Int64Value(ice.DeltaVersion), types.Int64Value(ice.Lag)
		if ice.LastError != "" {
			errs = append(errs, "iceberg_rest: "+ice.LastError)
		}
	}
	if h := c.HiveMetastore; h != nil {
		m.HiveMetastoreRegistered = types.BoolValue(h.Registered)
		if h.LastError != "" {
			errs = append(errs, "hive_metastore: "+h.LastError)
		}
	}
	m.CatalogError = types.StringValue(strings.Join(errs, "; "))
}
