package table_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
)

// An offset goes back only for the application ids a commit rewinds (a
// re-created topic); the commit's parameters land in its commitInfo.
func TestCommitRewindsAndParameters(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	if _, err := tb.Commit(table.Commit{Schema: testFields, Txns: map[string]int64{"t/0": 50}}); err != nil {
		t.Fatal(err)
	}
	back := table.Commit{Txns: map[string]int64{"t/0": 3}, From: map[string]int64{"t/0": 50}}
	if _, err := tb.Commit(back); err == nil || !strings.Contains(err.Error(), "never move backwards") {
		t.Fatalf("a commit moving back without a rewind: %v", err)
	}
	back.Rewinds = []string{"t/0"}
	back.Parameters = map[string]string{"why": "re-created"}
	v, err := tb.Commit(back)
	if err != nil {
		t.Fatal(err)
	}
	if got := tb.Snapshot().Txns["t/0"]; got != 3 {
		t.Errorf("t/0 is at %d after the rewind, want 3", got)
	}
	entry, err := os.ReadFile(filepath.Join(dir, "_delta_log", "00000000000000000001.json"))
	if err != nil || v != 1 {
		t.Fatalf("version %d: %v", v, err)
	}
	if !strings.Contains(string(entry), `"operationParameters":{"outputMode":"Append","why":"re-created"}`) {
		t.Errorf("the entry's commitInfo lacks the parameters:\n%s", entry)
	}
}
