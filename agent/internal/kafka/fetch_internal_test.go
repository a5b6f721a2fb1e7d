package kafka

import (
	"context"
	"errors"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestDataLossOfRecreatedTopic: a fetch session opened on a topic that is
// then deleted and created again can be answered out of range, the new
// topic ending before the offset. That is the re-created topic, not
// records Kafka lost (which no setting can skip): the topic's id tells.
func TestDataLossOfRecreatedTopic(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := NewClient(&spec.Connection{Name: "c", BootstrapServers: c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	before, err := cl.TopicIDs(ctx, []string{"t"})
	if err != nil {
		t.Fatal(err)
	}
	adm, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(adm.Close)
	admin := kadm.NewClient(adm)
	if _, err := admin.DeleteTopic(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateTopic(ctx, 1, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}

	f := &Fetcher{Client: cl, TP: TopicPartition{Topic: "t"}, TopicID: before["t"]}
	lost, err := f.dataLoss(ctx, 20, kafkago.OffsetOutOfRange)
	var recreated *TopicRecreatedError
	if lost != nil || !errors.As(err, &recreated) || recreated.Was != before["t"] {
		t.Fatalf("out of range at 20 on the re-created topic: %v, %v; want a TopicRecreatedError", lost, err)
	}
	// A fetcher that expects no id, or the topic's own, finds the loss.
	f.TopicID = recreated.Now
	if lost, err := f.dataLoss(ctx, 20, kafkago.OffsetOutOfRange); lost == nil || lost.Latest != 0 {
		t.Fatalf("out of range at 20 on a topic that ends at 0: %v, %v; want a DataLossError", lost, err)
	}
}
