//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
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
