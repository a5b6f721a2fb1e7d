package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// testSink returns a sink of JSON records of topic in, written as JSON
// rows to topic out, with the delivery guarantee dg.
func testSink(dg string) *spec.KafkaSink {
	k := &spec.KafkaSink{
		Name: "s", Connection: "c", Topic: "out", ValueFormat: spec.SinkFormatJSON, DeliveryGuarantee: dg, FlushInterval: "200ms",
		Source: &spec.KafkaOptions{
			Topics: []string{"in"}, StartingOffset: spec.StartingOffsetEarliest,
			ValueTransformer: &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: "id BIGINT, name STRING"}},
		},
	}
	k.Normalize()
	return k
}

// committedReader returns a read_committed consumer of topic from its
// start, closed when t ends.
func committedReader(t *testing.T, addr, topic string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// readCommitted returns the ids of the JSON rows of topic, as a
// read_committed consumer sees them.
func readCommitted(t *testing.T, addr, topic string) []int {
	t.Helper()
	cl := committedReader(t, addr, topic)
	var ids []int
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			n++
			var row struct{ ID int }
			if err := json.Unmarshal(r.Value, &row); err != nil {
				t.Fatalf("record %s/%d@%d: %v: %q", r.Topic, r.Partition, r.Offset, err, r.Value)
			}
			ids = append(ids, row.ID)
		})
		if n == 0 {
			return ids
		}
	}
}

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

// sinkAt waits until sink s of m has committed offset next of in/0.
func sinkAt(t *testing.T, m *Manager, next int64) {
	t.Helper()
	waitSink(t, m, fmt.Sprintf("the sink at offset %d", next), func(st spec.KafkaSinkStatus) bool {
		return st.Positions["in/0"] >= next
	})
}

// TestKafkaSinkWritesAndResumes: both delivery guarantees write every row
// of the source once, and a sink applied again resumes after what it wrote.
func TestKafkaSinkWritesAndResumes(t *testing.T) {
	for _, dg := range spec.DeliveryGuarantees {
		t.Run(dg, func(t *testing.T) {
			addr, producer := newCluster(t, 1, "in", "out")
			m := NewManager(Config{Warehouse: t.TempDir()})
			t.Cleanup(func() { m.Close(context.Background()) })
			checkWritesAndResumes(t, m, addr, producer, testSink(dg), func(total, _ int64) { sinkAt(t, m, total) })
			if st, _ := m.SinkStatus("s"); st.Records != 10 {
				t.Fatalf("status records = %d, want 10 (since the second start)", st.Records)
			}
		})
	}
}

// checkWritesAndResumes produces 20 JSON rows with producer, applies sink
// k to m, waits with wrote until it has written them, removes it,
// produces 10 more, applies it again and waits for those: then topic out
// must hold ids 0 to 29 once each, in order. wrote gets the number of
// rows produced and the number the sink has written since it started.
func checkWritesAndResumes(t *testing.T, m *Manager, addr string, producer *kgo.Client, k *spec.KafkaSink, wrote func(total, sinceStart int64)) {
	t.Helper()
	value := func(i int) string { return fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i) }
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	produce(t, producer, 0, 20, value)
	if err := m.ApplySink(context.Background(), k, conn, nil); err != nil {
		t.Fatal(err)
	}
	wrote(20, 20)
	if err := m.RemoveSink(context.Background(), k.Name); err != nil {
		t.Fatal(err)
	}
	produce(t, producer, 20, 30, value)
	if err := m.ApplySink(context.Background(), k, conn, nil); err != nil {
		t.Fatal(err)
	}
	wrote(30, 10)
	ids := readCommitted(t, addr, "out")
	if len(ids) != 30 {
		t.Fatalf("read %d rows %v, want 30", len(ids), ids)
	}
	for i, id := range ids {
		if id != i {
			t.Fatalf("row %d has id %d; ids %v", i, id, ids)
		}
	}
}

// TestKafkaSinkFenced: a second manager running the same exactly-once
// sink fences the first, which stops FAILED saying so.
func TestKafkaSinkFenced(t *testing.T) {
	addr, producer := newCluster(t, 1, "in", "out")
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	var ms [2]*Manager
	for i := range ms {
		ms[i] = NewManager(Config{Warehouse: t.TempDir()})
		t.Cleanup(func() { ms[i].Close(context.Background()) })
	}
	if err := ms[0].ApplySink(context.Background(), testSink(spec.DeliveryExactlyOnce), conn, nil); err != nil {
		t.Fatal(err)
	}
	produce(t, producer, 0, 5, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	sinkAt(t, ms[0], 5)
	if err := ms[1].ApplySink(context.Background(), testSink(spec.DeliveryExactlyOnce), conn, nil); err != nil {
		t.Fatal(err)
	}
	sinkAt(t, ms[1], 5)
	produce(t, producer, 5, 10, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	waitFor(t, 30*time.Second, "the older sink FAILED", func() bool {
		st, _ := ms[0].SinkStatus("s")
		return st.State == spec.StateFailed
	})
	if st, _ := ms[0].SinkStatus("s"); !strings.Contains(st.LastError, "fenced by another agent") {
		t.Fatalf("the older sink's error: %s", st.LastError)
	}
	sinkAt(t, ms[1], 10)
	if ids := readCommitted(t, addr, "out"); len(ids) != 10 {
		t.Fatalf("read %v, want ids 0 to 9 once each", ids)
	}
}

// TestKafkaSinkDiscoversTopics: a sink of a topic_pattern picks up a
// matching topic created while it runs, from its first record.
func TestKafkaSinkDiscoversTopics(t *testing.T) {
	addr, producer := newCluster(t, 1, "in", "out")
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	k := testSink(spec.DeliveryExactlyOnce)
	k.Source.Topics, k.Source.TopicPattern, k.Source.PartitionDiscoveryInterval = nil, "in.*", "200ms"
	m := NewManager(Config{Warehouse: t.TempDir()})
	t.Cleanup(func() { m.Close(context.Background()) })
	if err := m.ApplySink(context.Background(), k, conn, nil); err != nil {
		t.Fatal(err)
	}
	produce(t, producer, 0, 3, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	sinkAt(t, m, 3)
	if _, err := kadm.NewClient(producer).CreateTopic(context.Background(), 1, 1, nil, "in2"); err != nil {
		t.Fatal(err)
	}
	if err := producer.ProduceSync(context.Background(), &kgo.Record{Topic: "in2", Value: []byte(`{"id":3}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the new topic written", func() bool {
		st, _ := m.SinkStatus("s")
		return st.Positions["in2/0"] == 1
	})
	if ids := readCommitted(t, addr, "out"); len(ids) != 4 || ids[3] != 3 {
		t.Fatalf("read %v, want ids 0 to 3", ids)
	}
}

// sinkFails waits until sink s of m is FAILED and returns its error.
func sinkFails(t *testing.T, m *Manager) string {
	t.Helper()
	waitFor(t, 30*time.Second, "the sink FAILED", func() bool {
		st, _ := m.SinkStatus("s")
		return st.State == spec.StateFailed
	})
	st, _ := m.SinkStatus("s")
	return st.LastError
}

// TestKafkaSinkRefusesItsSource: a row whose topic column names a topic
// the sink reads fails the sink, rather than loop forever.
func TestKafkaSinkRefusesItsSource(t *testing.T) {
	addr, producer := newCluster(t, 1, "in", "out")
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	k := testSink(spec.DeliveryExactlyOnce)
	k.Source.ValueTransformer.JSONOptions.Schema = "id BIGINT, topic STRING"
	// The topic column overrides table_topic_mapping (a topic would
	// override the column).
	k.Topic, k.TableTopicMapping = "", "in:out"
	m := NewManager(Config{Warehouse: t.TempDir()})
	t.Cleanup(func() { m.Close(context.Background()) })
	if err := m.ApplySink(context.Background(), k, conn, nil); err != nil {
		t.Fatal(err)
	}
	produce(t, producer, 0, 1, func(i int) string { return fmt.Sprintf(`{"id":%d,"topic":"in"}`, i) })
	if msg := sinkFails(t, m); !strings.Contains(msg, `goes to topic "in", which the sink's source reads`) {
		t.Fatalf("error %q, want one naming the source topic", msg)
	}
	if ids := readCommitted(t, addr, "in"); len(ids) != 1 {
		t.Fatalf("topic in holds %v, want the one source record", ids)
	}
}

// TestKafkaSinkDataLoss: records retention deleted before the sink read
// them fail the sink, with an error that says how to start over and does
// not recommend fail_on_data_loss = false, which a sink refuses.
func TestKafkaSinkDataLoss(t *testing.T) {
	addr, producer := newCluster(t, 1, "in", "out")
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	m := NewManager(Config{Warehouse: t.TempDir()})
	t.Cleanup(func() { m.Close(context.Background()) })
	if err := m.ApplySink(context.Background(), testSink(spec.DeliveryExactlyOnce), conn, nil); err != nil {
		t.Fatal(err)
	}
	produce(t, producer, 0, 5, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	sinkAt(t, m, 5)
	if err := m.RemoveSink(context.Background(), "s"); err != nil {
		t.Fatal(err)
	}
	produce(t, producer, 5, 10, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	deleteRecords(t, producer, "in", 8)
	if err := m.ApplySink(context.Background(), testSink(spec.DeliveryExactlyOnce), conn, nil); err != nil {
		t.Fatal(err)
	}
	msg := sinkFails(t, m)
	if !strings.Contains(msg, "offsets [5, 8) of in/0 (3 records) are gone") || !strings.Contains(msg, `delete the sink's consumer group "tributary-sink.s"`) ||
		strings.Contains(msg, "fail_on_data_loss") {
		t.Fatalf("error %q", msg)
	}
}

// TestKafkaSinkRecordTime: a record written from a change event has the
// source record's timestamp, not the change's time, which stays in the
// event.
func TestKafkaSinkRecordTime(t *testing.T) {
	addr, producer := newCluster(t, 1, "in", "out")
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	k := testSink(spec.DeliveryExactlyOnce)
	k.ValueFormat = spec.SinkFormatDebeziumJSON
	k.Source.ValueTransformer = &spec.Transformer{Format: spec.FormatDebeziumJSON}
	k.Normalize()
	at := time.UnixMilli(1_700_000_000_000)
	event := `{"op":"c","after":{"id":1},"source":{"db":"d","table":"t","ts_ms":1000},"ts_ms":1000}`
	if err := producer.ProduceSync(context.Background(), &kgo.Record{Topic: "in", Value: []byte(event), Timestamp: at}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	m := NewManager(Config{Warehouse: t.TempDir()})
	t.Cleanup(func() { m.Close(context.Background()) })
	if err := m.ApplySink(context.Background(), k, conn, nil); err != nil {
		t.Fatal(err)
	}
	sinkAt(t, m, 1)
	cl := committedReader(t, addr, "out")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fs := cl.PollRecords(ctx, 1)
	if recs := fs.Records(); len(recs) != 1 || !recs[0].Timestamp.Equal(at) || !strings.Contains(string(recs[0].Value), `"ts_ms":1000`) {
		t.Fatalf("records %v (errors %v), want one at %s with the change's ts_ms 1000", recs, fs.Errors(), at)
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

// TestKafkaSinkFailsOnCorrupt: a source record that does not decode fails
// the sink naming it, instead of being written as an event of nulls, and
// nothing of its round is written.
func TestKafkaSinkFailsOnCorrupt(t *testing.T) {
	addr, producer := newCluster(t, 1, "in", "out")
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	produce(t, producer, 0, 3, func(i int) string {
		if i == 1 {
			return "not json"
		}
		return fmt.Sprintf(`{"id":%d}`, i)
	})
	m := NewManager(Config{Warehouse: t.TempDir()})
	t.Cleanup(func() { m.Close(context.Background()) })
	if err := m.ApplySink(context.Background(), testSink(spec.DeliveryExactlyOnce), conn, nil); err != nil {
		t.Fatal(err)
	}
	if msg := sinkFails(t, m); !strings.Contains(msg, "the record at offset 1 of in/0 does not decode") {
		t.Fatalf("error %q", msg)
	}
	if ids := readCommitted(t, addr, "out"); len(ids) != 0 {
		t.Fatalf("wrote %v, want nothing", ids)
	}
}

// TestKafkaSinkRejectedRecords: records Kafka refuses for good, or a topic
// that stays missing, fail the sink naming the topic and the fix instead
// of retrying forever.
func TestKafkaSinkRejectedRecords(t *testing.T) {
	for _, tc := range []struct{ name, topic, want string }{
		{"too large", "small", "raise it on the topic"},
		{"missing topic", "nope", `topic "nope" does not exist`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, producer := newCluster(t, 1, "in", "out")
			limit := "200"
			if _, err := kadm.NewClient(producer).CreateTopic(context.Background(), 1, 1,
				map[string]*string{"max.message.bytes": &limit}, "small"); err != nil {
				t.Fatal(err)
			}
			conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
			k := testSink(spec.DeliveryExactlyOnce)
			k.Topic = tc.topic
			produce(t, producer, 0, 1, func(i int) string {
				return fmt.Sprintf(`{"id":%d,"name":%q}`, i, strings.Repeat("x", 500))
			})
			m := NewManager(Config{Warehouse: t.TempDir()})
			t.Cleanup(func() { m.Close(context.Background()) })
			if err := m.ApplySink(context.Background(), k, conn, nil); err != nil {
				t.Fatal(err)
			}
			if msg := sinkFails(t, m); !strings.Contains(msg, tc.want) || !strings.Contains(msg, tc.topic) {
				t.Fatalf("error %q, want one containing %q", msg, tc.want)
			}
		})
	}
}

// TestKafkaSinkCompression: the sink writes its record batches with the
// codec of compression, as a consumer sees in each record's attributes.
func TestKafkaSinkCompression(t *testing.T) {
	// Kafka's compression type ids, in the attributes of a batch.
	ids := map[string]uint8{spec.CompressionNone: 0, spec.CompressionGzip: 1, spec.CompressionSnappy: 2, spec.CompressionLZ4: 3, spec.CompressionZstd: 4}
	for _, codec := range spec.Compressions {
		t.Run(codec, func(t *testing.T) {
			addr, producer := newCluster(t, 1, "in", "out")
			produce(t, producer, 0, 3, func(i int) string { return fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i) })
			k := testSink(spec.DeliveryExactlyOnce)
			k.Compression = codec
			m := NewManager(Config{Warehouse: t.TempDir()})
			t.Cleanup(func() { m.Close(context.Background()) })
			if err := m.ApplySink(context.Background(), k, &spec.Connection{Name: "c", BootstrapServers: []string{addr}}, nil); err != nil {
				t.Fatal(err)
			}
			sinkAt(t, m, 3)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			fs := committedReader(t, addr, "out").PollRecords(ctx, 3)
			recs := fs.Records()
			if len(recs) == 0 {
				t.Fatalf("no record read: %v", fs.Errors())
			}
			for _, r := range recs {
				if got := r.Attrs.CompressionType(); got != ids[codec] {
					t.Fatalf("record %d written with compression type %d, want %d (%s)", r.Offset, got, ids[codec], codec)
				}
			}
		})
	}
}

// TestKafkaSinkNewColumnsMidBatch: a source whose columns are inferred
// takes the new fields of records in the middle of what it read, each
// record written once, in order, with the columns it has.
func TestKafkaSinkNewColumnsMidBatch(t *testing.T) {
	addr, producer := newCluster(t, 1, "in", "out")
	m := NewManager(Config{Warehouse: t.TempDir()})
	t.Cleanup(func() { m.Close(context.Background()) })
	k := testSink(spec.DeliveryExactlyOnce)
	k.Source.ValueTransformer.JSONOptions = &spec.JSONOptions{SchemaEvolutionMode: spec.SchemaEvolutionAddNewColumns}
	value := func(i int) string {
		switch i {
		case 13:
			return fmt.Sprintf(`{"id":%d,"extra":"e"}`, i)
		case 16:
			return fmt.Sprintf(`{"id":%d,"extra":"f","more":true}`, i)
		}
		return fmt.Sprintf(`{"id":%d}`, i)
	}
	produce(t, producer, 0, 10, value)
	if err := m.ApplySink(context.Background(), k, &spec.Connection{Name: "c", BootstrapServers: []string{addr}}, nil); err != nil {
		t.Fatal(err)
	}
	sinkAt(t, m, 10)
	produce(t, producer, 10, 20, value)
	sinkAt(t, m, 20)
	cl := committedReader(t, addr, "out")
	var got []string
	for len(got) < 20 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		fs := cl.PollFetches(ctx)
		timedOut := ctx.Err() != nil
		cancel()
		if timedOut {
			break
		}
		fs.EachRecord(func(r *kgo.Record) {
			var row struct {
				ID    int
				Extra *string
				More  *bool
			}
			if err := json.Unmarshal(r.Value, &row); err != nil {
				t.Fatalf("%q: %v", r.Value, err)
			}
			s := fmt.Sprint(row.ID)
			if row.Extra != nil {
				s += " " + *row.Extra
			}
			if row.More != nil {
				s += fmt.Sprint(" ", *row.More)
			}
			got = append(got, s)
		})
	}
	var want []string
	for i := range 20 {
		want = append(want, fmt.Sprint(i))
	}
	want[13], want[16] = "13 e", "16 f true"
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("rows %q, want %q", got, want)
	}
}
