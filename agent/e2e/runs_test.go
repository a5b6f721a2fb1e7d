//go:build e2e

package e2e

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// runsFixture is an agent, a connection named "runs" to the test broker and
// a topic of 3 partitions.
type runsFixture struct {
	a     *agent
	c     *client.Client
	topic string
}

func newRunsFixture(t *testing.T, records int) *runsFixture {
	t.Helper()
	f := &runsFixture{a: startAgent(t, t.TempDir()), topic: uniqueName("e2e-runs")}
	f.c = f.a.client()
	f.produce(t, records)
	if _, err := f.c.PutConnection(context.Background(), &spec.Connection{Name: "runs", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	return f
}

// produce writes n more records to the topic.
func (f *runsFixture) produce(t *testing.T, n int) {
	t.Helper()
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", f.topic, "--partitions", "3", "--count", strconv.Itoa(n))
}

// put applies a pipeline of one table reading the topic from the earliest
// offset with the metadata column _kafka, with the kafka_options more sets.
func (f *runsFixture) put(t *testing.T, name string, continuous bool, flush string, more func(*spec.KafkaOptions)) {
	t.Helper()
	ko := spec.KafkaOptions{Topics: []string{f.topic}, StartingOffset: spec.StartingOffsetEarliest}
	if more != nil {
		more(&ko)
	}
	if _, err := f.c.PutPipeline(context.Background(), &spec.Pipeline{
		Name: name, Connection: "runs", DestinationCatalog: "main", DestinationSchema: "e2e", FlushInterval: flush,
		Continuous: &continuous,
		Tables: []spec.Table{{DestinationTable: strings.ReplaceAll(name, "-", "_"), ConnectorOptions: spec.ConnectorOptions{KafkaOptions: ko},
			TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"}}},
	}); err != nil {
		t.Fatalf("PUT pipeline %s: %v", name, err)
	}
}

// waitIdle waits until the triggered pipeline's run is over, and returns
// its table's status.
func (f *runsFixture) waitIdle(t *testing.T, name string) spec.TableStatus {
	t.Helper()
	p := f.a.waitFor(name, "IDLE", 2*time.Minute, func(p *spec.PipelineResponse) bool {
		if p.Status.State == spec.StateFailed {
			t.Fatalf("pipeline %s failed: %+v", name, p.Status)
		}
		return p.Status.State == spec.StateIdle
	})
	return p.Status.Tables[0]
}

// TestRateLimitPerCommit reads a backlog of 2000 records on 3 partitions
// with max_offsets_per_trigger = 150, continuously and in a triggered run:
// every commit's txn actions in the Delta log cover 150 offsets at most,
// they add up to the 2000, and every record is in the table once. The
// triggered run ends, IDLE, after the capped commits its backlog takes.
func TestRateLimitPerCommit(t *testing.T) {
	t.Parallel()
	const total, limit = 2000, 150
	f := newRunsFixture(t, total)
	capped := func(ko *spec.KafkaOptions) { ko.MaxOffsetsPerTrigger = new(int64(limit)) }
	// A long flush interval: only the micro-batches commit.
	f.put(t, "capped", true, "10m", capped)
	f.put(t, "capped-run", false, "10m", capped)
	live := f.a.waitRows("capped", 0, total, 2*time.Minute)
	run := f.waitIdle(t, "capped-run")
	for _, ts := range []spec.TableStatus{live, run} {
		spans := tabletest.CommitSpans(t, ts.Location)
		var sum int64
		for _, n := range spans {
			if n > limit {
				t.Errorf("table %s: a commit covers %d offsets, more than max_offsets_per_trigger = %d: %v", ts.DestinationTable, n, limit, spans)
			}
			sum += n
		}
		if sum != total || len(spans) < total/limit {
			t.Errorf("table %s: %d commits covering %v offsets, %d in all; want %d in %d commits or more", ts.DestinationTable,
				len(spans), spans, sum, total, total/limit)
		}
		t.Logf("table %s: %d commits of %v offsets", ts.DestinationTable, len(spans), spans)
		checkTable(t, ts.Location, "--count", strconv.Itoa(total), "--exactly-once")
	}
}

// TestMinOffsetsPerTrigger holds commits back with min_offsets_per_trigger:
// fewer records than the minimum wait (a generous while shows that nothing
// is committed), and once enough are there one commit takes them all; with
// a short max_trigger_delay, fewer records than the minimum are committed
// once the delay has passed since the table started.
func TestMinOffsetsPerTrigger(t *testing.T) {
	t.Parallel()
	f := newRunsFixture(t, 60)
	f.put(t, "held", true, "500ms", func(ko *spec.KafkaOptions) {
		ko.MinOffsetsPerTrigger, ko.MaxTriggerDelay = new(int64(100)), "1h"
	})
	f.a.waitFor("held", "RUNNING", time.Minute, func(p *spec.PipelineResponse) bool { return p.Status.State == spec.StateRunning })
	time.Sleep(5 * time.Second) // ten triggers, each finding 60 offsets of the 100 asked for
	if p, err := f.c.GetPipeline(context.Background(), "held"); err != nil || p.Status.Tables[0].Rows != 0 {
		t.Fatalf("60 records of the 100 min_offsets_per_trigger asks for: %+v, %v; want nothing committed", p, err)
	}
	f.produce(t, 50)
	ts := f.a.waitRows("held", 0, 110, time.Minute)
	if spans := tabletest.CommitSpans(t, ts.Location); len(spans) != 1 || spans[0] != 110 {
		t.Errorf("commits of %v offsets; want one of the 110", spans)
	}

	start := time.Now()
	f.put(t, "delayed", true, "500ms", func(ko *spec.KafkaOptions) {
		ko.MinOffsetsPerTrigger, ko.MaxTriggerDelay = new(int64(1000)), "3s"
	})
	f.a.waitRows("delayed", 0, 110, time.Minute)
	if waited := time.Since(start); waited < 3*time.Second {
		t.Errorf("110 records of the 1000 asked for were committed %s after the table started, before max_trigger_delay (3s)", waited)
	}
}

// TestTriggeredRuns runs a triggered pipeline up to the end offsets its run
// fixed, in micro-batches of 1 offset so that records produced once it
// committed the first are produced while it runs, then starts its next runs
// through POST /v1/pipelines/{name}/runs: each reads exactly the records
// produced since the last. Starting a run of a continuous pipeline is a
// 409, of an unknown one a 404.
func TestTriggeredRuns(t *testing.T) {
	t.Parallel()
	f := newRunsFixture(t, 300)
	f.put(t, "nightly", false, "300ms", func(ko *spec.KafkaOptions) { ko.MaxOffsetsPerTrigger = new(int64(1)) })
	f.a.waitAtLeast("nightly", 0, 1, time.Minute)
	// Produced after the run fixed its ends: the next run reads them.
	f.produce(t, 200)
	if p, err := f.c.GetPipeline(context.Background(), "nightly"); err == nil {
		t.Logf("the first run had %d rows, and was %s, once 200 more records were produced", p.Status.Tables[0].Rows, p.Status.State)
	}
	ts := f.waitIdle(t, "nightly")
	var next int64
	for _, p := range ts.Partitions {
		next += p.NextOffset
	}
	if ts.Rows != 300 || next != 300 {
		t.Fatalf("first run: %d rows, next offsets adding up to %d; want 300 and 300", ts.Rows, next)
	}

	got, err := f.c.StartRun(context.Background(), "nightly")
	if err != nil {
		t.Fatalf("POST runs: %v", err)
	}
	if got.Status.State == spec.StateIdle {
		t.Fatalf("the answer to POST runs reports the pipeline IDLE already: %+v", got.Status)
	}
	ts = f.waitIdle(t, "nightly")
	if ts.Rows != 500 {
		t.Fatalf("second run: %d rows, want 500", ts.Rows)
	}
	checkTable(t, ts.Location, "--count", "500", "--exactly-once")

	// A run with nothing new commits no data.
	before := len(tabletest.CommitSpans(t, ts.Location))
	if _, err := f.c.StartRun(context.Background(), "nightly"); err != nil {
		t.Fatalf("POST runs: %v", err)
	}
	if ts = f.waitIdle(t, "nightly"); ts.Rows != 500 || len(tabletest.CommitSpans(t, ts.Location)) != before {
		t.Fatalf("a run without new records: %d rows, %d data commits; want 500 and %d", ts.Rows, len(tabletest.CommitSpans(t, ts.Location)), before)
	}

	f.put(t, "live", true, "300ms", nil)
	var apiErr *client.APIError
	if _, err := f.c.StartRun(context.Background(), "live"); !errors.As(err, &apiErr) || apiErr.Status != http.StatusConflict {
		t.Fatalf("POST runs of a continuous pipeline: %v, want a 409", err)
	}
	if _, err := f.c.StartRun(context.Background(), "nope"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("POST runs of an unknown pipeline: %v, want a 404", err)
	}
}
