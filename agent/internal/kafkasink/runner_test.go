package kafkasink

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/ingest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafkatest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The helpers every test of the package shares to read Kafka.
var (
	newCluster      = kafkatest.NewCluster
	produce         = kafkatest.Produce
	deleteRecords   = kafkatest.DeleteRecords
	waitFor         = kafkatest.WaitFor
	testSink        = kafkatest.Sink
	committedReader = kafkatest.CommittedReader
	readCommitted   = kafkatest.CommittedIDs
)

// startSink starts sink k on the broker at addr as the manager does, with
// no memory limit and no source table; it stops when t ends.
func startSink(t *testing.T, addr string, k *spec.KafkaSink) *Runner {
	t.Helper()
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	noTable := func(string) (SourceTable, bool, error) { return SourceTable{}, false, nil }
	r, err := Start(context.Background(), k, conn, nil, Deps{Memory: memory.New(math.MaxInt64), Registries: &ingest.Registries{},
		SourceTable: noTable, Log: slog.Default()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r
}

// sinkAt waits until sink r has committed offset next of in/0, and fails
// t at once when the sink fails.
func sinkAt(t *testing.T, r *Runner, next int64) {
	t.Helper()
	waitFor(t, 30*time.Second, fmt.Sprintf("the sink at offset %d", next), func() bool {
		st := r.Status()
		if st.State == spec.StateFailed {
			t.Fatalf("sink FAILED: %s", st.LastError)
		}
		return st.Positions["in/0"] >= next
	})
}

// TestKafkaSinkWritesAndResumes: both delivery guarantees write every row
// of the source once, and a sink started again resumes after what it wrote.
func TestKafkaSinkWritesAndResumes(t *testing.T) {
	for _, dg := range spec.DeliveryGuarantees {
		t.Run(dg, func(t *testing.T) {
			addr, producer := newCluster(t, 1, "in", "out")
			var r *Runner
			kafkatest.CheckSinkWritesAndResumes(t, addr, producer, func() { r = startSink(t, addr, testSink(dg)) },
				func() { r.Stop() }, func(total, _ int64) { sinkAt(t, r, total) })
			if st := r.Status(); st.Records != 10 {
				t.Fatalf("status records = %d, want 10 (since the second start)", st.Records)
			}
		})
	}
}

// TestKafkaSinkFenced: a second manager running the same exactly-once
// sink fences the first, which stops FAILED saying so.
func TestKafkaSinkFenced(t *testing.T) {
	addr, producer := newCluster(t, 1, "in", "out")
	var rs [2]*Runner
	rs[0] = startSink(t, addr, testSink(spec.DeliveryExactlyOnce))
	produce(t, producer, 0, 5, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	sinkAt(t, rs[0], 5)
	rs[1] = startSink(t, addr, testSink(spec.DeliveryExactlyOnce))
	sinkAt(t, rs[1], 5)
	produce(t, producer, 5, 10, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	waitFor(t, 30*time.Second, "the older sink FAILED", func() bool {
		return rs[0].Status().State == spec.StateFailed
	})
	if st := rs[0].Status(); !strings.Contains(st.LastError, "fenced by another agent") {
		t.Fatalf("the older sink's error: %s", st.LastError)
	}
	sinkAt(t, rs[1], 10)
	if ids := readCommitted(t, addr, "out"); len(ids) != 10 {
		t.Fatalf("read %v, want ids 0 to 9 once each", ids)
	}
}

// TestKafkaSinkDiscoversTopics: a sink of a topic_pattern picks up a
// matching topic created while it runs, from its first record.
func TestKafkaSinkDiscoversTopics(t *testing.T) {
	addr, producer := newCluster(t, 1, "in", "out")
	k := testSink(spec.DeliveryExactlyOnce)
	k.Source.Topics, k.Source.TopicPattern, k.Source.PartitionDiscoveryInterval = nil, "in.*", "200ms"
	r := startSink(t, addr, k)
	produce(t, producer, 0, 3, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	sinkAt(t, r, 3)
	if _, err := kadm.NewClient(producer).CreateTopic(context.Background(), 1, 1, nil, "in2"); err != nil {
		t.Fatal(err)
	}
	if err := producer.ProduceSync(context.Background(), &kgo.Record{Topic: "in2", Value: []byte(`{"id":3}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the new topic written", func() bool {
		return r.Status().Positions["in2/0"] == 1
	})
	if ids := readCommitted(t, addr, "out"); len(ids) != 4 || ids[3] != 3 {
		t.Fatalf("read %v, want ids 0 to 3", ids)
	}
}

// sinkFails waits until sink r is FAILED and returns its error.
func sinkFails(t *testing.T, r *Runner) string {
	t.Helper()
	waitFor(t, 30*time.Second, "the sink FAILED", func() bool { return r.Status().State == spec.StateFailed })
	return r.Status().LastError
}

// TestKafkaSinkRefusesItsSource: a row whose topic column names a topic
// the sink reads fails the sink, rather than loop forever.
func TestKafkaSinkRefusesItsSource(t *testing.T) {
	addr, producer := newCluster(t, 1, "in", "out")
	k := testSink(spec.DeliveryExactlyOnce)
	k.Source.ValueTransformer.JSONOptions.Schema = "id BIGINT, topic STRING"
	// The topic column overrides table_topic_mapping (a topic would
	// override the column).
	k.Topic, k.TableTopicMapping = "", "in:out"
	r := startSink(t, addr, k)
	produce(t, producer, 0, 1, func(i int) string { return fmt.Sprintf(`{"id":%d,"topic":"in"}`, i) })
	if msg := sinkFails(t, r); !strings.Contains(msg, `goes to topic "in", which the sink's source reads`) {
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
	r := startSink(t, addr, testSink(spec.DeliveryExactlyOnce))
	produce(t, producer, 0, 5, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	sinkAt(t, r, 5)
	r.Stop()
	produce(t, producer, 5, 10, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	deleteRecords(t, producer, "in", 8)
	r = startSink(t, addr, testSink(spec.DeliveryExactlyOnce))
	msg := sinkFails(t, r)
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
	k := testSink(spec.DeliveryExactlyOnce)
	k.ValueFormat = spec.SinkFormatDebeziumJSON
	k.Source.ValueTransformer = &spec.Transformer{Format: spec.FormatDebeziumJSON}
	k.Normalize()
	at := time.UnixMilli(1_700_000_000_000)
	event := `{"op":"c","after":{"id":1},"source":{"db":"d","table":"t","ts_ms":1000},"ts_ms":1000}`
	if err := producer.ProduceSync(context.Background(), &kgo.Record{Topic: "in", Value: []byte(event), Timestamp: at}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	r := startSink(t, addr, k)
	sinkAt(t, r, 1)
	cl := committedReader(t, addr, "out")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fs := cl.PollRecords(ctx, 1)
	if recs := fs.Records(); len(recs) != 1 || !recs[0].Timestamp.Equal(at) || !strings.Contains(string(recs[0].Value), `"ts_ms":1000`) {
		t.Fatalf("records %v (errors %v), want one at %s with the change's ts_ms 1000", recs, fs.Errors(), at)
	}
}

// TestKafkaSinkFailsOnCorrupt: a source record that does not decode fails
// the sink naming it, instead of being written as an event of nulls, and
// nothing of its round is written.
func TestKafkaSinkFailsOnCorrupt(t *testing.T) {
	addr, producer := newCluster(t, 1, "in", "out")
	produce(t, producer, 0, 3, func(i int) string {
		if i == 1 {
			return "not json"
		}
		return fmt.Sprintf(`{"id":%d}`, i)
	})
	r := startSink(t, addr, testSink(spec.DeliveryExactlyOnce))
	if msg := sinkFails(t, r); !strings.Contains(msg, "the record at offset 1 of in/0 does not decode") {
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
			k := testSink(spec.DeliveryExactlyOnce)
			k.Topic = tc.topic
			produce(t, producer, 0, 1, func(i int) string {
				return fmt.Sprintf(`{"id":%d,"name":%q}`, i, strings.Repeat("x", 500))
			})
			r := startSink(t, addr, k)
			if msg := sinkFails(t, r); !strings.Contains(msg, tc.want) || !strings.Contains(msg, tc.topic) {
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
			r := startSink(t, addr, k)
			sinkAt(t, r, 3)
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

// TestKafkaSinkReadsThroughIngest: a sink of Kafka topics reads them
// through ingest's source, as the pipelines do, one fetcher a partition,
// rather than through fetchers of its own.
func TestKafkaSinkReadsThroughIngest(t *testing.T) {
	var mu sync.Mutex
	var sources []*ingest.Source
	t.Cleanup(func() { newSource = ingest.NewSource })
	newSource = func(client *kafka.Client, budget *memory.Budget, log *slog.Logger) *ingest.Source {
		src := ingest.NewSource(client, budget, log)
		mu.Lock()
		defer mu.Unlock()
		sources = append(sources, src)
		return src
	}
	addr, producer := newCluster(t, 2, "in", "out")
	produce(t, producer, 0, 6, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	r := startSink(t, addr, testSink(spec.DeliveryExactlyOnce))
	waitFor(t, 30*time.Second, "every record written", func() bool {
		st := r.Status()
		if st.State == spec.StateFailed {
			t.Fatalf("sink FAILED: %s", st.LastError)
		}
		_, ok := st.Positions["in/1"]
		return ok && st.Positions["in/0"]+st.Positions["in/1"] == 6
	})
	mu.Lock()
	defer mu.Unlock()
	if len(sources) != 1 {
		t.Fatalf("%d sources made, want 1: the session's", len(sources))
	}
	if fetchers, _ := sources[0].Fetches(); fetchers != 2 {
		t.Fatalf("the source started %d fetchers, want 2: one a partition", fetchers)
	}
	// The positions move when the sink's transaction commits; a reader
	// sees the commit marker a moment later.
	waitFor(t, 10*time.Second, "the 6 source rows read committed", func() bool {
		return len(readCommitted(t, addr, "out")) == 6
	})
}

// TestKafkaSinkNewColumnsMidBatch: a source whose columns are inferred
// takes the new fields of records in the middle of what it read, each
// record written once, in order, with the columns it has.
func TestKafkaSinkNewColumnsMidBatch(t *testing.T) {
	addr, producer := newCluster(t, 1, "in", "out")
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
	r := startSink(t, addr, k)
	sinkAt(t, r, 10)
	produce(t, producer, 10, 20, value)
	sinkAt(t, r, 20)
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
