package table_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
)

// TestUnsupportedFeatures: a table whose protocol asks for a version or a
// feature this package does not implement fails with UnsupportedFeatureError
// naming it and the log file, whether the table was like that when opened
// or another engine changed it while the agent ran; never as a corrupt log
// (which the pipeline retries) and never silently.
func TestUnsupportedFeatures(t *testing.T) {
	tests := []struct{ name, protocol, want string }{
		{"reader version 4", `{"minReaderVersion":4,"minWriterVersion":7,"readerFeatures":[],"writerFeatures":[]}`, "reader version 4"},
		{"writer version 8", `{"minReaderVersion":1,"minWriterVersion":8}`, "writer version 8"},
		{"writer version 4", `{"minReaderVersion":1,"minWriterVersion":4}`, "writer version 4 (CHECK constraints, change data feed and generated columns)"},
		{"deletion vectors", `{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors"]}`, "table feature deletionVectors"},
		{"writer version 6", `{"minReaderVersion":2,"minWriterVersion":6}`, "writer version 6 (CHECK constraints, change data feed and generated columns, column mapping, identity columns)"},
		{"V2 checkpoints", `{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["v2Checkpoint"],"writerFeatures":["v2Checkpoint"]}`, "table feature v2Checkpoint"},
		{"an unknown reader feature", `{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["timestampNtz","fancyNewThing"],"writerFeatures":["timestampNtz","fancyNewThing"]}`, "table feature fancyNewThing"},
		{"a writer feature", `{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["appendOnly","domainMetadata"]}`, "table feature domainMetadata"},
	}
	check := func(t *testing.T, err error, want, file string) {
		t.Helper()
		var unsupported *table.UnsupportedFeatureError
		if !errors.As(err, &unsupported) || unsupported.Feature != want || !strings.HasSuffix(unsupported.File, file) || errors.Is(err, table.ErrCorruptLog) {
			t.Fatalf("error = %v, want UnsupportedFeatureError for %q in %s", err, want, file)
		}
		for _, s := range []string{want, file, "another destination table"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q does not mention %q", err, s)
			}
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := writeForeignTable(t, tt.protocol, `{}`)
			_, err := table.Open(dir, table.Options{})
			check(t, err, tt.want, logName(0))
			_, err = table.ReadSnapshot(dir)
			check(t, err, tt.want, logName(0))

			// Another engine upgrades a table the agent is writing.
			dir = t.TempDir()
			tb := openTable(t, dir, table.Options{})
			appendCommits(t, tb, 2)
			writeLog(t, dir, 2, `{"protocol":`+tt.protocol+`}`)
			_, err = tb.Commit(table.Commit{Txns: map[string]int64{"t/b/0": 1}})
			check(t, err, tt.want, logName(2))
			if v := tb.Snapshot().Version; v != 1 {
				t.Errorf("the table's state moved to version %d", v)
			}
		})
	}
}

// TestSupportedFeatures: the protocols this package writes, and the
// legacy versions, open.
func TestSupportedFeatures(t *testing.T) {
	for _, p := range []string{
		`{"minReaderVersion":1,"minWriterVersion":1}`,
		`{"minReaderVersion":1,"minWriterVersion":2}`,
		`{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["appendOnly","invariants"]}`,
		`{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["timestampNtz"],"writerFeatures":["appendOnly","invariants","timestampNtz"]}`,
		`{"minReaderVersion":2,"minWriterVersion":5}`,
		`{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["columnMapping"],"writerFeatures":["columnMapping"]}`,
		`{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["typeWidening"],"writerFeatures":["typeWidening"]}`,
	} {
		dir := writeForeignTable(t, p, `{}`)
		appendCommits(t, openTable(t, dir, table.Options{}), 1)
	}
}

// TestLegacyWriterVersion5: writer version 5 implies CHECK constraints, the
// change data feed and generated columns besides column mapping; a table
// that uses one of them is refused.
func TestLegacyWriterVersion5(t *testing.T) {
	for _, tt := range []struct{ name, config, want string }{
		{"CHECK constraint", `{"delta.constraints.positive":"id > 0"}`, "writer version 5 with CHECK constraints (delta.constraints.positive)"},
		{"change data feed", `{"delta.enableChangeDataFeed":"true"}`, "writer version 5 with the change data feed (delta.enableChangeDataFeed)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeForeignTable(t, `{"minReaderVersion":2,"minWriterVersion":5}`, tt.config)
			_, err := table.Open(dir, table.Options{})
			var unsupported *table.UnsupportedFeatureError
			if !errors.As(err, &unsupported) || unsupported.Feature != tt.want || !strings.HasSuffix(unsupported.File, logName(0)) {
				t.Fatalf("error = %v, want UnsupportedFeatureError for %q", err, tt.want)
			}
		})
	}
}
