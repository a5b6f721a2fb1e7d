package spec

import "time"

// Kafka sinks: records written back to Kafka.

// Values of kafka_sink.partition_strategy.
const (
	// PartitionAllToZero writes every record to partition 0.
	PartitionAllToZero = "ALL_TO_ZERO"
	// PartitionHashByKey picks the partition by the murmur2 hash of the
	// record key, as Kafka's Java producer does.
	PartitionHashByKey = "HASH_BY_KEY"
)

// PartitionStrategies lists the accepted partition_strategy values.
var PartitionStrategies = []string{PartitionAllToZero, PartitionHashByKey}

// Values of kafka_sink.value_format.
const (
	// SinkFormatDebeziumJSON writes Debezium change events (Flink's default).
	SinkFormatDebeziumJSON = FormatDebeziumJSON
	// SinkFormatCanalJSON writes Canal change events.
	SinkFormatCanalJSON = FormatCanalJSON
	// SinkFormatJSON writes each row as a JSON object.
	SinkFormatJSON = FormatJSON
)

// SinkFormats lists the accepted value_format values.
var SinkFormats = []string{SinkFormatDebeziumJSON, SinkFormatCanalJSON, SinkFormatJSON}

// Values of kafka_sink.delivery_guarantee.
const (
	// DeliveryAtLeastOnce may write a record again after a failure.
	DeliveryAtLeastOnce = "AT_LEAST_ONCE"
	// DeliveryExactlyOnce writes records and the source position in one
	// Kafka transaction: a read_committed consumer sees each record once.
	DeliveryExactlyOnce = "EXACTLY_ONCE"
)

// DeliveryGuarantees lists the accepted delivery_guarantee values.
var DeliveryGuarantees = []string{DeliveryAtLeastOnce, DeliveryExactlyOnce}

// Values of kafka_sink.compression: Kafka's compression.type, upper case.
const (
	// CompressionNone writes record batches uncompressed.
	CompressionNone = "NONE"
	// CompressionGzip compresses record batches with gzip.
	CompressionGzip = "GZIP"
	// CompressionSnappy compresses record batches with Snappy.
	CompressionSnappy = "SNAPPY"
	// CompressionLZ4 compresses record batches with LZ4.
	CompressionLZ4 = "LZ4"
	// CompressionZstd compresses record batches with Zstandard.
	CompressionZstd = "ZSTD"
)

// Compressions lists the accepted compression values.
var Compressions = []string{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd}

// KafkaSink writes the decoded records of Kafka topics, or the changes of
// a table the agent writes, to Kafka topics of a connection.
type KafkaSink struct {
	// Name identifies the sink on the agent; see [ValidName].
	Name string `json:"name"`
	// Connection is the Name of the [Connection] the sink writes to, and
	// that a topic source reads from.
	Connection string `json:"connection_name"`
	// SourceTable is "<catalog>.<schema>.<table>" of a table a pipeline of
	// this agent writes: its changes are written. Exactly one of
	// SourceTable and Source is set.
	SourceTable string `json:"source_table,omitempty"`
	// Source reads topics as a table does (topics, starting_offset,
	// isolation_level, key and value transformers); its decoded rows are
	// written.
	Source *KafkaOptions `json:"source,omitempty"`
	// Topic is the topic every row is written to; exclusive with
	// TableTopicMapping. With neither, a row goes to the topic named by
	// its table id ([KafkaSink.FullTableID]).
	Topic string `json:"topic,omitempty"`
	// TableTopicMapping maps table ids to topics, Flink's
	// sink.tableId-to-topic.mapping: "db.t1:topic1;db.t2:topic2", where a
	// table id may be a regular expression matched against the whole id;
	// the first match wins, an unmatched table goes to its own topic.
	TableTopicMapping string `json:"table_topic_mapping,omitempty"`
	// PartitionStrategy is one of [PartitionStrategies]; empty means
	// [PartitionAllToZero].
	PartitionStrategy string `json:"partition_strategy,omitempty"`
	// ValueFormat is one of [SinkFormats]; empty means
	// [SinkFormatDebeziumJSON].
	ValueFormat string `json:"value_format,omitempty"`
	// KeepChangedFieldsOnly writes, in an update's before image (Debezium)
	// or old image (Canal), only the fields that changed. The before image
	// is that of the source's DEBEZIUM_JSON or CANAL_JSON update event
	// (encode.Befores); other updates have none, written as null. Nil
	// means false.
	KeepChangedFieldsOnly *bool `json:"keep_changed_fields_only,omitempty"`
	// IncludeSchema writes Debezium events with their Connect schema
	// ({"schema": ..., "payload": ...}). Nil means false.
	IncludeSchema *bool `json:"include_schema,omitempty"`
	// FullTableID names a row's table "<db>.<table>" in the default topic
	// name and in the event's table field, instead of the table alone.
	// Nil means false.
	FullTableID *bool `json:"full_table_id,omitempty"`
	// IncludeHeaders passes each source record's headers to the records
	// written. Nil means true.
	IncludeHeaders *bool `json:"include_headers,omitempty"`
	// Compression is one of [Compressions], the codec of the record
	// batches written (Kafka's compression.type); empty means
	// [CompressionNone].
	Compression string `json:"compression,omitempty"`
	// DeliveryGuarantee is one of [DeliveryGuarantees]; empty means
	// [DeliveryAtLeastOnce].
	DeliveryGuarantee string `json:"delivery_guarantee,omitempty"`
	// EnableIdempotence makes an at-least-once sink write with an
	// idempotent producer (a producer id, its epoch and per-partition
	// sequence numbers), so that a batch retried after a lost answer is
	// not written twice; Spark's kafka.enable.idempotence. An exactly-once
	// sink's transactions always are; false is refused there. Nil means
	// true.
	EnableIdempotence *bool `json:"enable_idempotence,omitempty"`
	// TransactionalID is the Kafka transactional.id of an exactly-once
	// sink; empty means "tributary-sink.<name>". Two agents running the
	// same sink share it, so the newer fences the older.
	TransactionalID string `json:"transactional_id,omitempty"`
	// FlushInterval is the longest a record waits before it is written
	// (and, exactly once, before its transaction commits), a duration;
	// empty means [DefaultFlushInterval].
	FlushInterval string `json:"flush_interval,omitempty"`
}

// KafkaSinkStatus reports a sink.
type KafkaSinkStatus struct {
	// State is STARTING, RUNNING or FAILED.
	State string `json:"state"`
	// Records counts the records written since the sink last started: by
	// this agent, or by an apply that changed it.
	Records int64 `json:"records"`
	// Positions are the source positions committed, per topic and
	// partition ("t/0") for a topic source, or "version" for a table.
	Positions map[string]int64 `json:"positions,omitempty"`
	// LastError is the most recent error, retried or fatal; empty if none.
	LastError string `json:"last_error,omitempty"`
}

// DefaultSinkTransactionalIDPrefix starts the default transactional id of
// an exactly-once sink, and the consumer group its source positions are
// committed to: "tributary-sink.<name>".
const DefaultSinkTransactionalIDPrefix = "tributary-sink."

// Normalize fills every unset optional attribute of s with its default, so
// the agent stores and returns the same values Terraform plans.
func (s *KafkaSink) Normalize() {
	if s.Source != nil {
		s.Source.normalize()
	}
	if s.PartitionStrategy == "" {
		s.PartitionStrategy = PartitionAllToZero
	}
	if s.ValueFormat == "" {
		s.ValueFormat = SinkFormatDebeziumJSON
	}
	if s.Compression == "" {
		s.Compression = CompressionNone
	}
	if s.DeliveryGuarantee == "" {
		s.DeliveryGuarantee = DeliveryAtLeastOnce
	}
	if s.FlushInterval == "" {
		s.FlushInterval = DefaultFlushInterval
	}
	for _, b := range []struct {
		p   **bool
		def bool
	}{{&s.KeepChangedFieldsOnly, false}, {&s.IncludeSchema, false}, {&s.FullTableID, false}, {&s.IncludeHeaders, true},
		{&s.EnableIdempotence, true}} {
		if *b.p == nil {
			v := b.def
			*b.p = &v
		}
	}
}

// Group returns the consumer group the sink's source positions are
// committed to: "tributary-sink.<name>", whatever the transactional id.
func (s *KafkaSink) Group() string { return DefaultSinkTransactionalIDPrefix + s.Name }

// TxnID returns the transactional id of an exactly-once sink:
// TransactionalID, or "tributary-sink.<name>" when it is empty.
func (s *KafkaSink) TxnID() string {
	if s.TransactionalID != "" {
		return s.TransactionalID
	}
	return DefaultSinkTransactionalIDPrefix + s.Name
}

// ExactlyOnce reports whether the sink writes in transactions.
func (s *KafkaSink) ExactlyOnce() bool { return s.DeliveryGuarantee == DeliveryExactlyOnce }

// FlushEvery returns FlushInterval parsed, or the default when unset or
// invalid (Validate reports an invalid one).
func (s *KafkaSink) FlushEvery() time.Duration {
	d, err := time.ParseDuration(s.FlushInterval)
	if err != nil || d <= 0 {
		d, _ = time.ParseDuration(DefaultFlushInterval)
	}
	return d
}

// Idempotent reports whether the sink's producer is idempotent: always
// for an exactly-once sink, else enable_idempotence (true when unset).
func (s *KafkaSink) Idempotent() bool {
	return s.ExactlyOnce() || s.EnableIdempotence == nil || *s.EnableIdempotence
}

// Headers reports whether the source records' headers are written
// (include_headers, true when unset).
func (s *KafkaSink) Headers() bool { return s.IncludeHeaders == nil || *s.IncludeHeaders }

// SourceTableSpec returns the table a topic source is decoded as: the
// source's Kafka options under a table named after the sink, whose layout
// gives the columns of the rows written. Call it only when Source is set.
func (s *KafkaSink) SourceTableSpec() Table {
	return Table{DestinationTable: "sink", ConnectorOptions: ConnectorOptions{KafkaOptions: *s.Source}}
}

// KafkaSinkResponse is the body of GET /v1/kafka-sinks/{name}.
type KafkaSinkResponse struct {
	Spec   KafkaSink       `json:"spec"`
	Status KafkaSinkStatus `json:"status"`
}
