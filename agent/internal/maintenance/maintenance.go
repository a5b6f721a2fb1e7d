// Package maintenance keeps a table fast to read while it is written: it
// compacts the table's small files into files near the target size
// (package compaction) and vacuums the data files the table's log removed
// longer ago than the table's retention ([table.Table.Vacuum]).
//
// It sits beside ingestion, on a table's log: a table loop or a fanout
// runner, which writes the table through its [deltasink.Sink], starts one
// [Maintainer] per table it writes and tells it after each commit
// ([Maintainer.Committed]); the maintainer also reads the commits of the
// table's other writers when it starts and every minute, and compacts
// what they wrote. In a cluster only the agent that reads the
// table's first partition maintains it, so that two agents do not compact
// the same files (were they to, the log would make one of them give way).
// The maintainer works on a goroutine of its own, one job at a time, so
// ingestion never waits for it: its commits interleave with the
// ingestion's through the log, and a crash loses only work not committed,
// which the next pass plans again from the log alone.
//
// [deltasink.Sink]: github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink
package maintenance

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/compaction"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Defaults of [Options].
const (
	// DefaultVacuumEvery is how often a maintainer vacuums its table.
	DefaultVacuumEvery = time.Hour
	// DefaultCheckEvery is how often a maintainer reads the commits of
	// the table's other writers and counts its small files, besides after
	// each commit of its own.
	DefaultCheckEvery = time.Minute
	// DefaultCPUShare is the share of one core a compaction may use:
	// ingestion keeps the rest. A tenth of a core rewrites a few MB a
	// second, far more than the tables that make small files (slow
	// topics, short flush intervals) write. An agent ingesting at full
	// speed on two cores loses about that tenth of a core to it, 5 to 10%
	// of its records/s (make bench measures it; the README gives the
	// figures).
	DefaultCPUShare = 0.1
)

// Options says what a [Maintainer] does.
type Options struct {
	// Compact turns compaction on: once the table holds more than
	// MinSmallFiles small files (see [compaction.IsSmall]), a pass
	// rewrites them into files near TargetSize bytes.
	Compact       bool
	MinSmallFiles int
	TargetSize    int64
	// CheckEvery is how often the maintainer reads the commits of the
	// table's other writers and counts its small files
	// ([DefaultCheckEvery] when zero), besides when it starts and after
	// each [Maintainer.Committed]: in a cluster the other agents commit
	// most of the table's files, and after a restart the files may all be
	// there already.
	CheckEvery time.Duration
	// Vacuum turns vacuum on, every VacuumEvery ([DefaultVacuumEvery]
	// when zero), and once when the maintainer starts.
	Vacuum      bool
	VacuumEvery time.Duration
	// CPUShare caps the share of one core a compaction pass uses, by
	// resting after each batch of rows and each commit for as long as
	// the share asks ([DefaultCPUShare] when zero).
	CPUShare float64
	// Budget, when set, holds what a pass holds in memory, as it holds
	// what the fetchers read (see [compaction.Options.Memory]): a pass
	// waits for room before each batch of rows, behind any fetch (see
	// [memory.Budget.TryAcquire]), and holds at most a quarter of the
	// budget at once (smaller batches, smaller row groups), so that it
	// never waits for room the fetchers always hold.
	Budget *memory.Budget
	// Log gets what each job did and why one failed.
	Log *slog.Logger
	// State, when set, is the status the maintainer keeps up to date.
	State *State
}

// State is what a table's maintainer did, for its status: the jobs since
// the agent started and the last error. It is safe for concurrent use.
type State struct {
	mu sync.Mutex
	st spec.MaintenanceStatus
}

// Snapshot returns a copy of the status.
func (s *State) Snapshot() spec.MaintenanceStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st
}

func (s *State) update(f func(st *spec.MaintenanceStatus)) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.st)
}

// Maintainer runs a table's maintenance on a goroutine of its own; see
// the package doc. Its methods are safe for concurrent use.
type Maintainer struct {
	tbl    *table.Table
	opts   Options
	poke   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
	// compactErr and vacuumErr are the jobs' last errors, used on the
	// maintainer's goroutine only.
	compactErr, vacuumErr string
}

// Start starts maintaining tbl until ctx ends or [Maintainer.Stop]: it
// vacuums and compacts what needs it at once, then as the options say. The
// table stays the caller's: it must call Stop before it closes tbl. A
// maintainer with neither job on does nothing.
func Start(ctx context.Context, tbl *table.Table, opts Options) *Maintainer {
	if opts.VacuumEvery <= 0 {
		opts.VacuumEvery = DefaultVacuumEvery
	}
	if opts.CheckEvery <= 0 {
		opts.CheckEvery = DefaultCheckEvery
	}
	if opts.CPUShare <= 0 || opts.CPUShare > 1 {
		opts.CPUShare = DefaultCPUShare
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	m := &Maintainer{tbl: tbl, opts: opts, poke: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	go m.run(ctx)
	return m
}

// Committed tells the maintainer that the table has a new commit: it
// counts the table's small files and compacts them if there are too many.
// It never waits.
func (m *Maintainer) Committed() {
	select {
	case m.poke <- struct{}{}:
	default:
	}
}

// Stop stops the maintainer and waits for it: a pass under way stops
// after the file it is reading, deleting what it has not committed.
func (m *Maintainer) Stop() {
	m.cancel()
	<-m.done
}

func (m *Maintainer) run(ctx context.Context) {
	defer close(m.done)
	if !m.opts.Compact && !m.opts.Vacuum {
		return
	}
	vacuum := time.NewTicker(m.opts.VacuumEvery)
	defer vacuum.Stop()
	check := time.NewTicker(m.opts.CheckEvery)
	defer check.Stop()
	m.vacuum(ctx)
	m.refresh(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.poke:
			m.compact(ctx)
		case <-check.C:
			m.refresh(ctx)
		case <-vacuum.C:
			m.vacuum(ctx)
		}
	}
}

// refresh reads the commits of the table's other writers, then compacts
// if the table holds too many small files.
func (m *Maintainer) refresh(ctx context.Context) {
	if !m.opts.Compact {
		return
	}
	if err := m.tbl.Refresh(); err != nil {
		m.opts.Log.Warn("reading the table's latest commits failed; compaction tries again later", "err", err)
		return
	}
	m.compact(ctx)
}

// compact runs a compaction pass when the table holds more small files
// than the options allow.
func (m *Maintainer) compact(ctx context.Context) {
	if !m.opts.Compact {
		return
	}
	target := m.opts.TargetSize
	if size, ok, err := table.TargetFileSize(m.tbl.Snapshot().Configuration); err == nil && ok {
		target = size
	}
	files := m.tbl.Files()
	small := compaction.SmallFiles(files, target)
	m.opts.State.update(func(st *spec.MaintenanceStatus) { st.SmallFiles = small })
	// The files a pass would rewrite, not every small file: small files
	// alone in their partition, or kept by the growth rule, would start a
	// pass that rewrites nothing at every commit.
	if small <= m.opts.MinSmallFiles || planned(files, target) <= m.opts.MinSmallFiles {
		return
	}
	start := time.Now()
	opts := compaction.Options{TargetSize: m.opts.TargetSize, Pace: m.pace}
	if b := m.opts.Budget; b != nil {
		// At most a quarter of the budget at once: the fetchers hold
		// their share for as long as their fetches wait for records, so
		// more might never fit, and the pass would wait for ever.
		opts.Memory, opts.MaxMemory = budgetMemory{b}, b.Stats().Limit/4
	}
	res, err := compaction.Run(ctx, m.tbl, opts)
	if ctx.Err() != nil {
		return // stopping: what was not committed is gone, and no error
	}
	left := compaction.SmallFiles(m.tbl.Files(), target)
	m.opts.State.update(func(st *spec.MaintenanceStatus) {
		st.SmallFiles = left
		st.Compactions += int64(res.Commits)
		st.FilesCompacted += int64(res.FilesRemoved)
		st.FilesWritten += int64(res.FilesAdded)
		if res.Commits > 0 {
			st.LastCompaction = start.UTC().Format(time.RFC3339)
		}
		if res.GaveWay != nil {
			st.GaveWay++
		}
		st.LastError = m.lastError(&m.compactErr, err)
	})
	switch {
	case err != nil:
		m.opts.Log.Warn("compaction failed; the next commit tries again", "err", err, "commits", res.Commits)
	case res.GaveWay != nil:
		m.opts.Log.Info("compaction gave way to another writer", "reason", res.GaveWay, "commits", res.Commits)
	case res.Commits > 0:
		m.opts.Log.Info("table compacted", "files_removed", res.FilesRemoved, "files_added", res.FilesAdded,
			"bytes_removed", res.BytesRemoved, "bytes_added", res.BytesAdded, "rows", res.Rows, "took", time.Since(start).Round(time.Millisecond))
	}
}

// vacuum deletes the files the log removed longer ago than the table's
// retention, until ctx ends.
func (m *Maintainer) vacuum(ctx context.Context) {
	if !m.opts.Vacuum {
		return
	}
	res, err := m.tbl.Vacuum(ctx)
	if ctx.Err() != nil {
		return // stopping: the rest waits for the next vacuum
	}
	m.opts.State.update(func(st *spec.MaintenanceStatus) {
		st.FilesVacuumed += int64(res.FilesDeleted)
		if err == nil {
			st.LastVacuum = time.Now().UTC().Format(time.RFC3339)
		}
		st.LastError = m.lastError(&m.vacuumErr, err)
	})
	switch {
	case err != nil:
		m.opts.Log.Warn("vacuum failed; it runs again later", "err", err)
	case res.FilesDeleted > 0:
		m.opts.Log.Info("table vacuumed", "files", res.FilesDeleted, "bytes", res.BytesDeleted)
	}
}

// budgetMemory is a memory budget as a compaction pass reserves in it: a
// pass gives way to ingestion, so it never queues ahead of a fetch, nor
// makes the budget ask the tables to flush (which would write more small
// files); it tries again every reserveRetry until the bytes fit.
type budgetMemory struct{ b *memory.Budget }

func (m budgetMemory) Reserve(ctx context.Context, n int64) error {
	for !m.b.TryAcquire(n) {
		t := time.NewTimer(reserveRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

func (m budgetMemory) Release(n int64) { m.b.Release(n) }

// reserveRetry is how long a pass waits before it tries again to reserve
// memory the budget did not have.
const reserveRetry = 50 * time.Millisecond

// pace rests after busy time spent compacting for as long as keeps the
// pass within its CPU share.
func (m *Maintainer) pace(ctx context.Context, busy time.Duration) error {
	rest := time.Duration(float64(busy) * (1 - m.opts.CPUShare) / m.opts.CPUShare)
	if rest <= 0 {
		return nil
	}
	t := time.NewTimer(rest)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// planned returns how many of files a compaction pass would rewrite.
func planned(files []table.LiveFile, target int64) int {
	n := 0
	for _, b := range compaction.Plan(files, target) {
		n += len(b.Files)
	}
	return n
}

// lastError records err as the last error of one job (*job), and returns
// the text of the jobs' last errors, each named: a job that succeeds
// clears its own, not the other's.
func (m *Maintainer) lastError(job *string, err error) string {
	*job = ""
	if err != nil {
		*job = err.Error()
	}
	var parts []string
	if m.compactErr != "" {
		parts = append(parts, "compaction: "+m.compactErr)
	}
	if m.vacuumErr != "" {
		parts = append(parts, "vacuum: "+m.vacuumErr)
	}
	return strings.Join(parts, "; ")
}
