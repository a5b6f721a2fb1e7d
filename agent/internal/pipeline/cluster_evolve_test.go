package pipeline

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// extraRow is the part of a row of an inferred table the schema evolution
// tests read: the id, the columns records bring later, and where the
// record came from.
type extraRow struct {
	ID    *int64  `parquet:"id,optional"`
	Extra *string `parquet:"extra,optional"`
	More  *string `parquet:"more,optional"`
	Kafka struct {
		Partition int32 `parquet:"partition"`
		Offset    int64 `parquet:"offset"`
	} `parquet:"_kafka"`
}

// withExtra is the value of record i, which has the field extra from
// record from on.
func withExtra(from int) func(int) string {
	return func(i int) string {
		if i < from {
			return jsonID(i)
		}
		return fmt.Sprintf(`{"id":%d,"extra":"e%d"}`, i, i)
	}
}

// checkExtra fails the test unless the table at location has the column
// extra once and every row its value: "e<id>" for the ids has says the
// record had it of, null for the others.
func checkExtra(t *testing.T, location string, has func(id int64) bool) {
	t.Helper()
	checkLater(t, location, "extra", func(r extraRow) *string { return r.Extra }, has)
}

// checkLater fails the test unless the table at location has column once
// and every row its value, which value reads: "e<id>" for the ids has says
// the record had it of, null for the others.
func checkLater(t *testing.T, location, column string, value func(extraRow) *string, has func(id int64) bool) {
	t.Helper()
	snap, err := table.ReadSnapshot(location)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(slices.DeleteFunc(slices.Clone(snap.Schema), func(f schema.Field) bool { return f.Name != column })); n != 1 {
		t.Fatalf("the table has the column %s %d times: %s", column, n, columnNames(snap.Schema))
	}
	for _, r := range readTableRows[extraRow](t, location) {
		if r.ID == nil {
			t.Fatalf("partition %d offset %d has no id", r.Kafka.Partition, r.Kafka.Offset)
		}
		want := ""
		if has(*r.ID) {
			want = fmt.Sprintf("e%d", *r.ID)
		}
		got := ""
		if v := value(r); v != nil {
			got = *v
		}
		if got != want || (want == "") != (value(r) == nil) {
			t.Errorf("id %d (partition %d offset %d): %s %q, want %q", *r.ID, r.Kafka.Partition, r.Kafka.Offset, column, got, want)
		}
	}
}

// checkHealthy fails the test unless each agent runs the table without an
// error.
func checkHealthy(t *testing.T, agents ...*clusterAgent) {
	t.Helper()
	for i, a := range agents {
		st, _ := a.m.Status("p")
		if st.State != spec.StateRunning || st.Tables[0].LastError != "" {
			t.Errorf("agent %d: state %s, table error %q", i, st.State, st.Tables[0].LastError)
		}
	}
}

// inferredCluster starts two agents that ingest topic into one table on
// warehouse, inferring its value's columns and adding new ones
// (ADD_NEW_COLUMNS).
func inferredCluster(t *testing.T, warehouse, bootstrap, topic string) (a, b *clusterAgent) {
	t.Helper()
	p := inferPipeline(topic, spec.SchemaEvolutionAddNewColumns, spec.JSONOptions{})
	a = startAgent(t, warehouse, bootstrap, p)
	b = startAgent(t, warehouse, bootstrap, p)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("agent a:\n%s\nagent b:\n%s", a.logs, b.logs)
		}
	})
	return a, b
}

// inferredHalves is two agents of an inferred table (see inferredCluster)
// that read a topic of four partitions, a owning 0 and 1 and b 2 and 3,
// and committed its first 400 records, ids 0 to 399 without new fields.
type inferredHalves struct {
	a, b                       *clusterAgent
	bootstrap, topic, location string
	producer                   *kgo.Client
}

// startInferredHalves returns inferredHalves on a new topic and warehouse.
func startInferredHalves(t *testing.T) *inferredHalves {
	t.Helper()
	h := &inferredHalves{}
	var warehouse string
	h.bootstrap, h.topic, h.producer, warehouse = clusterSetup(t, 4)
	produce(t, h.producer, 0, 400, jsonID)
	h.a, h.b = inferredCluster(t, warehouse, h.bootstrap, h.topic)
	h.a.members.assign(t, h.topic, 0, 1)
	h.b.members.assign(t, h.topic, 2, 3)
	h.location = spec.JoinLocation(warehouse, "main", "raw", "events")
	waitCommitted(t, h.location, h.topic, 400)
	return h
}

// sendAtOnce sends the records of ids 400 to 799 to the four partitions
// at once, a hundred each, of value(part) on partition part, and fails
// the test unless the table then holds each record once and both agents
// run it.
func (h *inferredHalves) sendAtOnce(t *testing.T, value func(part int32) func(int) string) {
	t.Helper()
	send := partitionProducer(t, h.bootstrap, h.topic)
	var wg sync.WaitGroup
	for part := range int32(4) {
		from := 400 + int(part)*100
		wg.Go(func() { send(part, from, from+100, value(part)) })
	}
	wg.Wait()
	waitCommitted(t, h.location, h.topic, 800)
	checkEachOffsetOnce(t, h.location, h.topic, 800, h.producer)
	checkHealthy(t, h.a, h.b)
}

// Two agents of an inferred table, each owning half the partitions, meet
// a new field on their partitions at about the same time: both add the
// column, and the table ends with it once, every record once, and the
// field's value in each row whose record had it.
func TestRealBrokerClusterAddsTheSameColumn(t *testing.T) {
	h := startInferredHalves(t)
	h.sendAtOnce(t, func(int32) func(int) string { return withExtra(400) })
	checkExtra(t, h.location, func(id int64) bool { return id >= 400 })
	for i, agent := range []*clusterAgent{h.a, h.b} {
		if !strings.Contains(agent.logs.String(), "new columns columns=[extra]") {
			t.Errorf("agent %d did not add the column extra itself", i)
		}
	}
}

// Two agents of an inferred table meet a new field each, another one,
// at about the same time: the one that commits second meets the other's
// schema, starts again from the log with its column and adds its own, so
// the table ends with both columns, every record once, and each field's
// value in the rows whose records had it.
func TestRealBrokerClusterAddsDifferentColumns(t *testing.T) {
	h := startInferredHalves(t)
	h.sendAtOnce(t, func(part int32) func(int) string {
		field := "extra" // on a's partitions
		if part >= 2 {
			field = "more" // on b's
		}
		return func(i int) string { return fmt.Sprintf(`{"id":%d,%q:"e%d"}`, i, field, i) }
	})
	checkLater(t, h.location, "extra", func(r extraRow) *string { return r.Extra }, func(id int64) bool { return id >= 400 && id < 600 })
	checkLater(t, h.location, "more", func(r extraRow) *string { return r.More }, func(id int64) bool { return id >= 600 })
}

// Two agents of an inferred table meet one new field at about the same
// time, as a number on one agent's partitions and as a string on the
// other's: the first commit's type is the column's, and the other agent
// starts again from the log with it, so its values are then decoded as a
// single agent decodes a value of another type: a string in a BIGINT
// column rescued, a number in a STRING column kept as its text.
func TestRealBrokerClusterAddsAColumnOfTwoTypes(t *testing.T) {
	h := startInferredHalves(t)
	h.sendAtOnce(t, func(part int32) func(int) string {
		if part >= 2 { // b's
			return func(i int) string { return fmt.Sprintf(`{"id":%d,"extra":"e%d"}`, i, i) }
		}
		return func(i int) string { return fmt.Sprintf(`{"id":%d,"extra":%d}`, i, i) }
	})

	snap, err := table.ReadSnapshot(h.location)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(snap.Schema, func(f schema.Field) bool { return f.Name == "extra" })
	if i < 0 {
		t.Fatalf("the table has no column extra: %s", columnNames(snap.Schema))
	}
	kind := snap.Schema[i].Type.Kind
	if kind != schema.Long && kind != schema.String {
		t.Fatalf("the column extra is of type %v, want BIGINT or STRING", snap.Schema[i].Type)
	}
	type row struct {
		ID      *int64  `parquet:"id,optional"`
		Rescued *string `parquet:"_rescued_data,optional"`
	}
	for _, r := range readTableRows[row](t, h.location) {
		// Only b's strings, in a BIGINT column, are rescued.
		want := kind == schema.Long && *r.ID >= 600
		if got := r.Rescued != nil && strings.Contains(*r.Rescued, `"extra"`); got != want {
			t.Errorf("id %d: rescued %v, want %v (extra is %v)", *r.ID, got, want, snap.Schema[i].Type)
		}
	}
	if !strings.Contains(h.a.logs.String()+h.b.logs.String(), "schema conflict") {
		t.Error("neither agent's commit met the other's type of extra")
	}
	t.Logf("the column extra is of type %v", snap.Schema[i].Type)
}

// One agent adds a column, then the other, whose columns are the old
// ones, commits rows without the new field: its commit fails on the
// table's new schema, it drops what it buffered, reads the columns from
// the log again and reads its partition again from the log's offset, so
// its rows land, once, and it writes the new column from then on.
func TestRealBrokerClusterCommitsAfterAnotherAddedAColumn(t *testing.T) {
	bootstrap, topic, producer, warehouse := clusterSetup(t, 2)
	to := partitionProducer(t, bootstrap, topic)
	to(0, 0, 100, jsonID)
	to(1, 100, 200, jsonID)
	a, b := inferredCluster(t, warehouse, bootstrap, topic)
	a.members.assign(t, topic, 0)
	b.members.assign(t, topic, 1)
	location := spec.JoinLocation(warehouse, "main", "raw", "events")
	waitCommitted(t, location, topic, 200)

	// a adds the column extra and commits it.
	to(0, 200, 300, withExtra(200))
	waitCommitted(t, location, topic, 300)
	// b, whose columns lack extra, commits records without it.
	to(1, 300, 400, jsonID)
	waitCommitted(t, location, topic, 400)
	// and then records with it, from the column it read from the log.
	to(1, 400, 500, withExtra(200))
	to(0, 500, 600, withExtra(200))
	waitCommitted(t, location, topic, 600)
	checkEachOffsetOnce(t, location, topic, 600, producer)
	checkExtra(t, location, func(id int64) bool { return id >= 200 && (id < 300 || id >= 400) })
	waitFor(t, 30*time.Second, "both agents running", func() bool {
		for _, a := range []*clusterAgent{a, b} {
			if st, _ := a.m.Status("p"); st.State != spec.StateRunning {
				return false
			}
		}
		return true
	})
	checkHealthy(t, a, b)
	logs := b.logs.String()
	if !strings.Contains(logs, "schema conflict: another writer changed the table's schema") {
		t.Errorf("agent b's commit with the old columns did not meet the new schema:\n%s", logs)
	}
	if strings.Contains(logs, "new columns") {
		t.Errorf("agent b inferred the column extra again rather than reading it from the log:\n%s", logs)
	}
}

// Agents of a table with ignore_errors, each owning half the partitions,
// with records that do not decode on partitions of both: every bad record
// is in the schema's dirty records table once, every good one in the
// table once, and the table's log counts the bad ones.
func TestRealBrokerClusterDirtyRecords(t *testing.T) {
	bootstrap, topic, producer, warehouse := clusterSetup(t, 4)
	p := clusterPipeline(topic)
	on, unlimited := true, int64(-1)
	ko := &p.Tables[0].ConnectorOptions.KafkaOptions
	ko.IgnoreErrors, ko.ErrorToleranceMaxCount = &on, &unlimited
	// Every seventh record is bad: round robin over four partitions puts
	// bad ones on each.
	value := func(i int) string {
		if i%7 == 3 {
			return fmt.Sprintf(`{"id":%d`, i)
		}
		return jsonID(i)
	}
	const n = 2800
	produce(t, producer, 0, n/2, value)
	a := startAgent(t, warehouse, bootstrap, p)
	// The agents of a process share the writer of a dirty records table,
	// by its location, and take turns; b spells the warehouse another way,
	// so that, as in two processes, each writes it on its own.
	b := startAgent(t, respell(t, warehouse), bootstrap, p)
	a.members.assign(t, topic, 0, 1)
	b.members.assign(t, topic, 2, 3)
	produce(t, producer, n/2, n, value)
	location := spec.JoinLocation(warehouse, "main", "raw", "events")
	waitCommitted(t, location, topic, n)

	// Each record once, in the table or in the dirty records table.
	seen := map[[2]int64]int{}
	for _, r := range readKafkaRows(t, location) {
		seen[[2]int64{int64(r.Kafka.Partition), r.Kafka.Offset}]++
	}
	dirty := readTableRows[dirtyRow](t, spec.JoinLocation(warehouse, "main", "raw", spec.DirtyRecordsTable))
	for _, r := range dirty {
		seen[[2]int64{int64(r.Partition), r.Offset}]++
		if r.Table != "events" || r.Topic != topic || !strings.HasPrefix(string(r.Value), `{"id":`) || strings.HasSuffix(string(r.Value), "}") {
			t.Errorf("dirty row %+v", r)
		}
	}
	for po, count := range seen {
		if count != 1 {
			t.Errorf("partition %d offset %d is in the table and the dirty records table %d times", po[0], po[1], count)
		}
	}
	if len(seen) != n {
		t.Errorf("the table and the dirty records table hold %d distinct records, want %d", len(seen), n)
	}
	if want := n / 7; len(dirty) != want {
		t.Errorf("%d dirty records, want %d", len(dirty), want)
	}
	snap, err := table.ReadSnapshot(location)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := snap.Counters[deltasink.CounterErrors], int64(n/7); got != want {
		t.Errorf("the table's log counts %d error records, want %d", got, want)
	}
	checkHealthy(t, a, b)
}

// The error budget of a table in a cluster counts the bad records of
// every agent: one agent's bad records, committed, count against the
// other's, which fails once their sum passes error_tolerance_max_count,
// though its own are within it.
func TestRealBrokerClusterErrorBudget(t *testing.T) {
	bootstrap, topic, _, warehouse := clusterSetup(t, 2)
	send := partitionProducer(t, bootstrap, topic)
	p := clusterPipeline(topic)
	on, limit := true, int64(4)
	ko := &p.Tables[0].ConnectorOptions.KafkaOptions
	ko.IgnoreErrors, ko.ErrorToleranceMaxCount = &on, &limit
	a := startAgent(t, warehouse, bootstrap, p)
	b := startAgent(t, warehouse, bootstrap, p)
	a.members.assign(t, topic, 0)
	b.members.assign(t, topic, 1)
	a.waitReading(t, 0)
	b.waitReading(t, 1)
	location := spec.JoinLocation(warehouse, "main", "raw", "events")
	// badFrom is the value of record i, which does not decode from
	// record from on.
	badFrom := func(from int) func(int) string {
		return func(i int) string {
			if i >= from {
				return fmt.Sprintf(`{"id":%d`, i)
			}
			return jsonID(i)
		}
	}

	// a leaves out three records, then b commits good ones.
	send(0, 0, 10, badFrom(7))
	waitCommitted(t, location, topic, 10)
	send(1, 10, 20, jsonID)
	waitCommitted(t, location, topic, 20)
	// b's two bad records make five: more than the limit.
	send(1, 20, 30, badFrom(28))
	waitFor(t, 60*time.Second, "b's table to fail", func() bool {
		st, _ := b.m.Status("p")
		return st.State == spec.StateFailed
	})
	st, _ := b.m.Status("p")
	for _, want := range []string{"5 records", "(4)", "error_tolerance_max_count"} {
		if !strings.Contains(st.Tables[0].LastError, want) {
			t.Errorf("b's error %q lacks %q", st.Tables[0].LastError, want)
		}
	}
	snap, err := table.ReadSnapshot(location)
	if err != nil {
		t.Fatal(err)
	}
	if n := snap.Counters[deltasink.CounterErrors]; n > limit {
		t.Errorf("the log counts %d bad records, more than the limit %d", n, limit)
	}
}

// partitionProducer returns a function that sends the records from..to-1
// of value to partition part of topic, on the broker at bootstrap.
func partitionProducer(t *testing.T, bootstrap, topic string) func(part int32, from, to int, value func(int) string) {
	t.Helper()
	producer, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(producer.Close)
	return func(part int32, from, to int, value func(int) string) {
		t.Helper()
		var recs []*kgo.Record
		for i := from; i < to; i++ {
			recs = append(recs, &kgo.Record{Partition: part, Value: []byte(value(i))})
		}
		if err := producer.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// respell returns the S3 location warehouse with its query parameters in
// another order: the same place, under another name.
func respell(t *testing.T, warehouse string) string {
	t.Helper()
	u, err := url.Parse(warehouse)
	if err != nil {
		t.Fatal(err)
	}
	u.RawQuery = u.Query().Encode() // sorted by name
	if u.String() == warehouse {
		t.Fatalf("%s has its parameters sorted already", warehouse)
	}
	return u.String()
}
