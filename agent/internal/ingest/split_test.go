package ingest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafkatest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

func TestSplitBacklogs(t *testing.T) {
	a0, a1, b0 := kafka.TopicPartition{Topic: "a"}, kafka.TopicPartition{Topic: "a", Partition: 1}, kafka.TopicPartition{Topic: "b"}
	tests := []struct {
		name                      string
		backlogs                  map[kafka.TopicPartition]offsetRange
		maxRecords, minPartitions int64
		want                      map[kafka.TopicPartition][]offsetRange
	}{
		{
			name:     "under max_records_per_partition: whole",
			backlogs: map[kafka.TopicPartition]offsetRange{a0: {10, 110}}, maxRecords: 100,
			want: map[kafka.TopicPartition][]offsetRange{},
		},
		{
			name:     "over max_records_per_partition: ranges of at most that many, the larger first",
			backlogs: map[kafka.TopicPartition]offsetRange{a0: {10, 111}, a1: {0, 5}}, maxRecords: 50,
			want: map[kafka.TopicPartition][]offsetRange{a0: {{10, 44}, {44, 78}, {78, 111}}},
		},
		{
			name:     "min_partitions splits the partitions with the most lag first",
			backlogs: map[kafka.TopicPartition]offsetRange{a0: {0, 10000}, a1: {0, 10}, b0: {5000, 8000}}, minPartitions: 7,
			want: map[kafka.TopicPartition][]offsetRange{
				a0: {{0, 2500}, {2500, 5000}, {5000, 7500}, {7500, 10000}},
				b0: {{5000, 6500}, {6500, 8000}},
			},
		},
		{
			name:     "min_partitions already met by the partitions",
			backlogs: map[kafka.TopicPartition]offsetRange{a0: {0, 1000}, a1: {0, 10}, b0: {0, 0}}, minPartitions: 3,
			want: map[kafka.TopicPartition][]offsetRange{},
		},
		{
			name:     "min_partitions after max_records_per_partition",
			backlogs: map[kafka.TopicPartition]offsetRange{a0: {0, 10000}, a1: {0, 4000}}, maxRecords: 5000, minPartitions: 5,
			want: map[kafka.TopicPartition][]offsetRange{
				a0: {{0, 3334}, {3334, 6667}, {6667, 10000}},
				a1: {{0, 2000}, {2000, 4000}},
			},
		},
		{
			name:     "min_partitions makes no range shorter than a decoded chunk",
			backlogs: map[kafka.TopicPartition]offsetRange{a0: {7, 3*DecodeChunk + 10}, a1: {3, 3}, b0: {0, DecodeChunk}}, minPartitions: 1000,
			want: map[kafka.TopicPartition][]offsetRange{a0: {{7, DecodeChunk + 8}, {DecodeChunk + 8, 2*DecodeChunk + 9}, {2*DecodeChunk + 9, 3*DecodeChunk + 10}}},
		},
		{
			name:     "max_records_per_partition may make shorter ones",
			backlogs: map[kafka.TopicPartition]offsetRange{a0: {7, 10}}, maxRecords: 1, minPartitions: 1000,
			want: map[kafka.TopicPartition][]offsetRange{a0: {{7, 8}, {8, 9}, {9, 10}}},
		},
		{
			name:     "backlogs past 2^32 offsets",
			backlogs: map[kafka.TopicPartition]offsetRange{a0: {0, 1 << 40}}, minPartitions: 3,
			want: map[kafka.TopicPartition][]offsetRange{a0: {{0, 366503875926}, {366503875926, 733007751851}, {733007751851, 1 << 40}}},
		},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			got := map[kafka.TopicPartition][]offsetRange{}
			for tp, c := range splitBacklogs(test.backlogs, test.maxRecords, test.minPartitions) {
				for i := range c.parts {
					got[tp] = append(got[tp], c.at(i))
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(test.want) {
				t.Errorf("got %v\nwant %v", got, test.want)
			}
		})
	}
}

// splitFixture reads one partition of a kfake cluster as a table loop does,
// handing the decoded chunks to the test.
type splitFixture struct {
	pr     *PartitionReader
	chunks chan Decoded
	errs   chan error
	stop   func()
}

// newSplitFixture reads from the cluster at addr, with budget, decoding
// into layout (nil: the value as bytes).
func newSplitFixture(t testing.TB, addr string, budget *memory.Budget, layout *spec.Layout) *splitFixture {
	t.Helper()
	if layout == nil {
		layout = &spec.Layout{Value: spec.Part{Column: spec.ValueColumn}}
	}
	first, err := decode.New(layout, nil)
	if err != nil {
		t.Fatal(err)
	}
	src := NewSource(kafkatest.NewClient(t, &spec.Connection{Name: "c", BootstrapServers: []string{addr}}), budget, slog.New(slog.DiscardHandler))
	fctx, cancelFetch := context.WithCancel(context.Background())
	dctx, cancelDecode := context.WithCancel(context.Background())
	fx := &splitFixture{chunks: make(chan Decoded), errs: make(chan error, 1)}
	var wg sync.WaitGroup
	fx.pr = &PartitionReader{Source: src, Fetch: fctx, Decode: dctx, WG: &wg, Pool: NewDecoderPool(layout, nil, first, budget),
		Chunks: fx.chunks, Errs: fx.errs, Log: slog.New(slog.DiscardHandler)}
	fx.stop = func() {
		cancelFetch()
		cancelDecode()
		wg.Wait()
		fx.pr.Pool.Close()
		src.Close()
	}
	return fx
}

// next returns the next chunk.
func (fx *splitFixture) next(t testing.TB) Decoded {
	t.Helper()
	select {
	case d := <-fx.chunks:
		return d
	case err := <-fx.errs:
		t.Fatal(err)
	case <-time.After(20 * time.Second):
		t.Fatal("no chunk in 20s")
	}
	return Decoded{}
}

// written does with d what the loop does once it wrote it: its decoder
// goes back to the pool, and its batch once it is the last.
func (fx *splitFixture) written(d Decoded) {
	if d.Dec != nil {
		fx.pr.Pool.Put(d.Dec)
	}
	d.Free()
}

// readUpTo takes chunks until the partition's next offset reaches to,
// checking that they come in offset order, each record once from from on,
// and that each chunk's next offset follows the one before.
func (fx *splitFixture) readUpTo(t testing.TB, from, to int64) {
	t.Helper()
	want, next := from, from
	for next < to {
		d := fx.next(t)
		for _, r := range d.Recs {
			if r.Offset != want {
				t.Fatalf("record at offset %d, want %d", r.Offset, want)
			}
			want++
		}
		if d.Next < next || (len(d.Recs) > 0 && d.Next != want) {
			t.Fatalf("chunk's next offset %d after %d, with records up to %d", d.Next, next, want)
		}
		next = d.Next
		fx.written(d)
	}
	if want != to || next != to {
		t.Fatalf("read records up to %d, next offset %d; want %d", want, next, to)
	}
}

// A partition read as ranges hands its chunks over in offset order, each
// record once, however far the ranges after the first decoded ahead; then
// the live tail follows. The ranges do run in parallel: with the loop (the
// test) taking nothing, every range of the window behind the first decodes
// all its records, more chunks than the table's decoder pool has tokens
// (were they to take tokens, they would all wait, as would the first).
func TestSplitterReadsRangesInParallelInOrder(t *testing.T) {
	addr, producer := kafkatest.NewCluster(t, 1, "s")
	for i := range 12 { // several produce requests: several record batches
		kafkatest.Produce(t, producer, i*1000, (i+1)*1000, func(i int) string { return fmt.Sprint(i) })
	}
	fx := newSplitFixture(t, addr, memory.New(64<<20), nil)
	defer fx.stop()
	tp := kafka.TopicPartition{Topic: "s"}
	s := fx.pr.readSplit(Subscription{TP: tp, From: 100}, cut{offsetRange{100, 12000}, 4}) // about 3 chunks a range
	kafkatest.WaitFor(t, 20*time.Second, "the ranges behind the first decoded", func() bool {
		return s.aheadRanges.Load() >= int64(s.window-1)
	})
	if tokens := int64(cap(fx.pr.Pool.tokens)); s.ahead.Load() < tokens {
		t.Errorf("%d chunks decoded ahead, want more than the pool's %d tokens", s.ahead.Load(), tokens)
	}
	fx.readUpTo(t, 100, 12000)
	kafkatest.Produce(t, producer, 12000, 12100, func(i int) string { return fmt.Sprint(i) })
	fx.readUpTo(t, 12000, 12100)
}

// A triggered run's partition read as ranges ends at its Until: every
// goroutine of the reader returns, with no tail to read.
func TestSplitterStopsAtUntil(t *testing.T) {
	addr, producer := kafkatest.NewCluster(t, 1, "s")
	kafkatest.Produce(t, producer, 0, 3000, func(i int) string { return fmt.Sprint(i) })
	fx := newSplitFixture(t, addr, memory.New(64<<20), nil)
	defer fx.stop()
	tp := kafka.TopicPartition{Topic: "s"}
	fx.pr.readSplit(Subscription{TP: tp, From: 0, Until: 2500}, cut{offsetRange{0, 2500}, 5})
	fx.readUpTo(t, 0, 2500)
	done := make(chan struct{})
	go func() {
		fx.pr.WG.Wait()
		close(done)
	}()
	select {
	case <-done:
	case d := <-fx.chunks:
		t.Fatalf("a chunk past the end: %d records, next %d", len(d.Recs), d.Next)
	case <-time.After(20 * time.Second):
		t.Fatal("the reader's goroutines still run 20s after the end")
	}
}

// The ranges ahead of the first wait when the memory budget is full; the
// first does not, so a budget smaller than one range still reads them all,
// in order: were the first to wait too, it would wait behind the range
// after it, whose fetched batches fill the budget until the first is done.
func TestSplitterSmallBudget(t *testing.T) {
	addr, producer := kafkatest.NewCluster(t, 1, "s")
	pad := strings.Repeat("x", 1000)
	for i := range 40 { // record batches of 100 KB
		kafkatest.Produce(t, producer, i*100, (i+1)*100, func(int) string { return pad })
	}
	fx := newSplitFixture(t, addr, memory.New(1<<20), nil)
	defer fx.stop()
	fx.pr.readSplit(Subscription{TP: kafka.TopicPartition{Topic: "s"}, Until: 4000}, cut{offsetRange{0, 4000}, 2})
	fx.readUpTo(t, 0, 4000)
}

// BenchmarkSplitDecode reads one partition's backlog of JSON records as
// the table loop's decoders would, whole and split into ranges (the loop,
// here the benchmark, only takes the chunks): the ranges decode on every
// core where the whole partition decodes on one. It reads from kfake, in
// this process, or from the real broker at BENCH_KAFKA_BOOTSTRAP when set,
// which leaves the agent's cores to the agent (not KAFKA_BOOTSTRAP: make
// test runs every benchmark once, whether that broker is up or not).
func BenchmarkSplitDecode(b *testing.B) {
	const n = 100_000
	addr, producer := kafkatest.NewCluster(b, 1, "events")
	topic := "events"
	if bootstrap := os.Getenv("BENCH_KAFKA_BOOTSTRAP"); bootstrap != "" {
		addr, topic = bootstrap, fmt.Sprintf("bench-split-%d", time.Now().UnixNano())
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation())
		if err != nil {
			b.Fatal(err)
		}
		defer cl.Close()
		if _, err := kadm.NewClient(cl).CreateTopic(context.Background(), 1, 1, nil, topic); err != nil {
			b.Fatal(err)
		}
		producer = cl
	}
	for i := 0; i < n; i += 5000 {
		kafkatest.Produce(b, producer, i, i+5000, func(i int) string {
			return fmt.Sprintf(`{"id":%d,"name":"name %d","score":%d.5,"tags":["a","b","c"],"at":"2026-11-30T23:00:00Z"}`, i, i, i)
		})
	}
	p := &spec.Pipeline{Name: "p", Connection: "c", DestinationCatalog: "main", DestinationSchema: "raw", Tables: []spec.Table{{
		DestinationTable: "events",
		ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
			Topics: []string{"events"}, KeyTransformer: &spec.Transformer{Format: spec.FormatString},
			ValueTransformer: &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{
				Schema: "id BIGINT, name STRING, score DOUBLE, tags ARRAY<STRING>, at TIMESTAMP"}},
		}},
		TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"},
	}}}
	p.Normalize()
	tbl := p.Tables[0]
	for _, ranges := range []int64{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("ranges=%d", ranges), func(b *testing.B) {
			layout, errs := tbl.Layout()
			if len(errs) > 0 {
				b.Fatal(errs)
			}
			fx := newSplitFixture(b, addr, memory.New(256<<20), layout)
			defer fx.stop()
			tp := kafka.TopicPartition{Topic: topic}
			b.ReportAllocs()
			cpu := cpuTime(b)
			for b.Loop() {
				sub := Subscription{TP: tp, Until: n}
				fx.pr.start(sub, splitBacklogs(map[kafka.TopicPartition]offsetRange{tp: {0, n}}, 0, ranges)[tp])
				for next := int64(0); next < n; {
					d := fx.next(b)
					if d.Err != nil {
						b.Fatal(d.Err)
					}
					next = d.Next
					fx.written(d)
				}
			}
			cpu = cpuTime(b) - cpu
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "records/s")
			// The cores the process kept busy (this one's share of a
			// machine other processes use too), and the processor time
			// each record took.
			b.ReportMetric(cpu.Seconds()/b.Elapsed().Seconds(), "cores")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(n*b.N), "cpu-ns/record")
		})
	}
}

// cpuTime returns the processor time the process used so far, user and
// system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
