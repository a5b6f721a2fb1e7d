package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

func TestGroupID(t *testing.T) {
	for _, tc := range []struct {
		name string
		ko   spec.KafkaOptions
		want string
	}{
		{"default prefix, as before issue 12", spec.KafkaOptions{}, "tributary.p.main.raw.events"},
		{"prefix", spec.KafkaOptions{GroupIDPrefix: "team-a."}, "team-a.p.main.raw.events"},
		{"group id", spec.KafkaOptions{GroupID: "legacy-job", GroupIDPrefix: "ignored."}, "legacy-job"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := groupID(&tc.ko, "p", "Main.raw.Events"); got != tc.want {
				t.Fatalf("groupID = %q, want %q", got, tc.want)
			}
		})
	}
}

// positionsCluster starts an in-process broker with topic "t" of two
// partitions, each holding records 0..9 with timestamps 1000, 2000, ...,
// 10000 ms, and returns a client for it.
func positionsCluster(t *testing.T) (*kafka.Client, string) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr := c.ListenAddrs()[0]
	p, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for part := range int32(2) {
		for i := range 10 {
			r := &kgo.Record{Topic: "t", Partition: part, Value: fmt.Appendf(nil, "%d", i), Timestamp: time.UnixMilli(int64(i+1) * 1000)}
			if err := p.ProduceSync(context.Background(), r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	cl, err := kafka.NewClient(&spec.Connection{Name: "c", BootstrapServers: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl, addr
}

var (
	tp0 = kafka.TopicPartition{Topic: "t", Partition: 0}
	tp1 = kafka.TopicPartition{Topic: "t", Partition: 1}
)

// offsetsString prints the offsets of partitions 0 and 1 of t, "0:a 1:b".
func offsetsString(m map[kafka.TopicPartition]int64) string {
	return fmt.Sprintf("0:%d 1:%d", m[tp0], m[tp1])
}

func TestPositionsStartAndEnd(t *testing.T) {
	cl, _ := positionsCluster(t)
	ctx := context.Background()
	if err := cl.CommitGroupOffsets(ctx, "g", map[kafka.TopicPartition]int64{tp0: 4}); err != nil {
		t.Fatal(err)
	}
	tps := []kafka.TopicPartition{tp0, tp1}
	byPart := func(a, b int64) map[string]map[string]int64 {
		return map[string]map[string]int64{"t": {"0": a, "1": b}}
	}
	for _, tc := range []struct {
		name       string
		ko         spec.KafkaOptions
		starts     string
		ends       string
		startingAs string // the mode start is called with, when not ko's
		logged     bool
	}{
		{name: "latest", ko: spec.KafkaOptions{StartingOffset: "latest"}, starts: "0:10 1:10", ends: "0:10 1:10"},
		{name: "earliest", ko: spec.KafkaOptions{StartingOffset: "earliest"}, starts: "0:0 1:0", ends: "0:10 1:10"},
		{name: "a logged table starts new partitions at earliest", ko: spec.KafkaOptions{StartingOffset: "latest"}, logged: true,
			starts: "0:0 1:0", ends: "0:10 1:10"},
		{name: "discovered partitions start at earliest", ko: spec.KafkaOptions{StartingOffset: "latest"}, startingAs: "earliest",
			starts: "0:0 1:0", ends: "0:10 1:10"},
		// The record of timestamp 3000 is offset 2; none is at 20000.
		{name: "timestamp in ms", ko: spec.KafkaOptions{StartingOffset: "timestamp", StartingTimestamp: "3000"},
			starts: "0:2 1:2", ends: "0:10 1:10"},
		{name: "timestamp in RFC 3339, between records", ko: spec.KafkaOptions{StartingOffset: "timestamp",
			StartingTimestamp: "1970-01-01T00:00:02.500Z"}, starts: "0:2 1:2", ends: "0:10 1:10"},
		{name: "timestamp after every record starts at latest", ko: spec.KafkaOptions{StartingOffset: "timestamp",
			StartingTimestamp: "20000"}, starts: "0:10 1:10", ends: "0:10 1:10"},
		{name: "timestamps by partition", ko: spec.KafkaOptions{StartingOffset: "timestamp",
			StartingOffsetsByTimestamp: byPart(5000, 20000)}, starts: "0:4 1:10", ends: "0:10 1:10"},
		{name: "timestamps by partition, one left out at auto_offset_reset", ko: spec.KafkaOptions{StartingOffset: "timestamp",
			StartingOffsetsByTimestamp: map[string]map[string]int64{"t": {"1": 5000}}, AutoOffsetReset: "earliest"},
			starts: "0:0 1:4", ends: "0:10 1:10"},
		{name: "specific", ko: spec.KafkaOptions{StartingOffset: "specific", StartingOffsets: byPart(3, -2)},
			starts: "0:3 1:0", ends: "0:10 1:10"},
		{name: "specific latest, and one left out at auto_offset_reset's default", ko: spec.KafkaOptions{StartingOffset: "specific",
			StartingOffsets: map[string]map[string]int64{"t": {"0": -1}}}, starts: "0:10 1:10", ends: "0:10 1:10"},
		{name: "group, and one without a committed offset at auto_offset_reset", ko: spec.KafkaOptions{StartingOffset: "group",
			GroupID: "g", AutoOffsetReset: "earliest"}, starts: "0:4 1:0", ends: "0:10 1:10"},
		{name: "specific ends", ko: spec.KafkaOptions{StartingOffset: "earliest", EndingOffset: "specific",
			EndingOffsets: map[string]map[string]int64{"t": {"0": 7}}}, starts: "0:0 1:0", ends: "0:7 1:10"},
		{name: "specific ends, latest and past latest", ko: spec.KafkaOptions{StartingOffset: "earliest", EndingOffset: "specific",
			EndingOffsets: byPart(-1, 99)}, starts: "0:0 1:0", ends: "0:10 1:10"},
		{name: "timestamp end: before the first record at or after it", ko: spec.KafkaOptions{StartingOffset: "earliest",
			EndingOffset: "timestamp", EndingTimestamp: "6000"}, starts: "0:0 1:0", ends: "0:5 1:5"},
		{name: "timestamp end after every record ends at latest", ko: spec.KafkaOptions{StartingOffset: "earliest",
			EndingOffset: "timestamp", EndingTimestamp: "1970-01-01T00:01:00Z"}, starts: "0:0 1:0", ends: "0:10 1:10"},
		{name: "timestamp ends by partition", ko: spec.KafkaOptions{StartingOffset: "earliest", EndingOffset: "timestamp",
			EndingOffsetsByTimestamp: map[string]map[string]int64{"t": {"1": 2000}}}, starts: "0:0 1:0", ends: "0:10 1:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &positions{client: cl, ko: &tc.ko, group: groupID(&tc.ko, "p", "main.raw.events"), owner: "the table"}
			starting := tc.ko.StartingOffset
			if tc.startingAs != "" {
				starting = tc.startingAs
			}
			starts, ends, err := p.offsets(ctx, tps, starting, tc.logged, true)
			if err != nil {
				t.Fatal(err)
			}
			if got := offsetsString(starts); got != tc.starts {
				t.Errorf("starts %s, want %s", got, tc.starts)
			}
			if got := offsetsString(ends); got != tc.ends {
				t.Errorf("ends %s, want %s", got, tc.ends)
			}
		})
	}
}

func TestPositionsRefuse(t *testing.T) {
	cl, _ := positionsCluster(t)
	ctx := context.Background()
	tps := []kafka.TopicPartition{tp0, tp1}
	for _, tc := range []struct {
		name string
		ko   spec.KafkaOptions
		want string
	}{
		{"group without offsets and auto_offset_reset none", spec.KafkaOptions{StartingOffset: "group", GroupID: "nobody",
			AutoOffsetReset: "none"},
			`topic "t" partition 0 has no starting position: starting_offset is "group", consumer group "nobody" has committed no offset`},
		{"specific leaving a partition out with none", spec.KafkaOptions{StartingOffset: "specific", AutoOffsetReset: "none",
			StartingOffsets: map[string]map[string]int64{"t": {"0": 1}}},
			`topic "t" partition 1 has no starting position: starting_offset is "specific", starting_offsets does not list it`},
		{"specific past the end", spec.KafkaOptions{StartingOffset: "specific",
			StartingOffsets: map[string]map[string]int64{"t": {"0": 11}}}, `topic "t" partition 0 offset 11, past its latest offset 10`},
		{"an end at earliest", spec.KafkaOptions{StartingOffset: "earliest", EndingOffset: "specific",
			EndingOffsets: map[string]map[string]int64{"t": {"1": -2}}}, `ending_offsets: topic "t" partition 1: -2 is not an end`},
		{"a partition key that is no number", spec.KafkaOptions{StartingOffset: "specific",
			StartingOffsets: map[string]map[string]int64{"t": {"x": 1}}}, `starting_offsets: topic "t": partition "x" is not a partition number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &positions{client: cl, ko: &tc.ko, group: groupID(&tc.ko, "p", "main.raw.events"), owner: "the table"}
			_, _, err := p.offsets(ctx, tps, tc.ko.StartingOffset, false, true)
			var fatal runner.FatalError
			if !errors.As(err, &fatal) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a fatal error with %q", err, tc.want)
			}
		})
	}
}

// A table whose consumer group has a member does not start while it has
// one: it reports STARTING with an error naming the group and the member,
// and starts once the member left.
func TestManagerCheckDuplicatedGroupID(t *testing.T) {
	_, addr := positionsCluster(t)
	member, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup("busy"), kgo.ConsumeTopics("t"), kgo.ClientID("other-job"))
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	member.PollFetches(ctx) // joins the group

	p := testPipeline("t")
	ko := &p.Tables[0].ConnectorOptions.KafkaOptions
	ko.GroupID = "busy"
	check := true
	ko.CheckDuplicatedGroupID = &check
	m := startManager(t, addr, p)
	var last spec.TableStatus
	waitFor(t, 20*time.Second, "the table refusing to start", func() bool {
		st, _ := m.Status("p")
		last = st.Tables[0]
		return last.State == spec.StateStarting && strings.Contains(last.LastError, `consumer group "busy" has 1 member(s): other-job`)
	})
	if last.Rows != 0 {
		t.Fatalf("the table read %d rows while its group had a member", last.Rows)
	}
	member.Close()
	waitFor(t, 60*time.Second, "20 rows once the member left", func() bool {
		st, _ := m.Status("p")
		return st.Tables[0].Rows == 20 && st.Tables[0].State == spec.StateRunning
	})
}

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
	waitFor(t, 20*time.Second, "the end of the run", func() bool { return r.status().State == spec.StateIdle })
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
		st := r.status()
		var next int64
		for _, ps := range st.Partitions {
			next += ps.NextOffset
		}
		return st.State == spec.StateRunning && len(st.Partitions) == 4 && next == 100
	})
	produce(t, fx.producer, 100, 150, fanoutEvent)
	waitFor(t, 20*time.Second, "the 50 records produced after the start", func() bool { return fanoutRows(r) >= 50 })
	r.stop()
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
	crashed := false
	crash := func(string) error {
		if crashed {
			return nil
		}
		crashed = true
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
	waitFor(t, 20*time.Second, "the end of the run", func() bool { return r.status().State == spec.StateIdle })
	if n := fanoutRows(r); n != 100 {
		t.Fatalf("%d rows, want the 100 there when the run started", n)
	}
}
