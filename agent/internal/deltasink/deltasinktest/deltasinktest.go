// Package deltasinktest holds what tests share to read what the Delta
// table writer (package deltasink) wrote past its own reader: the rows of
// a dirty records table and the data-loss gaps a table's log records.
// Tests of the runners (pipeline, fanout) use it; no other code does.
package deltasinktest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// DirtyRow is a row of the dirty records table.
type DirtyRow struct {
	Key       []byte `parquet:"key,optional"`
	Value     []byte `parquet:"value,optional"`
	Topic     string `parquet:"topic,optional"`
	Partition int32  `parquet:"partition,optional"`
	Offset    int64  `parquet:"offset,optional"`
	Table     string `parquet:"table,optional"`
	Error     string `parquet:"error,optional"`
	ErrorTime int64  `parquet:"error_time,optional"`
}

// LoggedGaps returns the gaps the commitInfo of the log entries of the
// table at dir record.
func LoggedGaps(t *testing.T, dir string) []spec.DataLossGap {
	t.Helper()
	entries, err := filepath.Glob(filepath.Join(dir, "_delta_log", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var gaps []spec.DataLossGap
	for _, e := range entries {
		b, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			var a struct {
				CommitInfo *struct {
					OperationParameters map[string]string `json:"operationParameters"`
				} `json:"commitInfo"`
			}
			if json.Unmarshal([]byte(line), &a) != nil || a.CommitInfo == nil || a.CommitInfo.OperationParameters[deltasink.ParamDataLoss] == "" {
				continue
			}
			var in []spec.DataLossGap
			if err := json.Unmarshal([]byte(a.CommitInfo.OperationParameters[deltasink.ParamDataLoss]), &in); err != nil {
				t.Fatalf("%s: %v", e, err)
			}
			gaps = append(gaps, in...)
		}
	}
	return gaps
}
