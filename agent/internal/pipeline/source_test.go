package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
	"github.com/twmb/franz-go/pkg/kadm"
)

// consumer reads one subscription as a table does: it skips the records
// before its next offset, and records the offsets of the others.
type consumer struct {
	done chan struct{}

	mu      sync.Mutex
	next    int64
	offsets []int64
	err     error
}

// consume subscribes to src and reads until ctx ends.
func consume(ctx context.Context, src *source, sub subscription) *consumer {
	c := &consumer{next: sub.From, done: make(chan struct{})}
	batches, errs := src.subscribe(ctx, sub)
	go func() {
		defer close(c.done)
		for {
			select {
			case <-ctx.Done():
				return
			case err := <-errs:
				c.mu.Lock()
				c.err = err
				c.mu.Unlock()
				return
			case b := <-batches:
				c.mu.Lock()
				for _, r := range b.Records {
					if r.Offset >= c.next && (sub.Until == 0 || r.Offset < sub.Until) {
						c.offsets = append(c.offsets, r.Offset)
						c.next = r.Offset + 1
					}
				}
				next := b.Next
				if sub.Until > 0 {
					next = min(next, sub.Until)
				}
				c.next = max(c.next, next)
				c.mu.Unlock()
				b.release()
			}
		}
	}()
	return c
}

func (c *consumer) at() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.next
}

// check fails unless c got offsets from..to-1, each once, in order.
func (c *consumer) check(t *testing.T, name string, from, to int64) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var want []int64
	for o := from; o < to; o++ {
		want = append(want, o)
	}
	if !slices.Equal(c.offsets, want) {
		t.Errorf("%s got %d records %v...; want each of [%d, %d) once, in order", name, len(c.offsets),
			c.offsets[:min(len(c.offsets), 10)], from, to)
	}
}

// Subscribers of one partition share one fetcher: one that joins behind
// the others makes it read again from there, the others skip what they
// have, and one with an Until gets nothing past it. Every record reaches
// every subscriber once, and the memory goes back once all released it.
func TestSourceSharesAPartition(t *testing.T) {
	addr, producer := newCluster(t, 1, "s")
	value := func(i int) string { return fmt.Sprint(i) }
	produce(t, producer, 0, 200, value)
	client := newKafkaClient(t, &spec.Connection{Name: "c", BootstrapServers: []string{addr}})
	budget := memory.New(64 << 20)
	src := newSource(client, budget, slog.Default())
	tp := kafka.TopicPartition{Topic: "s"}
	ctx, cancel := context.WithCancel(context.Background())

	a := consume(ctx, src, subscription{TP: tp, From: 0})
	waitFor(t, 10*time.Second, "a at 200", func() bool { return a.at() == 200 })
	b := consume(ctx, src, subscription{TP: tp, From: 50})
	c := consume(ctx, src, subscription{TP: tp, From: 20, Until: 120})
	waitFor(t, 10*time.Second, "b at 200, c at 120", func() bool { return b.at() == 200 && c.at() == 120 })
	produce(t, producer, 200, 300, value)
	waitFor(t, 10*time.Second, "a and b at 300", func() bool { return a.at() == 300 && b.at() == 300 })
	a.check(t, "a", 0, 300)
	b.check(t, "b", 50, 300)
	c.check(t, "c", 20, 120)
	src.mu.Lock()
	started, runs := src.started, src.runs
	src.mu.Unlock()
	if started != 1 || runs < 2 {
		t.Errorf("%d fetchers started, %d fetches; want 1 fetcher, which fetched again for b", started, runs)
	}

	cancel()
	<-a.done
	<-b.done
	<-c.done
	src.close()
	if st := budget.Stats(); st.Used != 0 {
		t.Errorf("the budget holds %d bytes after everything stopped, want 0", st.Used)
	}
}

// A fatal fetch error reaches every subscriber of the partition; one whose
// offset is past the partition's end gets it once the subscriber behind it
// left.
func TestSourceFailsEverySubscriber(t *testing.T) {
	addr, producer := newCluster(t, 1, "s")
	produce(t, producer, 0, 10, func(i int) string { return "v" })
	client := newKafkaClient(t, &spec.Connection{Name: "c", BootstrapServers: []string{addr}})
	src := newSource(client, memory.New(64<<20), slog.Default())
	defer src.close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Offset 500 is past the partition's end: out of range, data loss.
	var cs []*consumer
	for range 2 {
		cs = append(cs, consume(ctx, src, subscription{TP: kafka.TopicPartition{Topic: "s"}, From: 500}))
	}
	// One behind, reading, and one past the end, waiting for it.
	behindCtx, leave := context.WithCancel(ctx)
	behind := consume(behindCtx, src, subscription{TP: kafka.TopicPartition{Topic: "s"}, From: 0})
	cs = append(cs, consume(ctx, src, subscription{TP: kafka.TopicPartition{Topic: "s"}, From: 700}))
	waitFor(t, 10*time.Second, "the one behind at 10", func() bool { return behind.at() == 10 })
	select {
	case <-cs[2].done:
		t.Fatalf("the subscriber past the end got %v while one behind it read", cs[2].err)
	case <-time.After(300 * time.Millisecond):
	}
	leave()
	for i, c := range cs {
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("subscriber %d got no error", i)
		}
		var loss *kafka.DataLossError
		if !errors.As(c.err, &loss) {
			t.Errorf("subscriber %d got %v, want a data loss error", i, c.err)
		}
	}
}

// Two tables of a pipeline that read the same topic share its fetches, and
// each gets every record once: while the other runs, also when one
// restarts because its options changed, and when a third joins and reads
// the topic from the start, far behind them.
func TestManagerTablesShareFetches(t *testing.T) {
	const partitions = 4
	addr, producer := newCluster(t, partitions, "events")
	value := func(i int) string { return fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i) }
	produce(t, producer, 0, 300, value)
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	// tables returns a pipeline whose tables, named names, read the topic.
	tables := func(names ...string) *spec.Pipeline {
		p := testPipeline("events")
		p.Tables = nil
		for _, name := range names {
			t := testPipeline("events").Tables[0] // shares no pointer with the others
			t.DestinationTable = name
			p.Tables = append(p.Tables, t)
		}
		return p
	}
	p := tables("events", "events2")

	m := NewManager(Config{Warehouse: t.TempDir()})
	defer m.Close(context.Background())
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	rows := func(n int64) func() bool {
		return func() bool {
			st, _ := m.Status("p")
			for _, table := range st.Tables {
				if table.Rows != n {
					return false
				}
			}
			return true
		}
	}
	waitFor(t, 20*time.Second, "300 rows in each table", rows(300))
	src, restarted := m.applied("p").source, m.applied("p").tables[1]
	src.mu.Lock()
	started := src.started
	src.mu.Unlock()
	if started != partitions {
		t.Errorf("%d fetchers started for 2 tables of %d partitions, want %d", started, partitions, partitions)
	}

	// events2 gets a new column (it restarts), and events3 reads the topic
	// from the start; records keep coming as they start.
	p = tables("events", "events2", "events3")
	p.Tables[1].ConnectorOptions.KafkaOptions.ValueTransformer.JSONOptions.Schema = "id BIGINT, name STRING, extra STRING"
	produce(t, producer, 300, 450, value)
	if err := m.Apply(context.Background(), p, conn, nil); err != nil {
		t.Fatal(err)
	}
	if m.applied("p").tables[1] == restarted {
		t.Fatal("events2 did not restart")
	}
	produce(t, producer, 450, 600, value)
	waitFor(t, 20*time.Second, "600 rows in each table", rows(600))
	st, _ := m.Status("p")
	for _, table := range st.Tables {
		checkExactlyOnce(t, table.Location, 600)
	}
	src.mu.Lock()
	started, runs := src.started, src.runs
	src.mu.Unlock()
	if started != partitions || runs < 2*partitions {
		t.Errorf("%d fetchers started, %d fetches; want %d fetchers, which fetched again for events3", started, runs, partitions)
	}
}

// A table whose log recorded its offsets under the application ids of
// before, "<catalog>.<schema>.<table>/<topic>/<partition>", resumes from
// them, and its next commit records them under "<topic>/<partition>".
func TestManagerResumesFromLegacyAppIDs(t *testing.T) {
	const partitions, perPartition, committed = 2, 200, 50
	addr, _ := newCluster(t, partitions, "events")
	value := func(i int) string { return fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i) }
	// Partition k holds the ids i with i%2 == k, in order: the first 50
	// of each are ids 0..99.
	var recs [partitions][]decode.Record
	for part := range int32(partitions) {
		var values []string
		for o := range int64(perPartition) {
			v := value(int(o)*partitions + int(part))
			values = append(values, v)
			recs[part] = append(recs[part], decode.Record{Topic: "events", Partition: part, Offset: o, Value: []byte(v)})
		}
		produceValues(t, addr, "events", part, values...)
	}
	p := testPipeline("events")
	warehouse := t.TempDir()
	dir := spec.JoinLocation(warehouse, "main", "raw", "events")

	// The log as a table wrote it before: ids 0..99 committed, with their
	// offsets under the legacy application ids.
	layout, errs := p.Tables[0].Layout()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	dec, err := decode.New(layout, nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := table.Open(dir, table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := table.Commit{Schema: layout.Columns(), Txns: map[string]int64{}}
	for part := range partitions {
		batch, err := dec.Decode(context.Background(), recs[part][:committed])
		if err != nil {
			t.Fatal(err)
		}
		w, err := tbl.NewFile(dec.Schema())
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteColumns(batch.Columns, batch.Rows); err != nil {
			t.Fatal(err)
		}
		add, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		c.Files = append(c.Files, add)
		c.Txns[fmt.Sprintf("main.raw.events/events/%d", part)] = committed
	}
	if _, err := tbl.Commit(c); err != nil {
		t.Fatal(err)
	}
	tbl.Close()

	m := NewManager(Config{Warehouse: warehouse})
	defer m.Close(context.Background())
	if err := m.Apply(context.Background(), p, &spec.Connection{Name: "c", BootstrapServers: []string{addr}}, nil); err != nil {
		t.Fatal(err)
	}
	const total = partitions * perPartition
	waitFor(t, 20*time.Second, "every row", func() bool { st, _ := m.Status("p"); return st.Tables[0].Rows >= total })
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	snap, err := table.ReadSnapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	for part := range partitions {
		if next := snap.Txns[fmt.Sprintf("events/%d", part)]; next != perPartition {
			t.Errorf("the log holds %d for events/%d, want %d (all: %v)", next, part, perPartition, snap.Txns)
		}
	}
	ids := readIDs(t, dir)
	if len(ids) != total {
		t.Fatalf("%d distinct ids in %d rows, want %d", len(ids), snap.NumRows, total)
	}
	for id, n := range ids {
		if n != 1 || id < 0 || id >= total {
			t.Errorf("id %d is there %d times", id, n)
		}
	}
}

// readIDs counts the rows of each id in the data files of the table in
// dir.
func readIDs(t *testing.T, dir string) map[int64]int {
	t.Helper()
	type row struct {
		ID *int64 `parquet:"id,optional"`
	}
	rows, _ := readRows[row](t, dir)
	ids := map[int64]int{}
	for _, r := range rows {
		if r.ID == nil {
			t.Fatalf("%s: a row without id", dir)
		}
		ids[*r.ID]++
	}
	return ids
}

// A subscriber whose offset fell off the log (retention deleted it) gets
// the data loss error; one ahead of it, at readable offsets, goes on reading.
func TestSourceDataLossFailsOnlyTheStaleSubscriber(t *testing.T) {
	addr, producer := newCluster(t, 1, "s")
	produce(t, producer, 0, 100, func(i int) string { return "v" })
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "s", Partition: 0, At: 50})
	if _, err := kadm.NewClient(producer).DeleteRecords(context.Background(), offs); err != nil {
		t.Fatal(err)
	}
	client := newKafkaClient(t, &spec.Connection{Name: "c", BootstrapServers: []string{addr}})
	src := newSource(client, memory.New(64<<20), slog.Default())
	defer src.close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	healthy := consume(ctx, src, subscription{TP: kafka.TopicPartition{Topic: "s"}, From: 80})
	waitFor(t, 10*time.Second, "the healthy subscriber at 100", func() bool { return healthy.at() == 100 })
	stale := consume(ctx, src, subscription{TP: kafka.TopicPartition{Topic: "s"}, From: 10})
	<-stale.done
	var loss *kafka.DataLossError
	if !errors.As(stale.err, &loss) {
		t.Fatalf("the stale subscriber got %v, want a data loss error", stale.err)
	}
	produce(t, producer, 100, 120, func(i int) string { return "v" })
	waitFor(t, 10*time.Second, "the healthy subscriber at 120", func() bool { return healthy.at() == 120 })
	select {
	case <-healthy.done:
		t.Fatalf("the healthy subscriber got %v", healthy.err)
	default:
	}
}
