package spec

// Fanout routing: by an expression, by fields of the value (as Flink's
// json.decode.parser-table-id.fields) or by the source table of a change event.

// Values of fanout_options.on_invalid_route: what happens to a record whose
// fanout_by result is NULL, fails to evaluate or is not a valid table name.
const (
	// OnInvalidRouteFail fails the fanout schema at the record, committing
	// nothing of its chunk, as the reference says.
	OnInvalidRouteFail = "FAIL"
	// OnInvalidRouteDeadLetter writes the record (raw key, value, metadata
	// and the error) to the [FanoutErrorsTable] of the destination schema.
	OnInvalidRouteDeadLetter = "DEAD_LETTER"
)

// OnInvalidRoutes lists the accepted on_invalid_route values.
var OnInvalidRoutes = []string{OnInvalidRouteFail, OnInvalidRouteDeadLetter}

// FanoutErrorsTable is the table of the destination schema that receives
// the records a DEAD_LETTER fanout cannot route.
const FanoutErrorsTable = "_fanout_errors"

// MaxRoutedNameLen is the longest table name a fanout_by result may be.
const MaxRoutedNameLen = 255

// FanoutSchema routes each record of its topics to one of many tables of
// one destination schema, named by the value of an SQL expression on the
// raw record: a Lakeflow Connect schema object with fanout_options. It runs
// inside its pipeline, with the pipeline's connection, storage location,
// mode and flush settings, and owns its destination schema: every table
// of <catalog>.<schema> is its to create.
type FanoutSchema struct {
	// Name identifies the fanout schema on the agent; see [ValidName].
	Name string `json:"name"`
	// Pipeline is the Name of the [Pipeline] the fanout schema belongs to.
	Pipeline string `json:"pipeline_name"`
	// DestinationCatalog and DestinationSchema are the first two segments
	// of every routed table's name.
	DestinationCatalog string `json:"destination_catalog"`
	DestinationSchema  string `json:"destination_schema"`
	// ConnectorOptions says which topics feed the routed tables, as for a
	// table: topics or topic_pattern, starting_offset, isolation_level and
	// key and value transformers (raw BINARY by default).
	ConnectorOptions ConnectorOptions `json:"connector_options"`
	// FanoutOptions says how records are routed and transformed.
	FanoutOptions FanoutOptions `json:"fanout_options"`
	// TableConfiguration applies to every routed table.
	TableConfiguration TableConfiguration `json:"table_configuration"`
}

// FanoutOptions routes records to tables and transforms them after
// routing.
type FanoutOptions struct {
	// FanoutBy is a Databricks SQL expression on the raw record's columns
	// (key, value, topic, partition, offset, timestamp, headers) whose
	// STRING result names the record's table. Exclusive with TableIDFields.
	FanoutBy string `json:"fanout_by,omitempty"`
	// TableIDFields is Flink's json.decode.parser-table-id.fields as a
	// shorthand for FanoutBy: the values of these top-level fields of the
	// JSON value, joined by '_' (Flink joins with '.', which a table name
	// cannot hold), name the table. See [FanoutSchema.RouteExpression].
	TableIDFields []string `json:"table_id_fields,omitempty"`
	// Transforms holds at most one transform, applied after routing.
	Transforms []FanoutTransform `json:"transforms,omitempty"`
	// OnInvalidRoute is one of [OnInvalidRoutes]; empty means FAIL.
	OnInvalidRoute string `json:"on_invalid_route,omitempty"`
}

// FanoutTransform parses a column of every routed record in place.
type FanoutTransform struct {
	// Format is JSON, the only format of fanout transforms; empty means
	// JSON.
	Format string `json:"format,omitempty"`
	// InputColumn is the column the transform reads and writes back to:
	// key or value.
	InputColumn string `json:"input_column,omitempty"`
	// OutputColumn is accepted and ignored, as the reference says: the
	// transform always writes back to InputColumn. Validation warns.
	OutputColumn string `json:"output_column,omitempty"`
	// JSONOptions parses the column into typed columns (schema, or schema
	// inference with evolution) as a table's JSON transformer would;
	// without it the column becomes one VARIANT column.
	JSONOptions *JSONOptions `json:"json_options,omitempty"`
}

// FanoutStatus is what the agent reports about a running fanout schema.
type FanoutStatus struct {
	// State is the fanout schema's state (see the State constants).
	State string `json:"state"`
	// LastError is the most recent error, retried or fatal; empty if none.
	LastError string `json:"last_error,omitempty"`
	// Tables holds one entry per table the fanout schema created so far,
	// sorted by name, including [FanoutErrorsTable] once it exists.
	Tables []TableStatus `json:"tables"`
	// Partitions lists, per topic-partition, the offset up to which every
	// routed record is committed to its table (where a restart resumes)
	// and the lag behind it.
	Partitions []PartitionStatus `json:"partitions"`
}

// FanoutSchemaResponse is the body of GET and PUT /v1/fanout-schemas/{name}.
type FanoutSchemaResponse struct {
	Spec   FanoutSchema `json:"spec"`
	Status FanoutStatus `json:"status"`
}
