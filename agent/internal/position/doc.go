// Package position decides where a runner (a table loop, a fanout schema,
// a Kafka sink) starts and ends reading Kafka partitions it has no
// committed offset for, from the kafka_options (starting and ending
// offsets and timestamps, auto_offset_reset, the consumer group), and
// whether the offsets it committed are still there: their leader epochs
// checked against the partitions' leaders, as Kafka's consumer does
// (KIP-320). It sits between the Kafka client below and the runners above,
// which hand it their options and act on what it finds.
package position
