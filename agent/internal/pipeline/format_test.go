package pipeline

import (
	"context"
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
	addr, producer := newCluster(t, 1, "events")
	value := func(i int) string { return fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i) }
	produce(t, producer, 0, 10, value)
	warehouse := t.TempDir()
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	p := testPipeline("events")
	m := NewManager(Config{Warehouse: warehouse})
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	status := func() spec.TableStatus { st, _ := m.Status("p"); return st.Tables[0] }
	waitFor(t, 20*time.Second, "10 rows", func() bool { return status().Rows == 10 })
	dir := status().Location
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	// What a newer agent would write: a metaData action with a newer
	// format.
	snap, err := table.ReadSnapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
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
	next := filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", snap.Version+1))
	if err := os.WriteFile(next, []byte(`{"commitInfo":{"timestamp":1,"operation":"SET TBLPROPERTIES"}}`+"\n"+meta), 0o644); err != nil {
		t.Fatal(err)
	}

	produce(t, producer, 10, 20, value)
	m = NewManager(Config{Warehouse: warehouse})
	defer m.Close(context.Background())
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the table to fail", func() bool { return status().State == spec.StateFailed })
	for _, want := range []string{dir, `tributary format "2"`, "format 1 and older", "upgrade this agent"} {
		if !strings.Contains(status().LastError, want) {
			t.Errorf("last error %q lacks %q", status().LastError, want)
		}
	}
	if after, err := table.ReadSnapshot(dir); err != nil || after.NumRows != 10 || after.Version != snap.Version+1 {
		t.Errorf("the table after the refusal: %+v, %v; want 10 rows at version %d", after, err, snap.Version+1)
	}
}
