package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Two tables of a pipeline that read the same topic share its fetches, and
// each gets every record once: while the other runs, also when one
// restarts because its options changed, and when a third joins and reads
// the topic from the start, far behind them.
func TestManagerTablesShareFetches(t *testing.T) {
	const partitions = 4
	addr, producer := newCluster(t, partitions, "events")
	value := func(i int) string { return fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i) }
	produce(t, producer, 0, 300, value)
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	// tables returns a pipeline whose tables, named names, read the topic.
	tables := func(names ...string) *spec.Pipeline {
		p := testPipeline("events")
		p.Tables = nil
		for _, name := range names {
			t := testPipeline("events").Tables[0] // shares no pointer with the others
			t.DestinationTable = name
			p.Tables = append(p.Tables, t)
		}
		return p
	}
	p := tables("events", "events2")

	m := NewManager(Config{Warehouse: t.TempDir()})
	defer m.Close(context.Background())
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	rows := func(n int64) func() bool {
		return func() bool {
			st, _ := m.Status("p")
			for _, table := range st.Tables {
				if table.Rows != n {
					return false
				}
			}
			return true
		}
	}
	waitFor(t, 20*time.Second, "300 rows in each table", rows(300))
	src, restarted := m.applied("p").source, m.applied("p").tables[1]
	started, _ := src.Fetches()
	if started != partitions {
		t.Errorf("%d fetchers started for 2 tables of %d partitions, want %d", started, partitions, partitions)
	}

	// events2 gets a new column (it restarts), and events3 reads the topic
	// from the start; records keep coming as they start.
	p = tables("events", "events2", "events3")
	p.Tables[1].ConnectorOptions.KafkaOptions.ValueTransformer.JSONOptions.Schema = "id BIGINT, name STRING, extra STRING"
	produce(t, producer, 300, 450, value)
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	if m.applied("p").tables[1] == restarted {
		t.Fatal("events2 did not restart")
	}
	produce(t, producer, 450, 600, value)
	waitFor(t, 20*time.Second, "600 rows in each table", rows(600))
	st, _ := m.Status("p")
	for _, table := range st.Tables {
		checkExactlyOnce(t, table.Location, 600)
	}
	started, runs := src.Fetches()
	if started != partitions || runs < 2*partitions {
		t.Errorf("%d fetchers started, %d fetches; want %d fetchers, which fetched again for events3", started, runs, partitions)
	}
}

// A table whose log recorded its offsets under the application ids of
// before, "<catalog>.<schema>.<table>/<topic>/<partition>", resumes from
// them, and its next commit records them under "<topic>/<partition>".
func TestManagerResumesFromLegacyAppIDs(t *testing.T) {
	const partitions, perPartition, committed = 2, 200, 50
	addr, _ := newCluster(t, partitions, "events")
	value := func(i int) string { return fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i) }
	// Partition k holds the ids i with i%2 == k, in order: the first 50
	// of each are ids 0..99.
	recs := produceIDs(t, addr, partitions, perPartition, value)
	p := testPipeline("events")
	warehouse := t.TempDir()
	dir := spec.JoinLocation(warehouse, "main", "raw", "events")

	// The log as a table wrote it before: ids 0..99 committed, with their
	// offsets under the legacy application ids.
	writeLegacyLog(t, dir, &p.Tables[0], recs[0][:committed], recs[1][:committed])
	m := NewManager(Config{Warehouse: warehouse})
	defer m.Close(context.Background())
	if err := m.Apply(context.Background(), p, &spec.Connection{Name: "c", BootstrapServers: []string{addr}}, nil); err != nil {
		t.Fatal(err)
	}
	const total = partitions * perPartition
	waitFor(t, 20*time.Second, "every row", func() bool { st, _ := m.Status("p"); return st.Tables[0].Rows >= total })
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	snap, err := table.ReadSnapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	for part := range partitions {
		if next := snap.Txns[fmt.Sprintf("events/%d", part)]; next != perPartition {
			t.Errorf("the log holds %d for events/%d, want %d (all: %v)", next, part, perPartition, snap.Txns)
		}
	}
	ids := readIDs(t, dir)
	if len(ids) != total {
		t.Fatalf("%d distinct ids in %d rows, want %d", len(ids), snap.NumRows, total)
	}
	for id, n := range ids {
		if n != 1 || id < 0 || id >= total {
			t.Errorf("id %d is there %d times", id, n)
		}
	}
}

// produceIDs produces n records to each of the partitions of topic
// events, the record at offset o of partition k with value(o*partitions+k),
// and returns them by partition.
func produceIDs(t *testing.T, addr string, partitions, n int, value func(int) string) [][]record.Record {
	t.Helper()
	recs := make([][]record.Record, partitions)
	for part := range int32(partitions) {
		var values []string
		for o := range int64(n) {
			v := value(int(o)*partitions + int(part))
			values = append(values, v)
			recs[part] = append(recs[part], record.Record{Topic: "events", Partition: part, Offset: o, Value: []byte(v)})
		}
		produceValues(t, addr, "events", part, values...)
	}
	return recs
}

// writeLegacyLog writes, in dir, the log of table tbl as the agent wrote
// it before the change of application ids: one commit of the records of
// each partition k in parts[k], with the offset after them under the
// legacy application id "main.raw.events/events/<k>".
func writeLegacyLog(t *testing.T, dir string, tbl *spec.Table, parts ...[]record.Record) {
	t.Helper()
	layout, errs := tbl.Layout()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	dec, err := decode.New(layout, nil)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := table.Open(dir, table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	c := table.Commit{Schema: layout.Columns(), Txns: map[string]int64{}}
	for part, recs := range parts {
		batch, err := dec.Decode(context.Background(), recs)
		if err != nil {
			t.Fatal(err)
		}
		w, err := tb.NewFile(dec.Schema())
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteColumns(batch.Columns, batch.Rows); err != nil {
			t.Fatal(err)
		}
		add, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		c.Files = append(c.Files, add)
		c.Txns[fmt.Sprintf("main.raw.events/events/%d", part)] = recs[len(recs)-1].Offset + 1
	}
	if _, err := tb.Commit(c); err != nil {
		t.Fatal(err)
	}
}

// A table whose log recorded its offsets under the legacy application ids
// moves them to the new ones in one commit when it starts, before it reads
// a record: a table with nothing new to read moves them too, and its
// flushes know nothing of legacy ids.
func TestManagerMovesLegacyAppIDsAtStart(t *testing.T) {
	const partitions, committed = 2, 20
	addr, _ := newCluster(t, partitions, "events")
	value := func(i int) string { return fmt.Sprintf(`{"id":%d,"name":"n"}`, i) }
	recs := produceIDs(t, addr, partitions, committed, value)
	p := testPipeline("events")
	warehouse := t.TempDir()
	dir := spec.JoinLocation(warehouse, "main", "raw", "events")
	writeLegacyLog(t, dir, &p.Tables[0], recs[0], recs[1])

	m := NewManager(Config{Warehouse: warehouse})
	defer m.Close(context.Background())
	if err := m.Apply(context.Background(), p, &spec.Connection{Name: "c", BootstrapServers: []string{addr}}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the table running", func() bool { st, _ := m.Status("p"); return st.Tables[0].State == spec.StateRunning })
	snap, err := table.ReadSnapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Version 0 is the legacy log; version 1 the start's one commit.
	if snap.Version != 1 || snap.NumRows != partitions*committed {
		t.Errorf("the log is at version %d with %d rows, want version 1 (one commit at the start) with %d rows",
			snap.Version, snap.NumRows, partitions*committed)
	}
	for part := range partitions {
		if next, ok := snap.Txns[fmt.Sprintf("events/%d", part)]; !ok || next != committed {
			t.Errorf("the log holds %d (%v) for events/%d once the table runs, want %d (all: %v)", next, ok, part, committed, snap.Txns)
		}
		if next := snap.Txns[fmt.Sprintf("main.raw.events/events/%d", part)]; next != committed {
			t.Errorf("the log holds %d for the legacy id of events/%d, want it left at %d", next, part, committed)
		}
	}
	// The records produced after the move are read from there, once.
	for part := range int32(partitions) {
		produceValues(t, addr, "events", part, value(partitions*committed+int(part)))
	}
	const total = partitions * (committed + 1)
	waitFor(t, 20*time.Second, "every row", func() bool { st, _ := m.Status("p"); return st.Tables[0].Rows >= total })
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ids := readIDs(t, dir); len(ids) != total {
		t.Fatalf("%d distinct ids, want %d", len(ids), total)
	}
}

// readIDs counts the rows of each id in the data files of the table in
// dir.
func readIDs(t *testing.T, dir string) map[int64]int {
	t.Helper()
	type row struct {
		ID *int64 `parquet:"id,optional"`
	}
	rows, _ := tabletest.ReadRows[row](t, dir)
	ids := map[int64]int{}
	for _, r := range rows {
		if r.ID == nil {
			t.Fatalf("%s: a row without id", dir)
		}
		ids[*r.ID]++
	}
	return ids
}

// A table whose partitions' backlogs are longer than
// max_records_per_partition reads them as ranges in parallel: every record
// once, committed in offset order per partition, and then the records
// produced after them; also with several partitions split at once and a
// memory budget smaller than their backlogs, and with rate control, whose
// every micro-batch is split.
func TestManagerSplitsBacklog(t *testing.T) {
	tests := []struct {
		name       string
		partitions int32
		continuous bool
		budget     int64
		// maxOffsetsPerTrigger, when set, splits each micro-batch.
		maxOffsetsPerTrigger int64
	}{
		{name: "continuous", partitions: 1, continuous: true},
		{name: "triggered", partitions: 1},
		{name: "three partitions, small budget", partitions: 3, continuous: true, budget: 4 << 20},
		{name: "micro-batches of max_offsets_per_trigger", partitions: 1, continuous: true, maxOffsetsPerTrigger: 2000},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			addr, producer := newCluster(t, test.partitions, "events")
			pad := strings.Repeat("x", 200)
			value := func(i int) string { return fmt.Sprintf(`{"id":%d,"name":"%s"}`, i, pad) }
			for i := range 5 {
				produce(t, producer, i*1000, (i+1)*1000, value)
			}
			p := testPipeline("events")
			p.Continuous = &test.continuous
			maxRecords := int64(700)
			p.Tables[0].ConnectorOptions.KafkaOptions.MaxRecordsPerPartition = &maxRecords
			if test.maxOffsetsPerTrigger > 0 {
				p.Tables[0].ConnectorOptions.KafkaOptions.MaxOffsetsPerTrigger = &test.maxOffsetsPerTrigger
			}
			cfg := Config{Warehouse: t.TempDir()}
			if test.budget > 0 {
				cfg.Memory = memory.New(test.budget)
			}
			m := NewManager(cfg)
			t.Cleanup(func() { m.Close(context.Background()) })
			if err := m.Apply(context.Background(), p, &spec.Connection{Name: "c", BootstrapServers: []string{addr}}, nil); err != nil {
				t.Fatal(err)
			}
			status := func() spec.TableStatus { st, _ := m.Status("p"); return st.Tables[0] }
			n := 5000
			if test.continuous {
				waitFor(t, 30*time.Second, "5000 rows", func() bool { return status().Rows == 5000 })
				produce(t, producer, 5000, 5300, value)
				n = 5300
			} else {
				waitFor(t, 30*time.Second, "the run's end", func() bool { return status().State == spec.StateIdle })
			}
			waitFor(t, 30*time.Second, fmt.Sprint(n, " rows"), func() bool { return status().Rows == int64(n) })
			checkExactlyOnce(t, status().Location, n)
			tabletest.CommitOrder(t, status().Location)
		})
	}
}
