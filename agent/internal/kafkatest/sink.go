package kafkatest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The Kafka sink's tests, of its runner (kafkasink) and of the manager's
// sinks of pipelines' tables (pipeline), share these.

// Sink returns a Kafka sink named "s", of connection "c", of JSON records
// of topic in, written as JSON rows to topic out, with the delivery
// guarantee dg.
func Sink(dg string) *spec.KafkaSink {
	k := &spec.KafkaSink{
		Name: "s", Connection: "c", Topic: "out", ValueFormat: spec.SinkFormatJSON, DeliveryGuarantee: dg, FlushInterval: "200ms",
		Source: &spec.KafkaOptions{
			Topics: []string{"in"}, StartingOffset: spec.StartingOffsetEarliest,
			ValueTransformer: &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: "id BIGINT, name STRING"}},
		},
	}
	k.Normalize()
	return k
}

// CommittedReader returns a read_committed consumer of topic from its
// start, closed when t ends.
func CommittedReader(t testing.TB, addr, topic string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// CommittedIDs returns the ids of the JSON rows of topic, as a
// read_committed consumer sees them.
func CommittedIDs(t testing.TB, addr, topic string) []int {
	t.Helper()
	cl := CommittedReader(t, addr, topic)
	var ids []int
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			n++
			var row struct{ ID int }
			if err := json.Unmarshal(r.Value, &row); err != nil {
				t.Fatalf("record %s/%d@%d: %v: %q", r.Topic, r.Partition, r.Offset, err, r.Value)
			}
			ids = append(ids, row.ID)
		})
		if n == 0 {
			return ids
		}
	}
}

// CheckSinkWritesAndResumes produces 20 JSON rows with producer, starts a
// sink with start, waits with wrote until it has written them, stops it
// with stop, produces 10 more, starts it again and waits for those: then
// topic out must hold ids 0 to 29 once each, in order. wrote gets the
// number of rows produced and the number the sink has written since it
// started.
func CheckSinkWritesAndResumes(t testing.TB, addr string, producer *kgo.Client, start, stop func(), wrote func(total, sinceStart int64)) {
	t.Helper()
	value := func(i int) string { return fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i) }
	Produce(t, producer, 0, 20, value)
	start()
	wrote(20, 20)
	stop()
	Produce(t, producer, 20, 30, value)
	start()
	wrote(30, 10)
	ids := CommittedIDs(t, addr, "out")
	if len(ids) != 30 {
		t.Fatalf("read %d rows %v, want 30", len(ids), ids)
	}
	for i, id := range ids {
		if id != i {
			t.Fatalf("row %d has id %d; ids %v", i, id, ids)
		}
	}
}
