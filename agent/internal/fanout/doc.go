// Package fanout runs fanout schemas: one topic's records routed to many
// tables of one destination schema, each record to the table its
// fanout_by expression (or table_id_fields, or the source table of a
// change event) names. It sits between the shared source and the table
// writer (Kafka -> ingest -> fanout routing -> per-table deltasink
// writers -> tables): a [Runner] takes the batches the pipeline's source
// fetches (ingest), routes each record (fanout_route.go), decodes each
// table's records with that table's decoders and hands them to the table's
// deltasink writer, creating the table on its first record (fanout.go).
// When the tables keep the value as a VARIANT and fanout_by is a JSON path
// on the value, the router parses each value once, as the tables' VARIANT
// column holds it, reads the route from what it parsed, and the tables
// write what it parsed rather than parsing the text again.
//
// Its progress log (fanout_progress.go), a Delta log of offsets only in
// the destination schema's .fanout folder, records per partition the
// offset below which every routed record is committed to its table, and
// the tables created: a restart reads from there, and each table skips
// what it committed already, so that every record lands in its table
// exactly once. Records that cannot be routed fail the runner, or go to
// the dead letter table or the dirty records table (on_invalid_route).
// Where it starts reading and the leader-epoch check of its offsets
// (truncation.go) use package position; its supervisor and failure classes
// are package runner's. The manager (package pipeline) starts and stops
// runners from the fanout schemas applied.
package fanout
