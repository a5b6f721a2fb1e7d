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
// committed table version, at half the capacity of the agent reading
// while the producer writes.
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

// liveRun is one agent reading a topic while the harness produces to it:
// the freshness runs and the capacity run they take their rate from.
type liveRun struct {
	a     *benchAgent
	w     load
	flush time.Duration
	seen  *commitTimes
	// n and bytes count the records produced and their values' bytes;
	// start is when the producer began and produced how long it took.
	n, bytes int64
	start    time.Time
	produced time.Duration
}

// startLive creates a new topic of topicPartitions partitions and starts
// an agent whose continuous pipeline reads it with flush_interval flush
// (JSON with its schema), before any record is produced.
func startLive(ctx context.Context, agentBin, bootstrap string, flush time.Duration) (*liveRun, error) {
	topic := fmt.Sprintf("bench-fresh-%d", time.Now().UnixNano())
	if _, err := produce(ctx, bootstrap, []string{topic}, topicPartitions, 0, nil); err != nil {
		return nil, err
	}
	a, err := startAgent(ctx, agentBin, bootstrap, "", nil)
	if err != nil {
		return nil, err
	}
	l := &liveRun{a: a, w: load{topics: []string{topic}, partitions: topicPartitions}, flush: flush,
		seen: &commitTimes{first: map[int][]offsetSeen{}}}
	if _, err := a.c.PutPipeline(ctx, benchPipeline(true, flush.String(), tablesOf(l.w, jsonValue))); err != nil {
		a.stop()
		return nil, err
	}
	return l, nil
}

// run produces records of about 100 bytes at rate records/s (0: as fast
// as the producer can) for d, and waits until the agent has committed
// them all, noting when it committed each offset.
func (l *liveRun) run(ctx context.Context, bootstrap string, rate float64, d time.Duration) error {
	pollCtx, cancel := context.WithCancel(ctx)
	polled := make(chan error, 1)
	go func() { polled <- l.seen.poll(pollCtx, l.a) }()
	stopPolling := func() error {
		cancel()
		return <-polled
	}
	var err error
	l.start = time.Now()
	if l.n, l.bytes, err = produceAt(ctx, bootstrap, l.w.topics[0], rate, d); err != nil {
		_ = stopPolling() // the producer's error is the one that matters
		return err
	}
	l.produced = time.Since(l.start)
	// Every record produced is committed within a flush or two, when the
	// agent keeps up; produced as fast as the producer can, it may still
	// have as long a backlog to read as the producer took.
	wait := l.flush + 30*time.Second
	if rate <= 0 {
		wait += l.produced
	}
	for deadline := time.Now().Add(wait); l.seen.total() < l.n; time.Sleep(freshnessPoll) {
		if time.Now().After(deadline) {
			_ = stopPolling() // the records missing are the error
			return fmt.Errorf("freshness: %d of %d records committed %v after the last was produced", l.seen.total(), l.n, wait)
		}
	}
	return stopPolling()
}

// capacityRun measures the records/s of one agent reading while the
// producer writes as fast as it can for d: the records over the time from
// the producer's start to the agent's commit of the last of them (which
// includes the last flush, and the backlog if the agent fell behind). It
// is the capacity of the machine with the producer, the broker and the
// agent on its cores, which the freshness runs take half of. The rows that
// read a topic produced beforehand measure the agent alone, with the cores
// to itself and the broker.
func capacityRun(ctx context.Context, agentBin, bootstrap string, d time.Duration) (result, error) {
	l, err := startLive(ctx, agentBin, bootstrap, time.Second)
	if err != nil {
		return result{}, err
	}
	defer l.a.stop()
	log.Printf("capacity: producing as fast as the producer can for %v to %s, read as it is produced", d, l.w.topics[0])
	if err := l.run(ctx, bootstrap, 0, d); err != nil {
		return result{}, err
	}
	last := l.seen.last()
	// The agent keeps up when it commits the last record within a flush
	// or two of its produce: then the producer, not the agent, set the
	// rate, which the log says.
	log.Printf("capacity: %d records produced in %v, the last committed %v after", l.n, l.produced.Round(time.Millisecond),
		last.Sub(l.start.Add(l.produced)).Round(time.Millisecond))
	secs := last.Sub(l.start).Seconds()
	if l.n == 0 || secs <= 0 {
		return result{}, fmt.Errorf("capacity: %d records committed in %.3f s: nothing to measure (is -freshness-time too short?)", l.n, secs)
	}
	r := result{Name: "agent: JSON with schema, read while produced", Records: l.n, Seconds: secs,
		RecordsPerSec: float64(l.n) / secs, BytesPerSec: float64(l.bytes) / secs, Topics: l.w.topics}
	r.addUsage(l.a.cmd.Process.Pid)
	return r, nil
}

// freshnessRun produces records of about 100 bytes at rate records/s for
// d to a new topic, read by one agent's continuous pipeline with
// flush_interval flush, and measures each record's latency (see latency).
func freshnessRun(ctx context.Context, agentBin, bootstrap string, rate float64, flush time.Duration, d time.Duration) (result, error) {
	l, err := startLive(ctx, agentBin, bootstrap, flush)
	if err != nil {
		return result{}, err
	}
	defer l.a.stop()
	log.Printf("freshness: %.0f records/s for %v to %s, flush_interval %v", rate, d, l.w.topics[0], flush)
	if err := l.run(ctx, bootstrap, rate, d); err != nil {
		return result{}, err
	}
	produced, err := timestamps(ctx, bootstrap, l.w.topics[0])
	if err != nil {
		return result{}, err
	}
	n := l.n
	lat := l.seen.latencies(produced)
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
		RecordsPerSec: float64(n) / d.Seconds(), BytesPerSec: float64(l.bytes) / d.Seconds(), Topics: l.w.topics,
		Latency: &latency{Flush: flush.String(), Rate: rate, P50: at(0.5), P99: at(0.99), Max: lat[len(lat)-1].Seconds(),
			Bar: (flush + time.Second).Seconds()}}
	r.addUsage(l.a.cmd.Process.Pid)
	return r, nil
}

// flatOutBatch is how many records the producer sends at a time when it
// produces as fast as it can.
const flatOutBatch = 100_000

// produceAt produces records of about 100 bytes to topic at rate records/s
// (0: as fast as the producer can) for d, round robin over its partitions,
// each stamped with the time it was due (at full speed, when its batch of
// flatOutBatch records began),
// and returns how many it produced and their values' bytes.
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
	for now := start; now.Sub(start) < d; {
		last := n + flatOutBatch
		if rate > 0 {
			last = int64(rate*now.Sub(start).Seconds()) + 1
		}
		msgs := make([]kafkago.Message, 0, last-n)
		for ; n < last; n++ {
			v := record(int(n))
			bytes += int64(len(v))
			// Stamped with when it was due, so that a producer that falls
			// behind shows in the latency, as a backlog would.
			due := now
			if rate > 0 {
				due = start.Add(time.Duration(float64(n) / rate * float64(time.Second)))
			}
			msgs = append(msgs, kafkago.Message{Topic: topic, Value: v, Time: due})
		}
		if err := write(ctx, w, msgs); err != nil {
			return 0, 0, err
		}
		if rate > 0 {
			now = <-tick.C
		} else {
			now = time.Now()
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

// last returns when the committed offsets were last seen to move.
func (c *commitTimes) last() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	var t time.Time
	for _, seen := range c.first {
		if len(seen) > 0 && seen[len(seen)-1].at.After(t) {
			t = seen[len(seen)-1].at
		}
	}
	return t
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
