// Package deltasink is the Delta table writer of the agent. It sits at the
// end of a table's data flow (Kafka -> ingest/decode -> writers -> table):
// a table loop, or a fanout runner for each table it routes to, hands it
// decoded chunks, and it writes them into Parquet files and commits them to
// the table's Delta log with the offsets they end at, exactly once.
//
// It holds the writer ([Sink]) with its status ([TableState]) and lag
// ([RecordSizes]); the records left out under kafka_options.ignore_errors
// and the dirty records table they go to ([ErrorBudget], [DirtyTable]);
// the offsets skipped when Kafka lost data ([DataLoss]); and the mirror of
// committed offsets to a consumer group ([GroupCommitter]). Where a runner
// starts reading (positions), and the runners themselves, stay in
// pipeline.
package deltasink
