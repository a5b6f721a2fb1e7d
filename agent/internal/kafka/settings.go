package kafka

import (
	"cmp"
	"context"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// requestSettings are the client properties a [Fetcher]'s own requests
// honour (its fetches and the metadata look-up of each fetch session),
// with the agent's defaults filled in for the properties left zero.
type requestSettings struct {
	clientID string
	// minBytes and maxWait are the fetch's MinBytes and MaxWaitTime;
	// startBytes and maxBytes bound the size a fetch asks for, which
	// starts at startBytes and doubles with what the partition returns
	// up to maxBytes (see [Fetcher.session]).
	minBytes, startBytes, maxBytes int32
	maxWait                        time.Duration
	// metadataMaxAge ends a fetch session after that long, so that the
	// partition's leader and topic id are looked up again; 0 never.
	metadataMaxAge time.Duration
	// requestTimeout bounds a request past its own wait, 0 for the
	// request's default (see timeout); connectTimeout bounds the whole
	// dial of a connection (TCP, TLS and SASL), 0 for the bounds of each
	// step alone.
	requestTimeout, connectTimeout time.Duration
}

// Defaults of the request settings: see [spec.ClientSettings] for the
// properties that override them.
const (
	fetchTimeout    = 30 * time.Second
	metadataTimeout = 15 * time.Second
)

// settingsOf returns the request settings of client properties s.
// fetch.max.bytes and max.partition.fetch.bytes both bound a fetch, which
// asks for one partition: the lower one wins.
func settingsOf(s *spec.ClientSettings) requestSettings {
	maxBytes := int32(fetchMaxBytes)
	switch {
	case s.FetchMaxBytes > 0 && s.PartitionFetchMaxBytes > 0:
		maxBytes = min(s.FetchMaxBytes, s.PartitionFetchMaxBytes)
	case s.FetchMaxBytes > 0:
		maxBytes = s.FetchMaxBytes
	case s.PartitionFetchMaxBytes > 0:
		maxBytes = s.PartitionFetchMaxBytes
	}
	return requestSettings{
		clientID:       cmp.Or(s.ClientID, clientID),
		minBytes:       max(s.FetchMinBytes, 1),
		startBytes:     min(fetchMinBytes, maxBytes),
		maxBytes:       maxBytes,
		maxWait:        cmp.Or(s.FetchMaxWait, fetchMaxWait),
		metadataMaxAge: s.MetadataMaxAge,
		requestTimeout: s.RequestTimeout,
		connectTimeout: s.ConnectTimeout,
	}
}

// nextFetch returns what the fetch after one whose response was size
// bytes, and whose batch holds held bytes, asks for and reserves of the
// memory budget. It asks for twice size, between startBytes and maxBytes,
// and no more than keeps the batch it returns within maxBytes of memory if
// it holds as much per byte of response: so a partition holds about the
// same memory per fetch whatever its records. Small ones (each takes a
// record.Record of its own, three times the size of a 40-byte Avro value)
// and compressed ones (decompressed) would otherwise hold several times
// what JSON events of the same response size do. It reserves what such a
// batch holds, at least twice the ask (the response, and about as much
// again for the records of 100 bytes), at most twice maxBytes.
func (rs *requestSettings) nextFetch(size int, held int64) (ask int32, reserve int64) {
	n := min(max(2*int64(size), int64(rs.startBytes)), int64(rs.maxBytes))
	reserve = 2 * n
	if size > 0 && held > int64(size) {
		n = min(n, max(int64(rs.maxBytes)*int64(size)/held, int64(rs.startBytes)))
		reserve = max(2*n, min(n*held/int64(size), 2*int64(rs.maxBytes)))
	}
	return int32(n), reserve
}

// defaultSettings are the request settings of requests made for no
// fetcher in particular.
var defaultSettings = settingsOf(&spec.ClientSettings{})

// dialContext returns ctx bounded by the connect timeout, if any, for a
// dial.
func (rs *requestSettings) dialContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if rs.connectTimeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, rs.connectTimeout)
}

// timeout returns the request timeout, def unless request.timeout.ms says
// otherwise.
func (rs *requestSettings) timeout(def time.Duration) time.Duration {
	return cmp.Or(rs.requestTimeout, def)
}
