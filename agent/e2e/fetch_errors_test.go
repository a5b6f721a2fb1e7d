//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestTopicDeletedAndRecreated deletes a topic while a table reads it. The
// table must say so rather than look healthy: it leaves RUNNING for
// STARTING with the broker's error in last_error while the agent retries.
// The topic is then created again under the same name: the offsets the log
// records belong to the old topic, and the table fails saying so (the
// topic id changed) instead of reading the new topic from the middle.
func TestTopicDeletedAndRecreated(t *testing.T) {
	a := startAgent(t, t.TempDir())
	topic := uniqueName("e2e-deleted")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "400")

	ctx := context.Background()
	c := a.client()
	if _, err := c.PutConnection(ctx, &spec.Connection{Name: "del", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutPipeline(ctx, &spec.Pipeline{
		Name: "del", Connection: "del", DestinationCatalog: "main", DestinationSchema: "e2e", FlushInterval: "300ms",
		Tables: []spec.Table{{
			DestinationTable: "deleted",
			ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
				Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest,
			}},
		}},
	}); err != nil {
		t.Fatal(err)
	}
	a.waitRows("del", 0, 400, time.Minute)

	python(t, "kafka_admin.py", env.bootstrap, "delete", topic)
	a.waitFor("del", "reporting the deleted topic", time.Minute, func(p *spec.PipelineResponse) bool {
		st := p.Status.Tables[0]
		return st.State == spec.StateStarting && st.LastError != "" && p.Status.State != spec.StateRunning
	})

	// More records than the table read: offsets alone would not show that
	// this is another topic.
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "800")
	deadline := time.Now().Add(time.Minute)
	for {
		p, err := c.GetPipeline(ctx, "del")
		if err == nil && p.Status.State == spec.StateFailed {
			if msg := p.Status.Tables[0].LastError; !strings.Contains(msg, "deleted and created again") {
				t.Fatalf("the table failed, but not for the re-created topic: %s", msg)
			}
			if p.Status.Tables[0].Rows != 400 {
				t.Fatalf("the table holds %d rows, want the 400 read before the deletion", p.Status.Tables[0].Rows)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the table did not fail after the topic was re-created: %+v, %v\nagent log:\n%s",
				p, err, a.log())
		}
		time.Sleep(250 * time.Millisecond)
	}
}
