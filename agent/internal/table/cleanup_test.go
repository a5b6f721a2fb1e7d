package table_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
)

// TestLogCleanup commits versions 0 to 29 (checkpoints at 10 and 20), ages
// the entries 0 to 14 and the checkpoint at 10, then commits version 30,
// whose checkpoint triggers log cleanup: everything before the newest
// checkpoint whose commit is older than delta.logRetentionDuration goes,
// that checkpoint and everything after it stay, and the table opens as
// before.
func TestLogCleanup(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		name   string
		config string
		age    time.Duration // of versions 0 to 14
		ahead  time.Duration // of the clock
		cut    int           // the first version kept
	}{
		{"default retention", `{}`, 40 * day, 0, 10},
		{"within the default retention", `{}`, 20 * day, 0, 0},
		{"retention set by another engine", `{"delta.logRetentionDuration":"interval 2 days"}`, 3 * day, 0, 10},
		{"cleanup turned off", `{"delta.enableExpiredLogCleanup":"false"}`, 40 * day, 0, 0},
		{"everything old: the newest checkpoint stays", `{}`, 0, 100 * day, 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := writeForeignTable(t, `{"minReaderVersion":1,"minWriterVersion":2}`, tt.config)
			now := time.Now().Add(tt.ahead)
			tb := openTable(t, dir, table.Options{Now: func() time.Time { return now }})
			appendCommits(t, tb, 29)
			for v := range 15 {
				touch(t, logFile(dir, logName(v)), time.Now().Add(-tt.age))
			}
			touch(t, logFile(dir, checkpointName(10)), time.Now().Add(-tt.age))
			appendCommits(t, tb, 1)
			want := tb.Snapshot()
			for v := range 31 {
				if kept := v >= tt.cut; exists(logFile(dir, logName(v))) != kept {
					t.Errorf("entry %d kept: %t, want %t", v, !kept, kept)
				}
				if v%10 == 0 && v > 0 {
					if kept := v >= tt.cut; exists(logFile(dir, checkpointName(v))) != kept {
						t.Errorf("checkpoint %d kept: %t, want %t", v, !kept, kept)
					}
				}
			}
			tb.Close()
			if got := openTable(t, dir, table.Options{}).Snapshot(); !reflect.DeepEqual(got, want) {
				t.Errorf("snapshot after cleanup =\n%+v, want\n%+v", got, want)
			}
		})
	}
}
