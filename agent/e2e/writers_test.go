//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestOneWriterPerTable runs two agents on one warehouse, each with a
// pipeline into the same table. The second one's table does not write: its
// status names the holder (the first agent's pipeline, pid and host). Once
// the first agent stops, the second takes the table over from the offsets
// the first committed: every record is in the table once. A destination
// folder that holds someone else's files and no Delta log is refused and
// left untouched.
func TestOneWriterPerTable(t *testing.T) {
	t.Parallel()
	warehouse := t.TempDir()
	first := startAgentOn(t, t.TempDir(), warehouse)
	topic := ingestTopic(t, first, "one", 200)

	second := startAgentOn(t, t.TempDir(), warehouse)
	ctx := context.Background()
	c := second.client()
	if _, err := c.PutConnection(ctx, &spec.Connection{Name: "two", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	pipeline := func(table string) *spec.Pipeline {
		return &spec.Pipeline{
			Name: "two-" + table, Connection: "two", DestinationCatalog: "main", DestinationSchema: "e2e", FlushInterval: "300ms",
			Tables: []spec.Table{{
				DestinationTable: table,
				ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
					Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest,
				}},
				TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"},
			}},
		}
	}
	if _, err := c.PutPipeline(ctx, pipeline("one")); err != nil {
		t.Fatal(err)
	}
	second.waitFor("two-one", "reporting the table's writer", time.Minute, func(p *spec.PipelineResponse) bool {
		msg := p.Status.Tables[0].LastError
		return strings.Contains(msg, `pipeline "one"`) && strings.Contains(msg, "pid")
	})

	first.stop()
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "100")
	st := second.waitAtLeast("two-one", 0, 300, 2*time.Minute)
	checkTable(t, st.Location, "--count", "300", "--exactly-once")

	foreign := filepath.Join(warehouse, "main", "e2e", "foreign")
	if err := os.MkdirAll(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(foreign, "part-0000.parquet")
	if err := os.WriteFile(theirs, []byte("someone else's data"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := c.PutPipeline(ctx, pipeline("foreign"))
	if err == nil || !strings.Contains(err.Error(), "not a Tributary table") {
		t.Fatalf("a pipeline into a folder of foreign data: %v", err)
	}
	if _, err := os.Stat(theirs); err != nil {
		t.Fatalf("the foreign file is gone: %v", err)
	}
}
