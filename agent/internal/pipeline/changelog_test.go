package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestImageColumns checks that the columns sampled for a changelog part
// are those of its row images, whatever the schema evolution mode, and
// never those of the events' envelopes (before, after, source, op, data,
// ...); a Canal DDL event types them.
func TestImageColumns(t *testing.T) {
	debezium := []string{
		`{"before":null,"after":{"id":1001,"email":"a@b"},"source":{"db":"inventory","table":"customers","ts_ms":1},"op":"r","ts_ms":2}`,
		`{"before":{"id":1001,"email":"a@b"},"after":{"id":1001,"email":"c@d","vip":true},"source":{"db":"inventory","table":"customers","ts_ms":3},"op":"u","ts_ms":4}`,
		`not an event`,
	}
	canal := []string{
		`{"data":null,"database":"inventory","table":"products","isDdl":true,"type":"CREATE","sql":"CREATE TABLE products (id int(11) NOT NULL, weight float)","es":1,"ts":2}`,
		`{"data":[{"id":"101","weight":"3.14"}],"database":"inventory","table":"products","isDdl":false,"type":"INSERT","es":3,"ts":4}`,
	}
	for _, tt := range []struct {
		name, format, mode string
		values             []string
		want               string
	}{
		{"debezium", spec.FormatDebeziumJSON, spec.SchemaEvolutionAddNewColumns, debezium, "id BIGINT, email STRING, vip BOOLEAN"},
		{"debezium static", spec.FormatDebeziumJSON, spec.SchemaEvolutionNone, debezium, "id BIGINT, email STRING, vip BOOLEAN"},
		{"canal", spec.FormatCanalJSON, spec.SchemaEvolutionAddNewColumns, canal, "id INT, weight FLOAT"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var recs []record.Record
			for i, v := range tt.values {
				recs = append(recs, record.Record{Topic: "t", Offset: int64(i), Value: []byte(v)})
			}
			p := &spec.Part{Format: tt.format, Column: spec.ValueColumn, Transformer: &spec.Transformer{Format: tt.format,
				JSONOptions: &spec.JSONOptions{SchemaEvolutionMode: tt.mode}}}
			fields, err := imageColumns(context.Background(), p, recs)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range fields {
				got = append(got, f.Name+" "+f.Type.String())
			}
			if g := strings.Join(got, ", "); g != tt.want {
				t.Errorf("columns %s, want %s", g, tt.want)
			}
		})
	}
}

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
