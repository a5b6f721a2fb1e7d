package fanout

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink/deltasinktest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/fanout/fanouttest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/ingest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafkatest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The events the tests route, by type, and the check of the routed tables.
var (
	fanoutTypes = fanouttest.Types
	fanoutEvent = fanouttest.Event
	checkRouted = fanouttest.CheckRouted
)

// The cluster the tests run, its producer and the runners' client.
var (
	newCluster     = kafkatest.NewCluster
	produce        = kafkatest.Produce
	deleteRecords  = kafkatest.DeleteRecords
	newKafkaClient = kafkatest.NewClient
	waitFor        = kafkatest.WaitFor
)

// routeByType routes by the JSON value's "type" field, as
// cast(value AS STRING):type would: NULL when missing.
func routeByType(r *record.Record) (string, bool, error) {
	var v struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(r.Value, &v); err != nil || v.Type == nil {
		return "", true, nil
	}
	return *v.Type, false, nil
}

// testFanoutConfig returns the configuration of a fanout schema routing
// topic's records into warehouse/main/events, parsing the value with the
// JSON schema "type STRING, id BIGINT".
func testFanoutConfig(warehouse, topic string, conn *spec.Connection) Config {
	return Config{
		Pipeline: "p",
		Fanout:   fanouttest.Schema(topic),
		Dir:      filepath.Join(warehouse, "main", "events"),
		Conn:     *conn,
		Settings: runner.Settings{
			FlushEvery: 200 * time.Millisecond,
			MaxRows:    spec.DefaultMaxRowsPerFile,
			MaxBytes:   spec.DefaultTargetFileSizeMB << 20,
			Continuous: true,
			GCGrace:    time.Hour,
		},
	}
}

// fanoutFixture is a cluster with topic "events" of 4 partitions, its
// producer and a client for runners.
type fanoutFixture struct {
	conn     *spec.Connection
	producer *kgo.Client
	client   *kafka.Client
}

func newFanoutFixture(t testing.TB) *fanoutFixture {
	addr, producer := newCluster(t, 4, "events")
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	client := newKafkaClient(t, conn)
	return &fanoutFixture{conn: conn, producer: producer, client: client}
}

// run starts a runner of cfg routing by route, with crash set; it is
// stopped at the end of the test. route must be a function of the record
// alone, which any goroutine may call.
func (fx *fanoutFixture) run(t testing.TB, cfg Config, route RouteFunc, budget *memory.Budget,
	crash func(string) error) *Runner {
	return fx.runWith(t, cfg, func() (Route, error) { return Route{Func: route}, nil }, budget, crash)
}

// runWith is run with the routes newRoute makes.
func (fx *fanoutFixture) runWith(t testing.TB, cfg Config, newRoute NewRoute, budget *memory.Budget,
	crash func(string) error) *Runner {
	if budget == nil {
		budget = memory.New(1 << 40)
	}
	src := ingest.NewSource(fx.client, budget, slog.Default())
	t.Cleanup(src.Close)
	r := newFanoutRunner(cfg, fx.client, src, newRoute, &ingest.Registries{}, budget, slog.Default())
	r.crash = crash
	r.start()
	t.Cleanup(r.Stop)
	return r
}

// fanoutRows sums the rows of the runner's tables.
func fanoutRows(r *Runner) (rows int64) {
	for _, ts := range r.Status().Tables {
		rows += ts.Rows
	}
	return rows
}

func TestFanoutRoutesToFiveTables(t *testing.T) {
	fx := newFanoutFixture(t)
	warehouse := t.TempDir()
	const n = 1000
	produce(t, fx.producer, 0, n, fanoutEvent)
	cfg := testFanoutConfig(warehouse, "events", fx.conn)
	r := fx.run(t, cfg, routeByType, nil, nil)
	waitFor(t, 20*time.Second, "every record", func() bool { return fanoutRows(r) == n })
	st := r.Status()
	var names []string
	for _, ts := range st.Tables {
		names = append(names, ts.DestinationTable)
	}
	if st.State != spec.StateRunning || strings.Join(names, ",") != "buy,click,login,logout,view" {
		t.Fatalf("status %+v, want RUNNING with the five tables", st)
	}
	r.Stop()
	checkRouted(t, cfg.Dir, n, nil)
	// The progress log is where every partition's records are committed.
	snap, err := table.ReadSnapshot(filepath.Join(cfg.Dir, progressDir))
	if err != nil {
		t.Fatal(err)
	}
	var next int64
	for _, off := range snap.Txns {
		next += off
	}
	if next != n {
		t.Fatalf("the progress log's offsets sum to %d, want %d", next, n)
	}
	// Each partition's first batch has records of every type: the five
	// tables opened together and were recorded in one commit.
	if counts := tablesRecorded(t, cfg.Dir); !slices.Equal(counts, []int{5}) {
		t.Fatalf("the progress log's commits recorded %v tables, want the five in one commit", counts)
	}
}

// tablesRecorded returns how many tables the progress log of the fanout
// schema in dir had recorded after each commit that recorded one.
func tablesRecorded(t *testing.T, dir string) []int {
	t.Helper()
	logDir := filepath.Join(dir, progressDir, "_delta_log")
	entries, err := os.ReadDir(logDir)
	if err != nil {
		t.Fatal(err)
	}
	var counts []int
	for _, e := range entries { // in version order: the names are zero-padded
		if filepath.Ext(e.Name()) != ".json" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(logDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			var a struct {
				MetaData *struct{ Configuration map[string]string } `json:"metaData"`
			}
			if err := json.Unmarshal([]byte(line), &a); err != nil {
				t.Fatal(err)
			}
			if a.MetaData == nil {
				continue
			}
			n := 0
			for k := range a.MetaData.Configuration {
				if strings.HasPrefix(k, progressTableKey) {
					n++
				}
			}
			if n > 0 && (len(counts) == 0 || counts[len(counts)-1] != n) {
				counts = append(counts, n)
			}
		}
	}
	return counts
}

// Without json_options, the transformed column is a VARIANT.
func TestFanoutVariantColumn(t *testing.T) {
	fx := newFanoutFixture(t)
	produce(t, fx.producer, 0, 50, fanoutEvent)
	cfg := testFanoutConfig(t.TempDir(), "events", fx.conn)
	cfg.Fanout.FanoutOptions.Transforms[0].JSONOptions = nil
	r := fx.run(t, cfg, routeByType, nil, nil)
	waitFor(t, 20*time.Second, "every record", func() bool { return fanoutRows(r) == 50 })
	for _, ts := range r.Status().Tables {
		if len(ts.Columns) == 0 || ts.Columns[1].Name != "value" || ts.Columns[1].Type != "VARIANT" {
			t.Fatalf("table %s has columns %+v, want value VARIANT", ts.DestinationTable, ts.Columns)
		}
	}
}

// With schema_evolution_mode, a table's columns are inferred from the
// records routed to it, and grow with new fields.
func TestFanoutInfersColumns(t *testing.T) {
	fx := newFanoutFixture(t)
	produce(t, fx.producer, 0, 100, fanoutEvent)
	cfg := testFanoutConfig(t.TempDir(), "events", fx.conn)
	cfg.Fanout.FanoutOptions.Transforms[0].JSONOptions = &spec.JSONOptions{
		SchemaEvolutionMode: spec.SchemaEvolutionAddNewColumns}
	r := fx.run(t, cfg, routeByType, nil, nil)
	waitFor(t, 20*time.Second, "every record", func() bool { return fanoutRows(r) == 100 })
	produce(t, fx.producer, 100, 101, func(int) string { return `{"type":"click","id":100,"extra":true}` })
	columns := func(name string) string {
		for _, ts := range r.Status().Tables {
			if ts.DestinationTable == name {
				var cols []string
				for _, c := range ts.Columns {
					cols = append(cols, c.Name)
				}
				return strings.Join(cols, ",")
			}
		}
		return ""
	}
	waitFor(t, 20*time.Second, "the new column", func() bool { return strings.Contains(columns("click"), "extra") })
	if got := columns("view"); strings.Contains(got, "extra") || !strings.Contains(got, "id") {
		t.Fatalf("view has columns %s, want its own only", got)
	}
}

// badRoutes are values whose route is invalid: missing, all digits, a dot,
// a space.
var badRoutes = map[int]string{
	3:   `{"id":3}`,
	101: `{"type":"123","id":101}`,
	202: `{"type":"a.b","id":202}`,
	303: `{"type":"has space","id":303}`,
}

func badEvent(i int) string {
	if v, ok := badRoutes[i]; ok {
		return v
	}
	return fanoutEvent(i)
}

func TestFanoutInvalidRouteFails(t *testing.T) {
	fx := newFanoutFixture(t)
	produce(t, fx.producer, 0, 400, badEvent)
	cfg := testFanoutConfig(t.TempDir(), "events", fx.conn)
	r := fx.run(t, cfg, routeByType, nil, nil)
	waitFor(t, 20*time.Second, "FAILED", func() bool { return r.Status().State == spec.StateFailed })
	st := r.Status()
	if !strings.Contains(st.LastError, "events[") || !strings.Contains(st.LastError, "cannot be routed") {
		t.Fatalf("last error %q, want the record named", st.LastError)
	}
	t.Logf("%s", st.LastError)
}

func TestFanoutInvalidRouteDeadLetters(t *testing.T) {
	fx := newFanoutFixture(t)
	const n = 400
	produce(t, fx.producer, 0, n, badEvent)
	cfg := testFanoutConfig(t.TempDir(), "events", fx.conn)
	cfg.Fanout.FanoutOptions.OnInvalidRoute = spec.OnInvalidRouteDeadLetter
	r := fx.run(t, cfg, routeByType, nil, nil)
	waitFor(t, 20*time.Second, "every record", func() bool { return fanoutRows(r) == n })
	r.Stop()
	checkRouted(t, cfg.Dir, n, func(i int) bool { _, bad := badRoutes[i]; return bad })
	type deadRow struct {
		Key       []byte `parquet:"key,optional"`
		Value     []byte `parquet:"value,optional"`
		Topic     string `parquet:"topic,optional"`
		Partition int32  `parquet:"partition,optional"`
		Offset    int64  `parquet:"offset,optional"`
		Error     string `parquet:"error,optional"`
	}
	rows, _ := tabletest.ReadTable[deadRow](t, filepath.Join(cfg.Dir, spec.FanoutErrorsTable))
	if len(rows) != len(badRoutes) {
		t.Fatalf("%d dead letters, want %d: %+v", len(rows), len(badRoutes), rows)
	}
	for _, row := range rows {
		var key int
		if _, err := fmt.Sscan(string(row.Key), &key); err != nil {
			t.Fatal(err)
		}
		if string(row.Value) != badRoutes[key] || row.Topic != "events" || row.Error == "" {
			t.Fatalf("dead letter %+v", row)
		}
		t.Logf("%s", row.Error)
	}
}

// TestFanoutInvalidRouteIgnoreErrors checks that under on_invalid_route
// FAIL, ignore_errors keeps the records that cannot be routed (a malformed
// change event under the default changelog route gives NULL) in the
// dirty records table, with no table and the reason, and routes the
// others.
func TestFanoutInvalidRouteIgnoreErrors(t *testing.T) {
	fx := newFanoutFixture(t)
	const n = 400
	produce(t, fx.producer, 0, n, badEvent)
	cfg := testFanoutConfig(t.TempDir(), "events", fx.conn)
	on := true
	cfg.Fanout.ConnectorOptions.KafkaOptions.IgnoreErrors = &on
	r := fx.run(t, cfg, routeByType, nil, nil)
	waitFor(t, 20*time.Second, "every routed record", func() bool {
		return fanoutRows(r) == n-int64(len(badRoutes)) || r.Status().State == spec.StateFailed
	})
	if st := r.Status(); st.State != spec.StateRunning {
		t.Fatalf("state %s (%s), want RUNNING", st.State, st.LastError)
	}
	r.Stop()
	checkRouted(t, cfg.Dir, n, func(i int) bool { _, bad := badRoutes[i]; return bad })
	rows, _ := tabletest.ReadTable[deltasinktest.DirtyRow](t, filepath.Join(cfg.Dir, spec.DirtyRecordsTable))
	if len(rows) != len(badRoutes) {
		t.Fatalf("%d dirty records, want %d: %+v", len(rows), len(badRoutes), rows)
	}
	for _, row := range rows {
		var key int
		if _, err := fmt.Sscan(string(row.Key), &key); err != nil {
			t.Fatal(err)
		}
		if string(row.Value) != badRoutes[key] || row.Topic != "events" || row.Table != "" ||
			!strings.Contains(row.Error, "cannot be routed") {
			t.Fatalf("dirty record %+v", row)
		}
	}
}

// committedPastProgress reports whether a table of the fanout schema in
// dir committed records of a partition past the progress log's offset.
func committedPastProgress(t *testing.T, dir string) bool {
	progress, err := table.ReadSnapshot(filepath.Join(dir, progressDir))
	if err != nil {
		t.Error(err)
		return false
	}
	for _, typ := range fanoutTypes {
		// A table flushing beside the crashing one may be between its
		// first data file and its first commit: an empty snapshot.
		snap, err := table.ReadSnapshot(filepath.Join(dir, strings.ToLower(typ)))
		if err != nil {
			t.Error(err)
			return false
		}
		for appID, next := range snap.Txns {
			if next > progress.Txns[appID] {
				return true
			}
		}
	}
	return false
}

// A run that crashes between the commits of two tables, or stops without
// its final flush, loses and duplicates nothing once it runs again.
func TestFanoutCrashRestartIsExact(t *testing.T) {
	fx := newFanoutFixture(t)
	cfg := testFanoutConfig(t.TempDir(), "events", fx.conn)
	cfg.FlushEvery = 50 * time.Millisecond
	const half, n = 3000, 4000
	// Every fourth flush of a table crashes, twice: tables flushed in the
	// same round (side by side, so some before it) committed, the progress
	// log was not written, and the runner restarts from the logs. Once
	// failAll is set, every flush fails.
	var flushes, crashes atomic.Int64
	var failAll, between atomic.Bool
	crash := func(string) error {
		if failAll.Load() {
			return fmt.Errorf("crash")
		}
		if flushes.Add(1)%4 == 0 && crashes.Add(1) <= 2 {
			if committedPastProgress(t, cfg.Dir) {
				between.Store(true)
			}
			return fmt.Errorf("crash")
		}
		return nil
	}
	r := fx.run(t, cfg, routeByType, nil, crash)
	for i := 0; i < half; i += 300 {
		produce(t, fx.producer, i, i+300, fanoutEvent)
		time.Sleep(100 * time.Millisecond)
	}
	waitFor(t, 30*time.Second, "every record", func() bool { return fanoutRows(r) == half })
	if crashes.Load() < 2 || !between.Load() {
		t.Fatalf("%d crashes, between two tables' commits %v; want 2, one of them between", crashes.Load(), between.Load())
	}
	failAll.Store(true)
	produce(t, fx.producer, half, n, fanoutEvent)
	time.Sleep(500 * time.Millisecond)
	r.Stop()
	if st := r.Status(); st.State != spec.StateStopped || fanoutRows(r) != half {
		t.Fatalf("status %+v with %d rows, want STOPPED with %d", st.State, fanoutRows(r), half)
	}
	r = fx.run(t, cfg, routeByType, nil, nil)
	waitFor(t, 30*time.Second, "every record", func() bool { return fanoutRows(r) == n })
	r.Stop()
	checkRouted(t, cfg.Dir, n, nil)
}

// When the memory budget is full, the biggest table's open file is
// flushed: the table of large records is flushed again and again, the
// tables of a few small records once, at the end of the triggered run.
func TestFanoutMemoryFlushesTheBiggestTable(t *testing.T) {
	fx := newFanoutFixture(t)
	const n = 6000
	// Random pads, which compress no better than hex does.
	rnd := rand.New(rand.NewPCG(1, 2))
	pad := make([]byte, 1000) // 12 MB in all
	produce(t, fx.producer, 0, n, func(i int) string {
		if i%200 == 0 {
			return fmt.Sprintf(`{"type":"small%d","id":%d}`, i%3, i)
		}
		for j := range pad {
			pad[j] = byte(rnd.Uint32())
		}
		return fmt.Sprintf(`{"type":"big","id":%d,"pad":"%x"}`, i, pad)
	})
	cfg := testFanoutConfig(t.TempDir(), "events", fx.conn)
	cfg.FlushEvery, cfg.Continuous = time.Hour, false
	cfg.Fanout.FanoutOptions.Transforms[0].JSONOptions.Schema = "type STRING, id BIGINT, pad STRING"
	budget := memory.New(4 << 20)
	r := fx.run(t, cfg, routeByType, budget, nil)
	waitFor(t, 60*time.Second, "IDLE", func() bool { return r.Status().State == spec.StateIdle })
	st := r.Status()
	seen := map[int64]int{}
	for _, ts := range st.Tables {
		rows, snap := tabletest.ReadTable[fanouttest.EventRow](t, ts.Location)
		for _, row := range rows {
			seen[*row.ID]++
		}
		switch want := ts.DestinationTable == "big"; {
		case want && snap.NumFiles < 3:
			t.Fatalf("the big table has %d files, want it flushed for room", snap.NumFiles)
		case !want && snap.NumFiles != 1:
			t.Fatalf("table %s has %d files, want the one of the end of the run", ts.DestinationTable, snap.NumFiles)
		}
	}
	if len(seen) != n {
		t.Fatalf("%d records written, want %d", len(seen), n)
	}
	for id, k := range seen {
		if k != 1 {
			t.Fatalf("record %d written %d times", id, k)
		}
	}
	r.Stop()
	if used := budget.Stats().Used; used != 0 {
		t.Fatalf("the fanout stopped, yet %d bytes of the budget are still held", used)
	}
}

// A record a FAILFAST transformer cannot decode fails the fanout, naming
// the table and the record.
func TestFanoutFailFastNamesTableAndRecord(t *testing.T) {
	fx := newFanoutFixture(t)
	produce(t, fx.producer, 0, 10, fanoutEvent)
	cfg := testFanoutConfig(t.TempDir(), "events", fx.conn)
	cfg.Fanout.ConnectorOptions.KafkaOptions.KeyTransformer = &spec.Transformer{Format: spec.FormatAvro, AvroOptions: &spec.AvroOptions{
		Schema: `{"type":"record","name":"k","fields":[{"name":"s","type":"string"}]}`, ParseMode: spec.ParseModeFailFast}}
	r := fx.run(t, cfg, routeByType, nil, nil)
	waitFor(t, 20*time.Second, "FAILED", func() bool { return r.Status().State == spec.StateFailed })
	st := r.Status()
	if !strings.Contains(st.LastError, "table ") || !strings.Contains(st.LastError, "events") || fanoutRows(r) != 0 {
		t.Fatalf("status %+v, want FAILED naming the table and record, nothing written", st)
	}
	t.Logf("%s", st.LastError)
}

// A table of a batch that cannot open (one created before with columns the
// transform cannot write) fails the fanout, naming it, while the batch's
// other tables, which opened beside it, are recorded in the progress log
// before anything is written to any of them.
func TestFanoutTableThatCannotOpenFailsTheBatch(t *testing.T) {
	fx := newFanoutFixture(t)
	// 100 records a partition: the first batch has every type.
	produce(t, fx.producer, 0, 400, fanoutEvent)
	cfg := testFanoutConfig(t.TempDir(), "events", fx.conn)
	bad := strings.ToLower(fanoutTypes[0])
	tbl, err := table.Open(filepath.Join(cfg.Dir, bad), table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Commit(table.Commit{Schema: tabletest.Fields(t, "type INT, id BIGINT")}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Close(); err != nil {
		t.Fatal(err)
	}
	r := fx.run(t, cfg, routeByType, nil, nil)
	waitFor(t, 20*time.Second, "FAILED", func() bool { return r.Status().State == spec.StateFailed })
	if st := r.Status(); !strings.Contains(st.LastError, "table "+bad) || fanoutRows(r) != 0 {
		t.Fatalf("status %+v, want FAILED naming table %s, nothing written", st, bad)
	}
	r.Stop()
	if counts := tablesRecorded(t, cfg.Dir); !slices.Equal(counts, []int{len(fanoutTypes) - 1}) {
		t.Fatalf("the progress log recorded %v tables, want the %d others in one commit", counts, len(fanoutTypes)-1)
	}
}

// Stopping a fanout schema while it writes a batch finishes the batch and
// commits what every table buffered (the final flush): the stop never turns
// into a decode error that drops the buffered rows.
func TestFanoutStopMidWriteFlushes(t *testing.T) {
	fx := newFanoutFixture(t)
	cfg := testFanoutConfig(t.TempDir(), "events", fx.conn)
	cfg.FlushEvery = time.Hour
	const rounds, per = 3, 20000
	for round := range rounds {
		produce(t, fx.producer, round*per, (round+1)*per, fanoutEvent)
		r := fx.run(t, cfg, routeByType, nil, nil)
		time.Sleep(time.Duration(200+round*50) * time.Millisecond)
		r.Stop()
		if st := r.Status(); st.State != spec.StateStopped || st.LastError != "" {
			t.Fatalf("round %d: stopped %s with %q; the final flush must commit what was buffered", round, st.State, st.LastError)
		}
	}
	cfg.FlushEvery = 200 * time.Millisecond
	r := fx.run(t, cfg, routeByType, nil, nil)
	waitFor(t, 60*time.Second, "every record", func() bool { return fanoutRows(r) == rounds*per })
	r.Stop()
	checkRouted(t, cfg.Dir, rounds*per, nil)
}

// A wave of decoding chunks never holds more chunks of one table than the
// table's decoder pool, which was sized when the table opened: GOMAXPROCS
// may grow at run time (from a container's CPU limit), and a wave waiting
// for a decoder it holds itself would stop the fanout.
func TestFanoutSurvivesGOMAXPROCSRise(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	fx := newFanoutFixture(t)
	ev := func(i int) string { return fmt.Sprintf(`{"type":"click","id":%d}`, i) }
	produce(t, fx.producer, 0, 10, ev)
	r := fx.run(t, testFanoutConfig(t.TempDir(), "events", fx.conn), routeByType, nil, nil)
	waitFor(t, 20*time.Second, "the first records", func() bool { return fanoutRows(r) == 10 })
	runtime.GOMAXPROCS(8)
	const n = 40000
	produce(t, fx.producer, 10, n, ev)
	waitFor(t, 30*time.Second, "every record", func() bool { return fanoutRows(r) == n })
}

// A new fanout_by is refused, the fanout FAILED and nothing lost, while a
// table holds records committed past the progress log (a stop whose final
// flush failed after one table committed): the new expression could send
// records that table committed to another that skips them. Back on the old
// expression, the fanout resumes and every table ends exact.
func TestFanoutRouteChangeAfterUncleanStopIsRefused(t *testing.T) {
	fx := newFanoutFixture(t)
	cfg := testFanoutConfig(t.TempDir(), "events", fx.conn)
	cfg.FlushEvery = time.Hour
	const n = 1000
	produce(t, fx.producer, 0, n, fanoutEvent)
	// The first table to flush commits; every other flush fails, so the
	// progress log stays behind it.
	var first atomic.Value
	crash := func(name string) error {
		if first.CompareAndSwap(nil, name) || name == first.Load() {
			return nil
		}
		return fmt.Errorf("crash")
	}
	r := fx.run(t, cfg, routeByType, nil, crash)
	waitFor(t, 20*time.Second, "five tables", func() bool { return len(r.Status().Tables) == len(fanoutTypes) })
	r.Stop()

	changed := cfg
	changed.Fanout.FanoutOptions.FanoutBy = "'everything'"
	everything := func(*record.Record) (string, bool, error) { return "everything", false, nil }
	r = fx.run(t, changed, everything, nil, nil)
	waitFor(t, 20*time.Second, "FAILED", func() bool { return r.Status().State == spec.StateFailed })
	if msg := r.Status().LastError; !strings.Contains(msg, "fanout_by changed") || !strings.Contains(msg, "apply the previous fanout_by") {
		t.Fatalf("last error %q, want the refusal of the new fanout_by", msg)
	}
	r.Stop()

	cfg.FlushEvery = 200 * time.Millisecond
	r = fx.run(t, cfg, routeByType, nil, nil)
	waitFor(t, 30*time.Second, "every record", func() bool { return fanoutRows(r) == n })
	r.Stop()
	checkRouted(t, cfg.Dir, n, nil)
}

// parsedEvents are values whose route a router that parses them as
// VARIANT values must read as the route reads their text: a name in
// another case, a null match passed over, an escape in the name, and
// values the VARIANT encoder refuses but the route reads (single quotes,
// a key twice, text after the value), which their tables keep as corrupt,
// and values with no valid route.
var parsedEvents = []string{
	`{"TYPE":"view","id":%d}`,
	`{"type":null,"Type":"buy","id":%d}`,
	`{"type":"Lo\u0067out","id":%d}`,
	`{'type':'click','id':%d}`,
	`{"type":"click","type":"view","id":%d}`,
	`{"type":"login","id":%d} and more`,
	`{"id":%d}`,
	`[%d]`,
	`{"type":7,"id":%d}`,
}

// TestFanoutParsedValuesMatchReadingAgain routes VARIANT values by a
// JSON path on the value twice, once with the router parsing each value
// for its route and its table, once with the route reading the text
// again, and checks that every table holds the same rows.
func TestFanoutParsedValuesMatchReadingAgain(t *testing.T) {
	fx := newFanoutFixture(t)
	const n = 600
	produce(t, fx.producer, 0, n, func(i int) string {
		if i%3 == 0 {
			return fmt.Sprintf(parsedEvents[(i/3)%len(parsedEvents)], i)
		}
		return fanoutEvent(i)
	})
	compiled := Compiled("cast(value AS STRING):type")
	reading := func() (Route, error) {
		r, err := compiled()
		return Route{Func: r.Func}, err // no Path: the route reads the text
	}
	var tables [2]map[string][]string
	for k, newRoute := range []NewRoute{compiled, reading} {
		cfg := testFanoutConfig(t.TempDir(), "events", fx.conn)
		cfg.Fanout.FanoutOptions.Transforms[0].JSONOptions = nil // VARIANT
		cfg.Fanout.FanoutOptions.OnInvalidRoute = spec.OnInvalidRouteDeadLetter
		budget := memory.New(1 << 40)
		r := fx.runWith(t, cfg, newRoute, budget, nil)
		waitFor(t, 20*time.Second, "every record", func() bool { return fanoutRows(r) == n })
		r.Stop()
		// The source's fetch in flight when the runner stopped gives its
		// bytes back when it ends.
		waitFor(t, 10*time.Second, fmt.Sprintf("run %d: the budget empty", k), func() bool { return budget.Stats().Used == 0 })
		tables[k] = parsedTables(t, cfg.Dir)
	}
	if got, want := tables[0], tables[1]; !maps.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("parsed:\n%v\nread again:\n%v", got, want)
	}
	dead := 0
	for i := 0; i < n; i += 3 {
		if (i/3)%len(parsedEvents) >= 6 {
			dead++
		}
	}
	if rows := tables[0]; len(rows[spec.FanoutErrorsTable]) != dead || len(rows) != 6 {
		t.Fatalf("tables %v, want five and %d dead letters", rows, dead)
	}
}

// parsedTables returns the rows of the tables in dir, by table: each row's
// offset, value and corrupt record, sorted.
func parsedTables(t *testing.T, dir string) map[string][]string {
	t.Helper()
	type row struct {
		Value *struct {
			Metadata []byte `parquet:"metadata"`
			Value    []byte `parquet:"value"`
		} `parquet:"value,optional"`
		Kafka *struct {
			Partition int32 `parquet:"partition"`
			Offset    int64 `parquet:"offset"`
		} `parquet:"_kafka,optional"`
		Corrupt []byte `parquet:"_corrupt_record,optional"`
	}
	type dead struct {
		Value     []byte `parquet:"value,optional"`
		Partition int32  `parquet:"partition,optional"`
		Offset    int64  `parquet:"offset,optional"`
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string][]string{}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_dirty") {
			continue
		}
		var got []string
		if name == spec.FanoutErrorsTable {
			rows, _ := tabletest.ReadTable[dead](t, filepath.Join(dir, name))
			for _, r := range rows {
				got = append(got, fmt.Sprintf("%d@%d %s", r.Partition, r.Offset, r.Value))
			}
		} else {
			rows, _ := tabletest.ReadTable[row](t, filepath.Join(dir, name))
			for _, r := range rows {
				s := fmt.Sprintf("%d@%d", r.Kafka.Partition, r.Kafka.Offset)
				if r.Value != nil {
					s += fmt.Sprintf(" %x %x", r.Value.Metadata, r.Value.Value)
				}
				got = append(got, s+" corrupt "+string(r.Corrupt))
			}
		}
		slices.Sort(got)
		tables[name] = got
	}
	return tables
}
