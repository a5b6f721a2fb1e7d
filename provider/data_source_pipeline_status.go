package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

var _ datasource.DataSourceWithConfigure = (*pipelineStatusDataSource)(nil)

// pipelineStatusDataSource is tributary_pipeline_status: the state and
// progress of a pipeline, which move as it ingests and so are not attributes
// of tributary_pipeline.
type pipelineStatusDataSource struct {
	agentDataSource
}

// NewPipelineStatusDataSource returns the tributary_pipeline_status data
// source.
func NewPipelineStatusDataSource() datasource.DataSource { return &pipelineStatusDataSource{} }

// pipelineStatusDataSourceModel is the state of tributary_pipeline_status.
// Every attribute but name is computed and known once read, so plain Go
// values hold them.
type pipelineStatusDataSourceModel struct {
	Name   types.String       `tfsdk:"name"`
	State  types.String       `tfsdk:"state"`
	Tables []tableStatusModel `tfsdk:"tables"`
}

type tableStatusModel struct {
	DestinationTable string                 `tfsdk:"destination_table"`
	State            string                 `tfsdk:"state"`
	Location         string                 `tfsdk:"location"`
	Version          int64                  `tfsdk:"version"`
	Rows             int64                  `tfsdk:"rows"`
	Files            int64                  `tfsdk:"files"`
	CorruptRecords   int64                  `tfsdk:"corrupt_records"`
	ErrorRecords     int64                  `tfsdk:"error_records"`
	FilteredRecords  int64                  `tfsdk:"filtered_records"`
	LastError        string                 `tfsdk:"last_error"`
	Partitions       []partitionStatusModel `tfsdk:"partitions"`
	Columns          []columnModel          `tfsdk:"columns"`
	Maintenance      *maintenanceModel      `tfsdk:"maintenance"`
}

// maintenanceModel is what the agent's maintenance of a table did.
type maintenanceModel struct {
	SmallFiles     int64  `tfsdk:"small_files"`
	Compactions    int64  `tfsdk:"compactions"`
	FilesCompacted int64  `tfsdk:"files_compacted"`
	FilesWritten   int64  `tfsdk:"files_written"`
	GaveWay        int64  `tfsdk:"gave_way"`
	LastCompaction string `tfsdk:"last_compaction"`
	FilesVacuumed  int64  `tfsdk:"files_vacuumed"`
	LastVacuum     string `tfsdk:"last_vacuum"`
	LastError      string `tfsdk:"last_error"`
}

type partitionStatusModel struct {
	Topic      string `tfsdk:"topic"`
	Partition  int64  `tfsdk:"partition"`
	NextOffset int64  `tfsdk:"next_offset"`
	Lag        int64  `tfsdk:"lag"`
}

// Metadata implements datasource.DataSource.
func (d *pipelineStatusDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_pipeline_status"
}

// Schema implements datasource.DataSource.
func (d *pipelineStatusDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	tableStates := "`" + spec.StateStarting + "`, `" + spec.StateRunning + "`, `" + spec.StateIdle +
		"` (a triggered run finished; the next waits for a `trigger` change or `POST /v1/pipelines/{name}/runs`), `" + spec.StateFailed + "` (stopped on an error it cannot retry; see `last_error`) or `" +
		spec.StateStopped + "`"
	computedString := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{MarkdownDescription: desc, Computed: true}
	}
	computedInt := func(desc string) schema.Int64Attribute {
		return schema.Int64Attribute{MarkdownDescription: desc, Computed: true}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The state and progress of a pipeline as the agent reports them when Terraform reads " +
			"the data source: per destination table its state, log version, rows, files, corrupt and error records and current " +
			"columns (see also `tributary_table`), and per " +
			"topic-partition the next offset and the lag. These values move as the pipeline ingests, which is why " +
			"they are not attributes of `tributary_pipeline`.",
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{
				MarkdownDescription: "`name` of the pipeline; reference it (`tributary_pipeline.x.name`) so that the " +
					"status is read after the pipeline is created or updated. Reading a pipeline the agent does not " +
					"have is an error.",
				Required: true,
			},
			"state": computedString("State of the pipeline, from its tables' (and, for a triggered pipeline, its fanout schemas'): `" +
				spec.StateFailed + "` if one failed, `" + spec.StateIdle + "` once all finished their run, `" +
				spec.StateRunning + "` once all run or finished, `" +
				spec.StateStopped + "` if all stopped, `" + spec.StateStarting + "` otherwise."),
			"tables": schema.ListNestedAttribute{
				MarkdownDescription: "Status of each destination table, in the order of the pipeline's `table` blocks.",
				Computed:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"destination_table": computedString("The table's `destination_table`."),
					"state":             computedString("State of the table: " + tableStates + "."),
					"location":          computedString("The table's folder on the agent."),
					"version":           computedInt("Latest committed version of the table's transaction log; `-1` before the first commit."),
					"rows": computedInt("Rows the agent committed to the table since it was first written, summed from the " +
						"metrics of the agent's own log entries: rows other engines append are not counted, and neither are rows " +
						"they delete. It only grows, so it tracks ingestion; count the table's rows with a query."),
					"files": computedInt("Parquet files the agent committed since the table was first written; files other " +
						"engines add or remove (appends, `OPTIMIZE`, `VACUUM`) are not counted."),
					"corrupt_records": computedInt("Records committed with `_corrupt_record` set because their key or value did not decode."),
					"error_records":   computedInt(errorRecordsDoc),
					"filtered_records": computedInt("Records that gave no row because they carry none, since the table was first " +
						"written: Debezium truncate, message and heartbeat events, tombstones of changelog formats without " +
						"`json_options.empty_value_as_delete`, Canal events of databases and tables `canal_options` leaves out, " +
						"and Canal DDL events."),
					"last_error": computedString("Most recent error of the table, retried or fatal; empty if none."),
					"partitions": schema.ListNestedAttribute{
						MarkdownDescription: "Progress of each topic-partition the table reads, by topic and partition.",
						Computed:            true,
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"topic":       computedString("Topic name."),
							"partition":   computedInt("Partition number."),
							"next_offset": computedInt("Next offset to read, as committed in the table's log."),
							"lag":         computedInt("Records between `next_offset` and the partition's end (high watermark), as last seen."),
						}},
					},
					"columns": columnsAttribute(),
					"maintenance": schema.SingleNestedAttribute{
						MarkdownDescription: "What the agent's compaction and vacuum of the table (`auto_compact`, `auto_vacuum`) " +
							"did since the agent started; null where no agent maintains the table (both are off).",
						Computed: true,
						Attributes: map[string]schema.Attribute{
							"small_files":     computedInt("Files of the table below two thirds of the compaction's target size, at the last check."),
							"compactions":     computedInt("Compaction commits (`OPTIMIZE`, `dataChange = false`) the agent made."),
							"files_compacted": computedInt("Files those commits removed."),
							"files_written":   computedInt("Files those commits added."),
							"gave_way": computedInt("Compactions that gave way because another writer (another engine's `OPTIMIZE`) " +
								"removed one of their files first."),
							"last_compaction": computedString("When the last compaction that committed started (RFC 3339, UTC); empty before the first."),
							"files_vacuumed":  computedInt("Removed data files vacuum deleted, past `delta.deletedFileRetentionDuration`."),
							"last_vacuum":     computedString("When vacuum last ran without an error (RFC 3339, UTC)."),
							"last_error": computedString("The last error of each job (compaction, vacuum) that failed the last time it ran, " +
								"each named; empty when both succeeded."),
						},
					},
				}},
			},
		},
	}
}

// errorRecordsDoc describes error_records of a table status.
var errorRecordsDoc = "Records left out of the table because their key or value did not decode, with " +
	"`ignore_errors = true`, since the table was first written (kept in its log, so it survives restarts); they are " +
	"in the table `" + spec.DirtyRecordsTable + "` of the pipeline's destination schema. The table fails once it passes " +
	"`error_tolerance_max_count`."

// Read implements datasource.DataSource.
func (d *pipelineStatusDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m pipelineStatusDataSourceModel
	st := d.readStatus(ctx, req.Config, &m, "name", &resp.Diagnostics)
	if st == nil {
		return
	}
	m.set(st)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// set sets the computed attributes of m from st.
func (m *pipelineStatusDataSourceModel) set(st *spec.PipelineStatus) {
	m.State = types.StringValue(st.State)
	m.Tables = make([]tableStatusModel, len(st.Tables))
	for i, ts := range st.Tables {
		parts := make([]partitionStatusModel, len(ts.Partitions))
		for j, ps := range ts.Partitions {
			parts[j] = partitionStatusModel{Topic: ps.Topic, Partition: int64(ps.Partition), NextOffset: ps.NextOffset, Lag: ps.Lag}
		}
		m.Tables[i] = tableStatusModel{
			DestinationTable: ts.DestinationTable,
			State:            ts.State,
			Location:         ts.Location,
			Version:          ts.Version,
			Rows:             ts.Rows,
			Files:            ts.Files,
			CorruptRecords:   ts.CorruptRecords,
			ErrorRecords:     ts.ErrorRecords,
			FilteredRecords:  ts.FilteredRecords,
			LastError:        ts.LastError,
			Partitions:       parts,
			Columns:          columnModels(ts.Columns),
			Maintenance:      maintenanceModelOf(ts.Maintenance),
		}
	}
}

// maintenanceModelOf returns the model of mt; nil for none.
func maintenanceModelOf(mt *spec.MaintenanceStatus) *maintenanceModel {
	if mt == nil {
		return nil
	}
	return &maintenanceModel{SmallFiles: int64(mt.SmallFiles), Compactions: mt.Compactions, FilesCompacted: mt.FilesCompacted,
		FilesWritten: mt.FilesWritten, GaveWay: mt.GaveWay, LastCompaction: mt.LastCompaction, FilesVacuumed: mt.FilesVacuumed,
		LastVacuum: mt.LastVacuum, LastError: mt.LastError}
}
