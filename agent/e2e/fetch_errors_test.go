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

// TestTopicRecreatedWhileDown deletes and re-creates a topic, with more
// records than the table read, while the agent is stopped. Offsets alone
// cannot tell: the table records its topics' ids in its configuration, and
// on restart it fails saying the topic was re-created rather than reading
// the new topic from the old offsets.
func TestTopicRecreatedWhileDown(t *testing.T) {
	dataDir := t.TempDir()
	a := startAgent(t, dataDir)
	topic := uniqueName("e2e-recreated")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "200")
	ctx := context.Background()
	c := a.client()
	if _, err := c.PutConnection(ctx, &spec.Connection{Name: "rec", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutPipeline(ctx, &spec.Pipeline{
		Name: "rec", Connection: "rec", DestinationCatalog: "main", DestinationSchema: "e2e", FlushInterval: "300ms",
		Tables: []spec.Table{{
			DestinationTable: "recreated",
			ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
				Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest,
			}},
		}},
	}); err != nil {
		t.Fatal(err)
	}
	a.waitRows("rec", 0, 200, time.Minute)
	a.stop()

	python(t, "kafka_admin.py", env.bootstrap, "delete", topic)
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "400")
	a.start()
	deadline := time.Now().Add(time.Minute)
	for {
		p, err := a.client().GetPipeline(ctx, "rec") // a new port after the restart
		if err == nil && p.Status.State == spec.StateFailed {
			if msg := p.Status.Tables[0].LastError; !strings.Contains(msg, "deleted and created again") {
				t.Fatalf("the table failed, but not for the re-created topic: %s", msg)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the table did not fail after its topic was re-created while the agent was down: %+v, %v\nagent log:\n%s",
				p, err, a.log())
		}
		time.Sleep(250 * time.Millisecond)
	}
}
