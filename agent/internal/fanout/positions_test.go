package fanout

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A triggered fanout run starts at the offsets its consumer group (named
// after the fanout schema) committed and ends at ending_offsets.
func TestFanoutGroupStartAndSpecificEnd(t *testing.T) {
	fx := newFanoutFixture(t)
	produce(t, fx.producer, 0, 400, fanoutEvent)
	cfg := testFanoutConfig(t.TempDir(), "events", fx.conn)
	cfg.Continuous = false
	ko := &cfg.Fanout.ConnectorOptions.KafkaOptions
	ko.StartingOffset, ko.AutoOffsetReset = spec.StartingOffsetGroup, spec.AutoOffsetResetNone
	ko.EndingOffset, ko.EndingOffsets = spec.EndingOffsetSpecific, map[string]map[string]int64{"events": {}}
	committed := map[kafka.TopicPartition]int64{}
	for p := range 4 {
		committed[kafka.TopicPartition{Topic: "events", Partition: p}] = 5
		ko.EndingOffsets["events"][fmt.Sprint(p)] = 10
	}
	if err := fx.client.CommitGroupOffsets(context.Background(), "tributary.p.main.events.f", committed); err != nil {
		t.Fatal(err)
	}
	r := fx.run(t, cfg, routeByType, nil, nil)
	waitFor(t, 20*time.Second, "the end of the run", func() bool { return r.Status().State == spec.StateIdle })
	if n := fanoutRows(r); n != 20 {
		t.Fatalf("%d rows, want 20: offsets 5 to 9 of each of 4 partitions", n)
	}
}

// A fanout schema starting at latest reads only what was produced after it
// started: its progress log's first entry (the route) does not count as
// recorded offsets, which would start every partition at earliest.
func TestFanoutStartsAtLatest(t *testing.T) {
	fx := newFanoutFixture(t)
	produce(t, fx.producer, 0, 100, fanoutEvent)
	cfg := testFanoutConfig(t.TempDir(), "events", fx.conn)
	cfg.Fanout.ConnectorOptions.KafkaOptions.StartingOffset = spec.StartingOffsetLatest
	r := fx.run(t, cfg, routeByType, nil, nil)
	waitFor(t, 20*time.Second, "RUNNING at the latest offsets", func() bool {
		st := r.Status()
		var next int64
		for _, ps := range st.Partitions {
			next += ps.NextOffset
		}
		return st.State == spec.StateRunning && len(st.Partitions) == 4 && next == 100
	})
	produce(t, fx.producer, 100, 150, fanoutEvent)
	waitFor(t, 20*time.Second, "the 50 records produced after the start", func() bool { return fanoutRows(r) >= 50 })
	r.Stop()
	if n := fanoutRows(r); n != 50 {
		t.Fatalf("%d rows, want the 50 produced after the start", n)
	}
}

// A fanout schema mirrors its progress to its consumer group, as a table
// does, so that lag tools see it: the group named with the fanout schema
// in place of a table.
func TestFanoutMirrorsGroupOffsets(t *testing.T) {
	fx := newFanoutFixture(t)
	produce(t, fx.producer, 0, 100, fanoutEvent)
	cfg := testFanoutConfig(t.TempDir(), "events", fx.conn)
	r := fx.run(t, cfg, routeByType, nil, nil)
	waitFor(t, 20*time.Second, "100 records", func() bool { return fanoutRows(r) == 100 })
	tps := make([]kafka.TopicPartition, 4)
	for p := range tps {
		tps[p] = kafka.TopicPartition{Topic: "events", Partition: p}
	}
	waitFor(t, 20*time.Second, "the group's offsets at the progress", func() bool {
		offs, err := fx.client.GroupOffsets(context.Background(), "tributary.p.main.events.f", tps)
		if err != nil {
			return false
		}
		var sum int64
		for _, n := range offs {
			sum += n
		}
		return sum == 100
	})
}

// A triggered run's ends are fixed when it starts: a run that restarts
// after a retryable error in its middle (here its first flush) keeps them,
// and does not read what was written meanwhile.
func TestFanoutRunKeepsItsEndsAcrossRetries(t *testing.T) {
	fx := newFanoutFixture(t)
	produce(t, fx.producer, 0, 100, fanoutEvent)
	cfg := testFanoutConfig(t.TempDir(), "events", fx.conn)
	cfg.Continuous, cfg.FlushEvery = false, time.Hour
	var crashed atomic.Bool // tables flush side by side
	crash := func(string) error {
		if !crashed.CompareAndSwap(false, true) {
			return nil
		}
		var recs []*kgo.Record
		for i := 100; i < 150; i++ {
			recs = append(recs, &kgo.Record{Key: fmt.Appendf(nil, "%d", i), Value: []byte(fanoutEvent(i))})
		}
		if err := fx.producer.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			return err
		}
		return errors.New("the first flush fails")
	}
	r := fx.run(t, cfg, routeByType, nil, crash)
	waitFor(t, 20*time.Second, "the end of the run", func() bool { return r.Status().State == spec.StateIdle })
	if n := fanoutRows(r); n != 100 {
		t.Fatalf("%d rows, want the 100 there when the run started", n)
	}
}
