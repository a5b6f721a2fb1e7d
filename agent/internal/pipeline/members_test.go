package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/expr"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/fanout/fanouttest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/objstoretest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// fakeMembers is the membership of one agent in these tests: it records
// the groups its manager joins, and the test gives the assignments, as a
// group's rebalances would, by calling assign.
type fakeMembers struct {
	mu     sync.Mutex
	groups map[string]*fakeGroup
	// joins counts the groups joined.
	joins int
	// refuse, when set, is the error of the next Join.
	refuse error
}

// fakeGroup is one group a manager joined.
type fakeGroup struct {
	partitions func(context.Context) ([]kafka.TopicPartition, error)
	onAssign   func(context.Context, []kafka.TopicPartition) error
	left       bool
}

func (f *fakeMembers) Join(_ context.Context, key string, _ *spec.Connection,
	partitions func(context.Context) ([]kafka.TopicPartition, error),
	onAssign func(context.Context, []kafka.TopicPartition) error,
) (func(context.Context) error, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.refuse; err != nil {
		f.refuse = nil
		return nil, err
	}
	if f.groups == nil {
		f.groups = map[string]*fakeGroup{}
	}
	g := &fakeGroup{partitions: partitions, onAssign: onAssign}
	f.groups[key] = g
	f.joins++
	return func(context.Context) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		g.left = true
		return nil
	}, nil
}

// group returns the group of key the manager joined last.
func (f *fakeMembers) group(t *testing.T, key string) *fakeGroup {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.groups[key]
	if g == nil || g.left {
		t.Fatalf("the manager is not a member of %s", key)
	}
	return g
}

// assign gives the agent the partitions of topic numbered ps in the group
// of pipeline "p", and returns once the manager took them.
func (f *fakeMembers) assign(t *testing.T, topic string, ps ...int) {
	t.Helper()
	f.assignIn(t, "pipeline/p", topic, ps...)
}

// assignIn gives the agent the partitions of topic numbered ps in the
// group of key, and returns once the manager took them.
func (f *fakeMembers) assignIn(t *testing.T, key, topic string, ps ...int) {
	t.Helper()
	var owned []kafka.TopicPartition
	for _, p := range ps {
		owned = append(owned, kafka.TopicPartition{Topic: topic, Partition: p})
	}
	if err := f.group(t, key).onAssign(context.Background(), owned); err != nil {
		t.Fatal(err)
	}
}

// logRecorder keeps the lines a manager logs, each its message and its
// own attributes, for tests to look for one.
type logRecorder struct {
	mu    *sync.Mutex
	lines *[]string
}

func newLogRecorder() logRecorder { return logRecorder{mu: &sync.Mutex{}, lines: new([]string)} }

func (l logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (l logRecorder) Handle(_ context.Context, r slog.Record) error {
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	*l.lines = append(*l.lines, line)
	return nil
}

func (l logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }

func (l logRecorder) WithGroup(string) slog.Handler { return l }

// String returns the lines logged so far, one a line.
func (l logRecorder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(*l.lines, "\n")
}

// clusterSetup returns the real broker's address (KAFKA_BOOTSTRAP), a new
// topic of n partitions on it and a producer to it, and a new warehouse
// on the S3-compatible server, which several writers can share (a local
// folder takes one writer). It skips the test without both.
func clusterSetup(t *testing.T, n int32) (bootstrap, topic string, producer *kgo.Client, warehouse string) {
	t.Helper()
	bootstrap = os.Getenv("KAFKA_BOOTSTRAP")
	if bootstrap == "" || testing.Short() {
		t.Skip("KAFKA_BOOTSTRAP is not set (tools/kafka.sh up), or -short")
	}
	name := strings.ToLower(fmt.Sprintf("%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano()))
	warehouse = objstoretest.Root(t, "s3", name)
	producer, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.DefaultProduceTopic(name), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(producer.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(producer).CreateTopics(ctx, n, 1, nil, name); err != nil {
		t.Fatal(err)
	}
	return bootstrap, name, producer, warehouse
}

// clusterAgent is one agent of a cluster in these tests: a manager on the
// shared warehouse whose membership the test drives.
type clusterAgent struct {
	m       *Manager
	members *fakeMembers
	logs    logRecorder
}

// startAgent returns an agent on warehouse that runs p, read from
// bootstrap, stopped at the end of the test.
func startAgent(t *testing.T, warehouse, bootstrap string, p *spec.Pipeline) *clusterAgent {
	t.Helper()
	a := &clusterAgent{members: &fakeMembers{}, logs: newLogRecorder()}
	a.m = NewManager(Config{Warehouse: warehouse, Members: a.members, Logger: slog.New(a.logs)})
	t.Cleanup(func() { a.m.Close(context.Background()) })
	if err := a.m.Apply(context.Background(), p, &spec.Connection{Name: "c", BootstrapServers: []string{bootstrap}}, nil); err != nil {
		t.Fatal(err)
	}
	return a
}

// readingPartitions returns the partitions the agent's table reads, by
// its status.
func (a *clusterAgent) readingPartitions() []int {
	st, _ := a.m.Status("p")
	var ps []int
	for _, p := range st.Tables[0].Partitions {
		ps = append(ps, p.Partition)
	}
	slices.Sort(ps)
	return ps
}

// waitReading waits until the agent's table reads exactly partitions ps.
func (a *clusterAgent) waitReading(t *testing.T, ps ...int) {
	t.Helper()
	waitFor(t, 30*time.Second, fmt.Sprintf("the table to read partitions %v", ps), func() bool {
		st, _ := a.m.Status("p")
		return st.State == spec.StateRunning && slices.Equal(a.readingPartitions(), ps)
	})
}

// kafkaRow is the part of a row these tests read: the record's partition
// and offset, from the source metadata column.
type kafkaRow struct {
	Kafka struct {
		Partition int32 `parquet:"partition"`
		Offset    int64 `parquet:"offset"`
	} `parquet:"_kafka"`
}

// checkEachOffsetOnce fails the test unless the table at location holds
// every record of topic exactly once: n records, each (partition, offset)
// once, and its log's offset of each partition at the partition's end.
func checkEachOffsetOnce(t *testing.T, location, topic string, n int, producer *kgo.Client) {
	t.Helper()
	ends, err := kadm.NewClient(producer).ListEndOffsets(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := table.ReadSnapshot(location)
	if err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	ends.Each(func(o kadm.ListedOffset) {
		total += o.Offset
		if got := snap.Txns[fmt.Sprintf("%s/%d", topic, o.Partition)]; got != o.Offset {
			t.Errorf("partition %d: the log's offset is %d, the partition ends at %d", o.Partition, got, o.Offset)
		}
	})
	if total != int64(n) {
		t.Fatalf("the topic holds %d records, want %d", total, n)
	}

	seen := map[[2]int64]int{}
	for _, row := range readKafkaRows(t, location) {
		seen[[2]int64{int64(row.Kafka.Partition), row.Kafka.Offset}]++
	}
	for po, count := range seen {
		if count != 1 {
			t.Errorf("partition %d offset %d is in the table %d times", po[0], po[1], count)
		}
	}
	if len(seen) != n {
		t.Errorf("the table holds %d distinct records, want %d", len(seen), n)
	}
}

// readKafkaRows reads the metadata column of every row of the table at
// location, file after file as its log added them.
func readKafkaRows(t *testing.T, location string) []kafkaRow {
	t.Helper()
	return readTableRows[kafkaRow](t, location)
}

// readTableRows reads every row of the table at location into an R, file
// after file as its log added them, on any object store.
func readTableRows[R any](t *testing.T, location string) []R {
	t.Helper()
	changes, err := table.OpenChanges(location)
	if err != nil {
		t.Fatal(err)
	}
	defer changes.Close()
	versions, err := changes.Changes(0, math.MaxInt)
	if err != nil {
		t.Fatal(err)
	}
	s, err := storage.Open(location, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []R
	for _, v := range versions {
		for _, name := range v.Files {
			f, err := s.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			pf, err := parquet.OpenFile(f, f.Size())
			if err != nil {
				t.Fatal(err)
			}
			rows := make([]R, pf.NumRows())
			r := parquet.NewGenericReader[R](pf)
			if n, err := r.Read(rows); n != len(rows) {
				t.Fatalf("%s: read %d rows of %d: %v", name, n, len(rows), err)
			}
			_ = r.Close()
			_ = f.Close()
			out = append(out, rows...)
		}
	}
	return out
}

// waitCommitted waits until the log of the table at location holds
// offsets of topic's partitions summing to n.
func waitCommitted(t *testing.T, location, topic string, n int64) {
	t.Helper()
	waitFor(t, 60*time.Second, fmt.Sprintf("%d records committed", n), func() bool {
		snap, err := table.ReadSnapshot(location)
		if err != nil {
			return false
		}
		var sum int64
		for id, next := range snap.Txns {
			if strings.HasPrefix(id, topic+"/") {
				sum += next
			}
		}
		return sum == n
	})
}

// clusterPipeline is testPipeline(topic) with a metadata column the
// exactly-once checks read.
func clusterPipeline(topic string) *spec.Pipeline {
	p := testPipeline(topic)
	p.Tables[0].ConnectorOptions.KafkaOptions.ValueTransformer.JSONOptions.Schema = "id BIGINT"
	return p
}

func jsonID(i int) string { return fmt.Sprintf(`{"id":%d}`, i) }

// Two agents whose membership gives each half the partitions of a topic
// ingest it into one table exactly once, each reading only its own half;
// before its first assignment an agent reads nothing.
func TestRealBrokerClusterSplitsPartitions(t *testing.T) {
	bootstrap, topic, producer, warehouse := clusterSetup(t, 4)
	produce(t, producer, 0, 2000, jsonID)
	p := clusterPipeline(topic)
	a := startAgent(t, warehouse, bootstrap, p)
	b := startAgent(t, warehouse, bootstrap, p)

	// The group shares every partition the pipeline's tables read.
	tps, err := a.members.group(t, "pipeline/p").partitions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tps) != 4 || tps[0] != (kafka.TopicPartition{Topic: topic, Partition: 0}) {
		t.Fatalf("the group shares %v, want the 4 partitions of %s", tps, topic)
	}
	if st, _ := a.m.Status("p"); st.State != spec.StateStarting || st.Tables[0].Version != -1 {
		t.Fatalf("status before the first assignment %+v, want STARTING, the table not opened", st)
	}

	a.members.assign(t, topic, 0, 1)
	b.members.assign(t, topic, 2, 3)
	location := spec.JoinLocation(warehouse, "main", "raw", "events")
	waitCommitted(t, location, topic, 2000)
	a.waitReading(t, 0, 1)
	b.waitReading(t, 2, 3)
	checkEachOffsetOnce(t, location, topic, 2000, producer)
}

// Partitions moved from one agent to the other while records arrive, the
// revoking agent told first or last (both then own a partition for a
// while), land in the table exactly once; an agent that owns nothing is
// RUNNING, reading no partition.
func TestRealBrokerClusterReassignsPartitions(t *testing.T) {
	bootstrap, topic, producer, warehouse := clusterSetup(t, 4)
	p := clusterPipeline(topic)
	a := startAgent(t, warehouse, bootstrap, p)
	b := startAgent(t, warehouse, bootstrap, p)
	a.members.assign(t, topic, 0, 1, 2, 3)
	b.members.assign(t, topic)
	b.waitReading(t)
	location := spec.JoinLocation(warehouse, "main", "raw", "events")

	produce(t, producer, 0, 1000, jsonID)
	waitCommitted(t, location, topic, 1000)
	var wg sync.WaitGroup
	wg.Go(func() { produce(t, producer, 1000, 2000, jsonID) })
	// A rebalance: the revoking agent gives its partitions up first.
	a.members.assign(t, topic, 0, 1)
	b.members.assign(t, topic, 2, 3)
	wg.Wait()
	wg.Go(func() { produce(t, producer, 2000, 3000, jsonID) })
	// A zombie's view: the new owner starts before the old one lets go.
	b.members.assign(t, topic, 0, 2, 3)
	a.members.assign(t, topic, 1)
	wg.Wait()

	waitCommitted(t, location, topic, 3000)
	a.waitReading(t, 1)
	b.waitReading(t, 0, 2, 3)
	checkEachOffsetOnce(t, location, topic, 3000, producer)
}

// An agent that still reads a partition its group gave another agent (a
// zombie: paused past its session) cannot commit it once the new owner
// did: the commit of what it buffered fails on the partition's offset,
// and what it held is dropped, not written twice.
func TestRealBrokerClusterZombieCannotCommit(t *testing.T) {
	bootstrap, topic, producer, warehouse := clusterSetup(t, 1)
	zombie := clusterPipeline(topic)
	zombie.FlushInterval = "1h" // it commits only when it stops
	a := startAgent(t, warehouse, bootstrap, zombie)
	b := startAgent(t, warehouse, bootstrap, clusterPipeline(topic))
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(a.logs.String())
		}
	})
	a.members.assign(t, topic, 0)
	b.members.assign(t, topic)
	a.waitReading(t, 0)
	location := spec.JoinLocation(warehouse, "main", "raw", "events")

	produce(t, producer, 0, 300, jsonID)
	waitFor(t, 30*time.Second, "the zombie to buffer the records", func() bool {
		return a.m.cfg.Memory.Stats().Files > 0
	})
	// The group moves the partition to b, and a is not told: b commits.
	b.members.assign(t, topic, 0)
	waitCommitted(t, location, topic, 300)
	// a learns it lost the partition: its final flush, from offset 0,
	// must fail, and what it buffered is dropped.
	a.members.assign(t, topic)
	if logs := a.logs.String(); !strings.Contains(logs, "commit conflict on") {
		t.Fatalf("the zombie's commit did not fail on the partition's offset:\n%s", logs)
	}
	produce(t, producer, 300, 600, jsonID)
	waitCommitted(t, location, topic, 600)
	checkEachOffsetOnce(t, location, topic, 600, producer)
}

// A table loop whose commit fails because another writer moved a
// partition's offset (the zombie of a cluster) restarts from its log: it
// drops what it buffered and reads again from the offsets the log holds.
func TestConflictRestartsFromTheLog(t *testing.T) {
	r := &tableRunner{log: slog.Default()}
	err := fmt.Errorf("flush: %w", &table.ConflictError{Version: 3, AppID: "t/0", Expected: 0, Actual: 300})
	if class, _ := r.tableFailure(err); class != runner.Restart {
		t.Fatalf("a commit conflict is of class %v, want Restart", class)
	}
}

// A table that starts at "latest" starts there on every partition, the
// partitions other agents own included: the first agent to start records
// where all of them start, as a single agent would, so that an agent
// assigned its partitions later does not read them from the earliest
// offset.
func TestRealBrokerClusterStartsAtLatestOnEveryAgent(t *testing.T) {
	bootstrap, topic, producer, warehouse := clusterSetup(t, 2)
	produce(t, producer, 0, 100, jsonID) // before the table starts: not read
	p := clusterPipeline(topic)
	p.Tables[0].ConnectorOptions.KafkaOptions.StartingOffset = spec.StartingOffsetLatest
	a := startAgent(t, warehouse, bootstrap, p)
	b := startAgent(t, warehouse, bootstrap, p)
	a.members.assign(t, topic, 0)
	a.waitReading(t, 0)
	produce(t, producer, 100, 200, jsonID)
	b.members.assign(t, topic, 1)
	b.waitReading(t, 1)
	location := spec.JoinLocation(warehouse, "main", "raw", "events")
	waitCommitted(t, location, topic, 200)
	rows := readKafkaRows(t, location)
	if len(rows) != 100 {
		t.Fatalf("the table holds %d rows, want the 100 produced after it started", len(rows))
	}
	for _, row := range rows {
		if row.Kafka.Offset < 50 {
			t.Fatalf("the table holds partition %d offset %d, produced before it started", row.Kafka.Partition, row.Kafka.Offset)
		}
	}
}

// Two agents whose membership gives each half the partitions of a fanout
// schema's topic route it into its tables exactly once, each reading only
// its own half, and again once a partition moved from one to the other.
func TestRealBrokerClusterSplitsFanoutPartitions(t *testing.T) {
	bootstrap, topic, producer, warehouse := clusterSetup(t, 4)
	produce(t, producer, 0, 1000, fanouttest.Event)
	a, b := startFanoutAgents(t, warehouse, bootstrap, topic)
	if st, _ := a.m.FanoutStatus("f"); st.State != spec.StateStarting {
		t.Fatalf("fanout status before the first assignment %+v, want STARTING", st)
	}
	a.members.assignIn(t, "fanout/f", topic, 0, 1)
	b.members.assignIn(t, "fanout/f", topic, 2, 3)
	dir := spec.JoinLocation(warehouse, "main", "events")
	checkRoutedOnce(t, dir, 1000)
	a.waitFanoutReading(t, 0, 1)
	b.waitFanoutReading(t, 2, 3)

	var wg sync.WaitGroup
	wg.Go(func() { produce(t, producer, 1000, 2000, fanouttest.Event) })
	a.members.assignIn(t, "fanout/f", topic, 0)
	b.members.assignIn(t, "fanout/f", topic, 1, 2, 3)
	wg.Wait()
	checkRoutedOnce(t, dir, 2000)
	a.waitFanoutReading(t, 0)
	b.waitFanoutReading(t, 1, 2, 3)
}

// A fanout schema that starts at "latest" starts there on every
// partition, those other agents own included (see
// TestRealBrokerClusterStartsAtLatestOnEveryAgent).
func TestRealBrokerClusterFanoutStartsAtLatestOnEveryAgent(t *testing.T) {
	bootstrap, topic, producer, warehouse := clusterSetup(t, 2)
	produce(t, producer, 0, 100, fanouttest.Event) // before the fanout schema starts: not read
	a, b := startFanoutAgents(t, warehouse, bootstrap, topic, func(f *spec.FanoutSchema) {
		f.ConnectorOptions.KafkaOptions.StartingOffset = spec.StartingOffsetLatest
	})
	a.members.assignIn(t, "fanout/f", topic, 0)
	a.waitFanoutReading(t, 0)
	produce(t, producer, 100, 200, fanouttest.Event)
	b.members.assignIn(t, "fanout/f", topic, 1)
	b.waitFanoutReading(t, 1)
	for _, row := range checkRoutedOnce(t, spec.JoinLocation(warehouse, "main", "events"), 100) {
		if row.Kafka.Offset < 50 {
			t.Fatalf("partition %d offset %d, produced before the fanout schema started, is routed", row.Kafka.Partition, row.Kafka.Offset)
		}
	}
}

// startFanoutAgents returns two agents on warehouse that run pipeline "p",
// without tables, and its fanout schema "f" on topic (fanouttest.Schema,
// changed by change), read from bootstrap.
func startFanoutAgents(t *testing.T, warehouse, bootstrap, topic string, change ...func(*spec.FanoutSchema)) (a, b *clusterAgent) {
	t.Helper()
	if _, err := expr.Compile("topic"); err != nil {
		t.Skipf("expr.Compile does not work yet: %v", err)
	}
	p := &spec.Pipeline{Name: "p", Connection: "c", DestinationCatalog: "main", DestinationSchema: "raw", FlushInterval: "200ms"}
	p.Normalize()
	f := fanouttest.Schema(topic)
	for _, c := range change {
		c(&f)
	}
	a = startAgent(t, warehouse, bootstrap, p)
	b = startAgent(t, warehouse, bootstrap, p)
	for _, agent := range []*clusterAgent{a, b} {
		if err := agent.m.ApplyFanout(context.Background(), &f); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

// checkRoutedOnce waits until the routed tables of the fanout schema in
// dir hold n records, and fails the test unless each (partition, offset)
// is there once; it returns their rows.
func checkRoutedOnce(t *testing.T, dir string, n int) []kafkaRow {
	t.Helper()
	routed := func() (rows []kafkaRow) {
		for _, typ := range fanouttest.Types {
			location := spec.JoinLocation(dir, strings.ToLower(typ))
			if snap, err := table.ReadSnapshot(location); err == nil && snap.Version >= 0 {
				rows = append(rows, readKafkaRows(t, location)...)
			}
		}
		return rows
	}
	waitFor(t, 60*time.Second, fmt.Sprintf("%d records routed", n), func() bool { return len(routed()) >= n })
	rows := routed()
	seen := map[[2]int64]bool{}
	for _, row := range rows {
		po := [2]int64{int64(row.Kafka.Partition), row.Kafka.Offset}
		if seen[po] {
			t.Errorf("partition %d offset %d is routed twice", po[0], po[1])
		}
		seen[po] = true
	}
	if len(seen) != n {
		t.Errorf("%d records routed, want %d", len(seen), n)
	}
	return rows
}

// waitFanoutReading waits until the agent's fanout schema "f" reads
// exactly partitions ps.
func (a *clusterAgent) waitFanoutReading(t *testing.T, ps ...int) {
	t.Helper()
	waitFor(t, 30*time.Second, fmt.Sprintf("the fanout schema to read partitions %v", ps), func() bool {
		st, _ := a.m.FanoutStatus("f")
		var got []int
		for _, p := range st.Partitions {
			got = append(got, p.Partition)
		}
		slices.Sort(got)
		return st.State == spec.StateRunning && slices.Equal(got, ps)
	})
}

// A pipeline joins its members group when applied, stays in it while its
// tables read the same partitions, joins a new one (leaving the old) when
// they read others, and leaves when removed; meanwhile its table reads
// what the group assigns. One agent on the in-process broker, its table
// on local disk.
func TestClusterPipelineJoinsAndLeaves(t *testing.T) {
	addr, producer := newCluster(t, 2, "events", "other")
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	members := &fakeMembers{}
	m := NewManager(Config{Warehouse: t.TempDir(), Members: members})
	defer m.Close(context.Background())
	p := clusterPipeline("events")
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	first := members.group(t, "pipeline/p")
	members.assign(t, "events", 1)
	produce(t, producer, 0, 100, jsonID)
	location := spec.JoinLocation(m.cfg.Warehouse, "main", "raw", "events")
	var onOne int64
	waitFor(t, 20*time.Second, "partition 1's records", func() bool {
		snap, err := table.ReadSnapshot(location)
		onOne = snap.Txns["events/1"]
		return err == nil && onOne > 0 && snap.NumRows == onOne
	})

	// Another flush interval: the same partitions, the same group.
	p.FlushInterval = "300ms"
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	if members.joins != 1 || first.left {
		t.Fatalf("%d groups joined, the first left: %v; want the first kept", members.joins, first.left)
	}
	// Another topic: a new group, the old one left.
	p.Tables[0].ConnectorOptions.KafkaOptions.Topics = []string{"events", "other"}
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	if members.joins != 2 || !first.left {
		t.Fatalf("%d groups joined, the first left: %v; want a second, the first left", members.joins, first.left)
	}
	tps, err := members.group(t, "pipeline/p").partitions(context.Background())
	if err != nil || len(tps) != 4 {
		t.Fatalf("the new group shares %v (%v), want the 4 partitions of events and other", tps, err)
	}
	if st, _ := m.Status("p"); st.State != spec.StateStarting {
		t.Fatalf("status before the new group's first assignment %+v, want STARTING", st)
	}
	members.assign(t, "events", 0, 1)
	waitFor(t, 20*time.Second, "every record", func() bool {
		snap, err := table.ReadSnapshot(location)
		return err == nil && snap.NumRows == 100
	})
	second := members.group(t, "pipeline/p")
	if err := m.Remove(context.Background(), "p"); err != nil {
		t.Fatal(err)
	}
	if !second.left {
		t.Fatal("the removed pipeline did not leave its group")
	}
}

// A pipeline whose group cannot be joined is refused with the cause, and
// waits, reading nothing, until applied again, which joins.
func TestClusterPipelineJoinRefused(t *testing.T) {
	addr, _ := newCluster(t, 2, "events")
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	members := &fakeMembers{refuse: errors.New("coordinator not available")}
	m := NewManager(Config{Warehouse: t.TempDir(), Members: members})
	defer m.Close(context.Background())
	p := clusterPipeline("events")
	err := m.Apply(context.Background(), p, conn, nil)
	if err == nil || !strings.Contains(err.Error(), "pipeline/p") || !strings.Contains(err.Error(), "coordinator not available") {
		t.Fatalf("Apply: %v, want the group and the cause", err)
	}
	if st, _ := m.Status("p"); st.State != spec.StateStarting {
		t.Fatalf("status %+v, want STARTING", st)
	}
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	members.assign(t, "events", 0, 1)
	waitFor(t, 10*time.Second, "RUNNING", func() bool { st, _ := m.Status("p"); return st.State == spec.StateRunning })
}
