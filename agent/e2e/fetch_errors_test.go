//go:build e2e

package e2e

import (
	"context"
	"strconv"
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
	t.Parallel()
	a := startAgent(t, t.TempDir())
	topic := ingestTopic(t, a, "del", 400)

	python(t, "kafka_admin.py", env.bootstrap, "delete", topic)
	a.waitFor("del", "reporting the deleted topic", time.Minute, func(p *spec.PipelineResponse) bool {
		st := p.Status.Tables[0]
		return st.State == spec.StateStarting && st.LastError != "" && p.Status.State != spec.StateRunning
	})

	// More records than the table read: offsets alone would not show that
	// this is another topic.
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "800")
	st := a.waitFailed("del", "deleted and created again", time.Minute)
	if st.Tables[0].Rows != 400 {
		t.Fatalf("the table holds %d rows, want the 400 read before the deletion", st.Tables[0].Rows)
	}
}

// TestTopicRecreatedWhileDown deletes and re-creates a topic, with more
// records than the table read, while the agent is stopped. Offsets alone
// cannot tell: the table records its topics' ids in its configuration, and
// on restart it fails saying the topic was re-created rather than reading
// the new topic from the old offsets.
func TestTopicRecreatedWhileDown(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	topic := ingestTopic(t, a, "rec", 200)
	a.stop()

	python(t, "kafka_admin.py", env.bootstrap, "delete", topic)
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "400")
	a.start()
	a.waitFailed("rec", "deleted and created again", time.Minute)
}

// ingestTopic creates a topic with count records and a pipeline named name
// that reads it from the earliest offset into one table with the metadata
// column _kafka, and waits until
// the table holds them all. It returns the topic.
func ingestTopic(t *testing.T, a *agent, name string, count int64) string {
	t.Helper()
	topic := uniqueName("e2e-" + name)
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", strconv.FormatInt(count, 10))
	ctx := context.Background()
	c := a.client()
	if _, err := c.PutConnection(ctx, &spec.Connection{Name: name, BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutPipeline(ctx, &spec.Pipeline{
		Name: name, Connection: name, DestinationCatalog: "main", DestinationSchema: "e2e", FlushInterval: "300ms",
		Tables: []spec.Table{{
			DestinationTable: name,
			ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
				Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest,
			}},
			TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"},
		}},
	}); err != nil {
		t.Fatal(err)
	}
	a.waitRows(name, 0, count, time.Minute)
	return topic
}

// waitFailed polls the pipeline until it is FAILED with a table error that
// contains cause, and returns its status; it fails the test after timeout or
// when the pipeline fails for another cause.
func (a *agent) waitFailed(pipeline, cause string, timeout time.Duration) spec.PipelineStatus {
	a.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		// A fresh client each time: a restarted agent listens on a new port.
		p, err := a.client().GetPipeline(context.Background(), pipeline)
		if err == nil && p.Status.State == spec.StateFailed {
			if msg := tableErrors(p.Status); !strings.Contains(msg, cause) {
				a.t.Fatalf("pipeline %s failed, but not because %s: %s", pipeline, cause, msg)
			}
			return p.Status
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("pipeline %s did not fail because %s: %+v, %v\nagent log:\n%s", pipeline, cause, p, err, a.log())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// tableErrors joins the last errors of a pipeline's tables.
func tableErrors(st spec.PipelineStatus) string {
	var errs []string
	for _, t := range st.Tables {
		errs = append(errs, t.LastError)
	}
	return strings.Join(errs, "; ")
}
