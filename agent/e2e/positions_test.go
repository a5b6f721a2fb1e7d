//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The start and end position tests run one pipeline per mode side by
// side, put through the agent's API (the client package);
// TestPositionsFromTerraform shows the HCL of the same options applied.

// runEnded is the state of a triggered pipeline, and of its tables, once a
// run has read up to its end offsets and committed.
const runEnded = spec.StateIdle

// positionRecords is how many records each partition of the test topic
// holds: record i is at offset i with timestamp base + i seconds.
const positionRecords = 50

// ranges is what positions.py ranges prints: by partition number, the
// first and last offset the table holds and its number of rows there.
type ranges map[string][3]int64

// span returns the ranges entry of a partition holding offsets first..last,
// each once.
func span(first, last int64) [3]int64 { return [3]int64{first, last, last - first + 1} }

// tableRanges reads the table at location back with delta-rs (checked
// against pyarrow) and returns its ranges.
func tableRanges(t *testing.T, location string) ranges {
	t.Helper()
	out := python(t, "positions.py", "ranges", location)
	var r ranges
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("positions.py ranges %s: %q: %v", location, out, err)
	}
	return r
}

// triggered returns a triggered pipeline named name with one table of the
// same name, reading with ko.
func triggered(name, conn string, ko spec.KafkaOptions) *spec.Pipeline {
	off := false
	return &spec.Pipeline{
		Name: name, Connection: conn, DestinationCatalog: "main", DestinationSchema: "e2e", FlushInterval: "300ms",
		Continuous: &off,
		Tables: []spec.Table{{DestinationTable: name, ConnectorOptions: spec.ConnectorOptions{KafkaOptions: ko},
			TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"}}},
	}
}

// waitRunEnded waits until the triggered pipeline's run has ended and
// returns its table's status.
func (a *agent) waitRunEnded(pipeline string, timeout time.Duration) spec.TableStatus {
	a.t.Helper()
	p := a.waitFor(pipeline, "at the end of its run ("+runEnded+")", timeout, func(p *spec.PipelineResponse) bool {
		return p.Status.State == runEnded && len(p.Status.Tables) == 1 && p.Status.Tables[0].State == runEnded
	})
	return p.Status.Tables[0]
}

// TestStartAndEndPositions produces records 0..49 with known timestamps to
// each partition of a 2-partition topic, then runs one triggered pipeline
// per starting_offset and ending_offset mode (and assign) and checks the
// exact first and last offset of each partition in its table, each offset
// once; a pipeline whose positions cannot be has its table FAIL, or wait,
// with the error that says why. A continuous pipeline starting at latest
// then holds exactly the records produced after it started.
func TestStartAndEndPositions(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	topic := uniqueName("e2e-positions")
	// A recent base: brokers may refuse old timestamps, and retention
	// counts from them.
	base := time.Now().Add(-time.Hour).Truncate(time.Second).UnixMilli()
	at := func(i int64) int64 { return base + i*1000 }
	python(t, "positions.py", "produce", env.bootstrap, topic, "2", "0", strconv.Itoa(positionRecords), strconv.FormatInt(base, 10))
	// Two groups with the same committed offset, partition 0 at 30: a
	// table reading from a group commits its progress to it, so the case
	// that must find partition 1 without an offset has a group of its own,
	// which no table reads to the end.
	group, noOffset := uniqueName("e2e-positions-group"), uniqueName("e2e-positions-none")
	for _, g := range []string{group, noOffset} {
		python(t, "positions.py", "commit", env.bootstrap, g, topic, "0=30")
	}

	ctx := context.Background()
	c := a.client()
	if _, err := c.PutConnection(ctx, &spec.Connection{Name: "pos", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	byPart := func(p0, p1 int64) map[string]map[string]int64 {
		return map[string]map[string]int64{topic: {"0": p0, "1": p1}}
	}
	one := func(part string, v int64) map[string]map[string]int64 {
		return map[string]map[string]int64{topic: {part: v}}
	}
	rfc3339 := func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00") }
	const last = positionRecords - 1
	all := span(0, last)
	cases := []struct {
		name string
		ko   spec.KafkaOptions
		want ranges
		// failed, when set, is part of the error the table must FAIL
		// with; waiting, of the error it must wait with (STARTING).
		failed, waiting string
	}{
		{name: "earliest", ko: spec.KafkaOptions{StartingOffset: "earliest"}, want: ranges{"0": all, "1": all}},
		{name: "latest: nothing to read in a triggered run", ko: spec.KafkaOptions{StartingOffset: "latest"}, want: ranges{}},
		{name: "starting_timestamp, RFC 3339, between records 10 and 11", ko: spec.KafkaOptions{StartingOffset: "timestamp",
			StartingTimestamp: rfc3339(at(10) + 500)}, want: ranges{"0": span(11, last), "1": span(11, last)}},
		{name: "starting_timestamp in ms, at record 20", ko: spec.KafkaOptions{StartingOffset: "timestamp",
			StartingTimestamp: strconv.FormatInt(at(20), 10)}, want: ranges{"0": span(20, last), "1": span(20, last)}},
		{name: "starting_offsets_by_timestamp, partition 1 after every record", ko: spec.KafkaOptions{StartingOffset: "timestamp",
			StartingOffsetsByTimestamp: byPart(at(5), at(1000))}, want: ranges{"0": span(5, last)}},
		{name: "starting_offsets_by_timestamp, partition 0 left out at auto_offset_reset earliest", ko: spec.KafkaOptions{
			StartingOffset: "timestamp", StartingOffsetsByTimestamp: one("1", at(45)), AutoOffsetReset: "earliest"},
			want: ranges{"0": all, "1": span(45, last)}},
		{name: "starting_offsets with -2", ko: spec.KafkaOptions{StartingOffset: "specific", StartingOffsets: byPart(7, -2)},
			want: ranges{"0": span(7, last), "1": all}},
		{name: "starting_offsets with -1, partition 1 left out at auto_offset_reset earliest", ko: spec.KafkaOptions{
			StartingOffset: "specific", StartingOffsets: one("0", -1), AutoOffsetReset: "earliest"}, want: ranges{"1": all}},
		{name: "starting_offsets leaving partition 1 out at auto_offset_reset latest (default)", ko: spec.KafkaOptions{
			StartingOffset: "specific", StartingOffsets: one("0", 12)}, want: ranges{"0": span(12, last)}},
		{name: "group, partition 1 without a committed offset at auto_offset_reset earliest", ko: spec.KafkaOptions{
			StartingOffset: "group", GroupID: group, AutoOffsetReset: "earliest"}, want: ranges{"0": span(30, last), "1": all}},
		{name: "group with auto_offset_reset none fails", ko: spec.KafkaOptions{StartingOffset: "group", GroupID: noOffset,
			AutoOffsetReset: "none"},
			failed: fmt.Sprintf(`topic %q partition 1 has no starting position: starting_offset is "group", consumer group %q has committed no offset for it`, topic, noOffset)},
		{name: "ending_offsets", ko: spec.KafkaOptions{StartingOffset: "earliest", EndingOffset: "specific", EndingOffsets: one("0", 25)},
			want: ranges{"0": span(0, 24), "1": all}},
		{name: "ending_offsets with -1 and past the end", ko: spec.KafkaOptions{StartingOffset: "earliest", EndingOffset: "specific",
			EndingOffsets: byPart(-1, 1000)}, want: ranges{"0": all, "1": all}},
		{name: "an end below the start: nothing to read there", ko: spec.KafkaOptions{StartingOffset: "specific",
			StartingOffsets: byPart(30, 30), EndingOffset: "timestamp", EndingOffsetsByTimestamp: one("0", at(20))},
			want: ranges{"1": span(30, last)}},
		{name: "ending_timestamp at record 40", ko: spec.KafkaOptions{StartingOffset: "earliest", EndingOffset: "timestamp",
			EndingTimestamp: rfc3339(at(40))}, want: ranges{"0": span(0, 39), "1": span(0, 39)}},
		{name: "ending_timestamp in ms after every record", ko: spec.KafkaOptions{StartingOffset: "earliest", EndingOffset: "timestamp",
			EndingTimestamp: strconv.FormatInt(at(1000), 10)}, want: ranges{"0": all, "1": all}},
		{name: "ending_offsets_by_timestamp, partition 0 left out at latest", ko: spec.KafkaOptions{StartingOffset: "earliest",
			EndingOffset: "timestamp", EndingOffsetsByTimestamp: one("1", at(10))}, want: ranges{"0": all, "1": span(0, 9)}},
		{name: "timestamp start and end", ko: spec.KafkaOptions{StartingOffset: "timestamp", StartingTimestamp: rfc3339(at(15)),
			EndingOffset: "timestamp", EndingTimestamp: rfc3339(at(35))}, want: ranges{"0": span(15, 34), "1": span(15, 34)}},
		{name: "assign", ko: spec.KafkaOptions{Assign: map[string][]int{topic: {1}}, StartingOffset: "earliest"},
			want: ranges{"1": all}},
		{name: "assign with a partition the topic does not have", ko: spec.KafkaOptions{Assign: map[string][]int{topic: {0, 5}},
			StartingOffset: "earliest"}, waiting: fmt.Sprintf(`assign: topic %q has no partition 5 (it has 2 partitions, 0 to 1)`, topic)},
	}
	names := make([]string, len(cases))
	for i, tc := range cases {
		names[i] = fmt.Sprintf("pos%d", i)
		ko := tc.ko
		if ko.Assign == nil {
			ko.Topics = []string{topic}
		}
		if _, err := c.PutPipeline(ctx, triggered(names[i], "pos", ko)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			switch {
			case tc.failed != "":
				st, ok := a.pollTable(names[i], 0, 2*time.Minute, func(_ *spec.PipelineStatus, ts spec.TableStatus) bool {
					return ts.State == spec.StateFailed
				})
				if !ok || !strings.Contains(st.LastError, tc.failed) || st.Rows != 0 {
					t.Fatalf("table %+v, want FAILED without rows, with an error containing %q", st, tc.failed)
				}
			case tc.waiting != "":
				st, ok := a.pollTable(names[i], 0, 2*time.Minute, func(_ *spec.PipelineStatus, ts spec.TableStatus) bool {
					return strings.Contains(ts.LastError, tc.waiting)
				})
				if !ok || st.State != spec.StateStarting || st.Rows != 0 {
					t.Fatalf("table %+v, want STARTING without rows, with an error containing %q", st, tc.waiting)
				}
			default:
				st := a.waitRunEnded(names[i], 2*time.Minute)
				if got := tableRanges(t, st.Location); !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("table holds %v, want %v (partition: first offset, last offset, rows)", got, tc.want)
				}
			}
		})
	}

	// A continuous table starting at latest holds exactly what was produced
	// after it started.
	on := true
	latest := triggered("poslatest", "pos", spec.KafkaOptions{Topics: []string{topic}, StartingOffset: "latest"})
	latest.Continuous = &on
	if _, err := c.PutPipeline(ctx, latest); err != nil {
		t.Fatal(err)
	}
	a.waitFor("poslatest", "running with both partitions at offset 50", time.Minute, func(p *spec.PipelineResponse) bool {
		if p.Status.State != spec.StateRunning || len(p.Status.Tables) != 1 || len(p.Status.Tables[0].Partitions) != 2 {
			return false
		}
		for _, ps := range p.Status.Tables[0].Partitions {
			if ps.NextOffset != positionRecords {
				return false
			}
		}
		return true
	})
	python(t, "positions.py", "produce", env.bootstrap, topic, "2", strconv.Itoa(positionRecords), strconv.Itoa(positionRecords+10),
		strconv.FormatInt(base, 10))
	st := a.waitRows("poslatest", 0, 20, time.Minute)
	want := ranges{"0": span(positionRecords, positionRecords+9), "1": span(positionRecords, positionRecords+9)}
	if got := tableRanges(t, st.Location); !reflect.DeepEqual(got, want) {
		t.Fatalf("latest: table holds %v, want %v", got, want)
	}
}

// TestCheckDuplicatedGroupID runs a real consumer (librdkafka's, through
// Confluent's Python client) as a member of a group, under the classic and
// under the consumer (KIP-848) rebalance protocol, and a triggered pipeline
// whose table uses that group with check_duplicated_group_id: the table
// stays STARTING, without a row, with an error naming the group and the
// member's client id, until the consumer leaves; then it reads every
// record. The table's offsets are mirrored to the group once committed,
// without the agent ever joining it.
func TestCheckDuplicatedGroupID(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"classic", "consumer"} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			checkDuplicatedGroupID(t, protocol)
		})
	}
}

// checkDuplicatedGroupID is TestCheckDuplicatedGroupID with a consumer of
// group.protocol protocol.
func checkDuplicatedGroupID(t *testing.T, protocol string) {
	a := startAgent(t, t.TempDir())
	topic, group := uniqueName("e2e-dupgroup"), uniqueName("e2e-dupgroup")
	base := time.Now().Add(-time.Hour).Truncate(time.Second).UnixMilli()
	python(t, "positions.py", "produce", env.bootstrap, topic, "2", "0", strconv.Itoa(positionRecords), strconv.FormatInt(base, 10))

	member := exec.Command(env.python, filepath.Join("testdata", "positions.py"), "member", env.bootstrap, group, topic,
		"e2e-other-consumer", protocol)
	stdin, err := member.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := member.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := member.Start(); err != nil {
		t.Fatal(err)
	}
	exited := false
	t.Cleanup(func() {
		if !exited {
			stdin.Close()
			member.Wait()
		}
	})
	joined := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		joined <- sc.Scan() && sc.Text() == "joined"
	}()
	select {
	case ok := <-joined:
		if !ok {
			t.Fatal("the consumer did not join its group")
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the consumer did not join its group within 2 minutes")
	}

	ctx := context.Background()
	c := a.client()
	if _, err := c.PutConnection(ctx, &spec.Connection{Name: "dup", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	check := true
	if _, err := c.PutPipeline(ctx, triggered("dup", "dup", spec.KafkaOptions{Topics: []string{topic}, StartingOffset: "earliest",
		GroupID: group, CheckDuplicatedGroupID: &check})); err != nil {
		t.Fatal(err)
	}
	wantErr := fmt.Sprintf("consumer group %q has 1 member(s): e2e-other-consumer", group)
	st, ok := a.pollTable("dup", 0, 2*time.Minute, func(_ *spec.PipelineStatus, ts spec.TableStatus) bool {
		return strings.Contains(ts.LastError, wantErr)
	})
	if !ok || st.State != spec.StateStarting || st.Rows != 0 {
		t.Fatalf("table %+v, want STARTING without rows, with an error containing %q", st, wantErr)
	}
	t.Logf("while the consumer is a member: %s", st.LastError)

	stdin.Close() // the consumer leaves the group
	exited = true
	if err := member.Wait(); err != nil {
		t.Fatalf("consumer: %v", err)
	}
	st = a.waitRunEnded("dup", 2*time.Minute)
	if got, want := tableRanges(t, st.Location), (ranges{"0": span(0, positionRecords-1), "1": span(0, positionRecords-1)}); !reflect.DeepEqual(got, want) {
		t.Fatalf("table holds %v, want %v", got, want)
	}
	awaitGroupOffsets(t, group, 2*positionRecords, time.Minute)
}

// TestPositionsFromTerraform applies a triggered pipeline whose positions
// are written in HCL (assign, starting_offsets with -2, and
// ending_offsets_by_timestamp) with the Terraform CLI: apply waits for the
// run's end, and the table holds exactly the offsets those maps select.
func TestPositionsFromTerraform(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	topic := uniqueName("e2e-tfpositions")
	base := time.Now().Add(-time.Hour).Truncate(time.Second).UnixMilli()
	python(t, "positions.py", "produce", env.bootstrap, topic, "3", "0", strconv.Itoa(positionRecords), strconv.FormatInt(base, 10))
	dir := t.TempDir()
	tfPipeline{connection: "tfpos", pipeline: "tfpos", body: fmt.Sprintf(`
  continuous = false
  table {
    destination_table = "tf_positions"
    connector_options = {
      kafka_options = {
        assign                      = { %[1]q = [0, 2] }
        starting_offset             = "specific"
        starting_offsets            = { %[1]q = { "0" = 5, "2" = -2 } }
        ending_offset               = "timestamp"
        ending_offsets_by_timestamp = { %[1]q = { "2" = %[2]d } }
      }
    }
    table_configuration = {
      source_metadata_column = "_kafka"
    }
  }
`, topic, base+20*1000)}.write(t, dir)
	apply(t, dir, a)
	st := a.waitRunEnded("tfpos", time.Minute)
	// Partition 1 is not assigned; partition 2 ends before record 20.
	want := ranges{"0": span(5, positionRecords-1), "2": span(0, 19)}
	if got := tableRanges(t, st.Location); !reflect.DeepEqual(got, want) {
		t.Fatalf("table holds %v, want %v", got, want)
	}
	planNoChanges(t, dir, a)
}
