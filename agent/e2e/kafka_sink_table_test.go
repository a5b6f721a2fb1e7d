//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// waitSinkAtTable waits until sink name has written every version of the
// table at location that the table's log holds now (its position, the
// next version to read, is past the latest), and returns its status.
func (a *agent) waitSinkAtTable(name, qualified, location string, timeout time.Duration) spec.KafkaSinkStatus {
	a.t.Helper()
	snap, err := table.ReadSnapshot(location)
	if err != nil {
		a.t.Fatal(err)
	}
	got := awaitObject(a, "kafka sink "+name, fmt.Sprintf("past version %d of %s", snap.Version, qualified), timeout,
		a.client().GetKafkaSink, name,
		func(r *spec.KafkaSinkResponse) bool { return r.Status.Positions["version"] > snap.Version },
		func(r *spec.KafkaSinkResponse) (string, any) { return r.Status.State, r.Status })
	return got.Status
}

// TestKafkaSinkTableRoundTrip: a table of Debezium change events (T1),
// written by a sink of source_table T1 as Debezium events to a topic that
// a second table (T2) reads, gives T2 the rows T1 has: operations, source
// tables and times, row images, as delta-rs, DuckDB and pyarrow read them,
// with either delivery guarantee.
func TestKafkaSinkTableRoundTrip(t *testing.T) {
	t.Parallel()
	for _, dg := range spec.DeliveryGuarantees {
		t.Run(dg, func(t *testing.T) {
			t.Parallel()
			tableRoundTrip(t, dg)
		})
	}
}

// tableRoundTrip is TestKafkaSinkTableRoundTrip with delivery guarantee
// dg.
func tableRoundTrip(t *testing.T, dg string) {
	src, dst := uniqueName("tcdc_src"), uniqueName("tcdc_dst")
	// The sink writes each change with its own time, 2023 in the
	// fixture: the default retention of 7 days would delete those
	// records before T2 reads them.
	for _, topic := range []string{src, dst} {
		python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "0", "--partitions", "1",
			"--topic-config", "retention.ms=-1")
	}
	a := startAgent(t, t.TempDir())
	ctx := context.Background()
	table := func(name, topic string) spec.Table {
		return spec.Table{DestinationTable: name, ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
			Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest,
			ValueTransformer: &spec.Transformer{Format: spec.FormatDebeziumJSON},
		}}}
	}
	name := uniqueName("troundtrip")
	a.applyPipeline(&spec.Pipeline{Name: name, Connection: name, DestinationCatalog: "main", DestinationSchema: strings.ToLower(name),
		FlushInterval: "300ms", Tables: []spec.Table{table("t1", src), table("t2", dst)}})
	k := &spec.KafkaSink{Name: name, Connection: name, Topic: dst, DeliveryGuarantee: dg, FlushInterval: "300ms",
		SourceTable: "main." + strings.ToLower(name) + ".t1"}
	if _, err := a.client().PutKafkaSink(ctx, k); err != nil {
		t.Fatal(err)
	}
	// The events come once both tables run (see TestKafkaSinkRoundTrip).
	a.waitFor(name, "running", time.Minute, func(p *spec.PipelineResponse) bool { return p.Status.State == spec.StateRunning })
	python(t, "cdc_records.py", "--bootstrap", env.bootstrap, "--topic", src, "--file", "testdata/cdc/debezium_customers.jsonl",
		"--repeat", "3")
	// Per copy: four snapshot rows, an insert, an update and a delete.
	const rows = 3 * 7
	t1 := a.waitRows(name, 0, rows, time.Minute)
	a.waitSinkAtTable(name, k.SourceTable, t1.Location, time.Minute)
	t2 := a.waitRows(name, 1, rows, time.Minute)
	sameTables(t, t2.Location, t1.Location)
}

// TestKafkaSinkTableKill9: an exactly-once sink of a table that a
// pipeline fills while its topic grows, the agent killed with SIGKILL 3
// times, at a random moment or, when one comes within 3 s, while a
// transaction with records is open, and restarted each time, writes every row of the table
// once as a read_committed consumer sees its topic: each restart resumes
// from the table version committed with the last committed transaction.
func TestKafkaSinkTableKill9(t *testing.T) {
	t.Parallel()
	const n = 5000
	src, dst := uniqueName("tsink_src"), uniqueName("tsink_dst")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", src, "--count", "0", "--partitions", "2")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", dst, "--count", "0", "--partitions", "2")
	a := startAgent(t, t.TempDir())
	ctx := context.Background()
	name := uniqueName("tkill")
	a.applyPipeline(&spec.Pipeline{Name: name, Connection: name, DestinationCatalog: "main", DestinationSchema: "e2e",
		FlushInterval: "200ms", Tables: []spec.Table{{DestinationTable: "events", ConnectorOptions: spec.ConnectorOptions{
			KafkaOptions: spec.KafkaOptions{Topics: []string{src}, StartingOffset: spec.StartingOffsetEarliest,
				KeyTransformer:   &spec.Transformer{Format: spec.FormatString},
				ValueTransformer: &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: "id BIGINT, name STRING"}},
			}}}}})
	k := &spec.KafkaSink{Name: name, Connection: name, Topic: dst, ValueFormat: spec.SinkFormatJSON,
		PartitionStrategy: spec.PartitionHashByKey, DeliveryGuarantee: spec.DeliveryExactlyOnce, FlushInterval: "100ms",
		SourceTable: "main.e2e.events", Compression: spec.CompressionLZ4}
	if _, err := a.client().PutKafkaSink(ctx, k); err != nil {
		t.Fatal(err)
	}
	a.killWhileSinking(sinkKills{src: src, srcPartitions: 2, n: n, rate: 700,
		dst: dst, dstPartitions: 2, kills: 3, maxPause: 1500 * time.Millisecond})
	events := a.waitRows(name, 0, n, 3*time.Minute)
	st := a.waitSinkAtTable(name, "main.e2e.events", events.Location, 3*time.Minute)
	t.Logf("sink at %v", st.Positions)
	checkSinkTopic(t, dst, n)
}

// TestKafkaSinkTableVariant: a JSON sink of a table whose value is one
// VARIANT column (JSON without json_options) writes each row as a topic
// source writes its record, {"value": <the record's JSON>}, the JSON
// rendered from the table's VARIANT binary: a read_committed consumer of
// its topic reads back every produced object, nested values, unicode,
// decimals and large integers included.
func TestKafkaSinkTableVariant(t *testing.T) {
	t.Parallel()
	const n = 30
	src, dst := uniqueName("tvariant_src"), uniqueName("tvariant_dst")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", dst, "--count", "0", "--partitions", "1")
	a := startAgent(t, t.TempDir())
	name := uniqueName("tvariant")
	a.applyPipeline(&spec.Pipeline{Name: name, Connection: name, DestinationCatalog: "main", DestinationSchema: "e2e",
		FlushInterval: "200ms", Tables: []spec.Table{{DestinationTable: name, ConnectorOptions: spec.ConnectorOptions{
			KafkaOptions: spec.KafkaOptions{Topics: []string{src}, StartingOffset: spec.StartingOffsetEarliest,
				ValueTransformer: &spec.Transformer{Format: spec.FormatJSON}}}}}})
	k := &spec.KafkaSink{Name: name, Connection: name, Topic: dst, ValueFormat: spec.SinkFormatJSON,
		DeliveryGuarantee: spec.DeliveryExactlyOnce, FlushInterval: "200ms", SourceTable: "main.e2e." + name}
	if _, err := a.client().PutKafkaSink(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	values := make([]string, n)
	for i := range values {
		values[i] = fmt.Sprintf(`{"id":%d,"name":"n\"%d é","price":%d.50,"big":123456789012345678901234567890,`+
			`"tags":["a",null,true,false],"at":{"z":1.5e3,"a":-0.001,"e":{},"l":[]}}`, i, i, i)
	}
	produceKafka(t, src, values)
	table := a.waitRows(name, 0, n, time.Minute)
	a.waitSinkAtTable(name, k.SourceTable, table.Location, time.Minute)
	got := consumeCommitted(t, dst, n)
	for i, v := range values {
		var want any
		if err := json.Unmarshal([]byte(`{"value":`+v+`}`), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got[i], want) {
			t.Errorf("record %d: %v, want %v", i, got[i], want)
		}
	}
}

// produceKafka writes values to partition 0 of topic, in order.
func produceKafka(t *testing.T, topic string, values []string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.bootstrap), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, len(values))
	for i, v := range values {
		recs[i] = &kgo.Record{Topic: topic, Value: []byte(v)}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", topic, err)
	}
}

// consumeCommitted reads the first n records of topic as a read_committed
// consumer, and returns their JSON values.
func consumeCommitted(t *testing.T, topic string, n int) []any {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.bootstrap), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []any
	for len(got) < n {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		fs := cl.PollFetches(ctx)
		timedOut := ctx.Err() != nil
		cancel()
		if timedOut {
			t.Fatalf("read %d records of %d from %s", len(got), n, topic)
		}
		fs.EachRecord(func(r *kgo.Record) {
			var v any
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Fatalf("record %s/%d@%d: %v: %q", r.Topic, r.Partition, r.Offset, err, r.Value)
			}
			got = append(got, v)
		})
	}
	return got
}
