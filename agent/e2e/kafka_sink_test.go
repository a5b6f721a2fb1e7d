//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// sinkOf returns an exactly-once sink of the JSON records produce.py
// writes to topic src, written as JSON rows to topic dst, hashed by key,
// in batches compressed with Zstandard (which librdkafka's consumer, that
// reads them back, decompresses).
func sinkOf(name, conn, src, dst string) *spec.KafkaSink {
	return &spec.KafkaSink{
		Name: name, Connection: conn, Topic: dst, ValueFormat: spec.SinkFormatJSON, PartitionStrategy: spec.PartitionHashByKey,
		DeliveryGuarantee: spec.DeliveryExactlyOnce, FlushInterval: "300ms", Compression: spec.CompressionZstd,
		Source: &spec.KafkaOptions{
			Topics: []string{src}, StartingOffset: spec.StartingOffsetEarliest,
			KeyTransformer:   &spec.Transformer{Format: spec.FormatString},
			ValueTransformer: &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: "id BIGINT, name STRING"}},
		},
	}
}

// readTopic is what read_committed.py prints.
type readTopic struct {
	Count  int                        `json:"count"`
	IDs    []int64                    `json:"ids"`
	Values map[string]json.RawMessage `json:"values"`
	// Updates are the update events read, with --updates.
	Updates []json.RawMessage `json:"updates"`
	// Headers are the headers of the last record of each id, with
	// --headers: [name, value] pairs, a null value nil.
	Headers map[string][][2]*string `json:"headers"`
}

// readCommitted reads topic to its end as a read_committed consumer
// (read_committed.py), with more arguments.
func readCommitted(t *testing.T, topic string, args ...string) readTopic {
	t.Helper()
	out := python(t, "read_committed.py", append([]string{"--bootstrap", env.bootstrap, "--topic", topic}, args...)...)
	var r readTopic
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("read_committed.py: %v: %s", err, out)
	}
	return r
}

// endOffsets returns the high watermark of each partition of topic
// ("topic/partition"), and their sum.
func endOffsets(t *testing.T, topic string) (map[string]int64, int64) {
	t.Helper()
	var out map[string]map[string]int64
	if err := json.Unmarshal([]byte(python(t, "kafka_admin.py", env.bootstrap, "end-offsets", topic)), &out); err != nil {
		t.Fatal(err)
	}
	ends, sum := map[string]int64{}, int64(0)
	for p, off := range out[topic] {
		ends[topic+"/"+p] = off
		sum += off
	}
	return ends, sum
}

// waitSinkAt waits until sink name has committed, for every partition of
// its source topic src, its end offset, and returns its status.
func (a *agent) waitSinkAt(name, src string, timeout time.Duration) spec.KafkaSinkStatus {
	a.t.Helper()
	ends, _ := endOffsets(a.t, src)
	got := awaitObject(a, "kafka sink "+name, fmt.Sprintf("at the end of %s %v", src, ends), timeout, a.client().GetKafkaSink, name,
		func(r *spec.KafkaSinkResponse) bool {
			for tp, end := range ends {
				if r.Status.Positions[tp] < end {
					return false
				}
			}
			return true
		},
		func(r *spec.KafkaSinkResponse) (string, any) { return r.Status.State, r.Status })
	return got.Status
}

// checkOnce fails t unless ids holds 0 to n-1, each once.
func checkOnce(t *testing.T, ids []int64, n int) {
	t.Helper()
	seen := make([]int, n)
	var odd []int64
	for _, id := range ids {
		if id < 0 || id >= int64(n) {
			odd = append(odd, id)
			continue
		}
		seen[id]++
	}
	var missing, twice []int
	for id, c := range seen {
		switch {
		case c == 0:
			missing = append(missing, id)
		case c > 1:
			twice = append(twice, id)
		}
	}
	if len(missing)+len(twice)+len(odd) > 0 {
		t.Fatalf("read %d ids: %d missing (first %v), %d more than once (first %v), unknown %v",
			len(ids), len(missing), missing[:min(len(missing), 10)], len(twice), twice[:min(len(twice), 10)], odd[:min(len(odd), 10)])
	}
}

// TestKafkaSinkExactlyOnceKill9: an exactly-once sink killed with SIGKILL
// 3 to 5 times while its source grows, each time at a random moment or,
// when one comes within 3 s, while a transaction with records is open,
// and restarted each time, writes every source record once as a
// read_committed consumer sees its topic: the transactions of the killed
// runs are aborted, and each restart resumes from the offsets committed
// with the last committed transaction.
func TestKafkaSinkExactlyOnceKill9(t *testing.T) {
	t.Parallel()
	const n = 10000
	src, dst := uniqueName("sink_src"), uniqueName("sink_dst")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", src, "--count", "0", "--partitions", "3")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", dst, "--count", "0", "--partitions", "2")
	a := startAgent(t, t.TempDir())
	ctx := context.Background()
	if _, err := a.client().PutConnection(ctx, &spec.Connection{Name: "k", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	name := uniqueName("eos")
	k := sinkOf(name, "k", src, dst)
	k.FlushInterval = "100ms"
	if _, err := a.client().PutKafkaSink(ctx, k); err != nil {
		t.Fatal(err)
	}

	// The source grows for about 10 s while the agent is killed.
	a.killWhileSinking(sinkKills{src: src, srcPartitions: 3, n: n, rate: 1000,
		dst: dst, dstPartitions: 2, kills: 3 + rand.IntN(3), maxPause: 1800 * time.Millisecond})
	st := a.waitSinkAt(name, src, 3*time.Minute)
	t.Logf("sink at %v", st.Positions)
	checkSinkTopic(t, dst, n)
}

// sinkKills says what [agent.killWhileSinking] produces and when it
// kills.
type sinkKills struct {
	// src is the topic produce.py writes n records to, over its
	// srcPartitions partitions, at rate records a second.
	src                    string
	srcPartitions, n, rate int
	// dst is the sink's topic, with dstPartitions partitions.
	dst           string
	dstPartitions int
	// kills is how many times the agent is killed, each after a pause of
	// 300 ms up to maxPause.
	kills    int
	maxPause time.Duration
}

// killWhileSinking produces k's records and meanwhile kills agent a with
// SIGKILL k.kills times, each at a random moment or, when one comes
// within 3 s after it, while a transaction with records is open on the
// sink's topic, and restarts it each time. It returns once every record
// is produced.
func (a *agent) killWhileSinking(k sinkKills) {
	t := a.t
	t.Helper()
	producer := exec.Command(env.python, filepath.Join("testdata", "produce.py"), "--bootstrap", env.bootstrap,
		"--topic", k.src, "--count", fmt.Sprint(k.n), "--partitions", fmt.Sprint(k.srcPartitions), "--rate", fmt.Sprint(k.rate))
	if err := producer.Start(); err != nil {
		t.Fatal(err)
	}
	watch, err := kafka.NewClient(&spec.Connection{Name: "watch", BootstrapServers: []string{env.bootstrap}})
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	var dstParts []kafka.TopicPartition
	for p := range k.dstPartitions {
		dstParts = append(dstParts, kafka.TopicPartition{Topic: k.dst, Partition: p})
	}
	for i := range k.kills {
		time.Sleep(300*time.Millisecond + rand.N(k.maxPause-300*time.Millisecond))
		inTxn := openTransaction(t, watch, dstParts, 3*time.Second)
		a.kill()
		t.Logf("kill %d of %d at %s, inside a transaction with records: %v", i+1, k.kills, time.Now().Format("15:04:05.000"), inTxn)
		a.start()
	}
	if err := producer.Wait(); err != nil {
		t.Fatalf("produce.py: %v", err)
	}
}

// checkSinkTopic fails t unless a read_committed consumer reads ids 0 to
// n-1 from topic dst, each once, and logs how many records the kills
// left aborted (a kill may fall between two transactions, so none is not
// an error).
func checkSinkTopic(t *testing.T, dst string, n int) {
	t.Helper()
	got := readCommitted(t, dst)
	checkOnce(t, got.IDs, n)
	all := readCommitted(t, dst, "--isolation", "read_uncommitted")
	t.Logf("read_committed: %d records; read_uncommitted: %d (aborted by the kills: %d)", got.Count, all.Count, all.Count-got.Count)
}

// openTransaction waits up to d until a transaction with records is open
// on one of tps (its last stable offset is behind its high watermark), and
// reports whether one was.
func openTransaction(t *testing.T, c *kafka.Client, tps []kafka.TopicPartition, d time.Duration) bool {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		stable, err1 := c.Offsets(ctx, tps, kafka.LastStable)
		high, err2 := c.Offsets(ctx, tps, kafka.Latest)
		cancel()
		if err1 == nil && err2 == nil {
			for _, tp := range tps {
				if stable[tp] < high[tp] {
					return true
				}
			}
		}
	}
	return false
}

// TestKafkaSinkZombieFenced: two agents run the same exactly-once sink;
// the one that starts later fences the older, which stops FAILED naming
// the sink, and only the newer writes from then on: still each record
// once.
func TestKafkaSinkZombieFenced(t *testing.T) {
	t.Parallel()
	const n = 400
	src, dst := uniqueName("zombie_src"), uniqueName("zombie_dst")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", src, "--count", "200", "--partitions", "2")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", dst, "--count", "0", "--partitions", "1")
	ctx := context.Background()
	var agents [2]*agent
	for i := range agents {
		agents[i] = startAgent(t, t.TempDir())
		if _, err := agents[i].client().PutConnection(ctx, &spec.Connection{Name: "k", BootstrapServers: []string{env.bootstrap}}); err != nil {
			t.Fatal(err)
		}
	}
	older, newer := agents[0], agents[1]
	name := uniqueName("zombie")
	if _, err := older.client().PutKafkaSink(ctx, sinkOf(name, "k", src, dst)); err != nil {
		t.Fatal(err)
	}
	older.waitSinkAt(name, src, time.Minute)
	if _, err := newer.client().PutKafkaSink(ctx, sinkOf(name, "k", src, dst)); err != nil {
		t.Fatal(err)
	}
	// Records for both to write: the older's next transaction is fenced.
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", src, "--count", fmt.Sprint(n), "--partitions", "2")
	failed := awaitObject(older, "kafka sink "+name, "FAILED", time.Minute, older.client().GetKafkaSink, name,
		func(r *spec.KafkaSinkResponse) bool { return r.Status.State == spec.StateFailed },
		func(r *spec.KafkaSinkResponse) (string, any) { return "", r.Status })
	if !strings.Contains(failed.Status.LastError, fmt.Sprintf("fenced by another agent running kafka sink %q", name)) {
		t.Fatalf("the older agent's sink: %+v", failed.Status)
	}
	newer.waitSinkAt(name, src, time.Minute)
	// produce.py numbers the second batch 0 to n-1 again: ids 0-199 twice
	// in the source, 200-399 once.
	got := readCommitted(t, dst)
	counts := map[int64]int{}
	for _, id := range got.IDs {
		counts[id]++
	}
	for id := range int64(n) {
		want := 1
		if id < 200 {
			want = 2
		}
		if counts[id] != want {
			t.Fatalf("id %d read %d times, want %d (%d records read)", id, counts[id], want, got.Count)
		}
	}
	if got.Count != 200+n {
		t.Fatalf("read %d records, want %d", got.Count, 200+n)
	}
}

// TestKafkaSinkRoundTrip: Debezium change events read by a sink and
// written again as Debezium events give, read back by a pipeline table,
// the rows a table reading the original events has: operations, source
// tables and times, and row images (deletes with their before image). With
// keep_changed_fields_only, each update written has the changed field of
// its source event's before image, and only it.
func TestKafkaSinkRoundTrip(t *testing.T) {
	t.Parallel()
	src, dst := uniqueName("cdc_src"), uniqueName("cdc_dst")
	for _, topic := range []string{src, dst} {
		python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "0", "--partitions", "1")
	}
	a := startAgent(t, t.TempDir())
	ctx := context.Background()
	debezium := func() *spec.Transformer { return &spec.Transformer{Format: spec.FormatDebeziumJSON} }
	table := func(name, topic string) spec.Table {
		return spec.Table{DestinationTable: name, ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
			Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest, ValueTransformer: debezium(),
		}}}
	}
	name := uniqueName("roundtrip")
	a.applyPipeline(&spec.Pipeline{Name: name, Connection: name, DestinationCatalog: "main", DestinationSchema: "cdc",
		FlushInterval: "300ms", Tables: []spec.Table{table("direct", src), table("via_sink", dst)}})
	changedOnly := true
	k := &spec.KafkaSink{Name: name, Connection: name, Topic: dst, DeliveryGuarantee: spec.DeliveryExactlyOnce, FlushInterval: "300ms",
		KeepChangedFieldsOnly: &changedOnly, Source: &spec.KafkaOptions{Topics: []string{src}, StartingOffset: spec.StartingOffsetEarliest, ValueTransformer: debezium()}}
	if _, err := a.client().PutKafkaSink(ctx, k); err != nil {
		t.Fatal(err)
	}
	// The events come once both tables run, so that each takes its
	// columns from the row images as they come.
	a.waitFor(name, "running", time.Minute, func(p *spec.PipelineResponse) bool { return p.Status.State == spec.StateRunning })
	python(t, "cdc_records.py", "--bootstrap", env.bootstrap, "--topic", src, "--file", "testdata/cdc/debezium_customers.jsonl",
		"--repeat", "3")
	a.waitSinkAt(name, src, time.Minute)
	// Per copy: four snapshot rows, an insert, an update and a delete;
	// the tombstone gives none.
	const rows = 3 * 7
	direct := a.waitRows(name, 0, rows, time.Minute)
	via := a.waitRows(name, 1, rows, time.Minute)
	sameTables(t, via.Location, direct.Location)
	// Each copy updates 1004's first_name from "Anne".
	updates := readCommitted(t, dst, "--updates").Updates
	if len(updates) != 3 {
		t.Fatalf("%d updates written, want 3", len(updates))
	}
	for _, u := range updates {
		var event struct{ Before map[string]any }
		if err := json.Unmarshal(u, &event); err != nil || len(event.Before) != 1 || event.Before["first_name"] != "Anne" {
			t.Fatalf("update %s: before %v, want first_name Anne only (%v)", u, event.Before, err)
		}
	}
}

// sameTables fails t unless the tables at got and want hold the same
// columns and rows, ordered by id and _op, as read_table.py reads them.
func sameTables(t *testing.T, got, want string) {
	t.Helper()
	order := []string{"id", "_op"}
	wantCols, wantRows := readTable(t, want, nil, order)
	gotCols, gotRows := readTable(t, got, nil, order)
	if fmt.Sprint(gotCols) != fmt.Sprint(wantCols) {
		t.Errorf("columns through the sink %v, want %v", gotCols, wantCols)
	}
	wantJSON, _ := json.MarshalIndent(wantRows, "", " ")
	gotJSON, _ := json.MarshalIndent(gotRows, "", " ")
	if string(gotJSON) != string(wantJSON) {
		t.Fatalf("rows through the sink:\n%s\nwant:\n%s", gotJSON, wantJSON)
	}
	t.Logf("%d rows, columns %v", len(gotRows), gotCols)
}

// TestKafkaSinkAtLeastOnce: an at-least-once sink writing Canal events,
// hashed by key over three partitions, writes every record, and commits
// its positions to its group outside any transaction.
func TestKafkaSinkAtLeastOnce(t *testing.T) {
	t.Parallel()
	const n = 500
	src, dst := uniqueName("alo_src"), uniqueName("alo_dst")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", src, "--count", fmt.Sprint(n), "--partitions", "2", "--header")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", dst, "--count", "0", "--partitions", "3")
	a := startAgent(t, t.TempDir())
	ctx := context.Background()
	if _, err := a.client().PutConnection(ctx, &spec.Connection{Name: "k", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	name := uniqueName("alo")
	k := sinkOf(name, "k", src, dst)
	k.DeliveryGuarantee, k.ValueFormat, k.FlushInterval = spec.DeliveryAtLeastOnce, spec.SinkFormatCanalJSON, ""
	if _, err := a.client().PutKafkaSink(ctx, k); err != nil {
		t.Fatal(err)
	}
	st := a.waitSinkAt(name, src, time.Minute)
	if st.Records != n {
		t.Errorf("status records = %d, want %d", st.Records, n)
	}
	got := readCommitted(t, dst, "--values")
	checkOnce(t, got.IDs, n)
	var event struct {
		Type     string           `json:"type"`
		Database string           `json:"database"`
		Table    string           `json:"table"`
		Data     []map[string]any `json:"data"`
	}
	if err := json.Unmarshal(got.Values["7"], &event); err != nil {
		t.Fatal(err)
	}
	if event.Type != "INSERT" || event.Table != src || len(event.Data) != 1 || event.Data[0]["name"] != "user-7" {
		t.Errorf("the event of id 7: %s", got.Values["7"])
	}
	awaitGroupOffsets(t, "tributary-sink."+name, int64(n), 30*time.Second)
}

// TestKafkaSinkCanalOld: a sink reading Canal events and writing Canal
// events with keep_changed_fields_only writes each update's old as the
// source event's: the changed columns' values before the update, typed as
// the columns, and no others.
func TestKafkaSinkCanalOld(t *testing.T) {
	t.Parallel()
	src, dst := cdcTopic(t, "canal_products"), uniqueName("canal_dst")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", dst, "--count", "0", "--partitions", "1")
	a := startAgent(t, t.TempDir())
	ctx := context.Background()
	if _, err := a.client().PutConnection(ctx, &spec.Connection{Name: "k", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	name, changedOnly := uniqueName("canal_old"), true
	k := &spec.KafkaSink{Name: name, Connection: "k", Topic: dst, ValueFormat: spec.SinkFormatCanalJSON,
		KeepChangedFieldsOnly: &changedOnly, DeliveryGuarantee: spec.DeliveryAtLeastOnce,
		Source: &spec.KafkaOptions{Topics: []string{src}, StartingOffset: spec.StartingOffsetEarliest, ValueTransformer: canalTr(nil)}}
	if _, err := a.client().PutKafkaSink(ctx, k); err != nil {
		t.Fatal(err)
	}
	a.waitSinkAt(name, src, time.Minute)
	updates := readCommitted(t, dst, "--updates").Updates
	if len(updates) != 2 {
		t.Fatalf("%d updates written, want 2", len(updates))
	}
	var old [2]map[string]any
	for i, u := range updates {
		var event struct{ Old []map[string]any }
		if err := json.Unmarshal(u, &event); err != nil || len(event.Old) != 1 {
			t.Fatalf("update %s: %v", u, err)
		}
		old[i] = event.Old[0]
	}
	// 106's description and 107's weight and in_stock changed, and both
	// rows' updated_at (a MySQL timestamp without zone: TIMESTAMP_NTZ).
	const at = "2020-05-13T12:38:35"
	if len(old[0]) != 2 || old[0]["description"] != "16oz carpenter's hammer" || old[0]["updated_at"] != at {
		t.Errorf("106's old %v", old[0])
	}
	if len(old[1]) != 3 || old[1]["weight"] != 5.3 || old[1]["in_stock"] != true || old[1]["updated_at"] != at {
		t.Errorf("107's old %v", old[1])
	}
}

// TestKafkaSinkTopicMapping: Flink's table_topic_mapping form, comma-
// separated table ids sharing one topic, routes the 22 Debezium events of
// inventory.customers, orders and products, interleaved on one topic, each
// to its mapped topic (customers and orders to crm, products to catalog),
// written by an idempotent at-least-once producer; each record carries its
// source record's header, as librdkafka's consumer reads it. A second sink
// of the same events with include_headers = false (and
// enable_idempotence = false) writes records without headers.
func TestKafkaSinkTopicMapping(t *testing.T) {
	t.Parallel()
	src := cdcTopic(t, "debezium_inventory")
	crm, catalog, plain := uniqueName("crm"), uniqueName("catalog"), uniqueName("no_headers")
	for _, topic := range []string{crm, catalog, plain} {
		python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "0", "--partitions", "1")
	}
	a := startAgent(t, t.TempDir())
	ctx := context.Background()
	if _, err := a.client().PutConnection(ctx, &spec.Connection{Name: "k", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	source := func() *spec.KafkaOptions {
		return &spec.KafkaOptions{Topics: []string{src}, StartingOffset: spec.StartingOffsetEarliest,
			ValueTransformer: &spec.Transformer{Format: spec.FormatDebeziumJSON}}
	}
	mapped, off := uniqueName("mapped"), false
	if _, err := a.client().PutKafkaSink(ctx, &spec.KafkaSink{Name: mapped, Connection: "k", FlushInterval: "300ms", Source: source(),
		TableTopicMapping: fmt.Sprintf("inventory.customers,inventory.orders:%s;inventory.products:%s", crm, catalog)}); err != nil {
		t.Fatal(err)
	}
	bare := uniqueName("bare")
	if _, err := a.client().PutKafkaSink(ctx, &spec.KafkaSink{Name: bare, Connection: "k", FlushInterval: "300ms", Source: source(),
		Topic: plain, IncludeHeaders: &off, EnableIdempotence: &off}); err != nil {
		t.Fatal(err)
	}
	a.waitSinkAt(mapped, src, time.Minute)
	a.waitSinkAt(bare, src, time.Minute)
	for _, tc := range []struct {
		topic  string
		tables map[string]int // events per table
	}{{crm, map[string]int{"customers": 8, "orders": 7}}, {catalog, map[string]int{"products": 7}}} {
		got := readCommitted(t, tc.topic, "--values", "--headers")
		n := 0
		for _, c := range tc.tables {
			n += c
		}
		if len(got.IDs) != n || len(got.Values) != n {
			t.Fatalf("topic %s: ids %v, want %d events, each once", tc.topic, got.IDs, n)
		}
		counts := map[string]int{}
		for id, v := range got.Values {
			var e struct{ Source struct{ DB, Table string } }
			if err := json.Unmarshal(v, &e); err != nil {
				t.Fatal(err)
			}
			counts[e.Source.Table]++
			want := fmt.Sprintf("%s-%s", e.Source.Table, id)
			if h := got.Headers[id]; len(h) != 1 || h[0][0] == nil || *h[0][0] != "trace" || h[0][1] == nil || *h[0][1] != want {
				t.Errorf("topic %s, id %s: headers %v, want trace=%s", tc.topic, id, h, want)
			}
		}
		if fmt.Sprint(counts) != fmt.Sprint(tc.tables) {
			t.Fatalf("topic %s holds the events of %v, want %v", tc.topic, counts, tc.tables)
		}
	}
	got := readCommitted(t, plain, "--headers")
	if len(got.IDs) != 22 || len(got.Headers) != 22 {
		t.Fatalf("topic %s: ids %v, want the 22 events, each once", plain, got.IDs)
	}
	for id, h := range got.Headers {
		if len(h) != 0 {
			t.Fatalf("include_headers = false: the record of id %s has headers %v", id, h)
		}
	}
}
