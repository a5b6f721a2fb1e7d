// Package kafkatest holds what the tests of the runtime packages (ingest,
// pipeline, kafkasink) share to read Kafka: an in-process Kafka-protocol
// broker (franz-go's kfake) with a producer, record deletion, a client of
// the agent, and polling; and the Kafka sink's test sink and
// read_committed readers. Only tests import it; the real broker is
// exercised by the end-to-end tests.
package kafkatest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// NewCluster starts an in-process Kafka-protocol broker with topics of the
// given number of partitions, and a producer whose default topic is the
// first; both end with the test.
func NewCluster(t testing.TB, partitions int32, topics ...string) (addr string, producer *kgo.Client) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr = c.ListenAddrs()[0]
	producer, err = kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topics[0]))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(producer.Close)
	return addr, producer
}

// Produce writes the records of keys from..to-1 with cl, the value of key
// i being value(i), and waits for them.
func Produce(t testing.TB, cl *kgo.Client, from, to int, value func(i int) string) {
	t.Helper()
	var recs []*kgo.Record
	for i := from; i < to; i++ {
		recs = append(recs, &kgo.Record{Key: fmt.Appendf(nil, "%d", i), Value: []byte(value(i))})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// DeleteRecords deletes the records of partition 0 of topic before offset
// at, as retention would.
func DeleteRecords(t testing.TB, producer *kgo.Client, topic string, at int64) {
	t.Helper()
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: topic, Partition: 0, At: at})
	if _, err := kadm.NewClient(producer).DeleteRecords(context.Background(), offs); err != nil {
		t.Fatal(err)
	}
}

// NewClient returns the agent's client of conn, closed when the test ends.
func NewClient(t testing.TB, conn *spec.Connection) *kafka.Client {
	t.Helper()
	client, err := kafka.NewClient(conn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	return client
}

// WaitFor polls cond every 20ms until it holds or d passes, when the test
// fails saying it waited for what.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
