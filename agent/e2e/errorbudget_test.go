//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// tableRead is what testdata/read_table.py prints: the table's columns and
// the rows each reader sees.
type tableRead struct {
	Columns [][2]string                 `json:"columns"`
	Rows    map[string][]map[string]any `json:"rows"`
}

// readTable reads the local table at location with delta-rs, DuckDB and
// pyarrow (testdata/read_table.py), keeping columns (all when empty) and
// sorting the rows by order, and fails the test unless the three readers
// see the same rows. It returns the columns and delta-rs's rows.
func readTable(t *testing.T, location string, columns, order []string) ([][2]string, []map[string]any) {
	t.Helper()
	out := python(t, "read_table.py", location, "--columns", strings.Join(columns, ","), "--order", strings.Join(order, ","))
	var r tableRead
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("read_table.py %s: %v\n%s", location, err, out)
	}
	want, _ := json.Marshal(r.Rows["delta-rs"])
	for _, reader := range []string{"duckdb", "pyarrow"} {
		if got, _ := json.Marshal(r.Rows[reader]); string(got) != string(want) {
			t.Errorf("%s reads %s as\n%s\ndelta-rs as\n%s", reader, filepath.Base(location), got, want)
		}
	}
	return r.Columns, r.Rows["delta-rs"]
}

// budgetPipeline is a pipeline of one table, events, reading topic from
// the earliest offset with produce.py's JSON schema and the source metadata
// column _kafka, leaving out the records that do not decode
// (ignore_errors) up to limit of them.
func budgetPipeline(name, topic string, limit int64) *spec.Pipeline {
	on := true
	return &spec.Pipeline{
		Name: name, Connection: name, DestinationCatalog: "main", DestinationSchema: "e2e",
		FlushInterval: "300ms", MaxRowsPerFile: 5_000,
		Tables: []spec.Table{{
			DestinationTable: "events",
			ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
				Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest,
				IgnoreErrors: &on, ErrorToleranceMaxCount: &limit,
				KeyTransformer:   &spec.Transformer{Format: spec.FormatString},
				ValueTransformer: &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: eventsSchema}},
			}},
			TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"},
		}},
	}
}

// applyPipeline puts p and its connection (named as p's) to the agent.
func (a *agent) applyPipeline(p *spec.Pipeline) {
	a.t.Helper()
	ctx := context.Background()
	c := a.client()
	if _, err := c.PutConnection(ctx, &spec.Connection{Name: p.Connection, BootstrapServers: []string{env.bootstrap}}); err != nil {
		a.t.Fatal(err)
	}
	if _, err := c.PutPipeline(ctx, p); err != nil {
		a.t.Fatal(err)
	}
}

// dirtyRows returns the rows of the dirty records table next to the table
// at location, sorted by partition and offset.
func dirtyRows(t *testing.T, location string) []map[string]any {
	t.Helper()
	cols, rows := readTable(t, filepath.Join(filepath.Dir(location), spec.DirtyRecordsTable), nil, []string{"partition", "offset"})
	var names []string
	for _, c := range cols {
		names = append(names, c[0])
	}
	if want := []string{"key", "value", "topic", "partition", "offset", "timestamp", "timestamp_type", "headers", "table", "error",
		"error_time"}; !slices.Equal(names, want) {
		t.Errorf("%s has columns %v, want %v", spec.DirtyRecordsTable, names, want)
	}
	return rows
}

// checkDirty checks that the dirty rows are exactly the records of topic,
// partition 0, at offsets, each once, as produce.py wrote them malformed
// (record i at offset first+i), left out by table events.
func checkDirty(t *testing.T, rows []map[string]any, topic string, offsets []int64, first int64) {
	t.Helper()
	var got []int64
	for _, r := range rows {
		off := int64(r["offset"].(float64))
		got = append(got, off)
		i := off - first
		want := map[string]any{"key": strconv.FormatInt(i, 10), "value": fmt.Sprintf(`{"id": %d, "name": "broken`, i),
			"topic": topic, "partition": 0.0, "table": "events", "timestamp_type": 0.0}
		for k, v := range want {
			if r[k] != v {
				t.Errorf("dirty record at offset %d: %s = %#v, want %#v", off, k, r[k], v)
			}
		}
		if e, _ := r["error"].(string); !strings.Contains(e, "value does not decode") {
			t.Errorf("dirty record at offset %d: error %q", off, e)
		}
		if r["error_time"] == nil || r["timestamp"] == nil {
			t.Errorf("dirty record at offset %d: no error_time or timestamp: %v", off, r)
		}
	}
	if !slices.Equal(got, offsets) {
		t.Errorf("dirty records at offsets %v, want %v", got, offsets)
	}
}

// checkGood checks that the table at location holds exactly one row per
// offset of partition 0 from 0 to end-1 but bad, as read by all three
// readers, with the id produce.py gave it.
func checkGood(t *testing.T, location string, end int64, bad []int64, firstOf func(off int64) int64) {
	t.Helper()
	_, rows := readTable(t, location, []string{"id", "_kafka"}, []string{"_kafka"})
	var want, got []int64
	for off := range end {
		if !slices.Contains(bad, off) {
			want = append(want, off)
		}
	}
	for _, r := range rows {
		m := r["_kafka"].(map[string]any)
		off := int64(m["offset"].(float64))
		got = append(got, off)
		if id := int64(r["id"].(float64)); id != off-firstOf(off) {
			t.Errorf("row at offset %d has id %d, want %d", off, id, off-firstOf(off))
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("table rows at %d offsets, want %d (0..%d but %v); first ones %v", len(got), len(want), end-1, bad, got[:min(len(got), 20)])
	}
}

// TestErrorBudget produces JSON records among which some are malformed, to
// a table with kafka_options.ignore_errors and error_tolerance_max_count 3:
// the three bad records get no row, are counted in the status and the
// metric, and are in main.e2e._dirty_records with their exact offsets,
// bytes and error, as delta-rs, DuckDB and pyarrow read it. A fourth bad
// record fails the table, naming the count, the limit, the record and the
// dirty records table, and nothing of its chunk is committed; after a
// restart the count is read back from the log and the table fails again.
func TestErrorBudget(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	name := uniqueName("e2e-budget")
	topic := uniqueName("e2e-budget")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "300", "--partitions", "1",
		"--malformed", "5,77,150")
	a.applyPipeline(budgetPipeline(name, topic, 3))
	st, _ := a.pollTable(name, 0, 2*time.Minute, func(_ *spec.PipelineStatus, ts spec.TableStatus) bool {
		return ts.Rows >= 297 && ts.ErrorRecords >= 3
	})
	if st.Rows != 297 || st.ErrorRecords != 3 || st.CorruptRecords != 0 || st.State != spec.StateRunning {
		t.Fatalf("status %+v, want RUNNING with 297 rows, 3 error records and no corrupt one\nagent log:\n%s", st, a.log())
	}
	series := fmt.Sprintf(`tributary_table_error_records_total{pipeline=%q,table="main.e2e.events"} 3`, name)
	if m := a.metrics(); !strings.Contains(m, series+"\n") {
		t.Errorf("/metrics lacks %s", series)
	}
	checkDirty(t, dirtyRows(t, st.Location), topic, []int64{5, 77, 150}, 0)
	checkGood(t, st.Location, 300, []int64{5, 77, 150}, func(int64) int64 { return 0 })

	// The fourth bad record, at offset 302, passes the limit.
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "20", "--partitions", "1", "--malformed", "2")
	st, failed := a.waitTableFailed(name, 0, 2*time.Minute)
	if !failed {
		t.FailNow()
	}
	for _, want := range []string{"4 records of table events", "error_tolerance_max_count (3)", topic + "[0]@302",
		"main.e2e._dirty_records"} {
		if !strings.Contains(st.LastError, want) {
			t.Errorf("last error %q lacks %q", st.LastError, want)
		}
	}
	if st.Rows > 300 || st.ErrorRecords != 3 {
		t.Errorf("failed table: %d rows, %d error records; want at most 300 (nothing of the failing chunk) and 3", st.Rows, st.ErrorRecords)
	}
	rows := st.Rows

	// A restart reads the count back and fails at the same record.
	a.stop()
	a.start()
	st, failed = a.waitTableFailed(name, 0, 2*time.Minute)
	if !failed {
		t.FailNow()
	}
	if st.ErrorRecords != 3 || st.Rows != rows || !strings.Contains(st.LastError, topic+"[0]@302") {
		t.Errorf("after a restart: %d error records, %d rows, last error %q; want 3, %d and the same record", st.ErrorRecords, st.Rows,
			st.LastError, rows)
	}
	checkDirty(t, dirtyRows(t, st.Location), topic, []int64{5, 77, 150}, 0)
}

// TestErrorBudgetCrash kills the agent with SIGKILL at four random moments
// while records, every 97th malformed, are produced to a table with
// ignore_errors and no limit, restarting it each time. The dirty records
// table is committed before the table's own commit, so a kill between the
// two makes the table offer those records again: afterwards every bad
// record is in _dirty_records exactly once and every good one in the
// table exactly once, and the count in the status is the number of bad
// ones.
func TestErrorBudgetCrash(t *testing.T) {
	t.Parallel()
	a := startAgent(t, t.TempDir())
	name := uniqueName("e2e-budget-crash")
	topic := uniqueName("e2e-budget-crash")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "0", "--partitions", "1")
	a.applyPipeline(budgetPipeline(name, topic, -1))

	const total = 60_000
	var bad []int64
	var malformed []string
	for i := int64(3); i < total; i += 97 {
		bad = append(bad, i)
		malformed = append(malformed, strconv.FormatInt(i, 10))
	}
	a.produceWhile(t, kills(4, 700*time.Millisecond, 2000*time.Millisecond), "produce.py", "--bootstrap", env.bootstrap,
		"--topic", topic, "--count", strconv.Itoa(total), "--partitions", "1", "--rate", "10000", "--malformed", strings.Join(malformed, ","))
	want := int64(total - len(bad))
	st, _ := a.pollTable(name, 0, 3*time.Minute, func(_ *spec.PipelineStatus, ts spec.TableStatus) bool {
		return ts.Rows >= want && ts.ErrorRecords >= int64(len(bad))
	})
	if st.Rows != want || st.ErrorRecords != int64(len(bad)) {
		t.Errorf("status: %d rows, %d error records; want %d and %d", st.Rows, st.ErrorRecords, want, len(bad))
	}
	checkDirty(t, dirtyRows(t, st.Location), topic, bad, 0)
	checkGood(t, st.Location, total, bad, func(int64) int64 { return 0 })
}
