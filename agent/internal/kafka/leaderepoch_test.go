package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
)

// epochCluster starts two in-process brokers with topic "t" (one
// partition, led by node 0) and n records produced to it, and returns
// them with the producer, closed when the test ends.
func epochCluster(t *testing.T, n int) (*kfake.Cluster, *kgo.Client) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(2), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if err := c.MoveTopicPartition("t", 0, 0); err != nil {
		t.Fatal(err)
	}
	p, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	for i := range n {
		produceOne(t, p, fmt.Sprintf("v%d", i))
	}
	return c, p
}

// produceOne produces one record of value v to topic "t" with p.
func produceOne(t *testing.T, p *kgo.Client, v string) {
	t.Helper()
	if err := p.ProduceSync(context.Background(), &kgo.Record{Topic: "t", Value: []byte(v)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// EpochEnd asks the partition's leader: the current epoch ends at the
// high watermark, and after a leader change the previous one ends where
// the new one starts.
func TestEpochEnd(t *testing.T) {
	c, p := epochCluster(t, 4)
	cl := plainClient(t, c.ListenAddrs()...)
	ctx := context.Background()
	tp := kafka.TopicPartition{Topic: "t"}
	batch := firstBatch(t, cl, tp)
	if end, err := cl.EpochEnd(ctx, tp, batch.LeaderEpoch); err != nil || end != 4 {
		t.Fatalf("the current epoch %d ends at %d, %v; want 4", batch.LeaderEpoch, end, err)
	}
	if err := c.MoveTopicPartition("t", 0, 1); err != nil {
		t.Fatal(err)
	}
	// kfake knows an epoch from the record batches written in it: one
	// record in the new epoch.
	produceOne(t, p, "after")
	if end, err := cl.EpochEnd(ctx, tp, batch.LeaderEpoch); err != nil || end != 4 {
		t.Errorf("after a leader change epoch %d ends at %d, %v; want 4", batch.LeaderEpoch, end, err)
	}
}

// A leader that does not answer OffsetForLeaderEpoch v4 cannot validate
// an offset: EpochEnd says nothing is known (-1) rather than failing, so
// tables on such a broker start, as Kafka's consumer skips validation.
func TestEpochEndUnsupported(t *testing.T) {
	versions := kversion.Stable()
	versions.SetMaxKeyVersion(int16(kmsg.OffsetForLeaderEpoch), 3)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"), kfake.MaxVersions(versions))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl := plainClient(t, c.ListenAddrs()...)
	if end, err := cl.EpochEnd(context.Background(), kafka.TopicPartition{Topic: "t"}, 0); err != nil || end != -1 {
		t.Errorf("EpochEnd = %d, %v; want -1 and no error", end, err)
	}
}

// firstBatch returns the first batch a fetcher of tp reads from offset 0.
func firstBatch(t *testing.T, cl *kafka.Client, tp kafka.TopicPartition) kafka.Batch {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := make(chan kafka.Batch, 1)
	f := &kafka.Fetcher{Client: cl, TP: tp}
	go f.Run(ctx, 0, out) //nolint:errcheck // stopped by cancel
	select {
	case b := <-out:
		b.Release()
		if b.LeaderEpoch < 0 {
			t.Fatalf("batch without a leader epoch: %+v", b)
		}
		return b
	case <-ctx.Done():
		t.Fatal("no batch")
	}
	return kafka.Batch{}
}

// A fetcher that connects to a new leader validates its offset with the
// leader epoch of what it read: it goes on when the new leader's log
// holds it (a clean leader change), and stops with a TruncationError
// naming the range when the log ends that epoch below its offset (kfake
// cannot truncate a log, so its answer is replaced by one that says it
// did).
func TestFetcherValidatesAfterLeaderChange(t *testing.T) {
	for _, truncated := range []bool{false, true} {
		t.Run(fmt.Sprint("truncated=", truncated), func(t *testing.T) {
			c, p := epochCluster(t, 6)
			if truncated {
				c.ControlKey(int16(kmsg.OffsetForLeaderEpoch), func(req kmsg.Request) (kmsg.Response, error, bool) {
					r := req.(*kmsg.OffsetForLeaderEpochRequest)
					res := r.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
					rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
					rt.Topic = "t"
					rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
					rp.LeaderEpoch, rp.EndOffset = r.Topics[0].Partitions[0].LeaderEpoch, 2
					rt.Partitions = append(rt.Partitions, rp)
					res.Topics = append(res.Topics, rt)
					return res, nil, true
				})
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			out := make(chan kafka.Batch)
			done := make(chan error, 1)
			f := &kafka.Fetcher{Client: plainClient(t, c.ListenAddrs()...), TP: kafka.TopicPartition{Topic: "t"}}
			go func() { done <- f.Run(ctx, 0, out) }()
			next := int64(0)
			for next < 6 {
				b := <-out
				next = b.Next
				b.Release()
			}
			if err := c.MoveTopicPartition("t", 0, 1); err != nil {
				t.Fatal(err)
			}
			if !truncated {
				produceOne(t, p, "after")
				for {
					select {
					case b := <-out:
						b.Release()
						if b.Next == 7 {
							return
						}
					case err := <-done:
						t.Fatalf("the fetcher stopped: %v", err)
					}
				}
			}
			var trunc *kafka.TruncationError
			select {
			case err := <-done:
				if !errors.As(err, &trunc) || trunc.End != 2 || trunc.Offset != 6 {
					t.Fatalf("got %v, want a truncation of [2, 6)", err)
				}
				if want := "offsets [2, 6) were read from leader epoch"; !strings.Contains(err.Error(), want) {
					t.Errorf("error %q, want %q", err, want)
				}
			case b := <-out:
				t.Fatalf("a batch after the truncation: %+v", b)
			}
		})
	}
}
