//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestOtherEngineMaintenance stops the agent, lets delta-rs do what a data
// platform does to a table between runs (compact it, checkpoint it, clean up
// its log and vacuum the files the compaction replaced), then starts the
// agent again: it resumes at the offsets the log recorded, and every record,
// before and after, is in the table once.
func TestOtherEngineMaintenance(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	topic := ingestTopic(t, a, "maint", 100)
	for want := int64(200); want <= 400; want += 100 { // several files to compact
		python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "100")
		a.waitRows("maint", 0, want, time.Minute)
	}
	st := a.waitRows("maint", 0, 400, time.Minute)
	a.stop()

	// The table package's delta-rs script; the e2e tests share it.
	script := filepath.Join("..", "internal", "table", "testdata", "deltars.py")
	if out, err := exec.Command(env.python, script, "maintain", st.Location).CombinedOutput(); err != nil {
		t.Fatalf("delta-rs maintenance: %v\n%s", err, out)
	} else {
		t.Logf("delta-rs maintenance: %s", out)
	}

	a.start()
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "100")
	a.waitRows("maint", 0, 500, time.Minute)
	checkTable(t, st.Location, "--count", "500", "--exactly-once", "--orphans-by-agent")
}

// TestSparkMaintainsLiveTable has Spark maintain a table while the agent
// runs: it sets delta.checkpointInterval = 1 and runs OPTIMIZE, so Spark
// checkpoints and Hadoop's local file system leaves its checksum side file
// of _last_checkpoint. The agent's next commits follow Spark's (and
// checkpoint too, rewriting _last_checkpoint): Spark's file system must
// then read _last_checkpoint without a checksum error (a stale side file
// makes every Spark read of the log sleep and retry), and every record is in
// the table once for Spark, delta-rs and DuckDB.
func TestSparkMaintainsLiveTable(t *testing.T) {
	t.Parallel()
	spark := sparkDir(t)
	a := startAgent(t, t.TempDir())
	topic := ingestTopic(t, a, "live", 100)
	for want := int64(200); want <= 300; want += 100 { // files for OPTIMIZE to merge
		python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "100")
		a.waitRows("live", 0, want, time.Minute)
	}
	st := a.waitRows("live", 0, 300, time.Minute)

	sync := t.TempDir()
	ready, goFile := filepath.Join(sync, "ready"), filepath.Join(sync, "go")
	run := startSpark(t, spark, "check_spark.py", "maintain", "--jars", filepath.Join(spark, "jars"),
		"--table", st.Location, "--ready", ready, "--go", goFile, "--count", "400")
	var sparkVersion int64
	// The other tests' Spark sessions run first, one at a time: the
	// deadline counts from this one's start.
	<-run.started
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		b, err := os.ReadFile(ready)
		if err == nil && len(b) > 0 {
			if sparkVersion, err = strconv.ParseInt(string(b), 10, 64); err != nil {
				t.Fatalf("ready file: %v", err)
			}
			break
		}
		select {
		case <-run.done:
			run.wait()
			t.Fatal("Spark ended before it was ready")
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("Spark not ready after 5m")
		}
	}

	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "100")
	a.waitRows("live", 0, 400, time.Minute)
	// With delta.checkpointInterval = 1 the agent checkpoints each commit.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		var last struct {
			Version int64 `json:"version"`
		}
		b, err := os.ReadFile(filepath.Join(st.Location, "_delta_log", "_last_checkpoint"))
		if err == nil && json.Unmarshal(b, &last) == nil && last.Version > sparkVersion {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent did not checkpoint after Spark's version %d: _last_checkpoint %s (%v)", sparkVersion, b, err)
		}
	}
	if err := os.WriteFile(goFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	run.wait()
	checkTable(t, st.Location, "--count", "400", "--exactly-once")
}

// TestAutoCompaction has the agent compact a table it ingests in small
// flushes (auto_compact_min_files = 5): the status and /metrics say what it
// did, the table ends with fewer files than it was written in, and every
// record is in it once for delta-rs, DuckDB and pyarrow. A pipeline with
// auto_compact = false leaves its files as they are.
func TestAutoCompaction(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	topic := uniqueName("e2e-compact")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "0")
	ctx := context.Background()
	c := a.client()
	if _, err := c.PutConnection(ctx, &spec.Connection{Name: "compact", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	off := false
	pipeline := func(name string, compact *bool) *spec.Pipeline {
		return &spec.Pipeline{
			Name: name, Connection: "compact", DestinationCatalog: "main", DestinationSchema: "e2e", FlushInterval: "200ms",
			AutoCompact: compact, AutoCompactMinFiles: 5,
			Tables: []spec.Table{{
				DestinationTable: name,
				ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
					Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest,
				}},
				TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"},
			}},
		}
	}
	for _, p := range []*spec.Pipeline{pipeline("compacted", nil), pipeline("left", &off)} {
		if _, err := c.PutPipeline(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	const batches, per = 12, 50
	for i := 1; i <= batches; i++ { // a flush, and so a file, per batch
		python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", strconv.Itoa(per))
		a.waitRows("compacted", 0, int64(i*per), time.Minute)
		a.waitRows("left", 0, int64(i*per), time.Minute)
	}
	st, ok := a.pollTable("compacted", 0, time.Minute, func(_ *spec.PipelineStatus, ts spec.TableStatus) bool {
		return ts.Maintenance != nil && ts.Maintenance.Compactions > 0 && ts.Maintenance.SmallFiles <= 5
	})
	if !ok {
		t.Fatalf("no compaction: status %+v\nagent log:\n%s", st, a.log())
	}
	t.Logf("maintenance: %+v", *st.Maintenance)
	metrics := a.metrics()
	for _, series := range []string{"tributary_table_compactions_total{", "tributary_table_small_files{"} {
		if !strings.Contains(metrics, series) {
			t.Errorf("/metrics has no %s series", series)
		}
	}
	left := a.waitRows("left", 0, batches*per, time.Minute)
	if left.Maintenance != nil && left.Maintenance.Compactions != 0 {
		t.Errorf("auto_compact = false compacted: %+v", *left.Maintenance)
	}
	a.stop()
	compacted, err := table.ReadSnapshot(st.Location)
	if err != nil {
		t.Fatal(err)
	}
	uncompacted, err := table.ReadSnapshot(left.Location)
	if err != nil {
		t.Fatal(err)
	}
	if compacted.NumFiles >= uncompacted.NumFiles || uncompacted.NumFiles < batches {
		t.Errorf("%d files compacted, %d not: compaction did not reduce them", compacted.NumFiles, uncompacted.NumFiles)
	}
	checkTable(t, st.Location, "--count", strconv.Itoa(batches*per), "--exactly-once")
	checkTable(t, left.Location, "--count", strconv.Itoa(batches*per), "--exactly-once")
}
