package main

import (
	"context"
	"fmt"
	"log"
	"slices"
	"sync"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The freshness runs: how long a record takes from its producer to a
// committed table version, at half the agent's capacity.
const (
	// freshnessPoll is how often the runs read the table's committed
	// offsets.
	freshnessPoll = 20 * time.Millisecond
	// freshnessTick is how often the producer sends the records due.
	freshnessTick = 10 * time.Millisecond
)

// latency is what a freshness run measured: the time from each record's
// produce (its Kafka timestamp, which the producer sets when the record is
// due) to the first commit of the table that holds it, as the agent's
// status reports its committed offsets.
type latency struct {
	// Flush is the pipeline's flush_interval; Rate the records produced a
	// second.
	Flush string  `json:"flush_interval"`
	Rate  float64 `json:"records_per_sec"`
	// P50, P99 and Max are in seconds.
	P50 float64 `json:"p50_seconds"`
	P99 float64 `json:"p99_seconds"`
	Max float64 `json:"max_seconds"`
	// Bar is the p99 the issue asks for: flush_interval plus a second.
	Bar float64 `json:"bar_p99_seconds"`
}

// freshnessRun produces records of about 100 bytes at rate records/s for
// d to a new topic of topicPartitions partitions, read by one agent's
// continuous pipeline with flush_interval flush (JSON with its schema), and
// measures each record's latency (see latency).
func freshnessRun(ctx context.Context, agentBin, bootstrap string, rate float64, flush time.Duration, d time.Duration) (result, error) {
	topic := fmt.Sprintf("bench-fresh-%d", time.Now().UnixNano())
	// The topic exists, and the pipeline runs, before the clock starts.
	if _, err := produce(ctx, bootstrap, []string{topic}, topicPartitions, 0, nil); err != nil {
		return result{}, err
	}
	a, err := startAgent(ctx, agentBin, bootstrap, "", nil)
	if err != nil {
		return result{}, err
	}
	defer a.stop()
	w := load{topics: []string{topic}, partitions: topicPartitions}
	if _, err := a.c.PutPipeline(ctx, benchPipeline(true, flush.String(), tablesOf(w, jsonValue))); err != nil {
		return result{}, err
	}
	log.Printf("freshness: %.0f records/s for %v to %s, flush_interval %v", rate, d, topic, flush)

	seen := &commitTimes{first: map[int][]offsetSeen{}}
	pollCtx, cancel := context.WithCancel(ctx)
	polled := make(chan error, 1)
	go func() { polled <- seen.poll(pollCtx, a) }()
	stopPolling := func() error {
		cancel()
		return <-polled
	}
	n, bytes, err := produceAt(ctx, bootstrap, topic, rate, d)
	if err != nil {
		_ = stopPolling() // the producer's error is the one that matters
		return result{}, err
	}
	// Every record produced is committed within a flush or two.
	for deadline := time.Now().Add(flush + 30*time.Second); seen.total() < n; time.Sleep(freshnessPoll) {
		if time.Now().After(deadline) {
			_ = stopPolling() // the records missing are the error
			return result{}, fmt.Errorf("freshness: %d of %d records committed %v after the last was produced",
				seen.total(), n, flush+30*time.Second)
		}
	}
	if err := stopPolling(); err != nil {
		return result{}, err
	}
	produced, err := timestamps(ctx, bootstrap, topic)
	if err != nil {
		return result{}, err
	}
	lat := seen.latencies(produced)
	if int64(len(lat)) != n {
		return result{}, fmt.Errorf("freshness: %d latencies of %d records", len(lat), n)
	}
	slices.Sort(lat)
	at := func(q float64) float64 { return lat[min(len(lat)-1, int(q*float64(len(lat))))].Seconds() }
	if float64(n) < 0.95*rate*d.Seconds() {
		// The records still count: their latency includes the time they
		// waited for the producer, as a real backlog's would.
		log.Printf("warning: freshness, flush_interval %v: the producer sent %.0f records/s of the %.0f asked; "+
			"the machine is saturated (producer, broker and agent share its cores), so the latencies measure a backlog",
			flush, float64(n)/d.Seconds(), rate)
	}
	r := result{Name: fmt.Sprintf("agent: freshness, flush_interval %v", flush), Records: n, Seconds: d.Seconds(),
		RecordsPerSec: float64(n) / d.Seconds(), BytesPerSec: float64(bytes) / d.Seconds(), Topics: w.topics,
		Latency: &latency{Flush: flush.String(), Rate: rate, P50: at(0.5), P99: at(0.99), Max: lat[len(lat)-1].Seconds(),
			Bar: (flush + time.Second).Seconds()}}
	r.addUsage(a.cmd.Process.Pid)
	return r, nil
}

// produceAt produces records of about 100 bytes to topic at rate records/s
// for d, round robin over its partitions, each stamped with the time it
// was due, and returns how many it produced and their values' bytes.
func produceAt(ctx context.Context, bootstrap, topic string, rate float64, d time.Duration) (n, bytes int64, err error) {
	transport := &kafkago.Transport{}
	defer transport.CloseIdleConnections()
	w := &kafkago.Writer{Addr: kafkago.TCP(bootstrap), Balancer: &kafkago.RoundRobin{}, Transport: transport,
		BatchSize: 5000, BatchBytes: 1 << 20, BatchTimeout: time.Millisecond, RequiredAcks: kafkago.RequireOne}
	defer w.Close()
	record := smallRecords(0, smallJSON)
	tick := time.NewTicker(freshnessTick)
	defer tick.Stop()
	start := time.Now()
	for now := start; now.Sub(start) < d; now = <-tick.C {
		last := int64(rate*now.Sub(start).Seconds()) + 1
		msgs := make([]kafkago.Message, 0, last-n)
		for ; n < last; n++ {
			v := record(int(n))
			bytes += int64(len(v))
			// Stamped with when it was due, so that a producer that falls
			// behind shows in the latency, as a backlog would.
			due := start.Add(time.Duration(float64(n) / rate * float64(time.Second)))
			msgs = append(msgs, kafkago.Message{Topic: topic, Value: v, Time: due})
		}
		if err := write(ctx, w, msgs); err != nil {
			return 0, 0, err
		}
	}
	return n, bytes, nil
}

// offsetSeen is when a partition's committed offset was first seen at or
// past next.
type offsetSeen struct {
	next int64
	at   time.Time
}

// commitTimes records, per partition, when each committed offset was first
// seen. It is safe for concurrent use.
type commitTimes struct {
	mu    sync.Mutex
	first map[int][]offsetSeen
	sum   int64
}

// poll reads the table's committed offsets through a's status every
// freshnessPoll until ctx ends.
func (c *commitTimes) poll(ctx context.Context, a *benchAgent) error {
	for {
		resp, err := a.c.GetPipeline(ctx, "bench")
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("freshness: %w", err)
		}
		if resp.Status.State == spec.StateFailed {
			return fmt.Errorf("freshness: the pipeline failed: %+v", resp.Status.Tables)
		}
		if len(resp.Status.Tables) == 1 {
			c.saw(resp.Status.Tables[0].Partitions, time.Now())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(freshnessPoll):
		}
	}
}

// saw records the committed offsets ps as seen at t.
func (c *commitTimes) saw(ps []spec.PartitionStatus, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sum = 0
	for _, p := range ps {
		seen := c.first[p.Partition]
		if len(seen) == 0 || seen[len(seen)-1].next < p.NextOffset {
			c.first[p.Partition] = append(seen, offsetSeen{next: p.NextOffset, at: t})
		}
		c.sum += p.NextOffset
	}
}

// total returns the records committed, as last seen.
func (c *commitTimes) total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sum
}

// latencies returns the latency of every record of produced (their
// timestamps by partition, in offset order): the first time its partition's
// committed offset was seen past it, less its timestamp.
func (c *commitTimes) latencies(produced map[int][]time.Time) []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []time.Duration
	for p, times := range produced {
		seen := c.first[p]
		i := 0
		for off, t := range times {
			for i < len(seen) && seen[i].next <= int64(off) {
				i++
			}
			if i == len(seen) {
				break // not committed: the caller counts the latencies
			}
			out = append(out, seen[i].at.Sub(t))
		}
	}
	return out
}

// timestamps reads back every record of topic and returns their Kafka
// timestamps by partition, in offset order.
func timestamps(ctx context.Context, bootstrap, topic string) (map[int][]time.Time, error) {
	out := map[int][]time.Time{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, topicPartitions)
	for p := range topicPartitions {
		wg.Go(func() {
			var times []time.Time
			if err := readPartition(ctx, bootstrap, topic, p, func(m kafkago.Message) { times = append(times, m.Time) }); err != nil {
				errs <- fmt.Errorf("freshness: reading %s/%d back: %w", topic, p, err)
				return
			}
			mu.Lock()
			out[p] = times
			mu.Unlock()
		})
	}
	wg.Wait()
	close(errs)
	return out, <-errs
}
