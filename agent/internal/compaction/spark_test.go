package compaction_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/compaction"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
)

// sparkSession is a running testdata/spark_optimize.py: one Spark session
// taking commands on a table.
type sparkSession struct {
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *bytes.Buffer
}

// startSpark starts Spark with Delta beside the table in dir, and stops it
// when the test ends. It skips the test in short mode, and without Spark
// (TRIBUTARY_SPARK, or .tools/spark from tools/tools.sh spark) or the tool
// venv.
func startSpark(t *testing.T, dir string) *sparkSession {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Spark")
	}
	spark := os.Getenv("TRIBUTARY_SPARK")
	if spark == "" {
		spark, _ = filepath.Abs("../../../.tools/spark")
	}
	if _, err := os.Stat(filepath.Join(spark, "jars")); err != nil {
		t.Skipf("no Spark: run tools/tools.sh spark, or set TRIBUTARY_SPARK: %v", err)
	}
	python := toolPython(t)
	helpers, err := filepath.Abs("../../e2e/testdata")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, filepath.Join("testdata", "spark_optimize.py"), filepath.Join(spark, "jars"), t.TempDir(), dir)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(spark, "python")+string(os.PathListSeparator)+helpers, "SPARK_LOCAL_IP=127.0.0.1")
	s := &sparkSession{stderr: &bytes.Buffer{}}
	cmd.Stderr = s.stderr
	if s.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.in.Close()
		_ = cmd.Wait()
	})
	s.out = bufio.NewScanner(stdout)
	for s.out.Scan() {
		if s.out.Text() == "ready" {
			return s
		}
	}
	t.Fatalf("Spark did not start: %v\n%s", s.out.Err(), s.stderr)
	return nil
}

// do sends Spark one command and returns its answer.
func (s *sparkSession) do(t *testing.T, command string) map[string]any {
	t.Helper()
	if _, err := io.WriteString(s.in, command+"\n"); err != nil {
		t.Fatalf("Spark %s: %v\n%s", command, err, s.stderr)
	}
	for s.out.Scan() {
		line := s.out.Text()
		if !strings.HasPrefix(line, "{") {
			continue // Spark's own output
		}
		var out map[string]any
		if err := json.Unmarshal([]byte(line), &out); err != nil {
			t.Fatalf("Spark %s: %v: %s", command, err, line)
		}
		return out
	}
	t.Fatalf("Spark %s: no answer: %v\n%s", command, s.out.Err(), s.stderr)
	return nil
}

// TestRunBesideSparkOptimize has Spark run OPTIMIZE on a table, one the
// agent compacted before (its rewrite entries and checkpoints in the log),
// while the agent compacts it again: Spark's OPTIMIZE lands while the
// agent writes its first bin, and the agent gives way. Every row is there
// once after, as Spark, delta-rs and DuckDB read it.
func TestRunBesideSparkOptimize(t *testing.T) {
	dir := t.TempDir()
	tb := smallFilesTable(t, dir, "id BIGINT, a BIGINT, note STRING", 30)
	fields := tb.Snapshot().Schema
	target := totalSize(tb.Files()) / 3
	first, err := compaction.Run(context.Background(), tb, compaction.Options{TargetSize: target})
	if err != nil || first.Commits < 2 {
		t.Fatalf("first pass: %+v, %v", first, err)
	}
	for range 30 {
		ingest(t, tb, fields, 5, table.Commit{})
	}

	spark := startSpark(t, dir)
	var optimized map[string]any
	pace := func(context.Context, time.Duration) error {
		if optimized == nil {
			optimized = spark.do(t, "optimize")
		}
		return nil
	}
	res, err := compaction.Run(context.Background(), tb, compaction.Options{TargetSize: target, Pace: pace})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Spark: %v; the agent: %+v", optimized, res)
	if optimized["optimized"] != true || res.GaveWay == nil || res.Commits != 0 {
		t.Errorf("want Spark's OPTIMIZE to land and the agent to give way: Spark %v, agent %+v", optimized, res)
	}
	checkOnce(t, readAll(t, tb), 300)

	want := map[string]any{"rows": 300.0, "distinct": 300.0, "sum": 299 * 300 / 2.0}
	checkEngine(t, map[string]any{"spark": spark.do(t, "read")}, "spark", want, "")
	tb.Close()
	out := readEngines(t, dir)
	checkEngine(t, out, "duckdb", want, "")
	checkEngine(t, out, "deltars", want, "")
}
