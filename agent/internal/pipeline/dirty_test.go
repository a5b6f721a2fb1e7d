package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// dirtyRow is a row of the dirty records table.
type dirtyRow struct {
	Key       []byte `parquet:"key,optional"`
	Value     []byte `parquet:"value,optional"`
	Topic     string `parquet:"topic,optional"`
	Partition int32  `parquet:"partition,optional"`
	Offset    int64  `parquet:"offset,optional"`
	Table     string `parquet:"table,optional"`
	Error     string `parquet:"error,optional"`
	ErrorTime int64  `parquet:"error_time,optional"`
}

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
// restart reads the count back and fails again on the same chunk.
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
	rows, _ := readTable[dirtyRow](t, dirtyDir)
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
	// committed, what came before it is.
	bad[103] = true
	produce(t, producer, 100, 110, value)
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
	if rows, _ := readTable[dirtyRow](t, dirtyDir); len(rows) != 3 {
		t.Fatalf("%d dirty records, want 3", len(rows))
	}
	snap, err := table.ReadSnapshot(status().Location)
	if err != nil {
		t.Fatal(err)
	}
	if snap.NumRows != 97 || snap.Counters[counterErrors] != 3 {
		t.Fatalf("log has %d rows and %d error records, want 97 and 3", snap.NumRows, snap.Counters[counterErrors])
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
	rows, _ := readTable[dirtyRow](t, filepath.Join(filepath.Dir(status().Location), spec.DirtyRecordsTable))
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
// offsets of another table are.
func TestDirtyReplayWritesOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), spec.DirtyRecordsTable)
	d := dirtyTableAt(dir, "main.raw._dirty_records")
	tp := kafka.TopicPartition{Topic: "t", Partition: 1}
	recs := func(offsets ...int64) []dirtyRecord {
		var out []dirtyRecord
		for _, o := range offsets {
			r := decode.Record{Topic: "t", Partition: 1, Offset: o, Value: []byte("x")}
			out = append(out, newDirtyRecord(&r, errors.New("bad"), time.Now()))
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
		if err := d.commit(s.dest, recs(s.offsets...), map[kafka.TopicPartition]int64{tp: s.next}, opts); err != nil {
			t.Fatal(err)
		}
	}
	rows, snap := readTable[dirtyRow](t, dir)
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
}
