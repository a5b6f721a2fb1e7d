package fanout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/columns"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/ingest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/position"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/variant"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Config is everything a fanout runner depends on; it restarts when
// any of it changes.
type Config struct {
	// Pipeline names the pipeline the fanout schema reads with.
	Pipeline string
	// Fanout is the fanout schema, normalized and valid.
	Fanout spec.FanoutSchema
	// Dir is the destination schema's folder, <root>/<catalog>/<schema>:
	// each routed table is a folder in it, and so is the progress log.
	Dir string
	// Conn is the pipeline's connection, whose schema registry the routed
	// tables' transformers may use.
	Conn spec.Connection
	// Settings are the pipeline's: flushes, file sizes, triggered or
	// continuous runs.
	runner.Settings
}

// Runner runs one fanout schema in its own goroutine: it routes every
// fetched record to its table, and restarts from the logs after retryable
// errors.
type Runner struct {
	cfg    Config
	client *kafka.Client
	// source fetches the partitions, shared with the other readers of the
	// pipeline.
	source *ingest.Source
	// newRoute makes the route of each partition the runner reads.
	newRoute NewRoute
	// registries makes the clients of the schema registries the routed
	// tables' transformers use.
	registries *ingest.Registries
	budget     *memory.Budget
	log        *slog.Logger
	// sup runs the runner and holds its state and last error.
	sup *runner.Supervisor
	// own says which partitions the runner may read: every one, or those
	// its agent owns in a cluster.
	own runner.Ownership
	// crash, set by tests only, is asked before each table's flush: an
	// error stops the run there, as a crash would. Tables flush side by
	// side, so it may be called from several goroutines at once.
	crash func(table string) error
	// runEnd holds a triggered run's end offsets, fixed when the run
	// starts: a run that restarts after a retryable error keeps them.
	// Used by the runner's goroutine only.
	runEnd map[kafka.TopicPartition]int64

	mu sync.Mutex
	// tables holds the status of every table created so far, by name.
	tables     map[string]*deltasink.TableState
	partitions []spec.PartitionStatus
}

// Start starts the runner of fanout schema cfg in its goroutine: it reads
// the partitions of cfg that own gives it from src (whose client is
// client), routes each record with a route newRoute makes, writes the
// routed tables and its progress log, and restarts from them after
// retryable errors. regs makes the clients of the schema registries the
// routed tables use; budget bounds what every table buffers.
func Start(cfg Config, own runner.Ownership, client *kafka.Client, src *ingest.Source, newRoute NewRoute, regs *ingest.Registries,
	budget *memory.Budget, log *slog.Logger) *Runner {
	r := newFanoutRunner(cfg, client, src, newRoute, regs, budget, log)
	r.own = own
	r.start()
	return r
}

// newFanoutRunner returns the runner of cfg, not started.
func newFanoutRunner(cfg Config, client *kafka.Client, src *ingest.Source, newRoute NewRoute, regs *ingest.Registries,
	budget *memory.Budget, log *slog.Logger) *Runner {
	r := &Runner{
		cfg: cfg, client: client, source: src, newRoute: newRoute, registries: regs, budget: budget,
		log: log.With("pipeline", cfg.Pipeline, "fanout", cfg.Fanout.Name), tables: map[string]*deltasink.TableState{},
	}
	r.sup = runner.NewSupervisor("fanout", "fanout restarts from its logs", 30*time.Second, r.log)
	return r
}

// start runs the runner in its goroutine.
func (r *Runner) start() {
	r.sup.Start(context.Background(), r.runOnce, fanoutFailure)
}

// Stop ends the runner after a final flush and commit, and waits for it.
func (r *Runner) Stop() { r.sup.Stop() }

// Status reports the fanout schema: its state, its tables sorted by name
// (in the fanout's state) and its partitions.
func (r *Runner) Status() spec.FanoutStatus {
	state, lastError := r.sup.Status()
	r.mu.Lock()
	defer r.mu.Unlock()
	st := spec.FanoutStatus{State: state, LastError: lastError, Tables: []spec.TableStatus{},
		Partitions: append([]spec.PartitionStatus{}, r.partitions...)}
	for _, name := range slices.Sorted(maps.Keys(r.tables)) {
		ts := r.tables[name].Snapshot()
		ts.State = state
		st.Tables = append(st.Tables, ts)
	}
	return st
}

// TableStates returns the status holders of the tables created so far.
func (r *Runner) TableStates() []*deltasink.TableState {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Collect(maps.Values(r.tables))
}

// Config returns the configuration the runner runs.
func (r *Runner) Config() Config { return r.cfg }

// Client returns the Kafka client the runner reads and commits with.
func (r *Runner) Client() *kafka.Client { return r.client }

// NewRoute returns what makes the runner's routes.
func (r *Runner) NewRoute() NewRoute { return r.newRoute }

// tableState returns the status holder of the named table, made on first
// use, which outlives the runner's restarts.
func (r *Runner) tableState(name, dir string) *deltasink.TableState {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.tables[name]
	if !ok {
		st = &deltasink.TableState{Status: spec.TableStatus{DestinationTable: name, Location: dir, Version: -1,
			Partitions: []spec.PartitionStatus{}}}
		r.tables[name] = st
	}
	return st
}

// fanoutTable is one routed table in one run of the runner.
type fanoutTable struct {
	name string
	*deltasink.Sink
	// from holds, per partition the sink has buffered rows of, the offset
	// below which the table's records of it are committed: what the
	// progress log may record at most while they are buffered.
	from map[kafka.TopicPartition]int64
}

// waitingTables is how many tables open, or flush, side by side: those
// mostly wait for the disk or the object store (a log to read, a file's
// last part to upload, a commit to make durable), so more of them than
// there are cores keep the cores busy.
const waitingTables = 8

// maxGroups bounds the tables whose record arrays a run keeps for reuse.
const maxGroups = 1024

// fanoutRun is the state of one run of a fanout runner: from opening the
// logs to an error or the end. The run's loop uses it, and, while the loop
// waits for them, the goroutines that open a batch's new tables (reading
// it; see openTable) and those that write a batch's tables (each its own
// table; see write).
type fanoutRun struct {
	r *Runner
	// skipTombstones says whether the records without a value have no
	// table (see [skipsTombstones]).
	skipTombstones bool
	// parses says that the tables keep the value as a VARIANT: a route
	// that reads a JSON path of the value takes it from the value parsed,
	// which the tables then write (see [Route.Path]).
	parses   bool
	progress *progress
	tables   map[string]*fanoutTable
	// order lists tables as created, for flushes in a stable order.
	order []*fanoutTable
	// letters builds the rows of the dead letter table; nil until needed.
	letters *deltasink.Letters
	// groups holds a batch's records per table, in the order of the
	// batch's names; dead and reasons the records that cannot be routed
	// and why; all reused from batch to batch.
	groups []group
	// names and met hold the tables of a batch that have records in it,
	// and their groups, then the dead letter table with an empty group
	// when the batch has dead letters; reused from batch to batch.
	names []string
	met   []group
	// jobs holds the decoding chunks of the batch being written.
	jobs    []chunkJob
	dead    []record.Record
	reasons []string
	// unrouted holds the records of a batch that cannot be routed, under
	// on_invalid_route FAIL with ignore_errors: they go to the dirty
	// records table.
	unrouted []deltasink.DirtyRecord
	// pos is, per partition, the offset up to which every record is
	// routed and written (buffered or committed) to its table.
	pos map[kafka.TopicPartition]int64
	// epochs holds, per partition, the leader epoch of the last record
	// before pos, which the progress log records with it; none when not
	// known.
	epochs  map[kafka.TopicPartition]int32
	readEnd map[kafka.TopicPartition]int64
	end     map[kafka.TopicPartition]int64 // triggered runs only
	// sizes measures the records routed, for the lag in bytes.
	sizes deltasink.RecordSizes
	// group mirrors the recorded progress to the fanout schema's consumer
	// group, for lag tools; nil until the run's loop starts.
	group *deltasink.GroupCommitter
	// flushAsk receives the tables the memory budget asks to flush.
	flushAsk chan *fanoutTable
	// maintains is true on the agent that maintains the schema's tables
	// (see [runner.Ownership.Maintains]), known once the loop starts.
	maintains bool
	// decodes takes the chunks to decode to the run's decoding goroutines
	// (see writeTable), one per core, which live as long as the run: a
	// goroutine per chunk grew its stack again for each.
	decodes chan func()
	// ctx ends with the run: it stops subscriptions and flush forwarders.
	ctx context.Context
	wg  sync.WaitGroup
}

func (r *Runner) runOnce(ctx context.Context) error {
	if r.own.Waits() {
		// In a cluster, before the first assignment: nothing to read yet,
		// and the logs stay closed until the assignment restarts the
		// runner.
		<-ctx.Done()
		return nil
	}
	cfg := &r.cfg
	r.sup.AttemptStarts()
	prog, err := openProgress(spec.JoinLocation(cfg.Dir, progressDir),
		table.Options{Owner: fmt.Sprintf("pipeline %q, fanout schema %q", cfg.Pipeline, cfg.Fanout.Name), Logger: r.log, FileMode: cfg.FileMode})
	if err != nil {
		return err
	}
	defer prog.close()
	prog.loss = deltasink.LossOf(&cfg.Fanout.ConnectorOptions.KafkaOptions, r.log, r.TableStates)
	if err := prog.useRoute(cfg.Fanout.RouteExpression(), func(name string) string { return spec.JoinLocation(cfg.Dir, name) }); err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(ctx)
	run := &fanoutRun{
		r: r, skipTombstones: skipsTombstones(&cfg.Fanout), parses: keepsVariant(&cfg.Fanout), progress: prog, tables: map[string]*fanoutTable{},
		pos: map[kafka.TopicPartition]int64{}, epochs: map[kafka.TopicPartition]int32{},
		readEnd:  map[kafka.TopicPartition]int64{},
		flushAsk: make(chan *fanoutTable), ctx: rctx, end: r.runEnd,
		sizes:   deltasink.NewRecordSizes(cfg.Fanout.ConnectorOptions.KafkaOptions.BytesEstimateWindow()),
		decodes: make(chan func(), decodeQueue),
	}
	for range runtime.GOMAXPROCS(0) {
		run.wg.Go(func() {
			for decode := range run.decodes {
				decode()
			}
		})
	}
	defer func() {
		cancel()
		close(run.decodes) // the loop returned, and with it every writeTable that sends
		run.wg.Wait()
		for _, t := range run.order {
			t.Close()
			_ = t.Table().Close() // what it committed is in its log; a close error says nothing more
		}
	}()
	// The tables created so far open now, for their status; one that
	// has no commit yet waits for its records (its first records may set
	// its columns).
	var created []string
	for _, name := range prog.tables() {
		dir := spec.JoinLocation(cfg.Dir, name)
		if snap, err := table.ReadSnapshot(dir); err != nil || snap.Version < 0 {
			r.tableState(name, dir)
			continue
		}
		created = append(created, name)
	}
	if err := run.open(ctx, created, nil); err != nil {
		return err
	}
	return run.loop(ctx)
}

// keepsVariant reports whether the tables of fanout schema f keep the
// value as a VARIANT: a JSON value without json_options.
func keepsVariant(f *spec.FanoutSchema) bool {
	t := f.TableSpec("t")
	layout, errs := t.Layout()
	return len(errs) == 0 && layout.Value.Variant()
}

// open opens the tables of names, which are distinct, that the run has not
// opened yet, side by side (see waitingTables), each created on its first
// records, those of firsts[k] for names[k] (none when firsts is nil), and
// records the new ones in the progress log with one commit. A table is recorded
// as it is created, before any record is written to it, so that a restart
// reports it and CheckFanout checks it whatever happens before its first
// commit. After an error, the tables that opened are the run's (it closes
// them) and are recorded.
func (run *fanoutRun) open(ctx context.Context, names []string, firsts []group) error {
	var fresh []int
	for k, name := range names {
		if _, ok := run.tables[name]; !ok {
			fresh = append(fresh, k)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	opened := make([]*fanoutTable, len(fresh))
	err := sideBySide(len(fresh), waitingTables, func(i int) (err error) {
		var first []record.Record
		if firsts != nil {
			first = firsts[fresh[i]].recs
		}
		opened[i], err = run.openTable(ctx, names[fresh[i]], first)
		return err
	})
	var added []string
	for _, t := range opened {
		if t == nil {
			continue
		}
		run.tables[t.name] = t
		run.order = append(run.order, t)
		added = append(added, t.name)
		run.wg.Go(func() {
			for {
				select {
				case <-run.ctx.Done():
					return
				case <-t.FlushAsked():
					select {
					case run.flushAsk <- t:
					case <-run.ctx.Done():
						return
					}
				}
			}
		})
	}
	return errors.Join(err, run.progress.record(nil, nil, added, nil))
}

// openTable opens the named table, creating it on its first records,
// first. Tables open side by side (see open): of the run, it only reads
// the configuration, but for the dead letter table, whose opening sets the
// builder of its rows (letters), which no other table's opening touches;
// the runner's table states and the memory budget it shares with the
// others are safe for concurrent use.
func (run *fanoutRun) openTable(ctx context.Context, name string, first []record.Record) (*fanoutTable, error) {
	r := run.r
	cfg := &r.cfg
	dir := spec.JoinLocation(cfg.Dir, name)
	tbl, err := table.Open(dir, cfg.TableOptions(fmt.Sprintf("pipeline %q, fanout schema %q, table %s", cfg.Pipeline, cfg.Fanout.Name, name),
		r.log.With("table", name)))
	if err != nil {
		return nil, fmt.Errorf("open table %s: %w", dir, err)
	}
	s, err := run.newSink(ctx, tbl, name, dir, first)
	if err != nil {
		_ = tbl.Close() // the sink's error is the one that matters
		return nil, fmt.Errorf("table %s: %w", name, err)
	}
	for appID, next := range tbl.Snapshot().Txns {
		if tp, ok := parseAppID(appID); ok {
			s.Resume(tp, next, -1)
		}
	}
	s.PublishOffsets()
	if run.maintains {
		s.Maintain(ctx, cfg.Upkeep(r.budget, name, dir))
	}
	return &fanoutTable{name: name, Sink: s, from: map[kafka.TopicPartition]int64{}}, nil
}

// newSink returns the sink of the named table, open in tbl: the dead letter
// table's, or a routed table's, whose columns, when inferred and new, come
// from first, the records routed to it first.
func (run *fanoutRun) newSink(ctx context.Context, tbl *table.Table, name, dir string, first []record.Record) (*deltasink.Sink, error) {
	r := run.r
	cfg := &r.cfg
	o := deltasink.SinkOptions{MaxRows: cfg.MaxRows, MaxBytes: cfg.MaxBytes, Budget: r.budget,
		State: r.tableState(name, dir), Log: r.log.With("table", name), SizeWindow: cfg.Fanout.ConnectorOptions.KafkaOptions.BytesEstimateWindow()}
	snap := tbl.Snapshot()
	if name == spec.FanoutErrorsTable {
		if run.letters == nil {
			d, err := deltasink.NewLetters(spec.FanoutErrorsTable, fanoutErrorsColumns)
			if err != nil {
				return nil, runner.Fatal(err)
			}
			run.letters = d
		}
		if snap.Schema != nil {
			if err := table.CheckSchemaChange(snap.Schema, fanoutErrorsColumns); err != nil {
				return nil, runner.Fatal(err)
			}
		}
		return deltasink.NewRawSink(tbl, fanoutErrorsColumns, run.letters.B.Schema(), o), nil
	}
	t := cfg.Fanout.TableSpec(name)
	layout, errs := t.Layout()
	if len(errs) > 0 {
		return nil, runner.Fatal(fmt.Errorf("table layout: %w", errs))
	}
	o.Errs = deltasink.NewErrorBudget(&t.ConnectorOptions.KafkaOptions, name, spec.JoinLocation(cfg.Dir, spec.DirtyRecordsTable),
		strings.ToLower(deltasink.DirtyQualified(cfg.Fanout.DestinationCatalog, cfg.Fanout.DestinationSchema)),
		cfg.TableOptions(fmt.Sprintf("pipeline %q, fanout schema %q, table %s", cfg.Pipeline, cfg.Fanout.Name, name), o.Log))
	sources, err := decode.Resolve(ctx, layout, snap.Schema, r.registries.ClientsOf(ingest.TableRegistries(&t, &cfg.Conn, nil)))
	if err != nil {
		return nil, fmt.Errorf("resolve the table's schema: %w", err)
	}
	columns.Keep(layout, snap.Schema)
	p, err := columns.InferredPart(layout)
	if err != nil {
		return nil, err
	}
	if p != nil {
		base := columns.Own(layout, snap.Schema)
		if snap.Schema == nil {
			inferred, err := columns.InferFrom(ctx, p, first)
			if err != nil {
				return nil, err
			}
			if base, err = columns.Start(p, name, inferred); err != nil {
				return nil, err
			}
		}
		if err := columns.WithHints(layout, p, base); err != nil {
			return nil, err
		}
	}
	if snap.Schema != nil {
		if err := table.CheckSchemaChange(snap.Schema, layout.Columns()); err != nil {
			return nil, runner.Fatal(err)
		}
	}
	return deltasink.NewSink(tbl, layout, sources, o)
}

// loop starts the partitions and writes what they fetch, routed, until the
// end.
func (run *fanoutRun) loop(ctx context.Context) error {
	r := run.r
	ko := &r.cfg.Fanout.ConnectorOptions.KafkaOptions
	rd := &fanReading{in: make(chan *routedBatch), errs: make(chan error, 1), started: map[kafka.TopicPartition]bool{}}
	start := func(tps []kafka.TopicPartition, starting string) error { return run.start(ctx, rd, tps, starting) }
	pos := r.positions()
	if err := pos.CheckGroupMembers(ctx); err != nil {
		return err
	}
	run.group = deltasink.NewGroupCommitter(r.client, pos.Group, r.log)
	defer run.group.Close()
	tps, err := r.client.Partitions(ctx, ko)
	if err != nil {
		return err
	}
	run.maintains = r.own.Maintains(tps)
	if run.maintains {
		// The tables opened before the loop (those the progress log
		// names) are maintained too; table maintains those opened later.
		for _, t := range run.order {
			t.Maintain(ctx, r.cfg.Upkeep(r.budget, t.name, spec.JoinLocation(r.cfg.Dir, t.name)))
		}
	}
	if err := start(tps, ko.StartingOffset); err != nil {
		return err
	}
	r.sup.SetRunning()
	r.log.Info("fanout running", "partitions", len(rd.started), "tables", len(run.tables))

	clk := runner.NewClock(runner.DiscoveryInterval(ko), r.cfg.GCGrace)
	defer clk.Stop()
	// Writing and flushing go on when the runner is stopped (wctx is not
	// cancelled with ctx): a batch half written when stop comes is finished,
	// and the final flush commits it, rather than the stop turning into a
	// decode error that drops what every table buffered.
	wctx := context.WithoutCancel(ctx)
	armed := false // the flush timer runs
	for {
		if !r.cfg.Continuous && run.reachedEnd() {
			if err := run.flushAll(wctx); err != nil {
				return err
			}
			r.sup.SetState(spec.StateIdle, nil)
			return nil
		}
		select {
		case <-ctx.Done():
			return deltasink.FinalFlush(run.flushAll)
		case err := <-rd.errs:
			return err
		case b := <-rd.in:
			wasEmpty := run.empty()
			err := run.add(wctx, b)
			b.Release()
			if err != nil {
				return err
			}
			// The interval counts from the first buffered record. A
			// position that moved with nothing buffered (records no table
			// takes, a gap skipped) is recorded at the next flush too.
			if (wasEmpty && !run.empty()) || (!armed && run.pos[b.TP] > run.progress.next[b.TP]) {
				clk.Flush.Reset(r.cfg.FlushEvery)
				armed = true
			}
		case <-clk.Flush.C:
			armed = false
			if err := run.flushAll(wctx); err != nil {
				return err
			}
		case t := <-run.flushAsk:
			r.log.Debug("flush asked by the memory budget", "table", t.name, "bytes", t.Buffered())
			if err := run.flush(wctx, t); err != nil {
				return err
			}
		case <-clk.GC.C:
			for _, t := range run.order {
				if _, err := t.Table().CollectGarbage(); err != nil {
					r.log.Warn("garbage collection failed", "table", t.name, "err", err)
				}
			}
		case <-clk.Discover:
			if err := runner.DiscoverPartitions(ctx, r.client, ko, r.log, start); err != nil {
				return err
			}
		}
	}
}

// fanReading is what a fanout run reads its partitions with: the batches
// of every subscription come to the run on in, routed, the first fatal
// fetch error on errs.
type fanReading struct {
	in   chan *routedBatch
	errs chan error
	// started holds the partitions the run started.
	started map[kafka.TopicPartition]bool
}

// start subscribes to the new partitions among tps that the agent owns
// (every one, but in a cluster), each from where the progress log says,
// else from starting's offset (see starts).
func (run *fanoutRun) start(ctx context.Context, rd *fanReading, tps []kafka.TopicPartition, starting string) error {
	fresh := runner.Unstarted(run.r.own.Of(tps), rd.started)
	var others []kafka.TopicPartition
	if len(run.progress.tbl.Snapshot().Txns) == 0 {
		others = run.r.own.Others(tps)
	}
	if len(fresh) == 0 && len(others) == 0 {
		return nil
	}
	subs, err := run.starts(ctx, fresh, others, starting)
	if err != nil {
		return err
	}
	for _, sub := range subs {
		rd.started[sub.TP] = true
		if !run.r.cfg.Continuous && sub.Until <= sub.From {
			continue // nothing to read in this triggered run
		}
		route, err := run.r.newRoute()
		if err != nil {
			return runner.Fatal(fmt.Errorf("fanout_by: %w", err))
		}
		rt := &router{route: route.Func, skipTombstones: run.skipTombstones, budget: run.r.budget,
			index: map[string]int32{}, tables: map[string]string{}}
		if run.parses {
			rt.path = route.Path
		}
		// The subscription lives as long as the run, which cancels run.ctx
		// before it waits for its forwarders, not as long as this call.
		// Its goroutine routes each batch before the run takes it.
		ingest.Relay(run.ctx, &run.wg, run.r.source, sub, rt.routeBatch, rd.in, rd.errs) //nolint:contextcheck // the run's context, on purpose
	}
	run.publish()
	return nil
}

// starts returns the subscriptions of new partitions tps: each from where
// the progress log says, else from starting's offset while the log is new,
// and from the earliest once it is not (a partition that appeared while the
// agent was down must not skip its first records). It records those
// starting offsets, and the ids of new topics, in the progress log first;
// with, in a cluster, the starting offsets of others, the partitions other
// agents own, while the log is new: they start where the fanout schema
// started, as with a single agent (another agent that records them first
// makes the commit fail, and the run start again from the log).
func (run *fanoutRun) starts(ctx context.Context, tps, others []kafka.TopicPartition, starting string) ([]ingest.Subscription, error) {
	r := run.r
	ko := &r.cfg.Fanout.ConnectorOptions.KafkaOptions
	readCommitted := ko.ReadCommitted()
	settings, err := runner.ClientSettings(ko)
	if err != nil {
		return nil, err
	}
	ids, err := r.client.TopicIDs(ctx, kafka.TopicsOf(tps))
	if err != nil {
		return nil, runner.Lookup(err)
	}
	newIDs, err := deltasink.CheckTopicIDs(run.progress.tbl.Snapshot().Configuration, ids)
	if err != nil {
		return nil, err
	}
	defaults, ends, err := r.positions().Offsets(ctx, append(slices.Clone(tps), others...), starting, len(run.progress.tbl.Snapshot().Txns) > 0,
		!r.cfg.Continuous && run.end == nil)
	if err != nil {
		return nil, err
	}
	if ends != nil {
		for _, tp := range others {
			delete(ends, tp)
		}
		run.end, r.runEnd = ends, ends
	}
	if err := run.checkTruncation(ctx, tps); err != nil {
		return nil, err
	}
	next := map[kafka.TopicPartition]int64{}
	for _, tp := range tps {
		from, ok := run.progress.next[tp]
		if !ok {
			from = defaults[tp]
			next[tp] = from
		}
		run.pos[tp] = from
	}
	for _, tp := range others {
		next[tp] = defaults[tp]
	}
	if err := run.progress.record(next, nil, nil, newIDs); err != nil {
		return nil, fmt.Errorf("record the starting offsets of new partitions: %w", err)
	}
	subs := make([]ingest.Subscription, 0, len(tps))
	for _, tp := range tps {
		var until int64 // none in continuous runs
		if !r.cfg.Continuous {
			// A partition that appeared after the run started has nothing
			// to read in it.
			until = run.pos[tp]
			if end, ok := run.end[tp]; ok {
				until = end
			}
		}
		subs = append(subs, ingest.Subscription{TP: tp, From: run.pos[tp], Until: until, ReadCommitted: readCommitted,
			TopicID: ids[tp.Topic], Settings: settings, OnRetry: func(err error) { r.sup.FetchFailing(tp, err) },
			OnDataLoss: run.progress.loss.OnGap()})
	}
	return subs, nil
}

// empty reports whether no table buffers anything.
func (run *fanoutRun) empty() bool {
	for _, t := range run.order {
		if !t.Empty() {
			return false
		}
	}
	return true
}

// reachedEnd reports whether a triggered run routed everything up to its
// end offsets.
func (run *fanoutRun) reachedEnd() bool {
	for tp, end := range run.end {
		if run.pos[tp] < end {
			return false
		}
	}
	return true
}

// add writes the records of routed batch b past the routed position of its
// partition, and moves the position past the batch.
func (run *fanoutRun) add(ctx context.Context, b *routedBatch) error {
	r := run.r
	tp := b.TP
	r.sup.FetchRecovered(tp)
	pos := run.pos[tp]
	next := b.Next
	recs := b.Records
	if end, ok := run.end[tp]; ok && !r.cfg.Continuous && next > end {
		next = end
	}
	i := 0
	for i < len(recs) && recs[i].Offset < pos {
		i++
	}
	j := i
	for j < len(recs) && recs[j].Offset < next {
		j++
	}
	run.sizes.Add(tp, recs[i:j], time.Now())
	if j > i {
		if err := run.route(ctx, b, i, j); err != nil {
			return err
		}
	}
	if next > pos {
		// The batch's epoch is that of its last record batch, past the
		// records of a batch cut at the end of a triggered run.
		epoch := b.LeaderEpoch
		if next < b.Next {
			epoch = -1
			if j > i {
				epoch = recs[j-1].LeaderEpoch
			}
		}
		if epoch >= 0 {
			run.epochs[tp] = epoch
		} else {
			delete(run.epochs, tp)
		}
	}
	run.pos[tp] = max(pos, next)
	run.readEnd[tp] = b.End
	for _, t := range run.order {
		t.SetReadEnd(tp, b.End)
	}
	run.publish()
	return nil
}

// route writes records [i, j) of routed batch b to their tables. Grouping
// a whole batch, rather than a decoding chunk, gives each table a run of
// its records long enough to decode and write column-wise, even with many
// tables. Under FAIL a record that cannot be routed stops the batch before
// any table took a record of it.
func (run *fanoutRun) route(ctx context.Context, b *routedBatch, i, j int) error {
	r := run.r
	tp, recs := b.TP, b.Records
	next := recs[j-1].Offset + 1
	deadLetter := r.cfg.Fanout.FanoutOptions.OnInvalidRoute == spec.OnInvalidRouteDeadLetter
	ignore := !deadLetter && r.cfg.Fanout.ConnectorOptions.KafkaOptions.IgnoresErrors()
	// The groups of the previous batch are emptied.
	for k := range run.groups {
		run.groups[k].reset()
	}
	if len(run.groups) > maxGroups {
		run.groups = nil // a batch of many tables: let their arrays go
	}
	for len(run.groups) < len(b.names) {
		run.groups = append(run.groups, group{})
	}
	clear(run.dead)
	run.dead, run.reasons = run.dead[:0], run.reasons[:0]
	groups := run.groups
	for k := i; k < j; k++ {
		at := b.at[k]
		switch {
		case at >= 0:
			g := &groups[at]
			g.recs = append(g.recs, recs[k])
			if b.values != nil {
				g.values = append(g.values, b.values[k])
			}
		case at <= unroutable:
			why := b.errs[unroutable-at]
			switch {
			case deadLetter:
				run.dead = append(run.dead, recs[k])
				run.reasons = append(run.reasons, why.Error())
			case ignore:
				run.unrouted = append(run.unrouted, deltasink.NewDirtyRecord(&recs[k], why, time.Now()))
			default:
				return why
			}
		}
	}
	if len(run.unrouted) > 0 {
		// Before any table takes a record of the batch, and so before the
		// progress moves past them.
		if err := run.leaveOut(tp, next); err != nil {
			return err
		}
	}
	// Each table's next offset after the batch goes with the leader epoch
	// of the batch's last record, which may be another table's.
	epoch := recs[j-1].LeaderEpoch
	run.jobs = run.jobs[:0]
	// The tables met first in this batch, the dead letter table with
	// them, open side by side. A table without records here (they are
	// outside [i, j): routed already, or past the run's end) is left for a
	// batch that has some.
	if len(run.names) > maxGroups {
		run.names, run.met = nil, nil // a batch of many tables: let their arrays go
	}
	names, met := run.names[:0], run.met[:0]
	for k, name := range b.names {
		if g := groups[k]; len(g.recs) > 0 {
			if b.values == nil {
				g.values = nil // none parsed: the tables read the records
			}
			names, met = append(names, name), append(met, g)
		}
	}
	routed := len(names)
	if len(run.dead) > 0 {
		names, met = append(names, spec.FanoutErrorsTable), append(met, group{})
	}
	run.names, run.met = names, met
	defer clear(met) // the records and values point into the batch
	if err := run.open(ctx, names, met); err != nil {
		return err
	}
	for k, name := range names[:routed] {
		run.plan(run.tables[name], tp, met[k].recs, met[k].values, nil, next, epoch)
	}
	if len(run.dead) > 0 {
		run.plan(run.tables[spec.FanoutErrorsTable], tp, run.dead, nil, run.reasons, next, epoch)
	}
	return run.write(ctx)
}

// group is the records of a batch routed to one table, in the batch's
// order, with their values parsed when the router parsed them (see
// [routedBatch]), one for each record.
type group struct {
	recs   []record.Record
	values []variant.Encoded
}

// reset empties g for the next batch, keeping its arrays but not the
// records and values, which point into a batch that is released.
func (g *group) reset() {
	clear(g.recs)
	clear(g.values)
	g.recs, g.values = g.recs[:0], g.values[:0]
}

// leaveOut writes run.unrouted, the records of tp up to next that cannot
// be routed, to the dirty records table of the destination schema, with
// an empty table column: no table's error_tolerance_max_count counts them.
// Their offsets are recorded there under the fanout schema's own id, so
// that a batch read again after a crash does not write them twice.
func (run *fanoutRun) leaveOut(tp kafka.TopicPartition, next int64) error {
	dirty, opts := run.dirtyTable()
	err := dirty.CommitAs(unroutedID(run.r.cfg.Fanout.Name), "", run.unrouted, map[kafka.TopicPartition]int64{tp: next}, opts)
	if err != nil {
		return fmt.Errorf("keep the records of %s that cannot be routed: %w", tp, err)
	}
	run.r.log.Warn("records cannot be routed; kept in "+dirty.Qualified, "topic", tp.Topic, "partition", tp.Partition,
		"records", len(run.unrouted), "first", run.unrouted[0].Err)
	clear(run.unrouted) // let the copies go
	run.unrouted = run.unrouted[:0]
	return nil
}

// leaveOutRewind moves back, to the offsets of to, what the dirty records
// table records of the records that cannot be routed (see leaveOut), so
// that those read again from there are not taken for records written
// already.
func (run *fanoutRun) leaveOutRewind(to map[kafka.TopicPartition]int64) error {
	dirty, opts := run.dirtyTable()
	return dirty.Rewind(unroutedID(run.r.cfg.Fanout.Name), to, opts)
}

// dirtyTable returns the dirty records table of the fanout schema's
// destination schema and the options it opens with.
func (run *fanoutRun) dirtyTable() (*deltasink.DirtyTable, table.Options) {
	cfg := &run.r.cfg
	dirty := deltasink.DirtyTableAt(spec.JoinLocation(cfg.Dir, spec.DirtyRecordsTable),
		strings.ToLower(deltasink.DirtyQualified(cfg.Fanout.DestinationCatalog, cfg.Fanout.DestinationSchema)))
	return dirty, cfg.TableOptions(fmt.Sprintf("pipeline %q, fanout schema %q", cfg.Pipeline, cfg.Fanout.Name), run.r.log)
}

// unroutedID is the id under which the dirty records table records the
// offsets of fanout schema name's records that cannot be routed: not a
// valid table name, so that it never is a routed table's.
func unroutedID(name string) string {
	return "fanout " + name
}

// chunkJob is a decoding chunk of the records of a batch routed to one
// table: decoded, possibly in parallel with others, then added to the
// table's sink in order.
type chunkJob struct {
	t *fanoutTable
	d ingest.Decoded
	// values holds the chunk's values parsed by the router, or nil (see
	// group).
	values []variant.Encoded
	// reasons holds why each record of a dead letter chunk was not
	// routed; nil for a routed table's chunk.
	reasons []string
}

// plan adds the jobs that write recs, records of tp routed to t, with
// their values parsed when the router parsed them (the dead letters, with
// their reasons, for the dead letter table), a decoding chunk at a time,
// past what the table committed already; next is the offset after the
// batch they came from, which every record of t before it is in by then,
// and epoch the leader epoch of the record before next.
func (run *fanoutRun) plan(t *fanoutTable, tp kafka.TopicPartition, recs []record.Record, values []variant.Encoded, reasons []string, next int64, epoch int32) {
	// The table's committed offsets only move by its flushes of earlier
	// chunks of this batch, so they can be read before any is added.
	if done, ok := t.CommittedOffset(tp); ok {
		i := 0
		for i < len(recs) && recs[i].Offset < done {
			i++
		}
		recs = recs[i:]
		if values != nil {
			values = values[i:]
		}
		if reasons != nil {
			reasons = reasons[i:]
		}
	}
	for start := 0; start < len(recs); start += ingest.DecodeChunk {
		end := min(start+ingest.DecodeChunk, len(recs))
		n, e := next, epoch
		if end < len(recs) {
			n, e = recs[end-1].Offset+1, -1 // the chunk's last record's
		}
		job := chunkJob{t: t, d: ingest.Decoded{TP: tp, Recs: recs[start:end], Next: n, Epoch: e}}
		if values != nil {
			job.values = values[start:end]
		}
		if reasons != nil {
			job.reasons = reasons[start:end]
		}
		run.jobs = append(run.jobs, job)
	}
}

// write runs the planned jobs: the tables side by side, at most one per
// core at a time, and each table's chunks in order on a goroutine of its
// own (see writeTable), so that the decoding and the writing of one table
// overlap with those of the others. A table that reached its file limits
// flushes on its goroutine; the progress is recorded once every table is
// done with the batch, which may lag the tables' commits but never pass
// them.
func (run *fanoutRun) write(ctx context.Context) error {
	defer clear(run.jobs) // the records point into the batch
	var tables [][]*chunkJob
	at := map[*fanoutTable]int{}
	for i := range run.jobs {
		j := &run.jobs[i]
		k, ok := at[j.t]
		if !ok {
			k = len(tables)
			at[j.t] = k
			tables = append(tables, nil)
		}
		tables[k] = append(tables[k], j)
	}
	flushed := make([]bool, len(tables))
	err := sideBySide(len(tables), runtime.GOMAXPROCS(0), func(k int) (err error) {
		flushed[k], err = run.writeTable(ctx, tables[k])
		return err
	})
	if err != nil {
		return err
	}
	if slices.Contains(flushed, true) {
		return run.record()
	}
	return nil
}

// sideBySide calls f(k) for every k below n, each on a goroutine of its
// own and at most limit at a time, and returns the error of the lowest k
// that failed, once every call returned.
func sideBySide(n, limit int, f func(k int) error) error {
	for _, err := range runner.SideBySide(n, limit, f) {
		if err != nil {
			return err
		}
	}
	return nil
}

// decodeQueue is how many chunks may wait for the run's decoding
// goroutines before writeTable waits to hand over the next.
const decodeQueue = 64

// writeTable decodes jobs, the chunks of one table, and adds them to the
// table in order, each chunk decoding on one of the run's decoding
// goroutines up to as many ahead of the one being added as the table has
// decoders. It reports whether the table flushed. After an error the
// decoders of the chunks decoded and not added go back to the table's
// pool.
func (run *fanoutRun) writeTable(ctx context.Context, jobs []*chunkJob) (flushed bool, err error) {
	t := jobs[0].t
	ahead := 1 // the dead letter table decodes nothing and has no decoders
	if p := t.Decoders(); p != nil {
		ahead = p.Size()
	}
	done := make([]chan struct{}, len(jobs))
	started := 0
	defer func() {
		for i := range started {
			<-done[i]
			if d := jobs[i].d.Dec; d != nil && err != nil {
				t.Decoders().Put(d)
			}
		}
	}()
	for i, job := range jobs {
		for ; started < len(jobs) && started < i+ahead; started++ {
			j, ch := jobs[started], make(chan struct{})
			done[started] = ch
			if j.reasons != nil {
				close(ch) // dead letters: nothing to decode
				continue
			}
			j.d.Dec, j.d.Version, j.d.Err = t.Decoders().Get(ctx)
			run.decodes <- func() {
				defer close(ch)
				switch {
				case j.d.Err != nil:
				case j.values != nil:
					j.d.Batch, j.d.Err = j.d.Dec.DecodeParsed(ctx, j.d.Recs, j.values)
				default:
					j.d.Batch, j.d.Err = j.d.Dec.Decode(ctx, j.d.Recs)
				}
			}
		}
		<-done[i]
		f, err := run.add1(ctx, job)
		job.d.Dec = nil // the sink put it back
		flushed = flushed || f
		if err != nil {
			return flushed, fmt.Errorf("table %s: %w", t.name, err)
		}
	}
	return flushed, nil
}

// add1 adds job's chunk, decoded unless it holds dead letters, to its
// table's sink, and reports whether the table flushed: one that reaches its
// file limits does, without recording the progress (see write).
func (run *fanoutRun) add1(ctx context.Context, job *chunkJob) (bool, error) {
	t, d := job.t, job.d
	if !t.Pending(d.TP) {
		from, ok := t.CommittedOffset(d.TP)
		if !ok {
			from = d.Recs[0].Offset
		}
		t.from[d.TP] = from
	}
	if job.reasons != nil {
		d.Batch, d.Err = run.letters.Batch(d.Recs, func(b *rows.Builder, i int) {
			b.Field(deltasink.RawRecordWidth)
			b.Bytes([]byte(job.reasons[i]))
		})
	}
	err := t.Add(ctx, d)
	t.TrackMemory()
	if err != nil {
		return false, err
	}
	if t.Full() {
		return true, run.flushTable(ctx, t)
	}
	return false, nil
}

// flush flushes table t and records the progress.
func (run *fanoutRun) flush(ctx context.Context, t *fanoutTable) error {
	if err := run.flushTable(ctx, t); err != nil {
		return err
	}
	return run.record()
}

// flushAll flushes every table with rows, side by side (see
// waitingTables), and records the progress once every table flushed.
func (run *fanoutRun) flushAll(ctx context.Context) error {
	err := sideBySide(len(run.order), waitingTables, func(k int) error { return run.flushTable(ctx, run.order[k]) })
	if err != nil {
		return err
	}
	return run.record()
}

// flushTable flushes table t, if it buffers anything.
func (run *fanoutRun) flushTable(ctx context.Context, t *fanoutTable) error {
	if t.Empty() {
		return nil
	}
	if crash := run.r.crash; crash != nil {
		if err := crash(t.name); err != nil {
			return err
		}
	}
	if err := t.Flush(ctx); err != nil {
		return fmt.Errorf("table %s: %w", t.name, err)
	}
	clear(t.from)
	return nil
}

// record writes the progress to the progress log: per partition, the
// routed position, or below it the lowest offset a table with buffered
// rows of the partition has not committed yet; and the tables created.
// It mirrors the progress to the consumer group, as a table loop mirrors
// its offsets.
func (run *fanoutRun) record() error {
	next := maps.Clone(run.pos)
	for _, t := range run.order {
		for tp, from := range t.from {
			if from < next[tp] {
				next[tp] = from
			}
		}
	}
	// A partition held back by a table's buffered rows is recorded
	// without an epoch: the epoch of the record before its offset is not
	// kept.
	epochs := map[kafka.TopicPartition]int32{}
	for tp, n := range next {
		if e, ok := run.epochs[tp]; ok && n == run.pos[tp] {
			epochs[tp] = e
		}
	}
	if err := run.progress.record(next, epochs, nil, nil); err != nil {
		return err
	}
	if run.group != nil {
		run.group.Offer(run.ownProgress())
	}
	run.publish()
	return nil
}

// ownProgress returns the offsets of the progress log of the partitions
// the run reads: in a cluster, the log's offsets of the others are other
// agents' to report, and may be older than theirs.
func (run *fanoutRun) ownProgress() map[kafka.TopicPartition]int64 {
	if !run.r.own.Shared {
		return run.progress.next
	}
	own := map[kafka.TopicPartition]int64{}
	for tp := range run.pos {
		if next, ok := run.progress.next[tp]; ok {
			own[tp] = next
		}
	}
	return own
}

// publish copies the progress and lag into the status.
func (run *fanoutRun) publish() {
	progress := run.ownProgress()
	ps := make([]spec.PartitionStatus, 0, len(progress))
	for tp, next := range progress {
		ps = append(ps, run.sizes.PartitionStatus(tp, next, run.readEnd[tp]))
	}
	deltasink.SortPartitions(ps)
	run.r.mu.Lock()
	run.r.partitions = ps
	run.r.mu.Unlock()
}

// positions returns the position look-ups of the fanout schema.
func (r *Runner) positions() *position.Finder {
	f := &r.cfg.Fanout
	ko := &f.ConnectorOptions.KafkaOptions
	qualified := f.DestinationCatalog + "." + f.DestinationSchema + "." + f.Name
	return &position.Finder{Client: r.client, Options: ko, Group: position.GroupID(ko, r.cfg.Pipeline, qualified), Owner: "the fanout schema"}
}
