//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink/deltasinktest"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The tests of this file drive the agent through its API (agent/client):
// the kafka_options they set (fail_on_data_loss,
// partition_discovery_interval, client_properties) are the provider's once
// the surface branch of issue 12 is merged.

// lossPipeline returns a pipeline of one table reading topic from the
// earliest offset, with fail_on_data_loss set to fail and the Kafka
// metadata in column _kafka; more changes its options.
func lossPipeline(name, topic string, fail bool, more func(*spec.KafkaOptions)) *spec.Pipeline {
	p := &spec.Pipeline{
		Name: name, Connection: name, DestinationCatalog: "main", DestinationSchema: "e2e", FlushInterval: "300ms",
		Tables: []spec.Table{{
			DestinationTable: strings.ReplaceAll(name, "-", "_"),
			ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
				Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest, FailOnDataLoss: &fail,
			}},
			TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"},
		}},
	}
	if more != nil {
		more(&p.Tables[0].ConnectorOptions.KafkaOptions)
	}
	return p
}

// putPipeline applies p, and a connection of the same name to the test
// broker, through the agent's API.
func putPipeline(t *testing.T, a *agent, p *spec.Pipeline) {
	t.Helper()
	ctx := context.Background()
	c := a.client()
	if _, err := c.PutConnection(ctx, &spec.Connection{Name: p.Connection, BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutPipeline(ctx, p); err != nil {
		t.Fatal(err)
	}
}

// offsetsOf returns kafka_admin.py's start-offsets or end-offsets of the
// partitions of topic, by partition number.
func offsetsOf(t *testing.T, which, topic string) map[string]int64 {
	t.Helper()
	var out map[string]map[string]int64
	if err := json.Unmarshal([]byte(python(t, "kafka_admin.py", env.bootstrap, which, topic)), &out); err != nil {
		t.Fatal(err)
	}
	return out[topic]
}

// TestDataLossRetention deletes records by retention before two tables read
// them: a topic whose segments roll at 1 MiB and whose retention.bytes is 1
// keeps only its active segment. Of two pipelines that read it, stopped
// while the records are produced and deleted:
//   - the one with fail_on_data_loss = true FAILS, its last_error giving
//     the exact gap [from, to) and the fix;
//   - the one with fail_on_data_loss = false goes on from the earliest
//     offset: its status reports the gap with its exact from (the offset
//     it had committed) and to, its counter and the Prometheus counter sum
//     the offsets lost, the commit that moved past the gap records it in its
//     commitInfo, and the table holds every offset but those of the gap,
//     each once. The counter survives a restart (read back from the log).
func TestDataLossRetention(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	a := startAgent(t, dataDir)
	topic := uniqueName("e2e-loss")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "0", "--partitions", "1",
		"--topic-config", "segment.bytes=1048576", "--topic-config", "retention.bytes=1")
	failing, going := lossPipeline("loss-fail", topic, true, nil), lossPipeline("loss-skip", topic, false, nil)
	putPipeline(t, a, failing)
	putPipeline(t, a, going)
	const first = 1000
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", strconv.Itoa(first), "--partitions", "1")
	a.waitRows(failing.Name, 0, first, time.Minute)
	a.waitRows(going.Name, 0, first, time.Minute)

	// Stopped, the tables miss what retention deletes: about 6 MiB of
	// records make 6 segments, of which only the active one stays.
	a.stop()
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "40000", "--partitions", "1")
	deadline := time.Now().Add(2 * time.Minute)
	for offsetsOf(t, "start-offsets", topic)["0"] <= first {
		if time.Now().After(deadline) {
			t.Fatalf("retention deleted nothing of %s in 2 minutes (log.retention.check.interval.ms of tools/kafka.sh?)", topic)
		}
		time.Sleep(time.Second)
	}
	end := offsetsOf(t, "end-offsets", topic)["0"]
	a.start()

	// fail_on_data_loss = true: FAILED, with the gap and the fix.
	st, ok := a.pollTable(failing.Name, 0, time.Minute, func(_ *spec.PipelineStatus, ts spec.TableStatus) bool {
		return ts.State == spec.StateFailed
	})
	if !ok {
		t.Fatalf("the table with fail_on_data_loss = true did not fail: %+v\n%s", st, a.log())
	}
	gapRE := regexp.MustCompile(`offsets \[(\d+), (\d+)\) of ` + regexp.QuoteMeta(topic) + `/0 \((\d+) records\) are no longer in Kafka`)
	m := gapRE.FindStringSubmatch(st.LastError)
	if m == nil || m[1] != strconv.Itoa(first) || !strings.Contains(st.LastError, "set fail_on_data_loss = false") {
		t.Fatalf("last_error %q: want the gap from offset %d and the fix", st.LastError, first)
	}
	if to, _ := strconv.ParseInt(m[2], 10, 64); to <= first || to > end {
		t.Errorf("last_error's gap ends at %d, want within (%d, %d]", to, first, end)
	}
	if st.Rows != first {
		t.Errorf("the failed table has %d rows, want %d", st.Rows, first)
	}

	// fail_on_data_loss = false: the gap in the status, the rest read.
	p := a.waitFor(going.Name, fmt.Sprintf("read up to %d past the gap", end), 2*time.Minute, func(p *spec.PipelineResponse) bool {
		ts := p.Status.Tables[0]
		return len(ts.Partitions) == 1 && ts.Partitions[0].NextOffset == end && len(ts.DataLoss) > 0
	})
	ts := p.Status.Tables[0]
	gaps := ts.DataLoss
	if gaps[0].From != first || gaps[0].Topic != topic || gaps[0].Partition != 0 || gaps[0].Reason != "retention" || gaps[0].DetectedAt == "" {
		t.Fatalf("gaps %+v: want the first from offset %d of %s/0, with a reason and a time", gaps, first, topic)
	}
	// The table holds every offset but the gaps': [0, first), then what
	// lies between and after the gaps (retention may have gone on while
	// the table read, making more than one).
	var lost int64
	want := [][2]int64{{0, first}}
	for i, g := range gaps {
		if g.To <= g.From || (i > 0 && g.From < gaps[i-1].To) {
			t.Fatalf("gaps %+v are not increasing ranges", gaps)
		}
		lost += g.To - g.From
		want[len(want)-1][1] = g.From
		want = append(want, [2]int64{g.To, end})
	}
	if ts.DataLossOffsets != lost || ts.Rows != end-lost {
		t.Errorf("status: %d offsets lost and %d rows; want %d and %d", ts.DataLossOffsets, ts.Rows, lost, end-lost)
	}
	var ranges map[string][][2]int64
	if err := json.Unmarshal([]byte(python(t, "offset_ranges.py", ts.Location)), &ranges); err != nil {
		t.Fatal(err)
	}
	if got := ranges[topic+"/0"]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the table holds offsets %v, want %v (all but the gaps %+v)", got, want, gaps)
	}
	series := fmt.Sprintf(`tributary_table_data_loss_offsets_total{pipeline=%q,table="main.e2e.%s"} %d`, going.Name,
		going.Tables[0].DestinationTable, lost)
	if metrics := a.metrics(); !strings.Contains(metrics, series) {
		t.Errorf("/metrics has no %s:\n%s", series, metrics)
	}
	checkGapsLogged(t, ts.Location, gaps)

	// Restarted, the table reads its counter back from its log.
	a.stop()
	a.start()
	p = a.waitFor(going.Name, "running again", time.Minute, func(p *spec.PipelineResponse) bool {
		return p.Status.State == spec.StateRunning
	})
	if got := p.Status.Tables[0].DataLossOffsets; got != lost {
		t.Errorf("after a restart the status counts %d offsets lost, want %d", got, lost)
	}
}

// checkGapsLogged checks that the commitInfo of the table's log entries at
// location record every gap of gaps, each once, in their operation
// parameters.
func checkGapsLogged(t *testing.T, location string, gaps []spec.DataLossGap) {
	t.Helper()
	if logged := deltasinktest.LoggedGaps(t, location); fmt.Sprint(logged) != fmt.Sprint(gaps) {
		t.Errorf("the log's commitInfo records the gaps %+v, want %+v", logged, gaps)
	}
}

// TestDiscoveryWhileRunning runs a topic_pattern table with
// partition_discovery_interval = "2s" while a matching topic appears and a
// topic it reads gains partitions, both produced to at once: the table
// picks them up while running and reads the new partitions from their
// earliest offset, so every record is in the table, each once.
func TestDiscoveryWhileRunning(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	prefix := uniqueName("e2e-discover")
	topicA, topicB := prefix+"-a", prefix+"-b"
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topicA, "--count", "0", "--partitions", "2")
	p := lossPipeline("discover", "", true, func(ko *spec.KafkaOptions) {
		ko.Topics, ko.TopicPattern, ko.PartitionDiscoveryInterval = nil, regexp.QuoteMeta(prefix)+"-.*", "2s"
	})
	putPipeline(t, a, p)
	a.waitFor(p.Name, "running on 2 partitions", time.Minute, func(p *spec.PipelineResponse) bool {
		return p.Status.State == spec.StateRunning && len(p.Status.Tables[0].Partitions) == 2
	})
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topicA, "--count", "500", "--partitions", "2")
	a.waitRows(p.Name, 0, 500, time.Minute)

	// Records land in the new partitions and the new topic before any
	// discovery can see them: read from the earliest, none is missed.
	python(t, "kafka_admin.py", env.bootstrap, "partitions", topicA, "4")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topicA, "--count", "2000", "--partitions", "4")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topicB, "--count", "1500", "--partitions", "3")
	a.waitFor(p.Name, "reading 7 partitions", time.Minute, func(p *spec.PipelineResponse) bool {
		return len(p.Status.Tables[0].Partitions) == 7
	})
	checkEnds(t, a, p.Name, topicA, topicB)
}

// TestConsumerGroupLag shows a table's progress to Kafka's own tool:
// kafka-consumer-groups.sh --describe on the table's group reports its
// committed offset (mirrored after each commit), the lag behind the records
// produced while the agent is down, and no lag once the agent has read
// them, as the agent's lag series in /metrics say too.
func TestConsumerGroupLag(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	topic := uniqueName("e2e-lag")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "0", "--partitions", "1")
	p := lossPipeline("lag", topic, true, nil)
	putPipeline(t, a, p)
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "300", "--partitions", "1")
	a.waitRows(p.Name, 0, 300, time.Minute)
	group := "tributary.lag.main.e2e." + p.Tables[0].DestinationTable
	waitGroup(t, group, topic, "300", "0")

	a.stop()
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "200", "--partitions", "1")
	waitGroup(t, group, topic, "300", "200")
	a.start()
	a.waitRows(p.Name, 0, 500, time.Minute)
	waitGroup(t, group, topic, "500", "0")
	// The agent's own lag series agree: nothing behind.
	metrics := a.metrics()
	for _, want := range []string{
		`tributary_table_lag{pipeline="lag",table="main.e2e.lag"} 0`,
		`tributary_table_lag_bytes{pipeline="lag",table="main.e2e.lag"} 0`,
		fmt.Sprintf(`tributary_partition_lag_bytes{pipeline="lag",table="main.e2e.lag",topic=%q,partition="0"} 0`, topic),
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// waitGroup waits until kafka-consumer-groups.sh --describe --group group
// reports, for partition 0 of topic, the committed offset current and the
// lag lag, and fails the test after a minute.
func waitGroup(t *testing.T, group, topic, current, lag string) {
	t.Helper()
	_, port, _ := strings.Cut(env.bootstrap, ":")
	var out []byte
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		cmd := exec.Command(filepath.Join(env.root, "tools", "kafka.sh"), "groups", "--describe", "--group", group)
		cmd.Env = append(os.Environ(), "KAFKA_PORT="+port)
		var err error
		if out, err = cmd.CombinedOutput(); err != nil {
			continue
		}
		// GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG ...
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) >= 6 && f[0] == group && f[1] == topic && f[2] == "0" && f[3] == current && f[5] == lag {
				t.Logf("kafka-consumer-groups.sh: %s", line)
				return
			}
		}
	}
	t.Fatalf("kafka-consumer-groups.sh --describe --group %s does not show offset %s and lag %s for %s/0:\n%s",
		group, current, lag, topic, out)
}

// TestTopicRecreatedGoesOn deletes and re-creates a topic, with more
// records than before, while a table with fail_on_data_loss = false reads
// it: the table goes on with the new topic from its earliest offset,
// reporting the gap (the old topic's offset it stopped at, the new topic's
// it went on from), and holds the records of both topics.
func TestTopicRecreatedGoesOn(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	topic := uniqueName("e2e-recreate")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "300", "--partitions", "1")
	p := lossPipeline("recreate", topic, false, nil)
	putPipeline(t, a, p)
	a.waitRows(p.Name, 0, 300, time.Minute)

	python(t, "kafka_admin.py", env.bootstrap, "delete", topic)
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "500", "--partitions", "1")
	st := a.waitFor(p.Name, "reading the new topic", 2*time.Minute, func(p *spec.PipelineResponse) bool {
		ts := p.Status.Tables[0]
		return ts.Rows == 800 && len(ts.Partitions) == 1 && ts.Partitions[0].NextOffset == 500
	}).Status.Tables[0]
	if g := st.DataLoss; len(g) != 1 || g[0].Topic != topic || g[0].From != 300 || g[0].To != 0 ||
		g[0].Reason != "topic re-created" {
		t.Errorf("data_loss %+v, want %s/0 from 300 to 0, re-created", g, topic)
	}
	checkGapsLogged(t, st.Location, st.DataLoss)
}

// TestFanoutConsumerGroupLag shows a fanout schema's progress to Kafka's
// own tool, as TestConsumerGroupLag does a table's: the group named with
// the fanout schema in place of a table holds the offset it routed up to.
func TestFanoutConsumerGroupLag(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	topic := uniqueName("e2e-fanlag")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "300", "--partitions", "1")
	p := lossPipeline("fanlag", topic, true, nil)
	putPipeline(t, a, p)
	f := &spec.FanoutSchema{
		Name: "fanlag_f", Pipeline: p.Name, DestinationCatalog: "main", DestinationSchema: "e2e_fanlag",
		ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
			Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest}},
		FanoutOptions: spec.FanoutOptions{FanoutBy: "'routed'"},
	}
	if _, err := a.client().PutFanoutSchema(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	waitGroup(t, "tributary.fanlag.main.e2e_fanlag.fanlag_f", topic, "300", "0")
}
