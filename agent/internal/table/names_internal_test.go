package table

import (
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
)

// TestLocalTempNames checks that the temporary names of the local store are
// the ones garbage collection and Open recognise.
func TestLocalTempNames(t *testing.T) {
	data := newDataFileName("snappy")
	if got := storage.TempName(data); got != storage.TempDir+"/"+data+".tmp" || !isTempDataFile(strings.TrimPrefix(got, storage.TempDir+"/")) {
		t.Errorf("TempName(%s) = %s, want %s/%[1]s.tmp", data, got, storage.TempDir)
	}
	for _, name := range []string{logPath(3), logDir + "/" + checkpointName(10), logDir + "/" + lastCheckpointFile, firstFileMark} {
		got := storage.TempName(name)
		base, ok := strings.CutPrefix(got, logDir+"/")
		if !ok || !isLogTemp(base) {
			t.Errorf("TempName(%s) = %s: not a temporary log file name", name, got)
		}
	}
}
