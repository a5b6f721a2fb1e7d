package table

import (
	"strings"
	"testing"
)

// TestLocalTempNames checks that the temporary names of the local store are
// the ones garbage collection and Open recognise.
func TestLocalTempNames(t *testing.T) {
	s := newLocalStore(t.TempDir(), DefaultFileMode)
	data := newDataFileName("snappy")
	if got := s.tempName(data); got != tempDataName(data) || !isTempDataFile(strings.TrimPrefix(got, tmpDir+"/")) {
		t.Errorf("tempName(%s) = %s, want %s", data, got, tempDataName(data))
	}
	for _, name := range []string{logPath(3), logDir + "/" + checkpointName(10), logDir + "/" + lastCheckpointFile} {
		got := s.tempName(name)
		base, ok := strings.CutPrefix(got, logDir+"/")
		if !ok || !isLogTemp(base) {
			t.Errorf("tempName(%s) = %s: not a temporary log file name", name, got)
		}
	}
}
