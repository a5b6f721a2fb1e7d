package spec

import "time"

// ClientSettings are the Kafka consumer properties of client_properties
// (S-01, F-01) the agent honours, parsed; a zero field keeps the agent's
// default.
type ClientSettings struct {
	// ClientID is client.id, sent with every request.
	ClientID string
	// FetchMinBytes is fetch.min.bytes, FetchMaxBytes fetch.max.bytes,
	// PartitionFetchMaxBytes max.partition.fetch.bytes and FetchMaxWait
	// fetch.max.wait.ms of a fetch request.
	FetchMinBytes          int32
	FetchMaxBytes          int32
	PartitionFetchMaxBytes int32
	FetchMaxWait           time.Duration
	// MetadataMaxAge is metadata.max.age.ms: how long partition
	// leadership is cached.
	MetadataMaxAge time.Duration
	// RequestTimeout is request.timeout.ms.
	RequestTimeout time.Duration
	// ConnectTimeout is socket.connection.setup.timeout.ms.
	ConnectTimeout time.Duration
}
