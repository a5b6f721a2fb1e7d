package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/fanout/fanouttest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafkatest"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The Kafka sink's test helpers, shared with kafkasink's tests.
var (
	testSink        = kafkatest.Sink
	committedReader = kafkatest.CommittedReader
	readCommitted   = kafkatest.CommittedIDs
)

// waitSink waits until the status of sink s of m satisfies done, and
// fails t at once when the sink fails.
func waitSink(t *testing.T, m *Manager, what string, done func(spec.KafkaSinkStatus) bool) {
	t.Helper()
	waitFor(t, 30*time.Second, what, func() bool {
		st, ok := m.SinkStatus("s")
		if ok && st.State == spec.StateFailed {
			t.Fatalf("sink FAILED: %s", st.LastError)
		}
		return ok && done(st)
	})
}

// checkWritesAndResumes is kafkatest.CheckSinkWritesAndResumes of sink k,
// applied to m and removed from it.
func checkWritesAndResumes(t *testing.T, m *Manager, addr string, producer *kgo.Client, k *spec.KafkaSink, wrote func(total, sinceStart int64)) {
	t.Helper()
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	apply := func() {
		if err := m.ApplySink(context.Background(), k, conn, nil); err != nil {
			t.Fatal(err)
		}
	}
	remove := func() {
		if err := m.RemoveSink(context.Background(), k.Name); err != nil {
			t.Fatal(err)
		}
	}
	kafkatest.CheckSinkWritesAndResumes(t, addr, producer, apply, remove, wrote)
}

// tableSink returns a sink of the changes of table main.raw.events
// (testPipeline's), written as JSON rows to topic out, with the delivery
// guarantee dg.
func tableSink(dg string) *spec.KafkaSink {
	k := testSink(dg)
	k.Source, k.SourceTable = nil, "main.raw.events"
	return k
}

// tableSinkWrote waits until sink s of m has written records records
// since it started, and has a table version for position.
func tableSinkWrote(t *testing.T, m *Manager, records int64) {
	t.Helper()
	waitSink(t, m, fmt.Sprintf("the sink to write %d records", records), func(st spec.KafkaSinkStatus) bool {
		_, has := st.Positions["version"]
		return has && st.Records == records
	})
}

// TestKafkaSinkTableWritesAndResumes: a sink of a table a pipeline writes
// writes every row of the table once, in commit order, with either
// delivery guarantee; applied again, it resumes after the versions it
// wrote; and a sink of a table no pipeline writes is refused.
func TestKafkaSinkTableWritesAndResumes(t *testing.T) {
	for _, dg := range spec.DeliveryGuarantees {
		t.Run(dg, func(t *testing.T) {
			addr, producer := newCluster(t, 1, "events", "out")
			m := startManager(t, addr, testPipeline("events"))
			other := tableSink(dg)
			other.SourceTable = "main.raw.nothing"
			err := m.ApplySink(context.Background(), other, &spec.Connection{Name: "c", BootstrapServers: []string{addr}}, nil)
			var errs spec.Errors
			if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Path != "source_table" {
				t.Fatalf("a sink of a table no pipeline writes: %v, want an error on source_table", err)
			}
			checkWritesAndResumes(t, m, addr, producer, tableSink(dg), func(_, sinceStart int64) { tableSinkWrote(t, m, sinceStart) })
		})
	}
}

// TestKafkaSinkTableIDs: a table without _source is the source table of
// its rows, so a table_topic_mapping pattern that does not match its id is
// refused at apply; with full_table_id its Debezium events name database "raw"
// and table "raw.events" and go to topic "raw.events"; every row is an
// insert, keyed by the table's key column.
func TestKafkaSinkTableIDs(t *testing.T) {
	addr, producer := newCluster(t, 1, "events", "raw.events")
	produce(t, producer, 0, 3, func(i int) string { return fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i) })
	m := startManager(t, addr, testPipeline("events"))
	k := tableSink(spec.DeliveryExactlyOnce)
	on := true
	k.Topic, k.ValueFormat, k.FullTableID = "", spec.SinkFormatDebeziumJSON, &on
	// Every row's table id is "raw.events": a mapping pattern that
	// cannot match it is refused, not a silent miss.
	bad := *k
	bad.TableTopicMapping = "raw.events,raw.other:x"
	err := m.ApplySink(context.Background(), &bad, &spec.Connection{Name: "c", BootstrapServers: []string{addr}}, nil)
	var errs spec.Errors
	if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Path != "table_topic_mapping" ||
		!strings.Contains(errs[0].Detail, `"raw.other"`) {
		t.Fatalf("a mapping pattern no row matches: %v, want an error on table_topic_mapping", err)
	}
	if err := m.ApplySink(context.Background(), k, &spec.Connection{Name: "c", BootstrapServers: []string{addr}}, nil); err != nil {
		t.Fatal(err)
	}
	tableSinkWrote(t, m, 3)
	var got []string
	for _, r := range readRecords(t, addr, "raw.events", 3) {
		var e struct {
			Op     string
			After  struct{ ID int }
			Source struct{ DB, Table string }
		}
		if err := json.Unmarshal(r.Value, &e); err != nil {
			t.Fatalf("%q: %v", r.Value, err)
		}
		got = append(got, fmt.Sprintf("%s %s %s %s %d", r.Key, e.Op, e.Source.DB, e.Source.Table, e.After.ID))
	}
	// The event's table is the full table id too, as for a topic
	// source's rows (see encode's options.table).
	want := []string{"0 c raw raw.events 0", "1 c raw raw.events 1", "2 c raw raw.events 2"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

// TestKafkaSinkApplyBadConnection: a sink applied again with a connection
// the agent cannot use is no longer reported as running, so that the
// server applies it again later.
func TestKafkaSinkApplyBadConnection(t *testing.T) {
	addr, _ := newCluster(t, 1, "in", "out")
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	m := NewManager(Config{Warehouse: t.TempDir()})
	t.Cleanup(func() { m.Close(context.Background()) })
	if err := m.ApplySink(context.Background(), testSink(spec.DeliveryExactlyOnce), conn, nil); err != nil {
		t.Fatal(err)
	}
	bad := *conn
	bad.SASL = &spec.SASL{Mechanism: "NONE_SUCH"}
	if err := m.ApplySink(context.Background(), testSink(spec.DeliveryExactlyOnce), &bad, nil); err == nil {
		t.Fatal("applied with a SASL mechanism that does not exist")
	}
	if st, ok := m.SinkStatus("s"); ok {
		t.Fatalf("the sink still reported, %+v", st)
	}
}

// readRecords returns the first n records of topic, as a read_committed
// consumer sees them.
func readRecords(t *testing.T, addr, topic string, n int) []*kgo.Record {
	t.Helper()
	cl := committedReader(t, addr, topic)
	var recs []*kgo.Record
	for len(recs) < n {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		fs := cl.PollFetches(ctx)
		timedOut := ctx.Err() != nil
		cancel()
		if timedOut {
			t.Fatalf("read %d records of %d from %s", len(recs), n, topic)
		}
		fs.EachRecord(func(r *kgo.Record) { recs = append(recs, r) })
	}
	return recs
}

// TestKafkaSinkTableVariant: a table whose value is one VARIANT column
// (JSON without json_options) writes each row as the JSON a topic source
// writes for its record: the row's image, the value column holding the
// record's JSON object (rendered from the VARIANT: keys sorted, numbers
// by value), keyed by the record's key.
func TestKafkaSinkTableVariant(t *testing.T) {
	addr, producer := newCluster(t, 1, "events", "out")
	value := func(i int) string {
		return fmt.Sprintf(`{"id":%d,"name":"n\"%d","price":%d.50,"tags":["a",null,true],"at":{"z":1e3,"a":-0.001}}`, i, i, i)
	}
	produce(t, producer, 0, 5, value)
	p := testPipeline("events")
	p.Tables[0].ConnectorOptions.KafkaOptions.ValueTransformer = &spec.Transformer{Format: spec.FormatJSON}
	m := startManager(t, addr, p)
	if err := m.ApplySink(context.Background(), tableSink(spec.DeliveryExactlyOnce),
		&spec.Connection{Name: "c", BootstrapServers: []string{addr}}, nil); err != nil {
		t.Fatal(err)
	}
	tableSinkWrote(t, m, 5)
	for i, r := range readRecords(t, addr, "out", 5) {
		var got, want map[string]any
		if err := json.Unmarshal(r.Value, &got); err != nil {
			t.Fatalf("record %d: %q: %v", i, r.Value, err)
		}
		if err := json.Unmarshal([]byte(`{"value":`+value(i)+`}`), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || string(r.Key) != fmt.Sprint(i) {
			t.Errorf("record %d: key %s value %s, want key %d value {\"value\":%s}", i, r.Key, r.Value, i, value(i))
		}
	}
}

// TestKafkaSinkFanoutTable: a table a fanout schema routes to is a
// source_table too, even before its first row: its rows come as the
// fanout schema writes them.
func TestKafkaSinkFanoutTable(t *testing.T) {
	addr, producer := newCluster(t, 1, "events", "out")
	ctx := context.Background()
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	m := startManager(t, addr, testPipeline("events"))
	f := fanouttest.Schema("events")
	f.Normalize()
	if err := m.ApplyFanout(ctx, &f); err != nil {
		t.Fatal(err)
	}
	k := tableSink(spec.DeliveryExactlyOnce)
	k.SourceTable = "main.events.a"
	if err := m.ApplySink(ctx, k, conn, nil); err != nil {
		t.Fatal(err)
	}
	produce(t, producer, 0, 10, func(i int) string { return fmt.Sprintf(`{"id":%d,"type":"%c"}`, i, 'a'+i%2) })
	tableSinkWrote(t, m, 5)
	if ids := readCommitted(t, addr, "out"); fmt.Sprint(ids) != "[0 2 4 6 8]" {
		t.Fatalf("read %v, want the ids of type a", ids)
	}
}

// TestClusterSinkRunsOnOneAgent: in a cluster, a Kafka sink applied to
// two agents runs on the one its members group gives the token, and
// moves with the token: records written through either agent reach the
// sink's topic exactly once.
func TestClusterSinkRunsOnOneAgent(t *testing.T) {
	addr, producer := newCluster(t, 1, "in", "out")
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	k := testSink(spec.DeliveryExactlyOnce)
	var ms [2]*Manager
	var members [2]*fakeMembers
	for i := range ms {
		members[i] = &fakeMembers{}
		ms[i] = NewManager(Config{Warehouse: t.TempDir(), Members: members[i]})
		defer ms[i].Close(context.Background())
		if err := ms[i].ApplySink(context.Background(), k, conn, nil); err != nil {
			t.Fatal(err)
		}
		if _, ok := ms[i].SinkStatus("s"); ok {
			t.Fatalf("agent %d runs the sink before its group gave it the token", i)
		}
	}
	token := sinkToken("s")
	give := func(owner int) {
		for i := range ms {
			var owned []kafka.TopicPartition
			if i == owner {
				owned = []kafka.TopicPartition{token}
			}
			if err := members[i].group(t, "sink/s").onAssign(context.Background(), owned); err != nil {
				t.Fatal(err)
			}
		}
		for i := range ms {
			if _, ok := ms[i].SinkStatus("s"); ok != (i == owner) {
				t.Fatalf("agent %d runs the sink: %v, want %v", i, ok, i == owner)
			}
		}
	}
	give(0)
	produce(t, producer, 0, 50, jsonID)
	waitSink(t, ms[0], "50 records written", func(st spec.KafkaSinkStatus) bool { return st.Records >= 50 })
	give(1)
	produce(t, producer, 50, 100, jsonID)
	waitSink(t, ms[1], "the rest written", func(st spec.KafkaSinkStatus) bool { return st.Records >= 50 })
	seen := map[int]int{}
	for _, id := range readCommitted(t, addr, "out") {
		seen[id]++
	}
	for id := range 100 {
		if seen[id] != 1 {
			t.Errorf("record %d written %d times, want once", id, seen[id])
		}
	}
	if err := ms[1].RemoveSink(context.Background(), "s"); err != nil {
		t.Fatal(err)
	}
	if _, ok := ms[1].SinkStatus("s"); ok || !members[1].groups["sink/s"].left {
		t.Error("a removed sink still runs, or its group was not left")
	}
}
