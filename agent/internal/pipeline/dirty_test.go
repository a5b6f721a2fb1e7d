package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink/deltasinktest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/ingest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// dirtyRow is a row of the dirty records table.
type dirtyRow = deltasinktest.DirtyRow

// dirtyOffsets returns the offsets of the dirty rows, sorted.
func dirtyOffsets(rows []dirtyRow) []int64 {
	var offs []int64
	for _, r := range rows {
		offs = append(offs, r.Offset)
	}
	slices.Sort(offs)
	return offs
}

// budgetPipeline is testPipeline(topic) with ignore_errors and the error
// budget max.
func budgetPipeline(topic string, limit int64) *spec.Pipeline {
	p := testPipeline(topic)
	on := true
	ko := &p.Tables[0].ConnectorOptions.KafkaOptions
	ko.IgnoreErrors, ko.ErrorToleranceMaxCount = &on, &limit
	return p
}

// TestManagerErrorBudget checks ignore_errors: records that do not decode
// get no row, are counted in the table's log and kept in _dirty_records
// with their offsets and error; once more than error_tolerance_max_count
// are counted, the table fails, naming the count, the limit and the dirty
// records table, without committing the chunk that passed the limit; a
// restart reads the count back and fails again on the same chunk, and a
// higher limit resumes from it.
func TestManagerErrorBudget(t *testing.T) {
	addr, producer := newCluster(t, 1, "events")
	warehouse := t.TempDir()
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	p := budgetPipeline("events", 3)
	bad := map[int]bool{7: true, 42: true, 99: true}
	value := func(i int) string {
		if bad[i] {
			return "{broken"
		}
		return fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i)
	}
	produce(t, producer, 0, 100, value)

	m := NewManager(Config{Warehouse: warehouse})
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	status := func() spec.TableStatus { st, _ := m.Status("p"); return st.Tables[0] }
	waitFor(t, 20*time.Second, "97 rows", func() bool { return status().Rows == 97 })
	if st := status(); st.State != spec.StateRunning || st.ErrorRecords != 3 || st.CorruptRecords != 0 {
		t.Fatalf("status %+v, want RUNNING with 3 error records and no corrupt one", st)
	}
	dirtyDir := filepath.Join(warehouse, "main", "raw", spec.DirtyRecordsTable)
	rows, _ := tabletest.ReadTable[dirtyRow](t, dirtyDir)
	if got := dirtyOffsets(rows); !slices.Equal(got, []int64{7, 42, 99}) {
		t.Fatalf("dirty records at offsets %v, want 7, 42, 99", got)
	}
	for _, r := range rows {
		if r.Table != "events" || r.Topic != "events" || string(r.Value) != "{broken" || string(r.Key) != fmt.Sprint(r.Offset) ||
			!strings.Contains(r.Error, "value") || r.ErrorTime == 0 {
			t.Errorf("dirty row %+v", r)
		}
	}

	// The fourth bad record passes the limit: the chunk it is in is not
	// committed, what came before it is. The table is stopped while the
	// tail is produced, so that 100..102 are fetched, and decoded, in
	// 103's chunk: a running table could fetch 100 alone, before the rest
	// reaches the broker.
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	bad[103] = true
	produce(t, producer, 100, 110, value)
	m = NewManager(Config{Warehouse: warehouse})
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the table to fail", func() bool { return status().State == spec.StateFailed })
	st := status()
	for _, want := range []string{"4 records", "(3)", "main.raw._dirty_records", "events[0]@103", "error_tolerance_max_count"} {
		if !strings.Contains(st.LastError, want) {
			t.Errorf("last error %q lacks %q", st.LastError, want)
		}
	}
	if st.Rows != 97 || st.ErrorRecords != 3 {
		t.Errorf("failed table has %d rows and %d error records, want 97 and 3", st.Rows, st.ErrorRecords)
	}
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	// A restart reads the count back from the log and fails again.
	m = NewManager(Config{Warehouse: warehouse})
	defer m.Close(context.Background())
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the table to fail again", func() bool { return status().State == spec.StateFailed })
	if st := status(); st.ErrorRecords != 3 || !strings.Contains(st.LastError, "events[0]@103") {
		t.Fatalf("after a restart: %+v, want 3 error records and the same failure", st)
	}
	if rows, _ := tabletest.ReadTable[dirtyRow](t, dirtyDir); len(rows) != 3 {
		t.Fatalf("%d dirty records, want 3", len(rows))
	}
	snap, err := table.ReadSnapshot(status().Location)
	if err != nil {
		t.Fatal(err)
	}
	if snap.NumRows != 97 || snap.Counters[deltasink.CounterErrors] != 3 {
		t.Fatalf("log has %d rows and %d error records, want 97 and 3", snap.NumRows, snap.Counters[deltasink.CounterErrors])
	}

	// A higher limit, applied, resumes from the chunk that failed.
	if err := m.Apply(context.Background(), budgetPipeline("events", 10), conn, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "106 rows", func() bool { return status().Rows == 106 })
	if st := status(); st.State != spec.StateRunning || st.ErrorRecords != 4 {
		t.Fatalf("with a higher limit: %+v, want RUNNING with 4 error records", st)
	}
	rows, _ = tabletest.ReadTable[dirtyRow](t, dirtyDir)
	if got := dirtyOffsets(rows); !slices.Equal(got, []int64{7, 42, 99, 103}) {
		t.Fatalf("dirty records at offsets %v, want 7, 42, 99, 103", got)
	}
}

// TestManagerErrorBudgetUnlimited checks that error_tolerance_max_count -1
// never fails the table, and that without ignore_errors a record that does
// not decode keeps its row in _corrupt_record, as before.
func TestManagerErrorBudgetUnlimited(t *testing.T) {
	addr, producer := newCluster(t, 2, "events")
	value := func(i int) string {
		if i%10 == 3 {
			return "[1,2"
		}
		return fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i)
	}
	produce(t, producer, 0, 200, value)
	m := startManager(t, addr, budgetPipeline("events", -1))
	status := func() spec.TableStatus { st, _ := m.Status("p"); return st.Tables[0] }
	waitFor(t, 20*time.Second, "180 rows and 20 error records", func() bool {
		st := status()
		return st.Rows == 180 && st.ErrorRecords == 20
	})
	rows, _ := tabletest.ReadTable[dirtyRow](t, filepath.Join(filepath.Dir(status().Location), spec.DirtyRecordsTable))
	if len(rows) != 20 {
		t.Fatalf("%d dirty records, want 20", len(rows))
	}

	m2 := startManager(t, addr, testPipeline("events"))
	st2 := func() spec.TableStatus { st, _ := m2.Status("p"); return st.Tables[0] }
	waitFor(t, 20*time.Second, "200 rows, 20 corrupt", func() bool { st := st2(); return st.Rows == 200 && st.CorruptRecords == 20 })
	if st := st2(); st.ErrorRecords != 0 {
		t.Fatalf("without ignore_errors: %+v, want no error records", st)
	}
}

// TestDirtyReplayWritesOnce checks that the dirty records a table offers
// again, after a crash between the dirty table's commit and its own, are
// not written twice, while later ones of the same partition and the same
// offsets of another table are; and that a rewind (a re-created topic)
// lets the same offsets in again.
func TestDirtyReplayWritesOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), spec.DirtyRecordsTable)
	d := deltasink.DirtyTableAt(dir, "main.raw._dirty_records")
	tp := kafka.TopicPartition{Topic: "t", Partition: 1}
	recs := func(offsets ...int64) []deltasink.DirtyRecord {
		var out []deltasink.DirtyRecord
		for _, o := range offsets {
			r := record.Record{Topic: "t", Partition: 1, Offset: o, Value: []byte("x")}
			out = append(out, deltasink.NewDirtyRecord(&r, errors.New("bad"), time.Now()))
		}
		return out
	}
	opts := table.Options{Owner: "test"}
	steps := []struct {
		dest    string
		offsets []int64
		next    int64
	}{
		{"a", []int64{3, 5}, 10},
		{"a", []int64{3, 5}, 8},      // replayed after a crash, with a smaller flush
		{"a", []int64{5, 9, 12}, 20}, // replayed in part
		{"b", []int64{3, 5}, 10},     // another table's
	}
	for _, s := range steps {
		if err := d.Commit(s.dest, recs(s.offsets...), map[kafka.TopicPartition]int64{tp: s.next}, opts); err != nil {
			t.Fatal(err)
		}
	}
	rows, snap := tabletest.ReadTable[dirtyRow](t, dir)
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%s@%d", r.Table, r.Offset))
	}
	slices.Sort(got)
	if want := []string{"a@12", "a@3", "a@5", "b@3", "b@5"}; !slices.Equal(got, want) {
		t.Fatalf("dirty rows %v, want %v", got, want)
	}
	if snap.Txns["a/t/1"] != 20 || snap.Txns["b/t/1"] != 10 {
		t.Fatalf("txns %v, want a/t/1 at 20 and b/t/1 at 10", snap.Txns)
	}

	// The topic of a's records is created again: its offsets start over,
	// and its new records are written, b's offsets untouched.
	if err := d.Rewind("a", map[kafka.TopicPartition]int64{tp: 0}, opts); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit("a", recs(3), map[kafka.TopicPartition]int64{tp: 4}, opts); err != nil {
		t.Fatal(err)
	}
	rows, snap = tabletest.ReadTable[dirtyRow](t, dir)
	if len(rows) != 6 || snap.Txns["a/t/1"] != 4 || snap.Txns["b/t/1"] != 10 {
		t.Fatalf("after a rewind: %d rows, txns %v; want 6, a/t/1 at 4, b/t/1 at 10", len(rows), snap.Txns)
	}
	// A table without dirty records has nothing to rewind.
	if err := deltasink.DirtyTableAt(filepath.Join(t.TempDir(), "none"), "x").Rewind("a", map[kafka.TopicPartition]int64{tp: 0}, opts); err != nil {
		t.Fatal(err)
	}
}

// TestSinkCrashAfterDirtyCommit stops a table's flush between the dirty
// records table's commit and the table's own, as a crash there would: the
// table, opened again, reads the same records again and commits them, and
// the dirty records table holds each bad record once, the table each good
// one once, its log the count of bad ones once.
func TestSinkCrashAfterDirtyCommit(t *testing.T) {
	warehouse := t.TempDir()
	p := budgetPipeline("events", -1)
	ko := &p.Tables[0].ConnectorOptions.KafkaOptions
	layout, errs := p.Tables[0].Layout()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	dir, dirtyDir := filepath.Join(warehouse, "events"), filepath.Join(warehouse, spec.DirtyRecordsTable)
	tp := kafka.TopicPartition{Topic: "events"}
	var recs []record.Record
	for i := range 10 {
		v := fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i)
		if i%4 == 1 {
			v = "{broken"
		}
		recs = append(recs, record.Record{Topic: "events", Offset: int64(i), Key: fmt.Appendf(nil, "%d", i), Value: []byte(v)})
	}
	// run writes recs to the table as a loop would, and closes the table
	// before the flush when crash is set; it returns the flush's error.
	run := func(crash bool) error {
		tbl, err := table.Open(dir, table.Options{Owner: "test"})
		if err != nil {
			t.Fatal(err)
		}
		defer tbl.Close()
		o := deltasink.SinkOptions{MaxRows: 1000, MaxBytes: 1 << 30, Budget: memory.New(1 << 30), State: &deltasink.TableState{},
			Log: slog.Default(), Errs: deltasink.NewErrorBudget(ko, "events", dirtyDir, "main.raw._dirty_records", table.Options{Owner: "test"})}
		s, err := deltasink.NewSink(tbl, layout, nil, o)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for tp2, next := range tbl.Snapshot().Txns {
			if tp2 == deltasink.AppID(tp) {
				s.Resume(tp, next, -1)
			}
		}
		dec, err := ingest.NewDecoder(layout, nil, o.DecodeOptions())
		if err != nil {
			t.Fatal(err)
		}
		from, _ := s.CommittedOffset(tp)
		batch, err := dec.Decode(context.Background(), recs[from:])
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Add(context.Background(), ingest.Decoded{TP: tp, Batch: batch, Recs: recs[from:], Next: 10}); err != nil {
			t.Fatal(err)
		}
		if crash {
			tbl.Close()
		}
		return s.Flush(context.Background())
	}
	// A loop records where the partition starts before reading it.
	tbl, err := table.Open(dir, table.Options{Owner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Commit(table.Commit{Schema: layout.Columns(), Txns: map[string]int64{deltasink.AppID(tp): 0}}); err != nil {
		t.Fatal(err)
	}
	tbl.Close()
	if err := run(true); err == nil {
		t.Fatal("the flush of a closed table succeeded")
	}
	if rows, _ := tabletest.ReadTable[dirtyRow](t, dirtyDir); len(rows) != 3 {
		t.Fatalf("%d dirty records after the crash, want 3 (committed before the table)", len(rows))
	}
	if err := run(false); err != nil {
		t.Fatal(err)
	}
	rows, _ := tabletest.ReadTable[dirtyRow](t, dirtyDir)
	if got := dirtyOffsets(rows); !slices.Equal(got, []int64{1, 5, 9}) {
		t.Fatalf("dirty records at %v, want 1, 5, 9 once each", got)
	}
	// The crash left the file it wrote for garbage collection.
	snap, err := table.ReadSnapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	if snap.NumRows != 7 || snap.Counters[deltasink.CounterErrors] != 3 || snap.Txns[deltasink.AppID(tp)] != 10 {
		t.Fatalf("table: %d rows, %d error records, next offset %d; want 7, 3, 10", snap.NumRows, snap.Counters[deltasink.CounterErrors],
			snap.Txns[deltasink.AppID(tp)])
	}
}

// TestManagerRecreatedTopicDirty checks that a table with ignore_errors
// that goes on after its topic is deleted and created again
// (fail_on_data_loss = false) keeps the new topic's bad records in
// _dirty_records although their offsets are below the old topic's.
func TestManagerRecreatedTopicDirty(t *testing.T) {
	addr, producer := newCluster(t, 1, "events")
	p := budgetPipeline("events", -1)
	off := false
	p.Tables[0].ConnectorOptions.KafkaOptions.FailOnDataLoss = &off
	m := startManager(t, addr, p)
	value := func(i int) string {
		if i%10 == 3 {
			return "{broken"
		}
		return fmt.Sprintf(`{"id":%d}`, i)
	}
	status := func() spec.TableStatus { st, _ := m.Status("p"); return st.Tables[0] }
	produce(t, producer, 0, 20, value)
	waitFor(t, 10*time.Second, "18 rows and 2 error records", func() bool { st := status(); return st.Rows == 18 && st.ErrorRecords == 2 })
	recreateTopic(t, producer, "events")
	fresh := topicProducer(t, addr, "events")
	produce(t, fresh, 0, 5, value) // offset 3 is bad again
	waitFor(t, 20*time.Second, "22 rows and 3 error records", func() bool { st := status(); return st.Rows == 22 && st.ErrorRecords == 3 })
	rows, _ := tabletest.ReadTable[dirtyRow](t, filepath.Join(filepath.Dir(status().Location), spec.DirtyRecordsTable))
	if got := dirtyOffsets(rows); !slices.Equal(got, []int64{3, 3, 13}) {
		t.Fatalf("dirty records at offsets %v, want 3 and 13 of the old topic and 3 of the new one", got)
	}
}
