package table_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
)

// TestCommitConfiguration: keys a commit sets land in the table
// configuration, survive a reopen and a checkpoint, and a commit that
// changes nothing writes no metaData action.
func TestCommitConfiguration(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tbl")
	tb := openTable(t, dir, table.Options{})
	mustCommit(t, tb, table.Commit{Schema: testFields, Txns: map[string]int64{"tbl/a/0": 0},
		Configuration: map[string]string{"tributary.topicId.a": "id-1"}})
	mustCommit(t, tb, table.Commit{Txns: map[string]int64{"tbl/a/0": 0},
		From: map[string]int64{"tbl/a/0": 0}, Configuration: map[string]string{"tributary.topicId.a": "id-1"}})
	for _, line := range readLog(t, dir, 1) {
		if strings.HasPrefix(line, `{"metaData"`) {
			t.Fatalf("an unchanged configuration wrote a metaData action: %v", line)
		}
	}
	mustCommit(t, tb, table.Commit{Configuration: map[string]string{"tributary.topicId.b": "id-2"}})
	for next := int64(1); next <= 8; next++ { // past the default checkpoint interval
		mustCommit(t, tb, table.Commit{Txns: map[string]int64{"tbl/a/0": next},
			From: map[string]int64{"tbl/a/0": next - 1}})
	}
	tb.Close()
	s := openTable(t, dir, table.Options{}).Snapshot()
	if s.Configuration["tributary.topicId.a"] != "id-1" || s.Configuration["tributary.topicId.b"] != "id-2" ||
		s.Configuration["tributary.createdBy"] != "tributary-agent" {
		t.Fatalf("configuration after reopen: %v", s.Configuration)
	}
	if _, err := openTable(t, filepath.Join(t.TempDir(), "x"), table.Options{}).Commit(table.Commit{
		Schema: testFields, Configuration: map[string]string{"tributary.createdBy": "someone"}}); err == nil {
		t.Fatal("a commit may not overwrite the table's creator")
	}
}
