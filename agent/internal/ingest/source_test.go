package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafkatest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// consumer reads one subscription as a table does: it skips the records
// before its next offset, and records the offsets of the others.
type consumer struct {
	done chan struct{}

	mu      sync.Mutex
	next    int64
	offsets []int64
	err     error
}

// consume subscribes to src and reads until ctx ends.
func consume(ctx context.Context, src *Source, sub Subscription) *consumer {
	c := &consumer{next: sub.From, done: make(chan struct{})}
	batches, errs := src.Subscribe(ctx, sub)
	go func() {
		defer close(c.done)
		for {
			select {
			case <-ctx.Done():
				return
			case err := <-errs:
				c.mu.Lock()
				c.err = err
				c.mu.Unlock()
				return
			case b := <-batches:
				c.mu.Lock()
				for _, r := range b.Records {
					if r.Offset >= c.next && (sub.Until == 0 || r.Offset < sub.Until) {
						c.offsets = append(c.offsets, r.Offset)
						c.next = r.Offset + 1
					}
				}
				next := b.Next
				if sub.Until > 0 {
					next = min(next, sub.Until)
				}
				c.next = max(c.next, next)
				c.mu.Unlock()
				b.Release()
			}
		}
	}()
	return c
}

func (c *consumer) at() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.next
}

// check fails unless c got offsets from..to-1, each once, in order.
func (c *consumer) check(t *testing.T, name string, from, to int64) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var want []int64
	for o := from; o < to; o++ {
		want = append(want, o)
	}
	if !slices.Equal(c.offsets, want) {
		t.Errorf("%s got %d records %v...; want each of [%d, %d) once, in order", name, len(c.offsets),
			c.offsets[:min(len(c.offsets), 10)], from, to)
	}
}

// Subscribers of one partition share one fetcher: one that joins behind
// the others makes it read again from there, the others skip what they
// have, and one with an Until gets nothing past it. Every record reaches
// every subscriber once, and the memory goes back once all released it.
// sourceOf200 returns a source on an in-process broker whose topic "s",
// of one partition, holds records 0..199 of values value(i), with its
// budget and the topic's producer.
func sourceOf200(t *testing.T) (src *Source, budget *memory.Budget, producer *kgo.Client, value func(int) string) {
	addr, producer := kafkatest.NewCluster(t, 1, "s")
	value = func(i int) string { return fmt.Sprint(i) }
	kafkatest.Produce(t, producer, 0, 200, value)
	client := kafkatest.NewClient(t, &spec.Connection{Name: "c", BootstrapServers: []string{addr}})
	budget = memory.New(64 << 20)
	return NewSource(client, budget, slog.Default()), budget, producer, value
}

func TestSourceSharesAPartition(t *testing.T) {
	src, budget, producer, value := sourceOf200(t)
	tp := kafka.TopicPartition{Topic: "s"}
	ctx, cancel := context.WithCancel(context.Background())

	a := consume(ctx, src, Subscription{TP: tp, From: 0})
	kafkatest.WaitFor(t, 10*time.Second, "a at 200", func() bool { return a.at() == 200 })
	b := consume(ctx, src, Subscription{TP: tp, From: 50})
	c := consume(ctx, src, Subscription{TP: tp, From: 20, Until: 120})
	kafkatest.WaitFor(t, 10*time.Second, "b at 200, c at 120", func() bool { return b.at() == 200 && c.at() == 120 })
	kafkatest.Produce(t, producer, 200, 300, value)
	kafkatest.WaitFor(t, 10*time.Second, "a and b at 300", func() bool { return a.at() == 300 && b.at() == 300 })
	a.check(t, "a", 0, 300)
	b.check(t, "b", 50, 300)
	c.check(t, "c", 20, 120)
	src.mu.Lock()
	started, runs := src.started, src.runs
	src.mu.Unlock()
	if started != 1 || runs < 2 {
		t.Errorf("%d fetchers started, %d fetches; want 1 fetcher, which fetched again for b", started, runs)
	}

	cancel()
	<-a.done
	<-b.done
	<-c.done
	src.Close()
	if st := budget.Stats(); st.Used != 0 {
		t.Errorf("the budget holds %d bytes after everything stopped, want 0", st.Used)
	}
}

// A fatal fetch error reaches every subscriber of the partition; one whose
// offset is past the partition's end gets it once the subscriber behind it
// left.
func TestSourceFailsEverySubscriber(t *testing.T) {
	addr, producer := kafkatest.NewCluster(t, 1, "s")
	kafkatest.Produce(t, producer, 0, 10, func(int) string { return "v" })
	client := kafkatest.NewClient(t, &spec.Connection{Name: "c", BootstrapServers: []string{addr}})
	src := NewSource(client, memory.New(64<<20), slog.Default())
	defer src.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Offset 500 is past the partition's end: out of range, data loss.
	var cs []*consumer
	for range 2 {
		cs = append(cs, consume(ctx, src, Subscription{TP: kafka.TopicPartition{Topic: "s"}, From: 500}))
	}
	// One behind, reading, and one past the end, waiting for it.
	behindCtx, leave := context.WithCancel(ctx)
	behind := consume(behindCtx, src, Subscription{TP: kafka.TopicPartition{Topic: "s"}, From: 0})
	cs = append(cs, consume(ctx, src, Subscription{TP: kafka.TopicPartition{Topic: "s"}, From: 700}))
	kafkatest.WaitFor(t, 10*time.Second, "the one behind at 10", func() bool { return behind.at() == 10 })
	select {
	case <-cs[2].done:
		t.Fatalf("the subscriber past the end got %v while one behind it read", cs[2].err)
	case <-time.After(300 * time.Millisecond):
	}
	leave()
	for i, c := range cs {
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("subscriber %d got no error", i)
		}
		var loss *kafka.DataLossError
		if !errors.As(c.err, &loss) {
			t.Errorf("subscriber %d got %v, want a data loss error", i, c.err)
		}
	}
}

// A subscriber whose offset fell off the log (retention deleted it) gets
// the data loss error; one ahead of it, at readable offsets, goes on reading.
func TestSourceDataLossFailsOnlyTheStaleSubscriber(t *testing.T) {
	addr, producer := kafkatest.NewCluster(t, 1, "s")
	kafkatest.Produce(t, producer, 0, 100, func(int) string { return "v" })
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "s", Partition: 0, At: 50})
	if _, err := kadm.NewClient(producer).DeleteRecords(context.Background(), offs); err != nil {
		t.Fatal(err)
	}
	client := kafkatest.NewClient(t, &spec.Connection{Name: "c", BootstrapServers: []string{addr}})
	src := NewSource(client, memory.New(64<<20), slog.Default())
	defer src.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	healthy := consume(ctx, src, Subscription{TP: kafka.TopicPartition{Topic: "s"}, From: 80})
	kafkatest.WaitFor(t, 10*time.Second, "the healthy subscriber at 100", func() bool { return healthy.at() == 100 })
	stale := consume(ctx, src, Subscription{TP: kafka.TopicPartition{Topic: "s"}, From: 10})
	<-stale.done
	var loss *kafka.DataLossError
	if !errors.As(stale.err, &loss) {
		t.Fatalf("the stale subscriber got %v, want a data loss error", stale.err)
	}
	kafkatest.Produce(t, producer, 100, 120, func(int) string { return "v" })
	kafkatest.WaitFor(t, 10*time.Second, "the healthy subscriber at 120", func() bool { return healthy.at() == 120 })
	select {
	case <-healthy.done:
		t.Fatalf("the healthy subscriber got %v", healthy.err)
	default:
	}
}

// Of two subscribers of one fetcher whose offset retention deleted, the
// one that goes on after data loss is told the exact gap and reads from the
// earliest offset on; the other gets the data loss error with the same gap.
func TestSourceSkipsDataLoss(t *testing.T) {
	addr, producer := kafkatest.NewCluster(t, 1, "s")
	kafkatest.Produce(t, producer, 0, 100, func(int) string { return "v" })
	kafkatest.DeleteRecords(t, producer, "s", 50)
	client := kafkatest.NewClient(t, &spec.Connection{Name: "c", BootstrapServers: []string{addr}})
	src := NewSource(client, memory.New(64<<20), slog.Default())
	defer src.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var mu sync.Mutex
	var gaps []spec.DataLossGap
	tp := kafka.TopicPartition{Topic: "s"}
	going := consume(ctx, src, Subscription{TP: tp, From: 10, OnDataLoss: func(g spec.DataLossGap) {
		mu.Lock()
		defer mu.Unlock()
		gaps = append(gaps, g)
	}})
	failing := consume(ctx, src, Subscription{TP: tp, From: 10})
	kafkatest.WaitFor(t, 10*time.Second, "the subscriber that goes on at 100", func() bool { return going.at() == 100 })
	going.check(t, "the subscriber that goes on", 50, 100)
	mu.Lock()
	if len(gaps) != 1 || gaps[0].Topic != "s" || gaps[0].Partition != 0 || gaps[0].From != 10 || gaps[0].To != 50 ||
		gaps[0].Reason != "retention" || gaps[0].DetectedAt == "" {
		t.Errorf("gaps %+v, want one of s/0 from 10 to 50 with a reason and a time", gaps)
	}
	mu.Unlock()
	<-failing.done
	var loss *kafka.DataLossError
	if !errors.As(failing.err, &loss) {
		t.Fatalf("the failing subscriber got %v, want a data loss error", failing.err)
	}
	if from, to, ok := loss.Gap(); !ok || from != 10 || to != 50 {
		t.Errorf("data loss gap [%d, %d) %v, want [10, 50)", from, to, ok)
	}
}

// Head reads a partition's records from an offset through a fetcher of its
// own, which leaves the shared fetcher of a subscriber reading the same
// partition where it is, and gives its memory back to the budget.
func TestSourceHead(t *testing.T) {
	src, budget, _, _ := sourceOf200(t)
	tp := kafka.TopicPartition{Topic: "s"}
	ctx, cancel := context.WithCancel(context.Background())
	a := consume(ctx, src, Subscription{TP: tp, From: 0})
	kafkatest.WaitFor(t, 10*time.Second, "a at 200", func() bool { return a.at() == 200 })

	for _, tc := range []struct {
		name            string
		from, until, n  int64
		wantFrom, wantN int64
	}{
		{"n records from an offset", 150, 200, 10, 150, 10},
		{"fewer than n before the end", 195, 200, 10, 195, 5},
		{"nothing to read", 200, 200, 10, 0, 0},
	} {
		var got []int64
		err := src.Head(context.Background(), tp, tc.from, tc.until, tc.n, false, nil, func(r *record.Record) { got = append(got, r.Offset) })
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var want []int64
		for i := range tc.wantN {
			want = append(want, tc.wantFrom+i)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: offsets %v, want %v", tc.name, got, want)
		}
	}
	src.mu.Lock()
	started, runs := src.started, src.runs
	src.mu.Unlock()
	if started != 3 || runs != 3 {
		t.Errorf("%d fetchers started, %d fetches; want a's and one for each head that read, each fetching once", started, runs)
	}
	cancel()
	<-a.done
	a.check(t, "a", 0, 200)
	src.Close()
	if st := budget.Stats(); st.Used != 0 {
		t.Errorf("the budget holds %d bytes after everything stopped, want 0", st.Used)
	}
}

// stepped is what TestRelayReleasesWhatStepMade's step makes of a batch.
type stepped struct {
	b        *SharedBatch
	released *int
	mu       *sync.Mutex
}

// Release releases the batch and counts the release.
func (s stepped) Release() {
	s.mu.Lock()
	*s.released++
	s.mu.Unlock()
	s.b.Release()
}

// TestRelayReleasesWhatStepMade: when the subscription ends before the
// receiver takes what step made of a batch, Relay releases that, which
// releases the batch, and the budget is whole again.
func TestRelayReleasesWhatStepMade(t *testing.T) {
	src, budget, _, _ := sourceOf200(t)
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	made, released := 0, 0
	step := func(b *SharedBatch) stepped {
		mu.Lock()
		made++
		mu.Unlock()
		return stepped{b: b, released: &released, mu: &mu}
	}
	in := make(chan stepped) // never received from
	var wg sync.WaitGroup
	Relay(ctx, &wg, src, Subscription{TP: kafka.TopicPartition{Topic: "s"}, From: 0}, step, in, make(chan error, 1))
	kafkatest.WaitFor(t, 10*time.Second, "a batch stepped", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return made > 0
	})
	cancel()
	wg.Wait()
	src.Close()
	mu.Lock()
	defer mu.Unlock()
	if released != made {
		t.Errorf("%d of %d stepped batches released", released, made)
	}
	if st := budget.Stats(); st.Used != 0 {
		t.Errorf("the budget holds %d bytes after everything stopped, want 0", st.Used)
	}
}
