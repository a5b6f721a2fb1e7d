package table_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
)

// newLoggedTable commits one file of 3 rows at version 0 and returns the
// folder and the file.
func newLoggedTable(t *testing.T) (string, table.AddFile) {
	t.Helper()
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	add := writeFile(t, tb, 0, 3)
	mustCommit(t, tb, table.Commit{Schema: testFields, Files: []table.AddFile{add}, Txns: map[string]int64{"t/a/0": 3}})
	tb.Close()
	return dir, add
}

func writeLog(t *testing.T, dir string, v int, content string) string {
	t.Helper()
	name := filepath.Join(dir, "_delta_log", logName(v))
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestReplayRefusesCorruptLog(t *testing.T) {
	tests := []struct {
		name    string
		version int
		entry   string
		want    string
	}{
		{"truncated entry", 1, `{"txn":{"appId":"t/a/0","version":5}}` + "\n" + `{"add":{"path":"x.parquet","partitionVal`, "line 2"},
		{"not an object", 1, `[1,2]`, "not a JSON object"},
		{"two actions on a line", 1, `{"txn":{"appId":"a","version":1},"add":{"path":"x.parquet"}}`, "2 actions"},
		{"bad stats", 1, `{"add":{"path":"x.parquet","stats":"{\"numRecords\":"}}`, "stats"},
		{"negative stats", 1, `{"add":{"path":"x.parquet","stats":"{\"numRecords\":-1}"}}`, "negative"},
		{"bad schema", 1, `{"metaData":{"id":"x","format":{"provider":"parquet"},"schemaString":"{\"type\":\"int\"}"}}`, "schemaString"},
		{"not parquet", 1, `{"metaData":{"id":"x","format":{"provider":"orc"},"schemaString":"{}"}}`, "orc"},
		{"txn without appId", 1, `{"txn":{"version":1}}`, "appId"},
		{"gap", 2, `{"txn":{"appId":"a","version":1}}`, "version 1 is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, _ := newLoggedTable(t)
			name := writeLog(t, dir, tt.version, tt.entry)
			_, err := table.Open(dir, table.Options{})
			if !errors.Is(err, table.ErrCorruptLog) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open error = %v, want ErrCorruptLog mentioning %q", err, tt.want)
			}
			if tt.version == 1 && !strings.Contains(err.Error(), name) {
				t.Errorf("error %q does not name the file %s", err, name)
			}
		})
	}
	t.Run("first entry without metaData", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
			t.Fatal(err)
		}
		writeLog(t, dir, 0, `{"txn":{"appId":"a","version":1}}`)
		if _, err := table.Open(dir, table.Options{}); !errors.Is(err, table.ErrCorruptLog) {
			t.Errorf("Open error = %v, want ErrCorruptLog", err)
		}
	})
}

func TestReplayOtherWriters(t *testing.T) {
	dir, add := newLoggedTable(t)
	before, err := table.ReadSnapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Another engine compacts: it removes our file, adds one without stats,
	// writes actions this package does not know, and a commitInfo whose
	// metrics are not counted.
	writeLog(t, dir, 1, strings.Join([]string{
		`{"commitInfo":{"timestamp":1,"operation":"OPTIMIZE","engineInfo":{"v":1},"operationMetrics":{"numOutputRows":"99","weird":1.5}}}`,
		`{"remove":{"path":"` + add.Path + `","deletionTimestamp":1,"dataChange":false}}`,
		``,
		`{"add":{"path":"other%20file.parquet","partitionValues":{},"size":1,"modificationTime":1,"dataChange":false}}`,
		`{"domainMetadata":{"domain":"x","configuration":"{}","removed":false}}`,
		`{"cdc":{"path":"_change_data/x.parquet","size":1}}`,
	}, "\n"))
	s, err := table.ReadSnapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := before
	want.Version, want.NumFiles, want.NumRows = 1, 1, 0
	if !reflect.DeepEqual(s, want) {
		t.Errorf("snapshot = %+v, want %+v", s, want)
	}
}
