package pipeline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// multiTablePipeline returns a pipeline with one table per topic, named
// after it, each as testPipeline's table; flush_interval is an hour, so
// that only the memory budget (or the end of the run) flushes.
func multiTablePipeline(topics []string, continuous bool) *spec.Pipeline {
	p := testPipeline(topics[0])
	p.FlushInterval = "1h"
	p.Continuous = &continuous
	proto := p.Tables[0]
	p.Tables = nil
	for _, topic := range topics {
		t := proto
		t.DestinationTable = topic
		t.ConnectorOptions.KafkaOptions.Topics = []string{topic}
		p.Tables = append(p.Tables, t)
	}
	return p
}

// produceTo writes n records to topic: JSON values {"id":i,"name":...}
// whose name is 2*pad random hex digits, which compress no better than
// hex does.
func produceTo(t *testing.T, cl *kgo.Client, topic string, n, pad int) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(uint64(n), uint64(pad)))
	name := make([]byte, pad)
	recs := make([]*kgo.Record, n)
	for i := range recs {
		for j := range name {
			name[j] = byte(rnd.Uint32())
		}
		recs[i] = &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "%d", i), Value: fmt.Appendf(nil, `{"id":%d,"name":"%x"}`, i, name)}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// checkExactlyOnce reads every data file of the table in dir and checks
// that ids 0..n-1 are each there once, and that the log's offsets add up
// to n; it returns the number of data files.
func checkExactlyOnce(t *testing.T, dir string, n int) int {
	t.Helper()
	snap, err := table.ReadSnapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	var next int64
	for _, off := range snap.Txns {
		next += off
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if snap.NumRows != int64(n) || next != int64(n) || len(files) != snap.NumFiles {
		t.Fatalf("%s: log has %d rows in %d files (%d in the folder) and offsets summing to %d, want %d rows and offsets",
			dir, snap.NumRows, snap.NumFiles, len(files), next, n)
	}
	seen := make([]int, n)
	type row struct {
		ID *int64 `parquet:"id,optional"`
	}
	for _, f := range files {
		rows, err := parquet.ReadFile[row](f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.ID == nil || *r.ID < 0 || *r.ID >= int64(n) {
				t.Fatalf("%s: unexpected row %+v", f, r)
			}
			seen[*r.ID]++
		}
	}
	for id, k := range seen {
		if k != 1 {
			t.Fatalf("%s: id %d is there %d times", dir, id, k)
		}
	}
	return len(files)
}

// Many tables share a budget far smaller than what their fetches ask for:
// fetching pauses, files are flushed for room (flush_interval is an hour),
// and every table still ingests everything, each record once.
func TestManagerManyTablesShareASmallBudget(t *testing.T) {
	const tables, records = 12, 3000
	var topics []string
	for i := range tables {
		topics = append(topics, fmt.Sprintf("t%02d", i))
	}
	addr, producer := newCluster(t, 4, topics...)
	for _, topic := range topics {
		produceTo(t, producer, topic, records, 50)
	}

	// 48 partitions each reserve 128 KiB for a fetch: 6 MiB wanted at once.
	budget := memory.New(1 << 20)
	m := NewManager(Config{Warehouse: t.TempDir(), Memory: budget})
	p := multiTablePipeline(topics, false)
	if err := m.Apply(context.Background(), p, &spec.Connection{Name: "c", BootstrapServers: []string{addr}}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "every table IDLE", func() bool {
		st, _ := m.Status("p")
		return st.State == spec.StateIdle
	})
	st, _ := m.Status("p")
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, ts := range st.Tables {
		files += checkExactlyOnce(t, ts.Location, records)
	}
	stats := budget.Stats()
	t.Logf("%d files; budget %+v", files, stats)
	if stats.Pauses == 0 || stats.Flushes == 0 || files <= tables {
		t.Fatalf("want fetches paused and files flushed for room: %d files for %d tables, budget %+v", files, tables, stats)
	}
	if stats.Used != 0 {
		t.Fatalf("every table stopped, yet %d bytes of the budget are still held", stats.Used)
	}
}

// When the budget is full, the biggest open file is flushed: a table
// receiving large records is flushed again and again, while a table
// holding a few small records is never asked and commits them in one file
// when it stops.
func TestManagerFlushesTheBiggestFileFirst(t *testing.T) {
	addr, producer := newCluster(t, 1, "big", "small")
	const bigRecords, smallRecords = 6000, 100
	produceTo(t, producer, "small", smallRecords, 5)
	produceTo(t, producer, "big", bigRecords, 1000) // 12 MB

	// Files are asked to flush once they hold half the budget; the small
	// table's never comes near, nor near what a fetch reserves. The big
	// table runs until it has read everything, the small one until stopped.
	budget := memory.New(4 << 20)
	m := NewManager(Config{Warehouse: t.TempDir(), Memory: budget})
	conn := &spec.Connection{Name: "c", BootstrapServers: []string{addr}}
	small := multiTablePipeline([]string{"small"}, true)
	big := multiTablePipeline([]string{"big"}, false)
	big.Name = "big"
	for _, p := range []*spec.Pipeline{small, big} {
		if err := m.Apply(context.Background(), p, conn, nil); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 60*time.Second, "the big table IDLE", func() bool {
		st, _ := m.Status("big")
		return st.State == spec.StateIdle
	})
	bigStatus, _ := m.Status("big")
	smallStatus, _ := m.Status(small.Name)
	if smallStatus.Tables[0].Files != 0 {
		t.Fatalf("the small table was flushed: %+v", smallStatus.Tables[0])
	}
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := checkExactlyOnce(t, bigStatus.Tables[0].Location, bigRecords); n < 3 {
		t.Fatalf("the big table has %d files, want it flushed for room", n)
	}
	if n := checkExactlyOnce(t, smallStatus.Tables[0].Location, smallRecords); n != 1 {
		t.Fatalf("the small table has %d files, want the one it wrote when it stopped", n)
	}
	if used := budget.Stats().Used; used != 0 {
		t.Fatalf("every table stopped, yet %d bytes of the budget are still held", used)
	}
}
