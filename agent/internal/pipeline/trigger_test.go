package pipeline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

func tp(topic string, partition int) kafka.TopicPartition {
	return kafka.TopicPartition{Topic: topic, Partition: partition}
}

func TestAllowances(t *testing.T) {
	a, b, c, d := tp("t", 0), tp("t", 1), tp("t", 2), tp("u", 0)
	tests := []struct {
		name  string
		lags  map[kafka.TopicPartition]int64
		limit int64
		want  map[kafka.TopicPartition]int64
	}{
		{"no cap", map[kafka.TopicPartition]int64{a: 900, b: 100}, 0, map[kafka.TopicPartition]int64{a: 900, b: 100}},
		{"under the cap", map[kafka.TopicPartition]int64{a: 30, b: 20}, 50, map[kafka.TopicPartition]int64{a: 30, b: 20}},
		// One each, then 98 split 88.2 / 9.8: the rounding's offset goes
		// to b, whose remainder is larger.
		{"in proportion to lag", map[kafka.TopicPartition]int64{a: 900, b: 100}, 100, map[kafka.TopicPartition]int64{a: 89, b: 11}},
		{"even lags", map[kafka.TopicPartition]int64{a: 50, b: 50, c: 50, d: 50}, 100,
			map[kafka.TopicPartition]int64{a: 25, b: 25, c: 25, d: 25}},
		// The small partitions are not starved, nor given past their lag.
		{"at least one each", map[kafka.TopicPartition]int64{a: 1_000_000, b: 1, c: 2}, 10,
			map[kafka.TopicPartition]int64{a: 8, b: 1, c: 1}},
		{"fewer offsets than partitions", map[kafka.TopicPartition]int64{a: 5, b: 3, c: 1, d: 3}, 2,
			map[kafka.TopicPartition]int64{a: 1, b: 1}},
		{"large offsets", map[kafka.TopicPartition]int64{a: 1 << 62, b: 1 << 62}, 1 << 61,
			map[kafka.TopicPartition]int64{a: 1 << 60, b: 1 << 60}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := allowances(tc.lags, tc.limit)
			if len(got) != len(tc.want) {
				t.Fatalf("allowances = %v, want %v", got, tc.want)
			}
			for tp, n := range tc.want {
				if got[tp] != n {
					t.Fatalf("allowances = %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestAllowancesHold checks the rules of the split on random lags: under a
// cap the allowances add up to it, none exceeds its lag, and each lagging
// partition gets one at least when the cap allows.
func TestAllowancesHold(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 11))
	for range 2000 {
		lags := map[kafka.TopicPartition]int64{}
		var total int64
		for i := range 1 + rnd.IntN(12) {
			n := 1 + rnd.Int64N(int64(1)<<rnd.IntN(40))
			lags[tp("t", i)] = n
			total += n
		}
		limit := 1 + rnd.Int64N(total+10)
		got := allowances(lags, limit)
		var sum int64
		for tp, n := range got {
			if n < 1 || n > lags[tp] {
				t.Fatalf("lags %v, limit %d: %s gets %d", lags, limit, tp, n)
			}
			sum += n
		}
		if want := min(limit, total); sum != want {
			t.Fatalf("lags %v, limit %d: allowances %v add up to %d, want %d", lags, limit, got, sum, want)
		}
		if limit >= int64(len(lags)) && len(got) != len(lags) {
			t.Fatalf("lags %v, limit %d: allowances %v leave a partition out", lags, limit, got)
		}
	}
}

// TestTriggerPlan checks when a trigger reads and up to where: the ends are
// the next offsets plus the allowances; with min_offsets_per_trigger it
// waits for enough offsets until max_trigger_delay has passed.
func TestTriggerPlan(t *testing.T) {
	a, b := tp("t", 0), tp("t", 1)
	ptr := func(n int64) *int64 { return &n }
	trig := newTrigger(&spec.KafkaOptions{MaxOffsetsPerTrigger: ptr(100), MinOffsetsPerTrigger: ptr(50), MaxTriggerDelay: "1m"}, true, time.Second)
	if trig == nil {
		t.Fatal("newTrigger = nil, want a trigger")
	}
	defer trig.stop()
	start := trig.last
	next := map[kafka.TopicPartition]int64{a: 10, b: 1000}

	if ends := trig.plan(next, map[kafka.TopicPartition]int64{a: 10, b: 1000}, start); ends != nil {
		t.Fatalf("nothing to read: ends %v, want none", ends)
	}
	few := map[kafka.TopicPartition]int64{a: 30, b: 1010}
	if ends := trig.plan(next, few, start.Add(59*time.Second)); ends != nil {
		t.Fatalf("30 offsets of the 50 asked for, before the delay: ends %v, want none", ends)
	}
	if ends := trig.plan(next, few, start.Add(time.Minute)); ends[a] != 30 || ends[b] != 1010 {
		t.Fatalf("30 offsets after the delay: ends %v, want all of them", ends)
	}
	if ends := trig.plan(next, map[kafka.TopicPartition]int64{a: 910, b: 1100}, start); ends[a] != 10+89 || ends[b] != 1000+11 {
		t.Fatalf("1000 offsets, 100 at most: ends %v, want 89 of a and 11 of b", ends)
	}

	if trig := newTrigger(&spec.KafkaOptions{MinOffsetsPerTrigger: ptr(50)}, false, time.Second); trig != nil {
		t.Fatalf("a triggered run with min_offsets_per_trigger only: %+v; want no trigger (a run must end)", trig)
	}
	if trig := newTrigger(&spec.KafkaOptions{}, true, time.Second); trig != nil {
		t.Fatalf("no rate control: %+v; want no trigger", trig)
	}
}

// TestTriggerCapsCommits reads a backlog of 1000 records on 3 partitions
// with max_offsets_per_trigger = 100, continuously and in a triggered run
// of another table: no commit covers more than 100 offsets, and every
// record is written once.
func TestTriggerCapsCommits(t *testing.T) {
	addr, producer := newCluster(t, 3, "events")
	produce(t, producer, 0, 1000, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	limit := int64(100)
	p := testPipeline("events")
	p.FlushInterval = "1h" // only the micro-batches commit
	p.Tables[0].ConnectorOptions.KafkaOptions.MaxOffsetsPerTrigger = &limit
	run := triggeredPipeline("events")
	run.Name, run.FlushInterval, run.Tables[0].DestinationTable = "run", "1h", "run"
	run.Tables[0].ConnectorOptions.KafkaOptions.MaxOffsetsPerTrigger = &limit
	m := startManager(t, addr, p)
	if err := m.Apply(context.Background(), run, &spec.Connection{Name: "c", BootstrapServers: []string{addr}}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "1000 rows", func() bool { st, _ := m.Status("p"); return st.Tables[0].Rows == 1000 })
	waitFor(t, 30*time.Second, "the run IDLE", func() bool { st, _ := m.Status("run"); return st.State == spec.StateIdle })
	for _, name := range []string{"p", "run"} {
		st, _ := m.Status(name)
		spans := tabletest.CommitSpans(t, st.Tables[0].Location)
		var sum int64
		for _, n := range spans {
			if n > limit {
				t.Fatalf("pipeline %s: a commit covers %d offsets, more than %d: %v", name, n, limit, spans)
			}
			sum += n
		}
		if sum != 1000 || len(spans) < 10 || st.Tables[0].Rows != 1000 {
			t.Fatalf("pipeline %s: %d rows in %d commits covering %v offsets; want 1000 rows in 10 commits or more", name,
				st.Tables[0].Rows, len(spans), spans)
		}
		rows, _ := tabletest.ReadTable[struct {
			ID *int64 `parquet:"id,optional"`
		}](t, st.Tables[0].Location)
		seen := map[int64]bool{}
		for _, r := range rows {
			seen[*r.ID] = true
		}
		if len(rows) != 1000 || len(seen) != 1000 {
			t.Fatalf("pipeline %s: %d rows, %d distinct ids; want each of the 1000 once", name, len(rows), len(seen))
		}
	}
}

// A table whose trigger waits for min_offsets_per_trigger fetches nothing
// meanwhile; its status still shows the lag of the offsets that wait.
func TestTriggerWaitShowsLag(t *testing.T) {
	addr, producer := newCluster(t, 2, "events")
	produce(t, producer, 0, 10, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	least := int64(1000)
	p := testPipeline("events")
	ko := &p.Tables[0].ConnectorOptions.KafkaOptions
	ko.MinOffsetsPerTrigger, ko.MaxTriggerDelay = &least, "1h"
	p.Normalize()
	m := startManager(t, addr, p)
	waitFor(t, 30*time.Second, "a lag of 10", func() bool { st, _ := m.Status("p"); return st.Tables[0].Lag == 10 })
	produce(t, producer, 10, 15, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	waitFor(t, 30*time.Second, "a lag of 15", func() bool { st, _ := m.Status("p"); return st.Tables[0].Lag == 15 })
	if st, _ := m.Status("p"); st.Tables[0].Rows != 0 {
		t.Fatalf("%d rows; want none before 1000 offsets or an hour", st.Tables[0].Rows)
	}
}
