package kafka_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

func TestPartitionsAssign(t *testing.T) {
	cl := newClient(t, 0)
	ctx := context.Background()
	tps, err := cl.Partitions(ctx, &spec.KafkaOptions{Assign: map[string][]int{"a-1": {1}, "b-1": {0, 0}}})
	if err != nil || fmt.Sprint(tps) != "[a-1/1 b-1/0]" {
		t.Fatalf("assign: got %v, %v", tps, err)
	}
	_, err = cl.Partitions(ctx, &spec.KafkaOptions{Assign: map[string][]int{"a-1": {0, 2}}})
	if err == nil || !strings.Contains(err.Error(), `assign: topic "a-1" has no partition 2 (it has 2 partitions, 0 to 1)`) {
		t.Fatalf("assigned partition that does not exist: got %v", err)
	}
	if _, err := cl.Partitions(ctx, &spec.KafkaOptions{Assign: map[string][]int{"missing": {0}}}); err == nil ||
		!strings.Contains(err.Error(), `"missing" does not exist`) {
		t.Fatalf("assigned topic that does not exist: got %v", err)
	}
}

func TestOffsetsForTimes(t *testing.T) {
	cl := newClient(t, 5) // a-1/0 holds 5 records produced now
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tp0, tp1 := kafka.TopicPartition{Topic: "a-1", Partition: 0}, kafka.TopicPartition{Topic: "a-1", Partition: 1}
	got, err := cl.OffsetsForTimes(ctx, map[kafka.TopicPartition]int64{tp0: 0, tp1: 0}, true)
	if err != nil || got[tp0] != 0 || got[tp1] != -1 {
		t.Fatalf("at time 0: got %v, %v; want a-1/0 at 0 and a-1/1 (empty) at -1", got, err)
	}
	future := time.Now().Add(time.Hour).UnixMilli()
	if got, err := cl.OffsetsForTimes(ctx, map[kafka.TopicPartition]int64{tp0: future}, false); err != nil || got[tp0] != -1 {
		t.Fatalf("an hour from now: got %v, %v; want -1", got, err)
	}
}

func TestGroupOffsetsAndMembers(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "a-1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl := plainClient(t, c.ListenAddrs()...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tp0, tp1 := kafka.TopicPartition{Topic: "a-1", Partition: 0}, kafka.TopicPartition{Topic: "a-1", Partition: 1}
	if got, err := cl.GroupOffsets(ctx, "g", []kafka.TopicPartition{tp0, tp1}); err != nil || len(got) != 0 {
		t.Fatalf("offsets of a group that does not exist: %v, %v", got, err)
	}
	if err := cl.CommitGroupOffsets(ctx, "g", map[kafka.TopicPartition]int64{tp0: 3}); err != nil {
		t.Fatal(err)
	}
	if got, err := cl.GroupOffsets(ctx, "g", []kafka.TopicPartition{tp0, tp1}); err != nil || fmt.Sprint(got) != "map[a-1/0:3]" {
		t.Fatalf("committed offsets: %v, %v", got, err)
	}
	// A group with only committed offsets has no members; one that a
	// consumer joined has it.
	if m, err := cl.GroupMembers(ctx, "g"); err != nil || len(m) != 0 {
		t.Fatalf("members of a group without consumers: %v, %v", m, err)
	}
	member, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumerGroup("joined"), kgo.ConsumeTopics("a-1"), kgo.ClientID("someone"))
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	if err := member.ProduceSync(ctx, &kgo.Record{Topic: "a-1", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	member.PollFetches(ctx) // returns once joined, with the record
	m, err := cl.GroupMembers(ctx, "joined")
	if err != nil || len(m) != 1 || m[0].ClientID != "someone" || m[0].ID == "" || m[0].Host == "" {
		t.Fatalf("members of a joined group: %+v, %v", m, err)
	}
}
