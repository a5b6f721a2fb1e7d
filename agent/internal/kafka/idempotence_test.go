package kafka_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
)

// idempotence checks an idempotent producer without transactions on
// topic (one partition) of cl: it has a producer id; a batch sent again
// with the sequence number it already had (its answer lost) is written
// once and counts as written; a batch whose sequence number skips some
// (the broker answers OUT_OF_ORDER_SEQUENCE_NUMBER) is written once
// under a new producer id; and a producer that is not idempotent writes a
// batch sent again twice, which is what idempotence prevents.
func idempotence(t *testing.T, cl *kafka.Client, topic string) {
	t.Helper()
	ctx := context.Background()
	tp := kafka.TopicPartition{Topic: topic}
	p := newProducer(t, cl, kafka.ProducerConfig{Idempotent: true})
	first := p.ProducerID()
	if first < 0 {
		t.Fatalf("an idempotent producer has no producer id (%d)", first)
	}
	send := func(p *kafka.Producer, values ...string) {
		t.Helper()
		if err := p.Send(ctx, topic, 0, records(values...)); err != nil {
			t.Fatalf("Send %v: %v", values, err)
		}
	}
	send(p, "a", "b")
	p.SetSequence(tp, 0) // the answer was lost: the same batch again
	send(p, "a", "b")
	send(p, "c")
	p.SetSequence(tp, 10) // a gap: the broker refuses it
	send(p, "d")
	if p.ProducerID() == first {
		t.Fatalf("after OUT_OF_ORDER_SEQUENCE_NUMBER the producer id is still %d, want a new one", first)
	}
	send(p, "e")
	plain := newProducer(t, cl, kafka.ProducerConfig{})
	if plain.ProducerID() != -1 {
		t.Fatalf("a producer that is not idempotent has producer id %d", plain.ProducerID())
	}
	send(plain, "f")
	send(plain, "f")
	got, _, _ := fetchTopic(t, cl, topic, false)
	if want := []string{"a", "b", "c", "d", "e", "f", "f"}; !slices.Equal(got, want) {
		t.Fatalf("records %v, want %v", got, want)
	}
}

func TestProducerIdempotent(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	idempotence(t, plainClient(t, c.ListenAddrs()...), "t")
}

// TestProducerIdempotentNoCoordinator: an idempotent producer without a
// transactional id gets its producer id from any broker, as Kafka's own
// producer does, so it works where no transaction coordinator can be
// found (a cluster with fewer brokers than the transaction state topic's
// replication factor, or ACLs without a grant on a transactional id).
func TestProducerIdempotentNoCoordinator(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	h := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.FindCoordinator}, Err: kerr.CoordinatorNotAvailable, Count: -1})
	cl := plainClient(t, c.ListenAddrs()...)
	p := newProducer(t, cl, kafka.ProducerConfig{Idempotent: true})
	if p.ProducerID() < 0 {
		t.Fatalf("no producer id (%d)", p.ProducerID())
	}
	if err := p.Send(context.Background(), "t", 0, records("a")); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if h.Hits() != 0 {
		t.Errorf("the producer looked up a coordinator %d times", h.Hits())
	}
}

// TestProducerIdempotentFaults: a produce the broker applies but answers
// with REQUEST_TIMED_OUT (the answer to the first attempt lost) is retried
// and written once by an idempotent producer, twice by one that is not;
// DUPLICATE_SEQUENCE_NUMBER is success; UNKNOWN_PRODUCER_ID and
// OUT_OF_ORDER_SEQUENCE_NUMBER start over with a new producer id, telling
// OnNewProducerID (acked batches lost for the second).
func TestProducerIdempotentFaults(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl := plainClient(t, c.ListenAddrs()...)
	ctx := context.Background()
	fault := func(code *kerr.Error) *kfake.FaultHandle {
		return c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Err: code})
	}
	type renewal struct {
		tp        kafka.TopicPartition
		lostAcked bool
	}
	var renewals []renewal
	idem := newProducer(t, cl, kafka.ProducerConfig{Idempotent: true, OnNewProducerID: func(tp kafka.TopicPartition, lostAcked bool, _ error) {
		renewals = append(renewals, renewal{tp, lostAcked})
	}})
	plain := newProducer(t, cl, kafka.ProducerConfig{})
	var want []string
	for _, tc := range []struct {
		name  string
		p     *kafka.Producer
		err   *kerr.Error
		wrote []string
	}{
		{"idempotent, answer lost", idem, kerr.RequestTimedOut, []string{"lost"}},
		{"not idempotent, answer lost", plain, kerr.RequestTimedOut, []string{"lost", "lost"}},
		{"duplicate", idem, kerr.DuplicateSequenceNumber, nil},
		{"unknown producer", idem, kerr.UnknownProducerID, []string{"unknown"}},
		{"out of order", idem, kerr.OutOfOrderSequenceNumber, []string{"gap"}},
	} {
		before := tc.p.ProducerID()
		h := fault(tc.err)
		value := "lost"
		if tc.wrote != nil {
			value = tc.wrote[0]
		}
		if err := tc.p.Send(ctx, "t", 0, records(value)); err != nil {
			t.Fatalf("%s: Send: %v", tc.name, err)
		}
		if h.Hits() != 1 {
			t.Fatalf("%s: the fault was hit %d times", tc.name, h.Hits())
		}
		renewed := tc.err == kerr.UnknownProducerID || tc.err == kerr.OutOfOrderSequenceNumber
		if renewed == (tc.p.ProducerID() == before) {
			t.Fatalf("%s: producer id %d, was %d", tc.name, tc.p.ProducerID(), before)
		}
		if renewed {
			want := renewal{kafka.TopicPartition{Topic: "t"}, tc.err == kerr.OutOfOrderSequenceNumber}
			if len(renewals) != 1 || renewals[0] != want {
				t.Fatalf("%s: OnNewProducerID told %+v, want %+v", tc.name, renewals, want)
			}
		} else if len(renewals) != 0 {
			t.Fatalf("%s: OnNewProducerID told %+v, want nothing", tc.name, renewals)
		}
		renewals = renewals[:0]
		want = append(want, tc.wrote...)
		if got, _, _ := fetchTopic(t, cl, "t", false); !slices.Equal(got, want) {
			t.Fatalf("%s: records %v, want %v", tc.name, got, want)
		}
	}
}

// TestRealBrokerProducerIdempotent runs idempotence against the real
// broker (tools/kafka.sh up) when KAFKA_BOOTSTRAP says where it is:
// Kafka's own producer state, duplicate detection and sequence checks.
func TestRealBrokerProducerIdempotent(t *testing.T) {
	bootstrap := os.Getenv("KAFKA_BOOTSTRAP")
	if bootstrap == "" || testing.Short() {
		t.Skip("KAFKA_BOOTSTRAP is not set (tools/kafka.sh up), or -short")
	}
	topic := fmt.Sprintf("producer-idempotent-%d", time.Now().UnixNano())
	createRealTopics(t, bootstrap, topic)
	idempotence(t, plainClient(t, bootstrap), topic)
}
