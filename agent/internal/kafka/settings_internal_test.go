package kafka

import (
	"bytes"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

func TestSettingsOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   spec.ClientSettings
		want requestSettings
	}{
		{"defaults", spec.ClientSettings{},
			requestSettings{clientID: clientID, minBytes: 1, startBytes: fetchMinBytes, maxBytes: fetchMaxBytes, maxWait: fetchMaxWait}},
		{"every property", spec.ClientSettings{ClientID: "me", FetchMinBytes: 10, FetchMaxBytes: 8 << 20, FetchMaxWait: time.Second,
			MetadataMaxAge: time.Minute, RequestTimeout: 5 * time.Second, ConnectTimeout: 2 * time.Second},
			requestSettings{clientID: "me", minBytes: 10, startBytes: fetchMinBytes, maxBytes: 8 << 20, maxWait: time.Second,
				metadataMaxAge: time.Minute, requestTimeout: 5 * time.Second, connectTimeout: 2 * time.Second}},
		{"the lower of the two maximums wins", spec.ClientSettings{FetchMaxBytes: 4 << 20, PartitionFetchMaxBytes: 2 << 20},
			requestSettings{clientID: clientID, minBytes: 1, startBytes: fetchMinBytes, maxBytes: 2 << 20, maxWait: fetchMaxWait}},
		{"a maximum below the first fetch's size", spec.ClientSettings{PartitionFetchMaxBytes: 1000},
			requestSettings{clientID: clientID, minBytes: 1, startBytes: 1000, maxBytes: 1000, maxWait: fetchMaxWait}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := settingsOf(&tc.in); got != tc.want {
				t.Errorf("settingsOf(%+v) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

// The next fetch asks for twice what the last one returned, up to the
// maximum, unless its batch held more memory than its response: then for
// no more than would hold the maximum. It reserves what its batch should
// hold, at least twice the ask, at most twice the maximum.
func TestNextFetch(t *testing.T) {
	rs := settingsOf(&spec.ClientSettings{})
	for _, tc := range []struct {
		name        string
		size        int
		held        int64
		wantAsk     int32
		wantReserve int64
	}{
		{"an empty fetch starts again small", 0, 0, fetchMinBytes, 2 * fetchMinBytes},
		{"doubles", 100 << 10, 100 << 10, 200 << 10, 400 << 10},
		{"up to the maximum", 800 << 10, 800 << 10, fetchMaxBytes, 2 * fetchMaxBytes},
		{"records that hold four times their size", 512 << 10, 2 << 20, 256 << 10, 1 << 20},
		{"a full fetch of them", 1 << 20, 4 << 20, 256 << 10, 1 << 20},
		{"records that hold less than twice as much", 256 << 10, 384 << 10, 512 << 10, 1 << 20},
		{"never below the first fetch's size, never reserving past twice the maximum", 64 << 10, 64 << 20, fetchMinBytes, 2 * fetchMaxBytes},
	} {
		if ask, reserve := rs.nextFetch(tc.size, tc.held); ask != tc.wantAsk || reserve != tc.wantReserve {
			t.Errorf("%s: nextFetch(%d, %d) = %d, %d; want %d, %d", tc.name, tc.size, tc.held, ask, reserve, tc.wantAsk, tc.wantReserve)
		}
	}
}

// A fetch request carries the client id, minimum size and wait of the
// client properties; a minimum above what the fetch asks for is lowered to
// it, which the broker could never see reached.
func TestWriteFetchHonoursSettings(t *testing.T) {
	rs := settingsOf(&spec.ClientSettings{ClientID: "ingest-7", FetchMinBytes: 4096, FetchMaxWait: 2 * time.Second})
	for _, tc := range []struct{ maxBytes, wantMin int32 }{{8000, 4096}, {1000, 1000}} {
		var buf bytes.Buffer
		if err := writeFetch(&buf, 9, TopicPartition{Topic: "t", Partition: 3}, 42, true, tc.maxBytes, &rs); err != nil {
			t.Fatal(err)
		}
		_, correlationID, id, msg, err := protocol.ReadRequest(&buf)
		if err != nil {
			t.Fatal(err)
		}
		req, ok := msg.(*fetch.Request)
		if !ok {
			t.Fatalf("read a %T, want a fetch request", msg)
		}
		p := req.Topics[0].Partitions[0]
		if correlationID != 9 || id != "ingest-7" || req.MinBytes != tc.wantMin || req.MaxWaitTime != 2000 || req.MaxBytes != tc.maxBytes ||
			p.PartitionMaxBytes != tc.maxBytes || p.FetchOffset != 42 || req.IsolationLevel != 1 {
			t.Errorf("request %d from %q: %+v, partition %+v", correlationID, id, req, p)
		}
	}
}

// A metadata request carries the client id of the client properties.
func TestMetadataRequestClientID(t *testing.T) {
	b := encodeMetadataRequest(1, "ingest-7", []string{"t"})
	if n := int(b[12])<<8 | int(b[13]); n != len("ingest-7") || string(b[14:14+n]) != "ingest-7" {
		t.Errorf("request header %q does not carry the client id", b[:24])
	}
}
