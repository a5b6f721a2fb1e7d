package maintenance_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/maintenance"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/tabletest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// clock is a settable time for a table's Options.Now.
type clock struct{ ms atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ms.Store(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	return c
}

func (c *clock) now() time.Time        { return time.UnixMilli(c.ms.Load()) }
func (c *clock) add(d time.Duration)   { c.ms.Add(d.Milliseconds()) }
func (c *clock) Now() func() time.Time { return c.now }

// ingester commits files of Kafka records to a table, as a table loop
// would: partition p's offsets follow on from commit to commit.
type ingester struct {
	t      testing.TB
	tb     *table.Table
	fields []schema.Field
	next   map[int]int64
	// config is the table configuration the first commit sets.
	config map[string]string
}

func newIngester(t testing.TB, tb *table.Table) *ingester {
	return &ingester{t: t, tb: tb, fields: tabletest.Fields(t, "partition INT, offset BIGINT, value STRING"), next: map[int]int64{}}
}

// commit commits one file of n records of each of partitions.
func (in *ingester) commit(partitions, n int) {
	in.t.Helper()
	c := table.Commit{Txns: map[string]int64{}, From: map[string]int64{}}
	add := tabletest.WriteFile(in.t, in.tb, in.fields, func(b *rows.Builder) {
		for p := range partitions {
			for range n {
				off := in.next[p]
				tabletest.Row(in.t, b, func() { b.Int32(int32(p)) }, func() { b.Int64(off) },
					func() { b.Bytes(fmt.Appendf(nil, "record %d of partition %d", off, p)) })
				in.next[p]++
			}
		}
	})
	for p := range partitions {
		id := fmt.Sprintf("t/%d", p)
		c.Txns[id] = in.next[p]
		if from := in.next[p] - int64(n); from > 0 {
			c.From[id] = from
		}
	}
	c.Files = []table.AddFile{add}
	if in.tb.Snapshot().Version < 0 {
		c.Schema, c.Configuration = in.fields, in.config
	}
	if _, err := in.tb.Commit(c); err != nil {
		in.t.Fatal(err)
	}
}

// fixture is a table on a fake clock, its ingester, and a maintainer of it
// reporting to st.
type fixture struct {
	clk *clock
	dir string
	tb  *table.Table
	in  *ingester
	st  *maintenance.State
	m   *maintenance.Maintainer
}

// maintained opens a new table on a fake clock and starts a maintainer of
// it with opts (its State set); the test's end stops and closes them.
func maintained(t *testing.T, opts maintenance.Options) *fixture {
	t.Helper()
	f := &fixture{clk: newClock(), dir: t.TempDir(), st: &maintenance.State{}}
	tb, err := table.Open(f.dir, table.Options{Now: f.clk.Now()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	f.tb, f.in = tb, newIngester(t, tb)
	opts.State = f.st
	f.m = maintenance.Start(t.Context(), tb, opts)
	t.Cleanup(f.m.Stop)
	return f
}

// waitFor polls the maintainer's status until ok holds, or fails after a
// minute.
func waitFor(t *testing.T, st *maintenance.State, what string, ok func(spec.MaintenanceStatus) bool) spec.MaintenanceStatus {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		s := st.Snapshot()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a minute, not %s: status %+v", what, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMaintainer compacts a table once it holds more small files than the
// threshold, not before, reports it in its status, and vacuums the files
// the compaction removed once the retention has passed, not before.
func TestMaintainer(t *testing.T) {
	t.Parallel()
	f := maintained(t, maintenance.Options{Compact: true, MinSmallFiles: 5, TargetSize: 1 << 20,
		Vacuum: true, VacuumEvery: 10 * time.Millisecond, CPUShare: 1})
	clk, dir, tb, in, st, m := f.clk, f.dir, f.tb, f.in, f.st, f.m

	for range 5 {
		in.commit(2, 3)
		m.Committed()
	}
	waitFor(t, st, "counting 5 small files", func(s spec.MaintenanceStatus) bool { return s.SmallFiles == 5 })
	if s := st.Snapshot(); s.Compactions != 0 {
		t.Fatalf("compacted 5 small files with a threshold of 5: %+v", s)
	}
	small := tb.Files()
	in.commit(2, 3)
	m.Committed()
	s := waitFor(t, st, "compacted", func(s spec.MaintenanceStatus) bool { return s.Compactions == 1 })
	if s.FilesCompacted != 6 || s.FilesWritten != 1 || s.SmallFiles != 1 || s.LastCompaction == "" || s.LastError != "" {
		t.Errorf("status after compacting 6 files: %+v", s)
	}
	if files := tb.Files(); len(files) != 1 || files[0].NumRecords != 36 {
		t.Fatalf("live files after compaction: %+v", files)
	}

	// Vacuum runs every 10ms: the removed files stay until the retention
	// (a week) has passed since their removal.
	time.Sleep(100 * time.Millisecond)
	for _, f := range small {
		if _, err := os.Stat(filepath.Join(dir, f.Path)); err != nil {
			t.Fatalf("vacuum deleted %s before the retention: %v", f.Path, err)
		}
	}
	clk.add(7*24*time.Hour + time.Minute)
	s = waitFor(t, st, "vacuumed", func(s spec.MaintenanceStatus) bool { return s.FilesVacuumed == 6 })
	if s.LastVacuum == "" || s.LastError != "" {
		t.Errorf("status after vacuum: %+v", s)
	}
	for _, f := range small {
		if _, err := os.Stat(filepath.Join(dir, f.Path)); !os.IsNotExist(err) {
			t.Errorf("%s is still there after vacuum: %v", f.Path, err)
		}
	}
}

// TestMaintainerChecks compacts without being told of a commit: the small
// files a table held when its maintainer started (an agent restarted), and
// those committed later without a call to Committed, which it finds every
// CheckEvery. The commits go through the maintainer's own Table (a table
// folder on disk takes one writer); that a check reads other writers'
// commits too is TestRefresh's (package table) and the e2e cluster test's
// to show, where another agent commits most of each table.
func TestMaintainerChecks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tb, err := table.Open(dir, table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	in := newIngester(t, tb)
	for range 3 {
		in.commit(1, 2)
	}
	st := &maintenance.State{}
	m := maintenance.Start(t.Context(), tb, maintenance.Options{Compact: true, MinSmallFiles: 2, TargetSize: 1 << 20,
		CPUShare: 1, CheckEvery: 10 * time.Millisecond, State: st})
	defer m.Stop()
	waitFor(t, st, "compacted at start", func(s spec.MaintenanceStatus) bool { return s.Compactions == 1 })
	for range 3 {
		in.commit(1, 2)
	}
	// A check may come between the commits: how many passes it takes
	// varies, not that they come.
	s := waitFor(t, st, "compacted again", func(s spec.MaintenanceStatus) bool { return s.Compactions >= 2 && s.FilesCompacted >= 5 })
	var rows int64
	for _, f := range tb.Files() {
		rows += f.NumRecords
	}
	if rows != 12 || s.LastError != "" {
		t.Errorf("after the passes: %d rows, status %+v; want the 12 rows committed", rows, s)
	}
}

// TestMaintainerBudgetHeld compacts while fetchers hold part of the memory
// budget for good (their fetches wait for records on a quiet topic), even
// when a batch of the pass's rows would not fit in the rest: a pass
// reserves at most a quarter of the budget, rather than wait for ever.
func TestMaintainerBudgetHeld(t *testing.T) {
	t.Parallel()
	budget := memory.New(1 << 20)
	if err := budget.Acquire(t.Context(), 600<<10); err != nil {
		t.Fatal(err)
	}
	f := maintained(t, maintenance.Options{Compact: true, MinSmallFiles: 2, TargetSize: 1 << 30, CPUShare: 1, Budget: budget})
	for range 3 {
		f.in.commit(1, 20_000)
	}
	f.m.Committed()
	s := waitFor(t, f.st, "compacted", func(s spec.MaintenanceStatus) bool { return s.Compactions == 1 })
	if s.FilesCompacted != 3 || s.LastError != "" {
		t.Errorf("status after compacting: %+v", s)
	}
	if used := budget.Stats().Used; used != 600<<10 {
		t.Errorf("the budget holds %d bytes after the pass; want the fetchers' %d", used, 600<<10)
	}
}

// TestMaintainerOff does nothing with both jobs off, whatever the table
// holds.
func TestMaintainerOff(t *testing.T) {
	t.Parallel()
	tb, err := table.Open(t.TempDir(), table.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	in := newIngester(t, tb)
	st := &maintenance.State{}
	m := maintenance.Start(t.Context(), tb, maintenance.Options{MinSmallFiles: 2, TargetSize: 1 << 20, State: st})
	for range 4 {
		in.commit(1, 1)
		m.Committed()
	}
	m.Stop()
	if s := st.Snapshot(); s != (spec.MaintenanceStatus{}) || len(tb.Files()) != 4 {
		t.Errorf("with both jobs off: status %+v, %d files", s, len(tb.Files()))
	}
}
