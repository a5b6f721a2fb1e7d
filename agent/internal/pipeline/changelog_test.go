package pipeline

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestManagerFilteredRecords checks that the Debezium events that carry no
// row (truncate, message, tombstone) are counted in the table's log as
// filtered, which the status reads back after a restart.
func TestManagerFilteredRecords(t *testing.T) {
	addr, producer := newCluster(t, 1, "cdc")
	p := testPipeline("cdc")
	p.Tables[0].ConnectorOptions.KafkaOptions.ValueTransformer = &spec.Transformer{Format: spec.FormatDebeziumJSON}
	p.Normalize()
	value := func(i int) string {
		switch i % 4 {
		case 1:
			return `{"op":"t","source":{"db":"d","table":"t","ts_ms":1}}`
		case 2:
			return `{"op":"m","source":{"db":"d","table":"t","ts_ms":1}}`
		}
		return fmt.Sprintf(`{"op":"c","after":{"id":%d},"source":{"db":"d","table":"t","ts_ms":1}}`, i)
	}
	produce(t, producer, 0, 20, value) // 10 rows, 10 filtered
	if err := producer.ProduceSync(context.Background(), &kgo.Record{Key: []byte("20")}).FirstErr(); err != nil {
		t.Fatal(err) // a tombstone
	}
	warehouse := t.TempDir()
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	for run := range 2 {
		m := NewManager(Config{Warehouse: warehouse})
		if err := m.Apply(context.Background(), p, conn, nil); err != nil {
			t.Fatal(err)
		}
		status := func() spec.TableStatus { st, _ := m.Status("p"); return st.Tables[0] }
		waitFor(t, 20*time.Second, "every record", func() bool {
			st := status()
			return len(st.Partitions) == 1 && st.Partitions[0].NextOffset == 21 || st.State == spec.StateFailed
		})
		if st := status(); st.Rows != 10 || st.FilteredRecords != 11 {
			t.Errorf("run %d: %d rows and %d filtered records (%s), want 10 and 11", run, st.Rows, st.FilteredRecords, st.LastError)
		}
		if err := m.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
