package table_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
)

// A commit records a partition's leader epoch in its txn action, in a
// field of the agent's own; the snapshot has it, also from a checkpoint;
// a later txn without one drops it; and delta-rs and DuckDB read the
// table, with its txns, as if the field were not there.
func TestTxnLeaderEpoch(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	mustCommit(t, tb, table.Commit{Schema: testFields, Files: []table.AddFile{writeFile(t, tb, 0, 2)},
		Txns: map[string]int64{"t/0": 2, "t/1": 5}, Epochs: map[string]int32{"t/0": 3}})
	if got := tb.Snapshot().Epochs; !reflect.DeepEqual(got, map[string]int32{"t/0": 3}) {
		t.Fatalf("epochs %v, want t/0: 3", got)
	}
	var line string
	for _, l := range readLog(t, dir, 0) {
		if strings.Contains(l, `"appId":"t/0"`) {
			line = l
		}
	}
	if !strings.Contains(line, `"tributaryLeaderEpoch":3`) {
		t.Errorf("the txn of t/0 is %s, want its leader epoch", line)
	}
	// A txn without an epoch drops the one before it.
	mustCommit(t, tb, table.Commit{Txns: map[string]int64{"t/1": 6}, From: map[string]int64{"t/1": 5}, Epochs: map[string]int32{"t/1": 0}})
	mustCommit(t, tb, table.Commit{Txns: map[string]int64{"t/0": 4}, From: map[string]int64{"t/0": 2}})
	want := map[string]int32{"t/1": 0}
	if got := tb.Snapshot().Epochs; !reflect.DeepEqual(got, want) {
		t.Fatalf("epochs %v, want %v", got, want)
	}
	// Through a checkpoint (every tenth version).
	for v := int64(3); v <= 10; v++ {
		mustCommit(t, tb, table.Commit{Files: []table.AddFile{writeFile(t, tb, 0, 1)}, Txns: map[string]int64{"t/1": 4 + v},
			From: map[string]int64{"t/1": 3 + v}, Epochs: map[string]int32{"t/1": int32(v)}})
	}
	tb.Close()
	removeLog(t, dir, 0, 10)
	if got := openTable(t, dir, table.Options{}).Snapshot().Epochs; !reflect.DeepEqual(got, map[string]int32{"t/1": 10}) {
		t.Errorf("epochs from the checkpoint %v, want t/1: 10", got)
	}

	python := toolPython(t)
	const script = `
import os
import sys, deltalake, duckext
dt = deltalake.DeltaTable(sys.argv[1])
assert dt.version() == 10, dt.version()
assert len(dt.to_pyarrow_table()) == 10, len(dt.to_pyarrow_table())
assert duckext.connect().sql(f"SELECT count(*) FROM delta_scan('{sys.argv[1]}')").fetchone()[0] == 10
print("ok", flush=True)
# Skip the interpreter's teardown, where delta-rs's runtime threads have
# been seen to abort the process after the work was done.
os._exit(0)
`
	if out, err := scriptCommand(t, python, script, dir).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("readers: %v\n%s", err, out)
	}
}
