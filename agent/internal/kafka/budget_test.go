package kafka_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
)

// budget is a kafka.Budget that never waits and records what it is asked.
type budget struct {
	mu       sync.Mutex
	acquired []int64 // every Acquire, in order
	grown    int64
	held     int64
}

func (b *budget) Acquire(ctx context.Context, n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	b.acquired = append(b.acquired, n)
	b.held += n
	return nil
}

func (b *budget) Grow(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.grown += n
	b.held += n
}

func (b *budget) Release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held -= n
}

func (b *budget) state() (acquired []int64, grown, held int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.acquired), b.grown, b.held
}

// fetchWithin runs a fetcher with budget b on topic until it read n records,
// releasing each batch and its bytes, then stops it. It returns the largest
// number of bytes a batch held.
func fetchWithin(t *testing.T, cl *kafka.Client, topic string, n int, b *budget) int64 {
	t.Helper()
	out := make(chan kafka.Batch, 1)
	f := &kafka.Fetcher{Client: cl, TP: kafka.TopicPartition{Topic: topic}, Budget: b}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx, 0, out) }()
	var biggest int64
	for read := 0; read < n; {
		batch := <-out
		if batch.Bytes <= 0 {
			t.Fatalf("a batch of %d records holds %d bytes", len(batch.Records), batch.Bytes)
		}
		read += len(batch.Records)
		biggest = max(biggest, batch.Bytes)
		b.Release(batch.Bytes)
		batch.Release()
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: %v", err)
	}
	select {
	case batch := <-out: // delivered before the cancel
		b.Release(batch.Bytes)
		batch.Release()
	default:
	}
	return biggest
}

// A fetcher with a budget acquires before each fetch, hands what a batch
// holds to its receiver, grows for a record batch larger than it asked for
// (and for the buffer a compressed batch is decompressed into), and gives
// back everything it still holds when it stops.
func TestFetchWithinBudget(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "plain", "packed"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl := plainClient(t, c.ListenAddrs()...)
	// Each topic gets one produce of 300 records of 1 KB: one record batch
	// of 300 KB, more than the first fetch asks for; compressed, a few KB.
	const n = 300
	for topic, codec := range map[string]kgo.CompressionCodec{"plain": kgo.NoCompression(), "packed": kgo.SnappyCompression()} {
		p, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ProducerLinger(time.Second), kgo.ProducerBatchCompression(codec))
		if err != nil {
			t.Fatal(err)
		}
		recs := make([]*kgo.Record, n)
		for i := range recs {
			recs[i] = &kgo.Record{Topic: topic, Value: bytes.Repeat([]byte{byte(i)}, 1000)}
		}
		err = p.ProduceSync(context.Background(), recs...).FirstErr()
		p.Close()
		if err != nil {
			t.Fatal(err)
		}
	}

	for _, topic := range []string{"plain", "packed"} {
		b := &budget{}
		biggest := fetchWithin(t, cl, topic, n, b)
		acquired, grown, held := b.state()
		if held != 0 {
			t.Fatalf("%s: the fetcher stopped holding %d bytes, want 0", topic, held)
		}
		if len(acquired) == 0 || acquired[0] != 128<<10 || slices.Max(acquired) > 2<<20 {
			t.Fatalf("%s: acquired %v: want 128 KiB first, and never more than 2 MiB", topic, acquired)
		}
		// The records' values point into 300 KB, in the response or in
		// the buffer it was decompressed into.
		if biggest < n*1000 || grown < n*1000-128<<10 {
			t.Fatalf("%s: the biggest batch held %d bytes, and the fetcher grew by %d, for %d KB of records fetched with 128 KiB acquired",
				topic, biggest, grown, n)
		}
	}
}

// A partition of small records holds about as much memory a fetch as one
// of larger records: the fetcher asks for less once a batch shows that its
// records take several times their size in memory (a record.Record each),
// and reserves what such a batch holds.
func TestFetchSmallRecordsHoldAboutTheMaximum(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "small"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ProducerLinger(10*time.Millisecond),
		kgo.ProducerBatchMaxBytes(64<<10), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	// 200,000 records of 8 bytes, about 3.5 MB in record batches of 64 KB:
	// 1 MiB of them would hold 8 MiB of records in memory.
	const n = 200_000
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: "small", Value: []byte(fmt.Sprintf("%08d", i))}
	}
	err = p.ProduceSync(context.Background(), recs...).FirstErr()
	p.Close()
	if err != nil {
		t.Fatal(err)
	}
	b := &budget{}
	biggest := fetchWithin(t, plainClient(t, c.ListenAddrs()...), "small", n, b)
	// What a fetch reserves follows what the last one held per byte, so
	// the batches take past their reservations less than was reserved
	// (the slices of records come in size classes, which the ratio of the
	// last batch does not foresee): reserving twice the response, the
	// batches would take four times as much again.
	acquired, grown, _ := b.state()
	var reserved int64
	for _, n := range acquired {
		reserved += n
	}
	if grown >= reserved {
		t.Fatalf("the fetcher reserved %d bytes and grew past that by %d: want the reservations to cover most of what the batches held",
			reserved, grown)
	}
	// About the maximum: the record slices come in size classes, and one
	// outgrown while the batch is decoded moves to one twice as large.
	if biggest > 3<<20 {
		t.Fatalf("the biggest batch held %d bytes: want about 1 MiB, the fetch maximum, and at most 3 MiB", biggest)
	}
	if biggest < 1<<19 {
		t.Fatalf("the biggest batch held %d bytes: the fetches did not grow towards the maximum", biggest)
	}
}
