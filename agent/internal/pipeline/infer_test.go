package pipeline

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// inferPipeline is testPipeline with the value's schema inferred in mode.
func inferPipeline(topic, mode string, jo spec.JSONOptions) *spec.Pipeline {
	p := testPipeline(topic)
	jo.SchemaEvolutionMode = mode
	p.Tables[0].ConnectorOptions.KafkaOptions.ValueTransformer.JSONOptions = &jo
	return p
}

// produceTo sends values to partition part of topic.
func produceValues(t *testing.T, addr, topic string, part int32, values ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for _, v := range values {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: part, Value: []byte(v)})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// columnTypes returns a table's status columns as "name TYPE, ...".
func columnTypes(cols []spec.ColumnStatus) string {
	var out []string
	for _, c := range cols {
		out = append(out, c.Name+" "+c.Type)
	}
	return strings.Join(out, ", ")
}

// columnNames returns the names of fields, in order.
func columnNames(fields []schema.Field) string {
	var names []string
	for _, f := range fields {
		names = append(names, f.Name)
	}
	return strings.Join(names, ",")
}

// The first schema comes from the latest records of every partition (as
// Flink's scan.max.pre.fetch.records), whatever offset the table starts
// at, and the hints; what older records bring is rescued in RESCUE mode.
// An object hinted STRING keeps its JSON text, Flink's nested column
// without flatten-nested-columns.
func TestManagerInfersFirstSchema(t *testing.T) {
	addr, _ := newCluster(t, 3, "events")
	produceValues(t, addr, "events", 0, `{"a":1,"early":true}`, `{"a":2}`, `{"a":3}`)
	produceValues(t, addr, "events", 1, `{"b":"x","u":{"n":1, "s":"y"}}`)
	produceValues(t, addr, "events", 2, `{"c":"oops"}`, `{"c":1.5,"d":"2024-01-02"}`)
	n := int64(2)
	p := inferPipeline("events", "rescue", spec.JSONOptions{InferRecordsPerPartition: &n, SchemaHints: "h BIGINT, c DOUBLE, u STRING"})
	m := NewManager(Config{Warehouse: t.TempDir()})
	defer m.Close(context.Background())
	if err := m.Apply(context.Background(), p, &spec.Connection{Name: "c", BootstrapServers: []string{addr}}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "6 rows", func() bool { st, _ := m.Status("p"); return st.Tables[0].Rows == 6 })
	st, _ := m.Status("p")
	_, snap := offsets(t, st.Tables[0].Location)
	got := columnTypes(st.Tables[0].Columns)
	for _, want := range []string{"a BIGINT", "b STRING", "u STRING", "c DOUBLE", "d ", "h BIGINT", "_rescued_data STRING"} {
		if !strings.Contains(got, want) {
			t.Errorf("status columns %s lack %q", got, want)
		}
	}
	if strings.Contains(got, "early") {
		t.Errorf("status columns %s have a field of a record older than the latest 2 of its partition", got)
	}
	if !strings.HasSuffix(columnNames(snap.Schema), ",_kafka,_rescued_data,_corrupt_record") {
		t.Errorf("table columns %s", columnNames(snap.Schema))
	}
	type row struct {
		U       *string `parquet:"u,optional"`
		Rescued *string `parquet:"_rescued_data,optional"`
	}
	var rescued, objects []string
	rows, _ := tabletest.ReadRows[row](t, st.Tables[0].Location)
	for _, r := range rows {
		if r.Rescued != nil {
			rescued = append(rescued, *r.Rescued)
		}
		if r.U != nil {
			objects = append(objects, *r.U)
		}
	}
	if want := []string{`{"n":1,"s":"y"}`}; !slices.Equal(objects, want) {
		t.Errorf("u %q, want the object's JSON text %q", objects, want)
	}
	slices.Sort(rescued)
	if want := []string{`{"c":"oops"}`, `{"early":true}`}; !slices.Equal(rescued, want) {
		t.Errorf("rescued %q, want %q", rescued, want)
	}
}

// infer_records_per_partition = 0 samples nothing: the table starts with
// the hinted columns alone (Flink's fixed types with
// scan.max.pre.fetch.records = 0), and ADD_NEW_COLUMNS adds the others as
// the records show them.
func TestManagerInfersNothingFromZeroRecords(t *testing.T) {
	addr, _ := newCluster(t, 1, "events")
	produceValues(t, addr, "events", 0, `{"a":1,"b":"x"}`, `{"a":2,"b":"y"}`)
	zero := int64(0)
	p := inferPipeline("events", spec.SchemaEvolutionAddNewColumns, spec.JSONOptions{InferRecordsPerPartition: &zero, SchemaHints: "b STRING, a INT"})
	m := NewManager(Config{Warehouse: t.TempDir()})
	defer m.Close(context.Background())
	if err := m.Apply(context.Background(), p, &spec.Connection{Name: "c", BootstrapServers: []string{addr}}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "2 rows", func() bool { st, _ := m.Status("p"); return st.Tables[0].Rows == 2 })
	st, _ := m.Status("p")
	// The hints' order: sampled, a would come first.
	if got := columnTypes(st.Tables[0].Columns); !strings.Contains(got, "key STRING, b STRING, a INT, _kafka") {
		t.Errorf("columns %s, want the hinted b STRING, a INT alone", got)
	}
}

// logAdds counts the add actions of each commit of the table in dir.
func logAdds(t *testing.T, dir string) []int {
	t.Helper()
	entries, err := filepath.Glob(filepath.Join(dir, "_delta_log", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(entries)
	var adds []int
	for _, e := range entries {
		f, err := os.Open(e)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), `{"add"`) {
				n++
			}
		}
		f.Close()
		adds = append(adds, n)
	}
	return adds
}

// A record with a new field in the middle of what a flush commits adds its
// column at the end of the value's: the file written before is committed
// with the file after and the new schema, in one commit, and every record
// is there once.
func TestManagerAddsColumnsMidBatch(t *testing.T) {
	addr, producer := newCluster(t, 1, "events")
	const n = 3000
	produce(t, producer, 0, n, func(i int) string {
		switch {
		case i == 2500:
			return fmt.Sprintf(`{"id":%d,"name":"x","note":{"text":"new"}}`, i)
		case i > 2500 && i < n-100 && i%2 == 0:
			// The last records lack note, so that the latest ones the
			// first schema is inferred from do not show it.
			return fmt.Sprintf(`{"id":%d,"name":"x","note":{"text":"n","more":[1]}}`, i)
		}
		return fmt.Sprintf(`{"id":%d,"name":"x"}`, i)
	})
	p := inferPipeline("events", "addNewColumns", spec.JSONOptions{})
	p.FlushInterval = "3s"
	m := NewManager(Config{Warehouse: t.TempDir()})
	defer m.Close(context.Background())
	if err := m.Apply(context.Background(), p, &spec.Connection{Name: "c", BootstrapServers: []string{addr}}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, fmt.Sprintf("%d rows", n), func() bool { st, _ := m.Status("p"); return st.Tables[0].Rows == n })
	st, _ := m.Status("p")
	dir := st.Tables[0].Location
	checkExactlyOnce(t, dir, n)
	_, snap := offsets(t, dir)
	if got := schema.FormatDDL(snap.Schema); !strings.Contains(got, "name STRING, note STRUCT<text: STRING, more: ARRAY<BIGINT>>, _kafka") {
		t.Errorf("table schema %s, want note after name", got)
	}
	// The first commit records where the partition starts; the second
	// holds every row, in the file before the new column, the one of the
	// records 2500 and 2501 (note without more), and the one after.
	if adds := logAdds(t, dir); !slices.Equal(adds, []int{0, 3}) {
		t.Errorf("add actions per commit %v, want [0 3]", adds)
	}
	if st.State != spec.StateRunning || st.Tables[0].CorruptRecords != 0 {
		t.Errorf("status %+v", st)
	}
}

// FAIL_ON_NEW_COLUMNS stops the table at the record with a new field,
// after committing what came before; applying again with another mode
// resumes from that record.
func TestManagerFailOnNewColumnsResumes(t *testing.T) {
	addr, producer := newCluster(t, 1, "events")
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	row := func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) }
	produce(t, producer, 0, 10, row)
	m := NewManager(Config{Warehouse: t.TempDir()})
	defer m.Close(context.Background())
	if err := m.Apply(context.Background(), inferPipeline("events", "FAIL_ON_NEW_COLUMNS", spec.JSONOptions{}), conn, nil); err != nil {
		t.Fatal(err)
	}
	status := func() spec.TableStatus { st, _ := m.Status("p"); return st.Tables[0] }
	waitFor(t, 20*time.Second, "10 rows", func() bool { return status().Rows == 10 })
	produce(t, producer, 10, 20, func(i int) string {
		if i == 12 {
			return fmt.Sprintf(`{"id":%d,"extra":"e"}`, i)
		}
		return row(i)
	})
	waitFor(t, 20*time.Second, "FAILED", func() bool { return status().State == spec.StateFailed })
	st := status()
	if !strings.Contains(st.LastError, "extra") || !strings.Contains(st.LastError, "@12") {
		t.Errorf("last error %q, want it to name extra and the record", st.LastError)
	}
	if next, _ := offsets(t, st.Location); next != 10 || st.Rows != 10 {
		t.Errorf("committed offsets sum to %d with %d rows after the stop, want 10", next, st.Rows)
	}

	if err := m.Apply(context.Background(), inferPipeline("events", "ADD_NEW_COLUMNS", spec.JSONOptions{}), conn, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "20 rows", func() bool { return status().Rows == 20 })
	checkExactlyOnce(t, st.Location, 20)
	if cols := status().Columns; !slices.ContainsFunc(cols, func(c spec.ColumnStatus) bool { return c.Name == "extra" }) {
		t.Errorf("columns %v lack extra", cols)
	}
}

// ADD_NEW_COLUMNS_WITH_TYPE_WIDENING widens a hinted INT column to BIGINT
// for a value that needs it, in the commit of that value's rows.
func TestManagerWidensColumns(t *testing.T) {
	addr, producer := newCluster(t, 1, "events")
	produce(t, producer, 0, 10, func(i int) string {
		if i == 6 {
			return fmt.Sprintf(`{"id":%d,"n":3000000000}`, i)
		}
		return fmt.Sprintf(`{"id":%d,"n":%d}`, i, i)
	})
	p := inferPipeline("events", spec.SchemaEvolutionAddNewColumnsWithTypeWidening, spec.JSONOptions{SchemaHints: "n INT"})
	m := NewManager(Config{Warehouse: t.TempDir()})
	defer m.Close(context.Background())
	if err := m.Apply(context.Background(), p, &spec.Connection{Name: "c", BootstrapServers: []string{addr}}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "10 rows", func() bool { st, _ := m.Status("p"); return st.Tables[0].Rows == 10 })
	st, _ := m.Status("p")
	checkExactlyOnce(t, st.Tables[0].Location, 10)
	_, snap := offsets(t, st.Tables[0].Location)
	if got := schema.FormatDDL(snap.Schema); !strings.Contains(got, "n BIGINT") {
		t.Errorf("table schema %s, want n widened to BIGINT", got)
	}
}

// Every table reports its columns, not only inferred ones.
func TestManagerReportsColumns(t *testing.T) {
	addr, producer := newCluster(t, 1, "events")
	produce(t, producer, 0, 5, func(i int) string { return fmt.Sprintf(`{"id":%d,"name":"n"}`, i) })
	m := NewManager(Config{Warehouse: t.TempDir()})
	defer m.Close(context.Background())
	if err := m.Apply(context.Background(), testPipeline("events"), &spec.Connection{Name: "c", BootstrapServers: []string{addr}}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "5 rows", func() bool { st, _ := m.Status("p"); return st.Tables[0].Rows == 5 })
	st, _ := m.Status("p")
	var cols []string
	for _, c := range st.Tables[0].Columns {
		cols = append(cols, fmt.Sprintf("%s %s %v", c.Name, c.Type, c.Nullable))
	}
	want := "key STRING true, id BIGINT true, name STRING true, _kafka " + spec.MetadataType.String() + " true, _corrupt_record BINARY true"
	if got := strings.Join(cols, ", "); got != want {
		t.Errorf("columns %s, want %s", got, want)
	}
}

// Partitions decoding at once each bring a new column: chunks decoded
// with older columns are decoded again, and every record is there once.
func TestManagerAddsColumnsFromSeveralPartitions(t *testing.T) {
	const parts, per = 4, 1500
	addr, _ := newCluster(t, parts, "events")
	for p := range parts {
		var values []string
		for i := range per {
			id := p*per + i
			if i >= 1000 {
				values = append(values, fmt.Sprintf(`{"id":%d,"f%d":%d}`, id, p, i))
			} else {
				values = append(values, fmt.Sprintf(`{"id":%d}`, id))
			}
		}
		produceValues(t, addr, "events", int32(p), values...)
	}
	m := NewManager(Config{Warehouse: t.TempDir()})
	defer m.Close(context.Background())
	if err := m.Apply(context.Background(), inferPipeline("events", "ADD_NEW_COLUMNS", spec.JSONOptions{}),
		&spec.Connection{Name: "c", BootstrapServers: []string{addr}}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "all rows", func() bool { st, _ := m.Status("p"); return st.Tables[0].Rows == parts*per })
	st, _ := m.Status("p")
	checkExactlyOnce(t, st.Tables[0].Location, parts*per)
	_, snap := offsets(t, st.Tables[0].Location)
	for p := range parts {
		if !slices.ContainsFunc(snap.Schema, func(f schema.Field) bool { return f.Name == fmt.Sprintf("f%d", p) }) {
			t.Errorf("table columns %s lack f%d", columnNames(snap.Schema), p)
		}
	}
	if st.State != spec.StateRunning || st.Tables[0].CorruptRecords != 0 {
		t.Errorf("status %+v", st)
	}
}

// A record whose fields would give the table more leaf columns than a
// Parquet file holds fails the table, after committing the rows before it:
// plan time cannot count what records bring. Here the key's schema takes
// all but a few of the columns.
func TestManagerStopsAtParquetColumnLimit(t *testing.T) {
	addr, producer := newCluster(t, 1, "events")
	produce(t, producer, 0, 5, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	p := inferPipeline("events", spec.SchemaEvolutionAddNewColumns, spec.JSONOptions{})
	cols := make([]string, spec.MaxLeafColumns-10)
	for i := range cols {
		cols[i] = fmt.Sprintf("k%d INT", i)
	}
	ko := &p.Tables[0].ConnectorOptions.KafkaOptions
	ko.KeyTransformer = &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: strings.Join(cols, ", ")}}
	if errs := p.Validate(); len(errs) > 0 {
		t.Fatalf("the pipeline is not valid: %v", errs)
	}
	m := NewManager(Config{Warehouse: t.TempDir()})
	defer m.Close(context.Background())
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	status := func() spec.TableStatus { st, _ := m.Status("p"); return st.Tables[0] }
	// A file of 65,525 columns takes a while to write under -race on a
	// busy machine: the waits are long, not the test when all goes well.
	waitFor(t, 3*time.Minute, "5 rows", func() bool { return status().Rows == 5 })
	produce(t, producer, 5, 6, func(int) string {
		return `{"id":5,"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1,"j":1}`
	})
	waitFor(t, 3*time.Minute, "FAILED", func() bool { return status().State == spec.StateFailed })
	st := status()
	if !strings.Contains(st.LastError, "more than Parquet's maximum of 65535") || st.Rows != 5 {
		t.Fatalf("status %+v, want FAILED at the column limit with 5 rows", st)
	}
}

// TestRealBrokerInfersLatestRecords runs inference against the real broker
// (tools/kafka.sh up) when KAFKA_BOOTSTRAP says where it is: the first
// schema comes from the latest infer_records_per_partition records of a
// partition that Kafka's own log serves, from an offset in the middle of a
// record batch, and what the older records bring is rescued.
func TestRealBrokerInfersLatestRecords(t *testing.T) {
	bootstrap := os.Getenv("KAFKA_BOOTSTRAP")
	if bootstrap == "" || testing.Short() {
		t.Skip("KAFKA_BOOTSTRAP is not set (tools/kafka.sh up), or -short")
	}
	topic := fmt.Sprintf("infer-latest-%d", time.Now().UnixNano())
	adm, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(adm).CreateTopics(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	// One produce request: the four records are one batch.
	produceValues(t, bootstrap, topic, 0, `{"a":1,"early":true}`, `{"a":2}`, `{"a":3,"b":"x"}`, `{"a":4}`)
	n := int64(3)
	p := inferPipeline(topic, spec.SchemaEvolutionRescue, spec.JSONOptions{InferRecordsPerPartition: &n})
	p.Tables[0].ConnectorOptions.KafkaOptions.StartingOffset = spec.StartingOffsetEarliest
	m := NewManager(Config{Warehouse: t.TempDir()})
	defer m.Close(context.Background())
	if err := m.Apply(ctx, p, &spec.Connection{Name: "c", BootstrapServers: []string{bootstrap}}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "4 rows", func() bool { st, _ := m.Status("p"); return st.Tables[0].Rows == 4 })
	st, _ := m.Status("p")
	if got := columnTypes(st.Tables[0].Columns); !strings.Contains(got, "key STRING, a BIGINT, b STRING, _kafka") {
		t.Errorf("columns %s, want a and b from the latest 3 records, without early", got)
	}
	type row struct {
		Rescued *string `parquet:"_rescued_data,optional"`
	}
	rows, _ := tabletest.ReadRows[row](t, st.Tables[0].Location)
	var rescued []string
	for _, r := range rows {
		if r.Rescued != nil {
			rescued = append(rescued, *r.Rescued)
		}
	}
	if want := []string{`{"early":true}`}; !slices.Equal(rescued, want) {
		t.Errorf("rescued %q, want %q", rescued, want)
	}
}
