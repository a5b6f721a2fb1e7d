package position_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/position"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
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
			if got := position.GroupID(&tc.ko, "p", "Main.raw.Events"); got != tc.want {
				t.Fatalf("groupID = %q, want %q", got, tc.want)
			}
		})
	}
}

// positionsCluster starts an in-process broker with topic "t" of two
// partitions, each holding records 0..9 with timestamps 1000, 2000, ...,
// 10000 ms, and returns a client for it.
func positionsCluster(t *testing.T) *kafka.Client {
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
	return cl
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
	cl := positionsCluster(t)
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
			p := &position.Finder{Client: cl, Options: &tc.ko, Group: position.GroupID(&tc.ko, "p", "main.raw.events"), Owner: "the table"}
			starting := tc.ko.StartingOffset
			if tc.startingAs != "" {
				starting = tc.startingAs
			}
			starts, ends, err := p.Offsets(ctx, tps, starting, tc.logged, true)
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
	cl := positionsCluster(t)
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
			p := &position.Finder{Client: cl, Options: &tc.ko, Group: position.GroupID(&tc.ko, "p", "main.raw.events"), Owner: "the table"}
			_, _, err := p.Offsets(ctx, tps, tc.ko.StartingOffset, false, true)
			var fatal runner.FatalError
			if !errors.As(err, &fatal) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a fatal error with %q", err, tc.want)
			}
		})
	}
}
