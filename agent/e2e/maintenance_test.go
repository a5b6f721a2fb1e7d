//go:build e2e

package e2e

import (
	"os/exec"
	"path/filepath"
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
