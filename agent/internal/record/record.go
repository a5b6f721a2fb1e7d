// Package record holds the Kafka record as the agent passes it along the
// data flow: the Kafka layer (internal/kafka) reads records into it, the
// decoders (internal/decode) turn it into table rows, routing expressions
// (internal/expr) evaluate on it to pick a record's table, and the Kafka
// sink's encoders (internal/encode) produce it. It knows nothing of the
// Kafka client or of tables, so that each of those packages can share it
// without depending on another.
package record

import "time"

// Record is one Kafka record, independent of the Kafka client.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	// Timestamp is the record's time; the zero Time (or a time before the
	// epoch, as Kafka's -1 "no timestamp" decodes) means none.
	Timestamp time.Time
	// TimestampType is 0 for CreateTime, 1 for LogAppendTime.
	TimestampType int8
	// Key and Value are the record's bytes; nil is null (a tombstone value).
	Key, Value []byte
	Headers    []Header
	// LeaderEpoch is the partition leader epoch of the record's batch, -1
	// when the batch has none.
	LeaderEpoch int32
}

// Header is one record header.
type Header struct {
	Key   string
	Value []byte // nil is null
}

// HasTimestamp reports whether r has a time: neither the zero Time nor a
// time before the epoch, which is how Kafka's -1 "no timestamp" decodes.
func (r *Record) HasTimestamp() bool { return r.Timestamp.UnixMilli() >= 0 }
