//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestLatePartitionsAndTopics runs a topic_pattern pipeline with the
// default starting_offset (latest) and proves that no record is lost when
// partitions and topics appear while the agent cannot see them:
//   - the agent is stopped, partitions are added to a topic it reads and a
//     new topic matching the pattern is created, both are produced to, and
//     the agent started again: every record is in the table, each once;
//   - partitions are added while it runs and produced to, and the agent is
//     killed right away (before a discovery tick is likely to see them) and
//     started again: every record is in the table, each once.
func TestLatePartitionsAndTopics(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	prefix := uniqueName("e2e-late")
	topicA, topicB := prefix+"-a", prefix+"-b"
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topicA, "--count", "0", "--partitions", "2")

	ctx := context.Background()
	c := a.client()
	if _, err := c.PutConnection(ctx, &spec.Connection{Name: "late", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutPipeline(ctx, &spec.Pipeline{
		Name: "late", Connection: "late", DestinationCatalog: "main", DestinationSchema: "e2e", FlushInterval: "300ms",
		Tables: []spec.Table{{
			DestinationTable: "late",
			ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
				TopicPattern: regexp.QuoteMeta(prefix) + "-.*", // starting_offset: latest, the default
			}},
			TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"},
		}},
	}); err != nil {
		t.Fatal(err)
	}
	// Produce only once the table has recorded where its partitions start.
	a.waitFor("late", "running on 2 partitions", time.Minute, func(p *spec.PipelineResponse) bool {
		return p.Status.State == spec.StateRunning && len(p.Status.Tables) == 1 && len(p.Status.Tables[0].Partitions) == 2
	})
	produce := func(topic string, count, partitions int) {
		python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic,
			"--count", strconv.Itoa(count), "--partitions", strconv.Itoa(partitions))
	}
	produce(topicA, 1000, 2)
	a.waitRows("late", 0, 1000, time.Minute)

	// Stopped: topic A grows from 2 to 4 partitions, topic B appears.
	a.stop()
	python(t, "kafka_admin.py", env.bootstrap, "partitions", topicA, "4")
	produce(topicB, 1500, 3)
	produce(topicA, 2000, 4)
	a.start()
	t.Log("after a restart with 2 new partitions and a new topic:")
	checkEnds(t, a, "late", topicA, topicB)

	// Running: topic A grows to 6 partitions, records go to them, and the
	// agent is killed before its next discovery tick would likely come.
	python(t, "kafka_admin.py", env.bootstrap, "partitions", topicA, "6")
	produce(topicA, 1000, 6)
	a.kill()
	a.start()
	t.Log("after partitions added while running and a SIGKILL:")
	checkEnds(t, a, "late", topicA, topicB)
}

// checkEnds waits until the table of pipeline has committed every
// partition of topics up to its current end offset, then checks that the
// table holds every offset of every partition, each once.
func checkEnds(t *testing.T, a *agent, pipeline string, topics ...string) {
	t.Helper()
	out := python(t, "kafka_admin.py", append([]string{env.bootstrap, "end-offsets"}, topics...)...)
	var ends map[string]map[string]int64
	if err := json.Unmarshal([]byte(out), &ends); err != nil {
		t.Fatalf("end offsets %q: %v", out, err)
	}
	var total int64
	for _, parts := range ends {
		for _, end := range parts {
			total += end
		}
	}
	endsFile := filepath.Join(t.TempDir(), "ends.json")
	if err := os.WriteFile(endsFile, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	p := a.waitFor(pipeline, fmt.Sprintf("at the end offsets %s", out), time.Minute, func(p *spec.PipelineResponse) bool {
		if len(p.Status.Tables) == 0 {
			return false
		}
		next := map[string]int64{}
		for _, ps := range p.Status.Tables[0].Partitions {
			next[fmt.Sprintf("%s/%d", ps.Topic, ps.Partition)] = ps.NextOffset
		}
		for topic, parts := range ends {
			for part, end := range parts {
				if n, ok := next[topic+"/"+part]; !ok || n < end {
					return false
				}
			}
		}
		return true
	})
	st := p.Status.Tables[0]
	if st.Rows != total {
		t.Errorf("table %s: every partition's next offset is at its end, but %d rows of %d produced are in the table",
			st.DestinationTable, st.Rows, total)
	}
	// A SIGKILL between a file's close and its commit leaves the file
	// behind until garbage collection's grace period has passed: what is
	// not in the log must at least be named like the agent's files.
	checkTable(t, st.Location, "--count", strconv.FormatInt(total, 10), "--ends", endsFile, "--metadata", "_kafka", "--orphans-by-agent")
}
