package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// newClient starts an in-process broker with topics a-1 (2 partitions) and
// b-1 (1 partition), produces n records to a-1 partition 0, and returns a
// client for it. The real broker is exercised by the end-to-end tests.
func newClient(t *testing.T, n int) *kafka.Client {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "a-1"), kfake.SeedTopics(1, "b-1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	p, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i := 0; i < n; i++ {
		r := &kgo.Record{Topic: "a-1", Partition: 0, Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d", i),
			Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("x")}}}
		if err := p.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	return plainClient(t, c.ListenAddrs()...)
}

// plainClient returns a PLAINTEXT client of the brokers at addrs, closed
// when the test ends.
func plainClient(t *testing.T, addrs ...string) *kafka.Client {
	t.Helper()
	cl, err := kafka.NewClient(&spec.Connection{Name: "c", BootstrapServers: addrs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func TestPartitions(t *testing.T) {
	cl := newClient(t, 0)
	ctx := context.Background()
	tps, err := cl.Partitions(ctx, &spec.KafkaOptions{TopicPattern: `a-.*`})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(tps) != "[a-1/0 a-1/1]" {
		t.Fatalf("pattern a-.*: got %v", tps)
	}
	tps, err = cl.Partitions(ctx, &spec.KafkaOptions{Topics: []string{"b-1", "a-1"}})
	if err != nil || fmt.Sprint(tps) != "[a-1/0 a-1/1 b-1/0]" {
		t.Fatalf("listed topics: got %v, %v", tps, err)
	}
	// A pattern must match the whole name, as Java's Pattern.matches does.
	if tps, _ := cl.Partitions(ctx, &spec.KafkaOptions{TopicPattern: `a`}); len(tps) != 0 {
		t.Fatalf("pattern a matched %v", tps)
	}
	if _, err := cl.Partitions(ctx, &spec.KafkaOptions{Topics: []string{"missing"}}); err == nil || !strings.Contains(err.Error(), `"missing" does not exist`) {
		t.Fatalf("missing topic: got %v", err)
	}
}

func TestOffsetsAndFetch(t *testing.T) {
	cl := newClient(t, 5)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tp := kafka.TopicPartition{Topic: "a-1", Partition: 0}
	latest, err := cl.Offsets(ctx, []kafka.TopicPartition{tp}, kafka.Latest)
	if err != nil || latest[tp] != 5 {
		t.Fatalf("latest offset: %v, %v", latest, err)
	}
	out := make(chan kafka.Batch, 1)
	f := &kafka.Fetcher{Client: cl, TP: tp}
	fctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- f.Run(fctx, 2, out) }()
	var got []string
	for len(got) < 3 {
		b := <-out
		for _, r := range b.Records {
			got = append(got, fmt.Sprintf("%d:%s=%s/%s", r.Offset, r.Key, r.Value, r.Headers[0].Value))
		}
		if len(b.Records) > 0 && b.Next != b.Records[len(b.Records)-1].Offset+1 {
			t.Fatalf("batch Next %d after offset %d", b.Next, b.Records[len(b.Records)-1].Offset)
		}
		b.Release()
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: %v", err)
	}
	if want := "[2:k2=v2/x 3:k3=v3/x 4:k4=v4/x]"; fmt.Sprint(got) != want {
		t.Fatalf("fetched %v, want %v", got, want)
	}
}

func TestFetchOffsetOutOfRangeIsDataLoss(t *testing.T) {
	cl := newClient(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f := &kafka.Fetcher{Client: cl, TP: kafka.TopicPartition{Topic: "a-1", Partition: 0}}
	err := f.Run(ctx, 100, make(chan kafka.Batch, 1))
	var loss *kafka.DataLossError
	if !errors.As(err, &loss) || loss.Offset != 100 || loss.Earliest != 0 || loss.Latest != 3 {
		t.Fatalf("want a DataLossError at offset 100 of a partition from 0 to 3, got %+v", err)
	}
	if _, _, ok := loss.Gap(); ok || !strings.Contains(err.Error(), "ends at offset 3, before offset 100") {
		t.Errorf("an offset past the end is no gap to skip: %v", err)
	}
}

// Records deleted before the offset to read (retention) are a gap the
// error gives exactly, with the fix.
func TestFetchDeletedRecordsIsDataLossWithTheGap(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i := 0; i < 10; i++ {
		if err := p.ProduceSync(context.Background(), &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "t", Partition: 0, At: 7})
	if _, err := kadm.NewClient(p).DeleteRecords(context.Background(), offs); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f := &kafka.Fetcher{Client: plainClient(t, c.ListenAddrs()...), TP: kafka.TopicPartition{Topic: "t"}}
	err = f.Run(ctx, 2, make(chan kafka.Batch, 1))
	var loss *kafka.DataLossError
	if !errors.As(err, &loss) {
		t.Fatalf("want a DataLossError, got %v", err)
	}
	if from, to, ok := loss.Gap(); !ok || from != 2 || to != 7 {
		t.Errorf("gap [%d, %d) %v, want [2, 7)", from, to, ok)
	}
	if want := "offsets [2, 7) of t/0 (5 records) are no longer in Kafka"; !strings.Contains(err.Error(), want) ||
		!strings.Contains(err.Error(), "set fail_on_data_loss = false") {
		t.Errorf("error %q: want %q and the fix", err, want)
	}
}

// TestFetchUntil: a fetcher with Until stops by itself once it has sent a
// batch reaching it, as a triggered run's partitions do at their end.
func TestFetchUntil(t *testing.T) {
	cl := newClient(t, 5)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := make(chan kafka.Batch, 16)
	f := &kafka.Fetcher{Client: cl, TP: kafka.TopicPartition{Topic: "a-1", Partition: 0}, Until: 3}
	if err := f.Run(ctx, 0, out); err != nil {
		t.Fatalf("Run with Until: %v", err)
	}
	close(out)
	var last int64
	for b := range out {
		last = b.Next
	}
	if last < 3 {
		t.Fatalf("stopped at %d, before Until", last)
	}
}

// With metadata.max.age.ms a fetch session ends once that old, and the
// next looks the partition's leader up again; fetching goes on.
func TestFetchMetadataMaxAge(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var mu sync.Mutex
	lookups := 0
	c.ControlKey(int16(kmsg.Metadata), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		defer mu.Unlock()
		lookups++
		return nil, nil, false
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &kafka.Fetcher{Client: plainClient(t, c.ListenAddrs()...), TP: kafka.TopicPartition{Topic: "t"},
		Settings: spec.ClientSettings{MetadataMaxAge: 50 * time.Millisecond}}
	done := make(chan error, 1)
	out := make(chan kafka.Batch)
	go func() { done <- f.Run(ctx, 0, out) }()
	go func() {
		for b := range out {
			b.Release()
		}
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := lookups
		mu.Unlock()
		if n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d metadata look-ups in 20s, want sessions that end at their metadata age", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: %v", err)
	}
}
