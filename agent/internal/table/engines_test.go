package table_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
)

// copyDir copies the files of folder src (one level of subfolders) into a
// new temporary folder.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestOtherEnginesCheckpoints opens tables Spark and delta-rs wrote,
// compacted and checkpointed, whose entries before the checkpoint are gone
// (see testdata/make_fixtures.py): the state comes from the checkpoint and
// the entries after it, the agent resumes at the recorded offset, and its
// own checkpoint, at the table's interval, carries the state on.
func TestOtherEnginesCheckpoints(t *testing.T) {
	tests := []struct {
		name     string
		version  int64
		interval int
		config   map[string]string
	}{
		{"spark-checkpoint", 5, 3, map[string]string{"delta.checkpointInterval": "3"}},
		{"deltars-checkpoint", 4, 10, map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyDir(t, filepath.Join("testdata", tt.name))
			tb := openTable(t, dir, table.Options{})
			s := tb.Snapshot()
			want := table.Snapshot{Version: tt.version, Schema: testFields, Txns: map[string]int64{"t/a/0": 12},
				NumFiles: 1, NumRows: 12, Counters: map[string]int64{}, Configuration: tt.config}
			if !reflect.DeepEqual(s, want) {
				t.Fatalf("snapshot =\n%+v, want\n%+v", s, want)
			}
			// Commit up to the agent's own checkpoint; then only it and
			// the entries after it are needed.
			next := (int(tt.version)/tt.interval + 1) * tt.interval
			appendCommits(t, tb, next-int(tt.version))
			if !exists(logFile(dir, checkpointName(next))) {
				t.Fatalf("no checkpoint at version %d", next)
			}
			want = tb.Snapshot()
			if want.NumRows != int64(12+2*(next-int(tt.version))) || want.Txns["t/a/0"] != want.NumRows {
				t.Errorf("snapshot after the agent's commits = %+v", want)
			}
			tb.Close()
			for v := range next {
				os.Remove(logFile(dir, logName(v)))
			}
			if got := openTable(t, dir, table.Options{}).Snapshot(); !reflect.DeepEqual(got, want) {
				t.Errorf("snapshot from the agent's checkpoint =\n%+v, want\n%+v", got, want)
			}
		})
	}
}

// runDeltaRS runs testdata/deltars.py with args and decodes the JSON it
// prints into out.
func runDeltaRS(t *testing.T, python string, out any, args ...string) {
	t.Helper()
	stdout, err := exec.Command(python, append([]string{"testdata/deltars.py"}, args...)...).Output()
	if err == nil {
		err = json.Unmarshal(stdout, out)
	}
	if err != nil {
		var stderr []byte
		if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
			stderr = exit.Stderr
		}
		t.Fatalf("deltars.py %v: %v\n%s%s", args, err, stdout, stderr)
	}
}

// TestDeltaRSMaintenance has delta-rs do to a table of the agent what a
// user would between two runs: compact it (OPTIMIZE: removes, and an add
// with dataChange false), checkpoint it, clean up its log (the entries
// older than the retention, aged here) and vacuum it. The agent then opens
// it from delta-rs's checkpoint with the same rows, offsets and counters,
// commits more, and delta-rs reads the result. Skipped without the tool
// venv.
func TestDeltaRSMaintenance(t *testing.T) {
	python := toolPython(t)
	deltars := func(args ...string) map[string]int64 {
		t.Helper()
		var res map[string]int64
		runDeltaRS(t, python, &res, args...)
		return res
	}

	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	appendCommits(t, tb, 25) // versions 0 to 24, checkpoints at 10 and 20
	before := tb.Snapshot()
	tb.Close()
	for v := range 15 {
		touch(t, logFile(dir, logName(v)), time.Now().Add(-40*24*time.Hour))
	}
	// Version 25 is the compaction, 26 and 27 the vacuum's start and end.
	if got := deltars("maintain", dir); got["version"] != 27 || got["vacuumed"] != 25 {
		t.Fatalf("delta-rs maintenance: %v, want version 27 and 25 files vacuumed", got)
	}
	if !exists(logFile(dir, checkpointName(25))) || exists(logFile(dir, logName(9))) || !exists(logFile(dir, logName(10))) {
		t.Fatal("delta-rs did not checkpoint version 25 and clean up the entries before 10")
	}

	tb = openTable(t, dir, table.Options{})
	want := before
	want.Version, want.NumFiles = 27, 1
	if got := tb.Snapshot(); !reflect.DeepEqual(got, want) {
		t.Fatalf("snapshot after delta-rs =\n%+v, want\n%+v", got, want)
	}
	appendCommits(t, tb, 3) // versions 28 to 30, checkpoint at 30
	if n, err := tb.CollectGarbage(); err != nil || n != 0 {
		t.Errorf("CollectGarbage = %d, %v; want nothing to collect", n, err)
	}
	tb.Close()
	read := map[string]int64{"version": 30, "rows": 56, "files": 4, "txn": 56}
	if got := deltars("read", dir, "t/a/0"); !reflect.DeepEqual(got, read) {
		t.Errorf("delta-rs reads %v, want %v", got, read)
	}
	if got := openTable(t, dir, table.Options{}).Snapshot(); got.Version != 30 || got.NumRows != 56 || got.Txns["t/a/0"] != 56 || got.Counters["numCorruptRecords"] != 28 {
		t.Errorf("snapshot at the end = %+v", got)
	}
}
