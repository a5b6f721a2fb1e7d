package kafka_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
)

// txnProducer is a transactional franz-go producer writing to partition 0
// of topic t.
type txnProducer struct {
	t  *testing.T
	cl *kgo.Client
}

func newTxnProducer(t *testing.T, addrs []string, id string) *txnProducer {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.TransactionalID(id),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic("t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &txnProducer{t: t, cl: cl}
}

func (p *txnProducer) begin() {
	if err := p.cl.BeginTransaction(); err != nil {
		p.t.Fatal(err)
	}
}

func (p *txnProducer) produce(values ...string) {
	for _, v := range values {
		if err := p.cl.ProduceSync(context.Background(), &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			p.t.Fatal(err)
		}
	}
}

func (p *txnProducer) end(commit bool) {
	if err := p.cl.EndTransaction(context.Background(), kgo.TransactionEndTry(commit)); err != nil {
		p.t.Fatal(err)
	}
}

// fetchAll reads partition t/0 from offset 0 until it has read up to the
// partition's end at the fetcher's isolation level, and returns the values
// read and the last batch's end and next offsets.
func fetchAll(t *testing.T, cl *kafka.Client, readCommitted bool) (values []string, end, next int64) {
	t.Helper()
	return fetchTopic(t, cl, "t", readCommitted)
}

// fetchTopic is fetchAll of partition 0 of topic.
func fetchTopic(t *testing.T, cl *kafka.Client, topic string, readCommitted bool) (values []string, end, next int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := make(chan kafka.Batch, 1)
	f := &kafka.Fetcher{Client: cl, TP: kafka.TopicPartition{Topic: topic}, ReadCommitted: readCommitted}
	fctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- f.Run(fctx, 0, out) }()
	defer func() {
		stop()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	}()
	for {
		select {
		case b := <-out:
			for _, r := range b.Records {
				values = append(values, string(r.Value))
			}
			b.Release()
			if b.Next >= b.End && len(b.Records) == 0 {
				return values, b.End, b.Next
			}
		case <-ctx.Done():
			t.Fatalf("fetching timed out with %v", values)
		}
	}
}

// TestIssue5Transactions: records of aborted transactions were ingested and
// transaction markers became rows. Under read_committed a fetch returns
// exactly the committed and plain records and stops at the last stable
// offset; under read_uncommitted it returns every data record; at neither
// level does a marker become a record.
func TestIssue5Transactions(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addrs := c.ListenAddrs()
	plain, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic("t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(plain.Close)
	produce := func(v string) {
		if err := plain.ProduceSync(context.Background(), &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	a, b := newTxnProducer(t, addrs, "a"), newTxnProducer(t, addrs, "b")

	produce("p1")
	a.begin()
	a.produce("a1", "a2")
	b.begin()
	b.produce("b1-aborted")
	a.produce("a3")
	a.end(true)
	b.produce("b2-aborted")
	b.end(false)
	produce("p2")
	b.begin()
	b.produce("b3")
	b.end(true)
	a.begin()
	a.produce("a4-aborted")
	a.end(false)

	cl := plainClient(t, addrs...)
	committed := []string{"p1", "a1", "a2", "a3", "p2", "b3"}
	all := []string{"p1", "a1", "a2", "b1-aborted", "a3", "b2-aborted", "p2", "b3", "a4-aborted"}
	if got, _, _ := fetchAll(t, cl, true); !slices.Equal(got, committed) {
		t.Fatalf("read_committed: got %v, want %v", got, committed)
	}
	if got, _, _ := fetchAll(t, cl, false); !slices.Equal(got, all) {
		t.Fatalf("read_uncommitted: got %v, want %v", got, all)
	}

	// An open transaction holds back read_committed readers at its first
	// offset, including plain records written after it.
	tp := kafka.TopicPartition{Topic: "t"}
	before, err := cl.Offsets(context.Background(), []kafka.TopicPartition{tp}, kafka.Latest)
	if err != nil {
		t.Fatal(err)
	}
	a.begin()
	a.produce("a5-open")
	produce("p3")
	stable, err := cl.Offsets(context.Background(), []kafka.TopicPartition{tp}, kafka.LastStable)
	if err != nil {
		t.Fatal(err)
	}
	if stable[tp] != before[tp] {
		t.Fatalf("last stable offset %d with a transaction open at %d", stable[tp], before[tp])
	}
	got, end, next := fetchAll(t, cl, true)
	if !slices.Equal(got, committed) || end != before[tp] || next != before[tp] {
		t.Fatalf("read_committed with an open transaction: got %v up to %d (end %d), want %v up to %d",
			got, next, end, committed, before[tp])
	}
	a.end(true)
	want := append(slices.Clone(committed), "a5-open", "p3")
	if got, _, _ := fetchAll(t, cl, true); !slices.Equal(got, want) {
		t.Fatalf("read_committed after the commit: got %v, want %v", got, want)
	}
}

// TestIssue5TopicRecreated: a topic deleted and created again under the
// same name was read on from the old topic's offsets. Topic ids tell the
// two apart: a fetcher that expects the old id stops with a
// TopicRecreatedError instead of reading the new topic, also when a fetch
// is answered out of range.
func TestIssue5TopicRecreated(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl := plainClient(t, c.ListenAddrs()...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	before, err := cl.TopicIDs(ctx, []string{"t"})
	if err != nil || len(before["t"]) != 22 {
		t.Fatalf("topic ids: %v, %v", before, err)
	}
	if _, err := cl.TopicIDs(ctx, []string{"missing"}); err == nil {
		t.Fatal("no error for a missing topic")
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
	after, err := cl.TopicIDs(ctx, []string{"t"})
	if err != nil || after["t"] == before["t"] {
		t.Fatalf("topic id after re-creation: %v (was %v), %v", after, before, err)
	}
	f := &kafka.Fetcher{Client: cl, TP: kafka.TopicPartition{Topic: "t"}, TopicID: before["t"]}
	err = f.Run(ctx, 0, make(chan kafka.Batch, 1))
	var recreated *kafka.TopicRecreatedError
	if !errors.As(err, &recreated) || recreated.Was != before["t"] || recreated.Now != after["t"] {
		t.Fatalf("fetching the re-created topic: %v", err)
	}

	// A fetch session opened before the topic was re-created can be
	// answered out of range, the new topic ending before the offset: that
	// is the re-created topic too, not records Kafka lost (which no
	// setting can skip).
	if lost, err := f.DataLoss(ctx, 20); lost != nil || !errors.As(err, &recreated) || recreated.Was != before["t"] {
		t.Fatalf("out of range at 20 on the re-created topic: %v, %v; want a TopicRecreatedError", lost, err)
	}
	// A fetcher that expects the topic's own id finds the loss.
	f.TopicID = after["t"]
	if lost, err := f.DataLoss(ctx, 20); lost == nil || lost.Latest != 0 {
		t.Fatalf("out of range at 20 on a topic that ends at 0: %v, %v; want a DataLossError", lost, err)
	}
}
