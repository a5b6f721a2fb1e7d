// Package kafkasink runs the agent's Kafka sinks. A sink sits at the end of
// the data flow (Kafka -> ingest/decode -> writers -> table or Kafka sink),
// beside the Delta table writer: it reads a source, decodes it into rows,
// encodes each row as a change event (Debezium, Canal) or a JSON row
// (package encode) and writes the records to Kafka topics. Its source is
// either Kafka topics, read through an ingest.Source of the sink's own
// (on the sink's connection, not shared with the pipelines) from the
// sink's consumer group and decoded as
// a table with the same kafka_options would decode them (package decode),
// or a table a pipeline of this agent writes, read from the table's Delta
// log and data files (package table).
//
// Where a sink is lives in Kafka, in its consumer group
// "tributary-sink.<name>": the next offset of every source partition, or
// the next version of the source table. An exactly-once sink commits that
// position in the same Kafka transaction as the records written from what
// came before it, so that a restart resumes exactly after the last
// committed transaction; an at-least-once sink commits it once its
// records are acknowledged.
//
// A [Runner] runs one sink's sessions under a runner.Supervisor: each
// session is a producer, the source's readers and the decoders, and any
// error ends it (the open transaction aborted), so that the next resumes
// from the group. The manager (package pipeline) starts a runner per
// applied sink with [Start] and gives it, in [Deps], what it shares with
// the agent's other readers: the memory budget, the schema registry
// clients, and the look-up of a [SourceTable] among the tables its
// pipelines and fanout schemas write. runner.go holds the runner and the
// session of a topic source, table.go the table source, failures.go the
// classifier of a session's failures.
package kafkasink
