// Package ingest is the one way records reach the agent's writers: it sits
// between Kafka (package kafka fetches) and the writers (a pipeline's table
// loops and fanout runners, and the Kafka sinks), in the data flow Kafka ->
// ingest -> writers -> tables or Kafka sinks.
//
// It holds a pipeline's shared [Source], which fetches each partition once
// for every [Subscription] to it, and reads the records a table samples to
// infer its columns ([Source.Head]); the [PartitionReader], which subscribes a
// table's partitions and decodes what they fetch, a chunk at a time, into
// [Decoded] column batches, reading a large backlog as ranges in parallel
// (the splitter); and the [DecoderPool] those decoders come from, which
// bounds the chunks a table decodes and holds at once. What it fetches
// draws from the agent's memory budget.
package ingest
