package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestManagerRefusesNewerTableFormat: a table that a newer agent gave a
// newer tributary format while this one was stopped fails on restart,
// naming the table and both formats, and nothing is appended to it.
func TestManagerRefusesNewerTableFormat(t *testing.T) {
	var version int64
	status, dir := restartAfterEntry(t, 20, func(dir string, v int64) []byte {
		version = v
		// What a newer agent would write: a metaData action with a newer
		// format.
		first, err := os.ReadFile(filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", 0)))
		if err != nil {
			t.Fatal(err)
		}
		var meta string
		for line := range strings.Lines(string(first)) {
			if strings.HasPrefix(line, `{"metaData"`) {
				meta = strings.Replace(line, `"tributary.format":"1"`, `"tributary.format":"2"`, 1)
			}
		}
		return []byte(`{"commitInfo":{"timestamp":1,"operation":"SET TBLPROPERTIES"}}` + "\n" + meta)
	})
	waitFor(t, 20*time.Second, "the table to fail", func() bool { return status().State == spec.StateFailed })
	for _, want := range []string{dir, `tributary format "2"`, "format 1 and older", "upgrade this agent"} {
		if !strings.Contains(status().LastError, want) {
			t.Errorf("last error %q lacks %q", status().LastError, want)
		}
	}
	if after, err := table.ReadSnapshot(dir); err != nil || after.NumRows != 10 || after.Version != version+1 {
		t.Errorf("the table after the refusal: %+v, %v; want 10 rows at version %d", after, err, version+1)
	}
}
