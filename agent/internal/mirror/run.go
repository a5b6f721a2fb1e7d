package mirror

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// DefaultEvery is how often a running mirror syncs besides after the
// table's commits: it also catches up with what other writers committed,
// and retries after a failure.
const DefaultEvery = time.Minute

// Status is what a running mirror did, for a table's status and metrics.
type Status struct {
	// Version is the Delta version the catalog's table mirrors, -1 before
	// the first snapshot.
	Version int64
	// Lag is the number of Delta versions not yet mirrored.
	Lag int64
	// Snapshots counts the snapshots committed since the mirror started.
	Snapshots int64
	// LastSync is when the last sync that succeeded ended (RFC 3339).
	LastSync string
	// LastError is why the last sync failed; empty after one succeeds.
	LastError string
}

// State holds a running mirror's [Status]; it is safe for concurrent use.
type State struct {
	mu sync.Mutex
	st Status
}

// Snapshot returns a copy of the status.
func (s *State) Snapshot() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st
}

func (s *State) update(f func(*Status)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.st)
}

// Options says how a mirror runs.
type Options struct {
	// Every is how often it syncs besides after commits ([DefaultEvery]
	// when zero).
	Every time.Duration
	// Log gets what each sync did and why one failed.
	Log *slog.Logger
}

// Runner runs a [Mirror] on a goroutine of its own, so the table's
// writer never waits for the catalog. Its methods are safe for concurrent
// use.
type Runner struct {
	m      *Mirror
	opts   Options
	state  State
	poke   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

// Start starts syncing m until ctx ends or [Runner.Stop]: at once, after
// each [Runner.Committed], and every opts.Every. The mirror stays the
// caller's, to close after Stop.
func Start(ctx context.Context, m *Mirror, opts Options) *Runner {
	if opts.Every <= 0 {
		opts.Every = DefaultEvery
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &Runner{m: m, opts: opts, poke: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	r.state.st.Version = -1
	go r.run(ctx)
	return r
}

// Committed tells the runner the table has a new commit. It never waits.
func (r *Runner) Committed() {
	select {
	case r.poke <- struct{}{}:
	default:
	}
}

// Status returns what the runner did.
func (r *Runner) Status() Status { return r.state.Snapshot() }

// Stop stops the runner and waits for it; a sync under way ends with its
// call to the catalog.
func (r *Runner) Stop() {
	r.cancel()
	<-r.done
}

func (r *Runner) run(ctx context.Context) {
	defer close(r.done)
	tick := time.NewTicker(r.opts.Every)
	defer tick.Stop()
	for {
		r.sync(ctx)
		select {
		case <-ctx.Done():
			return
		case <-r.poke:
		case <-tick.C:
		}
	}
}

// sync syncs until the catalog's table mirrors the latest version read, or
// a sync fails.
func (r *Runner) sync(ctx context.Context) {
	for ctx.Err() == nil {
		res, err := r.m.Sync(ctx)
		if ctx.Err() != nil {
			return
		}
		r.state.update(func(st *Status) {
			if err != nil {
				st.LastError = err.Error()
				if res.Latest >= 0 {
					st.Lag = res.Latest - st.Version
				}
				return
			}
			st.Version, st.Lag, st.Snapshots = res.Version, res.Latest-res.Version, st.Snapshots+int64(res.Commits)
			st.LastSync, st.LastError = time.Now().UTC().Format(time.RFC3339), ""
		})
		if err != nil {
			r.opts.Log.Warn("the table's Iceberg mirror failed; ingestion goes on, and the mirror tries again later",
				"iceberg_table", r.m.tableName(), "err", err)
			return
		}
		if res.Commits > 0 {
			r.opts.Log.Info("Iceberg mirror committed", "iceberg_table", r.m.tableName(), "delta_version", res.Version,
				"files_added", res.Added, "files_removed", res.Removed)
		}
		if res.Version >= res.Latest || res.Commits == 0 {
			return
		}
	}
}
