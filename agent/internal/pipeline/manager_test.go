package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafkatest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The helpers every test of the package shares to read Kafka.
var (
	newCluster    = kafkatest.NewCluster
	produce       = kafkatest.Produce
	deleteRecords = kafkatest.DeleteRecords
	waitFor       = kafkatest.WaitFor
)

func testPipeline(topic string) *spec.Pipeline {
	p := &spec.Pipeline{
		Name: "p", Connection: "c", DestinationCatalog: "main", DestinationSchema: "raw", FlushInterval: "200ms",
		Tables: []spec.Table{{
			DestinationTable: "events",
			ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
				Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest,
				KeyTransformer: &spec.Transformer{Format: spec.FormatString},
				ValueTransformer: &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{
					Schema: "id BIGINT, name STRING"}},
			}},
			TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"},
		}},
	}
	p.Normalize()
	return p
}

// triggeredPipeline is testPipeline(topic), triggered.
func triggeredPipeline(topic string) *spec.Pipeline {
	p := testPipeline(topic)
	off := false
	p.Continuous = &off
	return p
}

// startManager returns a manager on a new warehouse, closed at the end of
// the test, that runs p, read from the broker at addr.
func startManager(t *testing.T, addr string, p *spec.Pipeline) *Manager {
	t.Helper()
	m := NewManager(Config{Warehouse: t.TempDir()})
	t.Cleanup(func() { m.Close(context.Background()) })
	if err := m.Apply(context.Background(), p, &spec.Connection{Name: "c", BootstrapServers: []string{addr}}, nil); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestManagerIngestsAndResumes(t *testing.T) {
	addr, producer := newCluster(t, 4, "events")
	warehouse := t.TempDir()
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	p := testPipeline("events")
	value := func(i int) string {
		if i%100 == 7 {
			return "{broken"
		}
		return fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i)
	}
	produce(t, producer, 0, 500, value)

	m := NewManager(Config{Warehouse: warehouse})
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	rows := func() int64 { st, _ := m.Status("p"); return st.Tables[0].Rows }
	waitFor(t, 20*time.Second, "500 rows", func() bool { return rows() == 500 })
	st, _ := m.Status("p")
	if st.State != spec.StateRunning || st.Tables[0].CorruptRecords != 5 {
		t.Fatalf("status %+v, want RUNNING with 5 corrupt records", st)
	}

	// The flush fires on time with no new records, and a restarted manager
	// resumes from the log: no row twice.
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	produce(t, producer, 500, 800, value)
	m = NewManager(Config{Warehouse: warehouse})
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	waitFor(t, 20*time.Second, "800 rows", func() bool { return rows() == 800 })

	snap, err := table.ReadSnapshot(st.Tables[0].Location)
	if err != nil {
		t.Fatal(err)
	}
	var next int64
	for tp, off := range snap.Txns {
		t.Logf("%s -> %d", tp, off)
		next += off
	}
	if snap.NumRows != 800 || next != 800 {
		t.Fatalf("log has %d rows and offsets summing to %d, want 800 and 800", snap.NumRows, next)
	}
}

func TestManagerTriggeredRunCompletes(t *testing.T) {
	addr, producer := newCluster(t, 4, "events")
	produce(t, producer, 0, 300, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	m := startManager(t, addr, triggeredPipeline("events"))
	waitFor(t, 20*time.Second, "IDLE", func() bool { st, _ := m.Status("p"); return st.State == spec.StateIdle })
	if st, _ := m.Status("p"); st.Tables[0].Rows != 300 {
		t.Fatalf("rows %d, want 300", st.Tables[0].Rows)
	}
}

// A pipeline without tables, which only carries fanout schemas, runs: a
// triggered one too, since its fanout schemas report their own states.
func TestManagerPipelineWithoutTablesRuns(t *testing.T) {
	addr, _ := newCluster(t, 1, "events")
	p := triggeredPipeline("events")
	p.Tables = nil
	m := startManager(t, addr, p)
	if st, _ := m.Status("p"); st.State != spec.StateRunning || len(st.Tables) != 0 {
		t.Fatalf("status %+v, want RUNNING without tables", st)
	}
}

// A table that starts at "latest" records that offset before reading, so
// records produced while the agent is down before the first data commit are
// not skipped by a newer "latest" on restart.
func TestManagerLatestStartSurvivesRestart(t *testing.T) {
	addr, producer := newCluster(t, 4, "events")
	produce(t, producer, 0, 50, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	warehouse := t.TempDir()
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	p := testPipeline("events")
	p.Tables[0].ConnectorOptions.KafkaOptions.StartingOffset = spec.StartingOffsetLatest

	m := NewManager(Config{Warehouse: warehouse})
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the starting offsets commit", func() bool {
		st, _ := m.Status("p")
		return st.State == spec.StateRunning && st.Tables[0].Version == 0
	})
	m.Close(context.Background())

	produce(t, producer, 50, 80, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	m = NewManager(Config{Warehouse: warehouse})
	defer m.Close(context.Background())
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the 30 records produced while stopped", func() bool {
		st, _ := m.Status("p")
		return st.Tables[0].Rows == 30
	})
}

// An update the table's existing columns cannot take is refused before the
// running table stops; adding a nullable column is accepted.
func TestManagerRefusesIncompatibleSchema(t *testing.T) {
	addr, producer := newCluster(t, 4, "events")
	produce(t, producer, 0, 10, func(i int) string { return fmt.Sprintf(`{"id":%d,"name":"n"}`, i) })
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	p := testPipeline("events")
	p.Tables[0].TableConfiguration.SourceMetadataColumn = ""
	m := NewManager(Config{Warehouse: t.TempDir()})
	defer m.Close(context.Background())
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "10 rows", func() bool { st, _ := m.Status("p"); return st.Tables[0].Rows == 10 })

	bad := testPipeline("events")
	bad.Tables[0].TableConfiguration.SourceMetadataColumn = ""
	bad.Tables[0].ConnectorOptions.KafkaOptions.ValueTransformer.JSONOptions.Schema = "id STRING, name STRING"
	// A dry run (Check) refuses it as Apply does.
	for _, try := range []func() error{
		func() error { return m.Check(bad, conn, nil) },
		func() error { return m.Apply(context.Background(), bad, conn, nil) },
	} {
		err := try()
		var errs spec.Errors
		if !errors.As(err, &errs) || errs[0].Path != "table[0]" || !strings.Contains(errs[0].Detail, "id") {
			t.Fatalf("want a refusal on table[0] naming column id, got %v", err)
		}
	}
	if st, _ := m.Status("p"); st.State != spec.StateRunning {
		t.Fatalf("a refused update must leave the table running, state %s", st.State)
	}

	// The metadata column and a new field are nullable additions.
	good := testPipeline("events")
	good.Tables[0].ConnectorOptions.KafkaOptions.ValueTransformer.JSONOptions.Schema = "id BIGINT, name STRING, extra DOUBLE"
	if err := m.Check(good, conn, nil); err != nil {
		t.Fatalf("Check of a nullable addition: %v", err)
	}
	if st, _ := m.Status("p"); st.Tables[0].State != spec.StateRunning || st.Tables[0].Rows != 10 {
		t.Fatalf("Check changed the running table: %+v", st.Tables[0])
	}
	if err := m.Apply(context.Background(), good, conn, nil); err != nil {
		t.Fatal(err)
	}
	produce(t, producer, 10, 20, func(i int) string { return fmt.Sprintf(`{"id":%d,"extra":1.5}`, i) })
	waitFor(t, 10*time.Second, "20 rows", func() bool { st, _ := m.Status("p"); return st.Tables[0].Rows == 20 })
}

// A table with topic_pattern picks up a matching topic created while it
// runs, from that topic's earliest offset.
func TestManagerTopicPatternFindsNewTopics(t *testing.T) {
	addr, producer := newCluster(t, 4, "ev-a")
	produce(t, producer, 0, 5, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	p := testPipeline("")
	ko := &p.Tables[0].ConnectorOptions.KafkaOptions
	ko.Topics, ko.TopicPattern, ko.PartitionDiscoveryInterval = nil, "ev-.*", "100ms"
	m := NewManager(Config{Warehouse: t.TempDir()})
	defer m.Close(context.Background())
	if err := m.Apply(context.Background(), p, &spec.Connection{Name: "c", BootstrapServers: []string{addr}}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "5 rows from ev-a", func() bool { st, _ := m.Status("p"); return st.Tables[0].Rows == 5 })

	adm := kadm.NewClient(producer)
	if _, err := adm.CreateTopic(context.Background(), 2, 1, nil, "ev-b"); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i := 0; i < 7; i++ {
		recs = append(recs, &kgo.Record{Topic: "ev-b", Value: fmt.Appendf(nil, `{"id":%d}`, 100+i)})
	}
	if err := producer.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "7 more rows from the new topic ev-b", func() bool { st, _ := m.Status("p"); return st.Tables[0].Rows == 12 })
}

// TestManagerStorageLocation checks where a pipeline's tables go: under its
// storage_location when that lies under the warehouse or an allowed root,
// and refused on storage_location otherwise, before anything starts.
func TestManagerStorageLocation(t *testing.T) {
	addr, producer := newCluster(t, 1, "events")
	produce(t, producer, 0, 10, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	warehouse, allowed, other := t.TempDir(), t.TempDir(), t.TempDir()
	m := NewManager(Config{Warehouse: warehouse, AllowedRoots: []string{allowed}})
	defer m.Close(context.Background())
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	p := triggeredPipeline("events")
	p.StorageLocation = filepath.Join(other, "lake")
	var refused spec.Errors
	if err := m.Apply(context.Background(), p, conn, nil); !errors.As(err, &refused) || refused[0].Path != "storage_location" ||
		!strings.Contains(refused[0].Detail, "--warehouse-allow") {
		t.Fatalf("Apply with a location under no allowed root: %v; want a refusal on storage_location naming --warehouse-allow", err)
	}
	if _, ok := m.Status("p"); ok {
		t.Error("the refused pipeline runs")
	}

	p.StorageLocation = "file://" + filepath.Join(allowed, "lake")
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "IDLE", func() bool { st, _ := m.Status("p"); return st.State == spec.StateIdle })
	st, _ := m.Status("p")
	want := filepath.Join(allowed, "lake", p.DestinationCatalog, p.DestinationSchema, p.Tables[0].DestinationTable)
	if loc := st.Tables[0].Location; loc != "file://"+want || st.Tables[0].Rows != 10 {
		t.Fatalf("table at %s with %d rows; want file://%s with 10", loc, st.Tables[0].Rows, want)
	}
	if snap, err := table.ReadSnapshot(want); err != nil || snap.NumRows != 10 {
		t.Errorf("table under the allowed root: %+v, %v", snap, err)
	}
}

// TestManagerMaxRowsPerFile checks that no data file holds more than
// max_rows_per_file rows, even when one fetched batch brings more: the
// batch is split across files.
func TestManagerMaxRowsPerFile(t *testing.T) {
	addr, producer := newCluster(t, 1, "events")
	produce(t, producer, 0, 300, func(i int) string { return fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i) })
	p := testPipeline("events")
	p.MaxRowsPerFile = 50
	m := startManager(t, addr, p)
	rows := func() int64 { st, _ := m.Status("p"); return st.Tables[0].Rows }
	waitFor(t, 20*time.Second, "300 rows", func() bool { return rows() == 300 })
	st, _ := m.Status("p")
	files, err := filepath.Glob(filepath.Join(st.Tables[0].Location, "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		pf, err := parquet.OpenFile(f, fi.Size())
		if err != nil {
			t.Fatal(err)
		}
		if n := pf.NumRows(); n > 50 {
			t.Errorf("%s holds %d rows, want at most 50", filepath.Base(name), n)
		}
		total += pf.NumRows()
		f.Close()
	}
	if total != 300 {
		t.Errorf("the files hold %d rows, want 300", total)
	}
}

// TestManagerStatusCountsOwnRows checks that the status's rows and files
// count what the agent committed, not what another engine appended.
func TestManagerStatusCountsOwnRows(t *testing.T) {
	var version int64
	status, loc := restartAfterEntry(t, 15, func(_ string, v int64) []byte {
		version = v
		// Another engine appends 1,000 rows in a file of its own.
		return []byte(`{"commitInfo":{"timestamp":1,"operation":"WRITE","engineInfo":"Apache-Spark/4.0.1 Delta-Lake/4.0.1"}}
{"add":{"path":"part-00000-other.snappy.parquet","partitionValues":{},"size":100,"modificationTime":1,"dataChange":true,"stats":"{\"numRecords\":1000}"}}
`)
	})
	waitFor(t, 20*time.Second, "a commit after the other engine's", func() bool { return status().Version > version+1 })
	snap, err := table.ReadSnapshot(loc)
	if err != nil {
		t.Fatal(err)
	}
	if st := status(); st.Rows != 15 || st.Files != int64(snap.NumFiles-1) {
		t.Errorf("status rows %d, files %d; want 15 and %d, the agent's own", st.Rows, st.Files, snap.NumFiles-1)
	}
}

// restartAfterEntry runs a pipeline of one table on a topic of 10 JSON
// records until they are committed, stops it, writes the log entry that
// entry returns (given the table's location and version) as the table's
// next version, as another writer would, produces records up to upTo and
// starts the pipeline again. It returns the running table's status and
// its location.
func restartAfterEntry(t *testing.T, upTo int, entry func(loc string, version int64) []byte) (status func() spec.TableStatus, loc string) {
	t.Helper()
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
	status = func() spec.TableStatus { st, _ := m.Status("p"); return st.Tables[0] }
	waitFor(t, 20*time.Second, "10 rows", func() bool { return status().Rows == 10 })
	loc, version := status().Location, status().Version
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	next := filepath.Join(loc, "_delta_log", fmt.Sprintf("%020d.json", version+1))
	if err := os.WriteFile(next, entry(loc, version), 0o644); err != nil {
		t.Fatal(err)
	}

	produce(t, producer, 10, upTo, value)
	m = NewManager(Config{Warehouse: warehouse})
	t.Cleanup(func() { m.Close(context.Background()) })
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	return status, loc
}
