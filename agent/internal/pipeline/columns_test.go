package pipeline

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/columns"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// A table whose key and value fields carry prefixes, whose value is
// inferred from an initial schema and the first records, with metadata
// columns: the inferred columns carry the value's prefix in the log, and a
// restart rebuilds the value's columns from them (without the prefix) and
// goes on adding new ones.
func TestManagerPrefixedInferredRestart(t *testing.T) {
	addr, producer := newCluster(t, 1, "events")
	send := func(from, to int, extra string) {
		var recs []*kgo.Record
		for i := from; i < to; i++ {
			recs = append(recs, &kgo.Record{Key: fmt.Appendf(nil, `{"id":%d}`, i),
				Value: fmt.Appendf(nil, `{"id":%d,"name":"n%d"%s}`, 100+i, i, extra)})
		}
		if err := producer.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	send(0, 3, "")
	p := testPipeline("events")
	ko := &p.Tables[0].ConnectorOptions.KafkaOptions
	ko.KeyTransformer = &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: "id BIGINT"}}
	ko.ValueTransformer.JSONOptions = &spec.JSONOptions{SchemaEvolutionMode: spec.SchemaEvolutionAddNewColumns,
		InitialSchemas: map[string]string{"events": "extra STRING, id INT"}}
	ko.KeyFieldsPrefix, ko.ValueFieldsPrefix = "k_", "v_"
	p.Tables[0].TableConfiguration.MetadataColumns = []string{spec.MetaOffset, spec.MetaTimestampType}
	warehouse := t.TempDir()
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	run := func(rows int64) string {
		t.Helper()
		m := NewManager(Config{Warehouse: warehouse})
		defer m.Close(context.Background())
		if err := m.Apply(context.Background(), p, conn, nil); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 20*time.Second, fmt.Sprintf("%d rows", rows), func() bool { st, _ := m.Status("p"); return st.Tables[0].Rows == rows })
		st, _ := m.Status("p")
		if st.Tables[0].LastError != "" {
			t.Fatalf("table error: %s", st.Tables[0].LastError)
		}
		_, snap := offsets(t, st.Tables[0].Location)
		return columnNames(snap.Schema)
	}
	want := "k_id,v_extra,v_id,v_name,_kafka,offset,timestamp_type,_rescued_data,_corrupt_record"
	if got := run(3); got != want {
		t.Fatalf("columns %s, want %s", got, want)
	}
	send(3, 5, `,"z":true`)
	want = "k_id,v_extra,v_id,v_name,v_z,_kafka,offset,timestamp_type,_rescued_data,_corrupt_record"
	if got := run(5); got != want {
		t.Fatalf("columns after the restart %s, want %s", got, want)
	}
	type row struct {
		KeyID  *int64  `parquet:"k_id,optional"`
		ID     *int32  `parquet:"v_id,optional"`
		Name   *string `parquet:"v_name,optional"`
		Z      *bool   `parquet:"v_z,optional"`
		Offset *int64  `parquet:"offset,optional"`
		TSType *string `parquet:"timestamp_type,optional"`
	}
	rows, _ := tabletest.ReadRows[row](t, warehouse+"/main/raw/events")
	slices.SortFunc(rows, func(a, b row) int { return int(*a.Offset - *b.Offset) })
	for i, r := range rows {
		if *r.KeyID != int64(i) || *r.ID != int32(100+i) || *r.Name != fmt.Sprintf("n%d", i) || *r.TSType != "CreateTime" ||
			(i >= 3) != (r.Z != nil && *r.Z) {
			t.Errorf("row %d: %+v", i, r)
		}
	}
}

// TestStartColumns checks the columns a new inferred table starts with:
// the initial schema's, in order and with their types, flattened with
// flatten_nested_columns, then the inferred ones it lacks.
func TestStartColumns(t *testing.T) {
	on := true
	inferred := []schema.Field{{Name: "ID", Type: &schema.Type{Kind: schema.Long}, Nullable: true},
		{Name: "name", Type: &schema.Type{Kind: schema.String}, Nullable: true}}
	tests := []struct {
		name, table string
		jo          spec.JSONOptions
		want        string
	}{
		{"none", "t", spec.JSONOptions{}, "ID BIGINT, name STRING"},
		{"other table", "t", spec.JSONOptions{InitialSchemas: map[string]string{"u": "x INT"}}, "ID BIGINT, name STRING"},
		{"initial first", "t", spec.JSONOptions{InitialSchemas: map[string]string{"T": "x INT NOT NULL, id INT"}}, "x INT, id INT, name STRING"},
		{"exact key wins", "t", spec.JSONOptions{InitialSchemas: map[string]string{"T": "x INT", "t": "y INT"}}, "y INT, ID BIGINT, name STRING"},
		{"flattened", "t", spec.JSONOptions{FlattenNestedColumns: &on, InitialSchemas: map[string]string{"t": "u STRUCT<a: INT, b: STRUCT<c: DATE>>"}},
			"`u.a` INT, `u.b.c` DATE, ID BIGINT, name STRING"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.jo.SchemaEvolutionMode = spec.SchemaEvolutionAddNewColumns
			p := &spec.Part{Format: spec.FormatJSON, Transformer: &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &tc.jo}}
			got, err := columns.Start(p, tc.table, inferred)
			if err != nil {
				t.Fatal(err)
			}
			if s := schema.FormatDDL(got); s != tc.want {
				t.Errorf("columns %s, want %s", s, tc.want)
			}
		})
	}
}
