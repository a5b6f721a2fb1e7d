package maintenance_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/maintenance"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestSimulatedDay ingests a day of flushes into a table, as a table loop
// with flush_interval TRIBUTARY_DAY_FLUSH (10s unless set: 8,640 commits;
// 1s gives 86,400) would on a quiet topic, a fake clock moving by the
// flush interval at each commit, while a maintainer compacts it (more than
// 50 small files, the default; a target of 32 KiB so that the day's data
// makes about a hundred target-size files), with a checkpoint every 100
// seconds of the day (delta.checkpointInterval 10 at 10s, 100 at 1s).
// After the last commit the maintainer is left to settle: the table then
// has at most twice the ideal number of files (its bytes over the target),
// every (partition, offset) once, and delta-rs, DuckDB and Spark (with
// TRIBUTARY_SPARK) read the same rows. It takes minutes, so -short skips
// it; make test runs it on its own.
// A flush interval longer than 10s makes too small a day for the bar on
// files: its ideal count falls near the 50 small files a table may keep.
func TestSimulatedDay(t *testing.T) {
	if testing.Short() {
		t.Skip("a simulated day takes minutes; make test runs it without -short")
	}
	flush := 10 * time.Second
	if s := os.Getenv("TRIBUTARY_DAY_FLUSH"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			t.Fatalf("TRIBUTARY_DAY_FLUSH=%q: %v", s, err)
		}
		flush = d
	}
	const partitions, perPartition, minSmall, target = 4, 8, spec.DefaultAutoCompactMinFiles, 32 << 10
	const checkpointEvery = 100 * time.Second
	commits := int(24 * time.Hour / flush)

	f := maintained(t, maintenance.Options{Compact: true, MinSmallFiles: minSmall, TargetSize: target, Vacuum: true, CPUShare: 1})
	clk, dir, tb, in, st, m := f.clk, f.dir, f.tb, f.in, f.st, f.m
	// A checkpoint every 100 seconds of the day, as the README advises for
	// a table flushed every second: each checkpoint carries the day's
	// tombstones, and with the default interval of 10 a day of 1-second
	// flushes writes gigabytes of them.
	in.config = map[string]string{"delta.checkpointInterval": strconv.Itoa(max(1, int(checkpointEvery/flush)))}
	start := time.Now()
	for range commits {
		in.commit(partitions, perPartition)
		m.Committed()
		clk.add(flush)
	}
	ingested := time.Since(start)
	// Settled: few enough small files that no pass starts, twice in a row.
	var last spec.MaintenanceStatus
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		m.Committed()
		s := st.Snapshot()
		if s.SmallFiles <= minSmall && s == last {
			break
		}
		last = s
		if time.Now().After(deadline) {
			t.Fatalf("maintenance has not settled 5m after the last commit: %+v", s)
		}
	}
	files := tb.Files()
	var bytes int64
	for _, f := range files {
		bytes += f.Size
	}
	ideal := int((bytes + target - 1) / target)
	t.Logf("%d commits (flush %s) in %s, settled after %s; %d files of %d bytes (ideal %d); %+v",
		commits, flush, ingested.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), len(files), bytes, ideal, last)
	if len(files) > 2*ideal {
		t.Errorf("%d files after maintenance, more than twice the ideal %d", len(files), ideal)
	}

	// Every (partition, offset) once, read back through the table.
	seen := map[[2]int64]bool{}
	for _, f := range files {
		_, _, cols, n := tabletest.ReadFile(t, tb, f.Path)
		for i := range n {
			k := [2]int64{cols[0][i].Int64(), cols[1][i].Int64()}
			if seen[k] {
				t.Fatalf("partition %d offset %d is in the table twice", k[0], k[1])
			}
			seen[k] = true
		}
	}
	rowsPerPartition := int64(commits * perPartition)
	if want := partitions * int(rowsPerPartition); len(seen) != want {
		t.Fatalf("the table holds %d (partition, offset) pairs, want %d", len(seen), want)
	}
	for p := range int64(partitions) {
		for off := range rowsPerPartition {
			if !seen[[2]int64{p, off}] {
				t.Fatalf("partition %d offset %d is missing", p, off)
			}
		}
	}
	m.Stop()
	tb.Close()
	want := map[string]float64{"rows": float64(len(seen)), "distinct": float64(len(seen)),
		"sum": float64(partitions) * float64(rowsPerPartition*(rowsPerPartition-1)/2)}
	for reader, got := range readDay(t, dir) {
		g, ok := got.(map[string]any)
		if !ok {
			t.Errorf("%s: %v", reader, got)
			continue
		}
		for k, v := range want {
			if g[k] != v {
				t.Errorf("%s reads %s = %v, want %v", reader, k, g[k], v)
			}
		}
	}
}

// readDay runs testdata/read_day.py on the table in dir with the tool
// venv, and Spark when there is one (TRIBUTARY_SPARK, or .tools/spark);
// it skips the test without the venv.
func readDay(t *testing.T, dir string) map[string]any {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	python := filepath.Join(root, ".tools", "py", "bin", "python")
	if out, err := exec.Command(python, "-c", "import deltalake, duckdb").CombinedOutput(); err != nil {
		t.Skipf("no Python venv with deltalake and duckdb at %s: %v\n%s", python, err, out)
	}
	args := []string{filepath.Join("testdata", "read_day.py"), dir}
	spark := os.Getenv("TRIBUTARY_SPARK")
	if spark == "" {
		spark = filepath.Join(root, ".tools", "spark")
	}
	pythonPath := filepath.Join(root, "agent", "e2e", "testdata")
	if _, err := os.Stat(filepath.Join(spark, "jars")); err == nil {
		args = append(args, filepath.Join(spark, "jars"))
		pythonPath += string(os.PathListSeparator) + filepath.Join(spark, "python")
	} else {
		t.Logf("no Spark at %s: delta-rs and DuckDB only", spark)
	}
	cmd := exec.Command(python, args...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+pythonPath, "SPARK_LOCAL_IP=127.0.0.1")
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = ee.Stderr
		}
		t.Fatalf("read_day.py: %v\n%s\n%s", err, out, stderr)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("read_day.py: %v\n%s", err, out)
	}
	t.Logf("readers: %s", out)
	return got
}
