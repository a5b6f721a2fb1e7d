package spec

// Pipeline and table states reported by the agent.
const (
	// StateStarting: the pipeline was accepted and its tables are opening.
	StateStarting = "STARTING"
	// StateRunning: every table is reading and committing.
	StateRunning = "RUNNING"
	// StateIdle: a triggered pipeline between runs: its last run reached
	// its end offsets and committed them; POST /v1/pipelines/{name}/runs
	// starts the next.
	StateIdle = "IDLE"
	// StateFailed: a table stopped on an error it cannot retry; LastError
	// says which and why.
	StateFailed = "FAILED"
	// StateStopped: the pipeline was deleted or the agent is shutting down.
	StateStopped = "STOPPED"
)

// PipelineStatus is what the agent reports about a running pipeline.
type PipelineStatus struct {
	// State is the pipeline's overall state: FAILED if any table (or, in a
	// triggered pipeline, fanout schema) failed, IDLE once every one
	// finished its run, RUNNING once every one runs or finished.
	State string `json:"state"`
	// Tables holds one entry per table, in the pipeline's order.
	Tables []TableStatus `json:"tables"`
}

// TableStatus reports one destination table.
type TableStatus struct {
	DestinationTable string `json:"destination_table"`
	// Location is where the table lives: a folder, or an object store URL
	// with the store options (query parameters) the agent opens it with.
	Location string `json:"location"`
	State    string `json:"state"`
	// Version is the table's latest committed Delta log version, -1 before
	// the first commit.
	Version int64 `json:"version"`
	// Rows, Files and CorruptRecords count what this agent committed since
	// the table was first written (read back from the log on restart).
	Rows           int64 `json:"rows"`
	Files          int64 `json:"files"`
	CorruptRecords int64 `json:"corrupt_records"`
	// Partitions lists committed offsets and lag per topic-partition.
	Partitions []PartitionStatus `json:"partitions"`
	// Lag and LagBytes sum those of the partitions.
	Lag      int64 `json:"lag"`
	LagBytes int64 `json:"lag_bytes"`
	// DataLoss lists the ranges of offsets the table skipped because they
	// were gone (fail_on_data_loss = false), oldest first.
	DataLoss []DataLossGap `json:"data_loss,omitempty"`
	// DataLossOffsets counts the offsets the table skipped because they
	// were gone (fail_on_data_loss = false) since it was first written
	// (read back from the log on restart).
	DataLossOffsets int64 `json:"data_loss_offsets"`
	// ErrorRecords counts the records the table left out because they did
	// not decode (kafka_options.ignore_errors) since it was first written
	// (read back from the log on restart); they are in the pipeline's
	// [DirtyRecordsTable].
	ErrorRecords int64 `json:"error_records"`
	// FilteredRecords counts the records that gave no row because they
	// carry none, since the table was first written (read back from the
	// log on restart): Debezium truncate, message and heartbeat events,
	// tombstones of changelog formats without
	// json_options.empty_value_as_delete, Canal events of the databases
	// and tables canal_options leaves out, and Canal DDL events.
	FilteredRecords int64 `json:"filtered_records"`
	// LastError is the most recent error, retried or fatal; empty if none.
	LastError string `json:"last_error,omitempty"`
	// Columns is the table's current schema, top-level columns in table
	// order: what schema inference decided, or what the layout declares,
	// as the table's log records it. Empty before the table has a schema.
	Columns []ColumnStatus `json:"columns,omitempty"`
	// Maintenance says what the agent's compaction and vacuum of the table
	// did since the agent started; absent where this agent does not
	// maintain the table (in a cluster, another agent does).
	Maintenance *MaintenanceStatus `json:"maintenance,omitempty"`
	// Catalog says how the table's registrations in its catalog (the
	// catalog object named as its destination_catalog) stand; absent when
	// there is none, or this agent does not maintain the table.
	Catalog *CatalogStatus `json:"catalog,omitempty"`
}

// CatalogStatus is how a table's registrations stand, on the agent that
// maintains it.
type CatalogStatus struct {
	// Name is the catalog's name, the table's destination_catalog.
	Name string `json:"name"`
	// Iceberg is the table's Iceberg mirror, when the catalog has an
	// Iceberg REST catalog.
	Iceberg *IcebergMirrorStatus `json:"iceberg,omitempty"`
	// HiveMetastore is the table's registration in the catalog's Hive
	// Metastore, when it has one.
	HiveMetastore *RegistrationStatus `json:"hive_metastore,omitempty"`
}

// IcebergMirrorStatus is what the Iceberg mirror of a table did since the
// agent started.
type IcebergMirrorStatus struct {
	// DeltaVersion is the Delta version the Iceberg table mirrors, -1
	// before the first snapshot.
	DeltaVersion int64 `json:"delta_version"`
	// Lag is the number of Delta versions not yet mirrored.
	Lag int64 `json:"lag"`
	// Snapshots counts the Iceberg snapshots committed since the agent
	// started.
	Snapshots int64 `json:"snapshots"`
	// LastSync is when the last sync that succeeded ended, RFC 3339 in
	// UTC; empty before the first.
	LastSync string `json:"last_sync,omitempty"`
	// LastError is why the last sync failed; empty after one succeeds.
	LastError string `json:"last_error,omitempty"`
}

// RegistrationStatus is a table's registration in a metastore.
type RegistrationStatus struct {
	// Registered says the metastore holds the table.
	Registered bool `json:"registered"`
	// LastError is why the last attempt failed; empty once registered.
	LastError string `json:"last_error,omitempty"`
}

// MaintenanceStatus is what an agent's maintenance of a table (auto_compact,
// auto_vacuum) did since the agent started.
type MaintenanceStatus struct {
	// SmallFiles is how many small files the table held at the last
	// check: files below two thirds of the compaction's target size.
	SmallFiles int `json:"small_files"`
	// Compactions counts the compaction commits; FilesCompacted the files
	// they removed and FilesWritten those they added.
	Compactions    int64 `json:"compactions"`
	FilesCompacted int64 `json:"files_compacted"`
	FilesWritten   int64 `json:"files_written"`
	// GaveWay counts the compactions that gave way to another writer that
	// removed one of their files first (another engine's OPTIMIZE).
	GaveWay int64 `json:"gave_way"`
	// LastCompaction is when the last compaction that committed started,
	// RFC 3339 in UTC; empty before the first.
	LastCompaction string `json:"last_compaction,omitempty"`
	// FilesVacuumed counts the data files vacuum deleted.
	FilesVacuumed int64 `json:"files_vacuumed"`
	// LastVacuum is when vacuum last ran without an error, RFC 3339 in UTC.
	LastVacuum string `json:"last_vacuum,omitempty"`
	// LastError holds the last error of each job that failed the last
	// time it ran ("compaction: ...; vacuum: ..."); empty when both
	// succeeded.
	LastError string `json:"last_error,omitempty"`
}

// ColumnStatus is one top-level column of a table's current schema.
type ColumnStatus struct {
	Name string `json:"name"`
	// Type is the column's Spark SQL type as DDL writes it
	// ("BIGINT", "STRUCT<a: STRING>", "ARRAY<DOUBLE>", "VARIANT").
	Type     string `json:"type"`
	Nullable bool   `json:"nullable"`
}

// PartitionStatus is the progress of one topic-partition.
type PartitionStatus struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	// NextOffset is the next offset to read, as committed in the log.
	NextOffset int64 `json:"next_offset"`
	// Lag is the high watermark minus NextOffset, as last seen.
	Lag int64 `json:"lag"`
	// LagBytes estimates the bytes behind the high watermark: Lag times
	// the partition's mean record size as fetched.
	LagBytes int64 `json:"lag_bytes"`
	// Agent names the agent of a cluster that reads the partition; empty
	// for a single agent.
	Agent string `json:"agent,omitempty"`
}

// DataLossGap is a range of offsets a table skipped because Kafka no
// longer had them (fail_on_data_loss = false).
type DataLossGap struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	// From is the first offset skipped, To the offset reading went on
	// from: [From, To) is lost.
	From int64 `json:"from"`
	To   int64 `json:"to"`
	// Reason says why: retention, or the topic was re-created.
	Reason string `json:"reason"`
	// DetectedAt is when the agent skipped it (RFC 3339).
	DetectedAt string `json:"detected_at"`
}

// PipelineResponse is the body of GET and PUT /v1/pipelines/{name}.
type PipelineResponse struct {
	Spec   Pipeline       `json:"spec"`
	Status PipelineStatus `json:"status"`
}

// Problem is an application/problem+json error body (RFC 9457) with the
// list of validation problems, if any.
type Problem struct {
	Type   string       `json:"type,omitempty"`
	Title  string       `json:"title"`
	Status int          `json:"status"`
	Detail string       `json:"detail,omitempty"`
	Errors []FieldError `json:"errors,omitempty"`
}

// RunRefusedError is the error of a request to start the next run of a
// pipeline (POST /v1/pipelines/{name}/runs) that its state does not allow:
// it is continuous, a run is in progress, or a table or fanout schema
// failed. The agent answers 409 with Reason.
type RunRefusedError struct {
	// Reason says why, and what to do instead.
	Reason string
}

// Error implements error with the reason.
func (e *RunRefusedError) Error() string { return e.Reason }
