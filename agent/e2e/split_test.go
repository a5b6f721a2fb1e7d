//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestSplitBacklog reads the backlog of a two-partition topic as offset
// ranges decoded in parallel (max_records_per_partition, and min_partitions
// asking for more ranges than that makes) on the real broker: the agent is
// killed once it committed some rows (while it reads the ranges, as a
// rule) and started again, and the table holds every offset of every
// partition once, committed in offset order per partition; then the live
// tail is read, in order too.
//
// The pipeline is put through the agent's API: the provider's schema
// gains min_partitions and max_records_per_partition on the surface branch.
func TestSplitBacklog(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	topic := uniqueName("e2e-split")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "40000", "--partitions", "2")

	ctx := context.Background()
	c := a.client()
	if _, err := c.PutConnection(ctx, &spec.Connection{Name: "split", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	maxRecords, minPartitions := int64(3000), int64(20)
	if _, err := c.PutPipeline(ctx, &spec.Pipeline{
		Name: "split", Connection: "split", DestinationCatalog: "main", DestinationSchema: "e2e", FlushInterval: "300ms",
		MaxRowsPerFile: 2000, // a commit every 2000 rows at most: many during the backlog
		Tables: []spec.Table{{
			DestinationTable: "split",
			ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
				Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest,
				MaxRecordsPerPartition: &maxRecords, MinPartitions: &minPartitions,
			}},
			TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"},
		}},
	}); err != nil {
		t.Fatal(err)
	}
	// Killed once it committed some rows, maybe while it reads the ranges:
	// what it committed is a prefix of each partition, and the restart
	// reads on from there.
	a.pollRows("split", 0, 1, time.Minute)
	a.kill()
	a.start()
	checkEnds(t, a, "split", topic)
	split := 0
	for line := range strings.SplitSeq(a.log(), "\n") {
		if strings.Contains(line, "backlog is read") {
			t.Log(line)
			split++
		}
	}
	if split == 0 {
		t.Errorf("no partition was read as ranges; agent log:\n%s", a.log())
	}
	st := a.waitRows("split", 0, 40000, time.Minute)
	t.Logf("each partition in offset order, commit after commit, up to %v", tabletest.CommitOrder(t, st.Location))

	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "500", "--partitions", "2")
	checkEnds(t, a, "split", topic)
	t.Logf("each partition in offset order, commit after commit, up to %v", tabletest.CommitOrder(t, st.Location))
}
