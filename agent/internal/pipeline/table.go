package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/columns"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/ingest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/position"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// tableConfig is everything a table loop depends on; a loop restarts when
// any of it changes.
type tableConfig struct {
	Pipeline  string
	Qualified string // <catalog>.<schema>.<table>
	Dir       string
	// DirtyDir and DirtyQualified are the folder and name of the
	// destination schema's dirty records table, where the table leaves
	// the records it cannot decode with kafka_options.ignore_errors.
	DirtyDir, DirtyQualified string
	Table                    spec.Table
	Conn                     spec.Connection
	// Registries holds the schema registries the table's transformers
	// use, by the connection_name of their schema_registry block ("" for
	// the pipeline's connection).
	Registries map[string]spec.SchemaRegistry
	runner.Settings
}

// tableRunner runs one destination table's loop in its own goroutine and
// restarts it from the log after retryable errors.
type tableRunner struct {
	cfg    tableConfig
	client *kafka.Client
	// source fetches the table's partitions, shared with the other
	// readers of its pipeline.
	source *ingest.Source
	// registries makes the clients of the table's schema registries.
	registries *ingest.Registries
	// budget is the agent's memory budget, which the table's fetches and
	// open file draw from.
	budget *memory.Budget
	log    *slog.Logger
	// sup runs the loop and holds its state and last error.
	sup *runner.Supervisor
	// own says which partitions the loop may read: every one, or those
	// its agent owns in a cluster.
	own runner.Ownership

	// tableState holds the rest of the status.
	deltasink.TableState
	// runEnd holds a triggered run's end offsets, fixed when the run
	// starts: a loop that restarts after a retryable error keeps them.
	// Used by the runner's goroutine only.
	runEnd map[kafka.TopicPartition]int64
}

// startTable starts the loop of the table of cfg, which reads the
// partitions own gives it.
func startTable(cfg tableConfig, own runner.Ownership, client *kafka.Client, src *ingest.Source, regs *ingest.Registries, budget *memory.Budget,
	log *slog.Logger) *tableRunner {
	r := &tableRunner{
		cfg: cfg, own: own, client: client, source: src, registries: regs, budget: budget,
		log: log.With("pipeline", cfg.Pipeline, "table", cfg.Qualified),
		TableState: deltasink.TableState{Status: spec.TableStatus{
			DestinationTable: cfg.Table.DestinationTable, Location: cfg.Dir,
			State: spec.StateStarting, Version: -1, Partitions: []spec.PartitionStatus{},
		}},
	}
	r.sup = runner.NewSupervisor("table", "table loop restarts from its log", 30*time.Second, r.log)
	r.sup.Start(context.Background(), r.runOnce, r.tableFailure)
	return r
}

// stop ends the loop after a final flush and commit, and waits for it.
func (r *tableRunner) stop() { r.sup.Stop() }

// snapshot returns a copy of the table's status.
func (r *tableRunner) snapshot() spec.TableStatus {
	st := r.Snapshot()
	st.State, st.LastError = r.sup.Status()
	return st
}

// gcGrace is how old an unreferenced file of the agent must be before
// garbage collection deletes it: the table default, or ten flush intervals
// when those are longer, so that no file still on its way to a commit is
// ever collected.
func gcGrace(flushEvery time.Duration) time.Duration {
	return max(table.DefaultGCGrace, 10*flushEvery)
}

// collectGarbage deletes what crashed runs left in tbl once it is older
// than the grace period; a failure is logged, never fatal.
func (r *tableRunner) collectGarbage(tbl *table.Table) {
	if n, err := tbl.CollectGarbage(); err != nil {
		r.log.Warn("garbage collection failed", "err", err)
	} else if n > 0 {
		r.log.Info("garbage collected", "files", n)
	}
}

// flush flushes the sink under ctx, the loop's. A stop that ends ctx while
// the flush waits for its files to be durable makes it the final flush:
// what it buffered is committed, within the final flush's bound, rather
// than read again at the next start.
func (l *loop) flush(ctx context.Context) error {
	err := l.sink.Flush(ctx)
	if err != nil && ctx.Err() != nil {
		return deltasink.FinalFlush(l.sink.Flush)
	}
	return err
}

// loop is the state of one run of a table: from opening the log to an
// error or the end.
type loop struct {
	// sink writes what the loop's fetchers fetch.
	sink *deltasink.Sink
	r    *tableRunner
	end  map[kafka.TopicPartition]int64 // triggered runs only
	// loss keeps the gaps the loop's fetches skip; nil when the table
	// fails on data loss.
	loss *deltasink.DataLoss
	// pos looks up the table's start, end and latest offsets.
	pos *position.Finder
	// topicIDs holds the id of every topic the loop reads, as first seen:
	// a fetcher that finds another id stops the table.
	topicIDs map[string]string
}

// legacyAppID is the application id tables recorded tp's offsets under
// before [deltasink.AppID]: "<catalog>.<schema>.<table>/<topic>/<partition>".
func (r *tableRunner) legacyAppID(tp kafka.TopicPartition) string {
	return fmt.Sprintf("%s/%s/%d", r.cfg.Qualified, tp.Topic, tp.Partition)
}

// recorded returns the next offset of tp that txns, a snapshot's, holds:
// under its application id, or else under its legacy one (legacy true),
// which a log written before the change of application ids holds; ok false
// when it holds neither.
func (r *tableRunner) recorded(txns map[string]int64, tp kafka.TopicPartition) (next int64, legacy, ok bool) {
	if next, ok := txns[deltasink.AppID(tp)]; ok {
		return next, false, true
	}
	next, ok = txns[r.legacyAppID(tp)]
	return next, ok, ok
}

// moveLegacy adds to c the move of a partition's offset next, which the
// log holds under the legacy application id old only, to its application
// id id. In one commit: id, which the log must not hold yet (no From), and
// old again at next, which the log must still hold (From), so that a
// writer that moved it meanwhile fails the commit rather than being
// overwritten. A crash before the commit leaves the legacy id, which the
// restart moves then; after it, a restart finds id, which it reads first
// (see recorded), and the legacy id is never read again.
func moveLegacy(c *table.Commit, id, old string, next int64) {
	c.Txns[id] = next
	c.Txns[old], c.From[old] = next, next
}

func (r *tableRunner) runOnce(ctx context.Context) error {
	if r.own.Waits() {
		// In a cluster, before the first assignment: nothing to read yet,
		// and the table stays closed until the assignment restarts the
		// loop.
		<-ctx.Done()
		return nil
	}
	cfg := &r.cfg
	layout, errs := cfg.Table.Layout()
	if len(errs) > 0 {
		return runner.Fatal(fmt.Errorf("table layout: %w", errs))
	}
	tbl, err := table.Open(cfg.Dir, cfg.TableOptions(fmt.Sprintf("pipeline %q, table %s", cfg.Pipeline, cfg.Qualified), r.log))
	if err != nil {
		return fmt.Errorf("open table %s: %w", cfg.Dir, err)
	}
	defer tbl.Close()
	r.collectGarbage(tbl)
	snap := tbl.Snapshot()
	// A registry subject's latest version sets the columns of its part,
	// merged into those the table has.
	sources, err := decode.Resolve(ctx, layout, snap.Schema, r.registries.ClientsOf(cfg.Registries))
	if err != nil {
		return fmt.Errorf("resolve the table's schema: %w", err)
	}
	columns.Keep(layout, snap.Schema)
	if err := r.inferColumns(ctx, layout, snap.Schema); err != nil {
		return err
	}
	if snap.Schema != nil {
		if err := table.CheckSchemaChange(snap.Schema, layout.Columns()); err != nil {
			return runner.Fatal(err)
		}
	}
	r.sup.AttemptStarts()
	loss := deltasink.LossOf(&cfg.Table.ConnectorOptions.KafkaOptions, r.log, func() []*deltasink.TableState { return []*deltasink.TableState{&r.TableState} })
	budget := deltasink.NewErrorBudget(&cfg.Table.ConnectorOptions.KafkaOptions, cfg.Table.DestinationTable, cfg.DirtyDir, cfg.DirtyQualified,
		cfg.TableOptions(fmt.Sprintf("pipeline %q, table %s", cfg.Pipeline, cfg.Qualified), r.log))
	pos := r.positions()
	group := deltasink.NewGroupCommitter(r.client, pos.Group, r.log)
	defer group.Close()
	s, err := deltasink.NewSink(tbl, layout, sources, deltasink.SinkOptions{MaxRows: cfg.MaxRows, MaxBytes: cfg.MaxBytes,
		Budget: r.budget, State: &r.TableState, Log: r.log, Loss: loss, Errs: budget, Group: group,
		SizeWindow: cfg.Table.ConnectorOptions.KafkaOptions.BytesEstimateWindow()})
	if err != nil {
		return err
	}
	defer s.Close()
	l := &loop{sink: s, r: r, loss: loss, pos: pos, topicIDs: map[string]string{}, end: r.runEnd}
	return l.run(ctx)
}

func (l *loop) run(ctx context.Context) error {
	r := l.r
	ko := &r.cfg.Table.ConnectorOptions.KafkaOptions
	fctx, cancelFetch := context.WithCancel(ctx)
	// The decoders stop only once this loop has returned: a decoder that
	// stops gives back the batch it holds, and the chunks of that batch it
	// sent before must not be written after that (the loop's final flush
	// may still write them).
	dctx, cancelDecode := context.WithCancel(context.WithoutCancel(ctx))
	// Chunks are written, and decoded again after a change of columns,
	// under wctx, which stopping does not cancel: a chunk half written
	// when stop comes is finished, and the final flush commits it.
	wctx := context.WithoutCancel(ctx)
	// Each partition's batches come from the pipeline's source to a
	// goroutine that decodes them, which hands the decoded chunks to this
	// loop; what the fetchers hold is bounded by the memory budget, what
	// the decoders hold by their pool.
	chunks := make(chan ingest.Decoded, l.sink.Decoders().Size())
	var wg sync.WaitGroup
	defer func() {
		cancelFetch()
		cancelDecode()
		wg.Wait()
		// The batches nobody wrote give their memory back.
		for {
			select {
			case d := <-chunks:
				d.Free()
			default:
				return
			}
		}
	}()
	fetchErrs := make(chan error, 1)
	fetching := map[kafka.TopicPartition]bool{}
	pr := &ingest.PartitionReader{Source: r.source, Fetch: fctx, Decode: dctx, WG: &wg, Pool: l.sink.Decoders(), Chunks: chunks, Errs: fetchErrs,
		Log: r.log}
	pos := l.pos
	trig := newTrigger(ko, r.cfg.Continuous, r.cfg.FlushEvery)
	defer trig.stop()

	// sub is what every subscription of the loop has in common.
	readCommitted := ko.ReadCommitted()
	settings, err := runner.ClientSettings(ko)
	if err != nil {
		return err
	}
	sub := ingest.Subscription{ReadCommitted: readCommitted, Settings: settings, OnDataLoss: l.loss.OnGap()}

	rd := &reading{pr: pr, sub: sub, trig: trig, fetching: fetching}
	start := func(tps []kafka.TopicPartition, starting string) error { return l.start(ctx, rd, tps, starting) }

	if err := pos.CheckGroupMembers(ctx); err != nil {
		return err
	}
	tps, err := r.client.Partitions(ctx, ko)
	if err != nil {
		return err
	}
	if err := start(tps, ko.StartingOffset); err != nil {
		return err
	}
	if r.own.Maintains(tps) {
		l.sink.Maintain(ctx, r.cfg.Upkeep(r.budget, r.cfg.Table.DestinationTable, r.cfg.Dir))
	}
	// Running again: an error from before the restart is history.
	r.sup.SetRunning()
	r.log.Info("table running", "partitions", len(fetching), "version", l.sink.Table().Snapshot().Version)

	clk := runner.NewClock(runner.DiscoveryInterval(ko), r.cfg.GCGrace)
	defer clk.Stop()
	for {
		if !r.cfg.Continuous && l.reachedEnd() {
			if err := l.flush(ctx); err != nil {
				return err
			}
			r.sup.SetState(spec.StateIdle, nil)
			return nil
		}
		select {
		case <-ctx.Done():
			return deltasink.FinalFlush(l.sink.Flush)
		case err := <-fetchErrs:
			return err
		case d := <-chunks:
			if err := l.write(ctx, wctx, d, clk, trig); err != nil {
				return err
			}
		case <-trig.C():
			l.fire(ctx, trig, func(from, until map[kafka.TopicPartition]int64) { l.read(pr, sub, from, until, until) })
		case <-clk.Flush.C:
			if err := l.flush(ctx); err != nil {
				return err
			}
		case <-l.sink.FlushAsked():
			// The memory budget is full and this file is the biggest.
			r.log.Debug("flush asked by the memory budget", "bytes", l.sink.Buffered())
			clk.Flush.Stop()
			if err := l.flush(ctx); err != nil {
				return err
			}
		case <-clk.GC.C:
			r.collectGarbage(l.sink.Table())
		case <-clk.Discover:
			if err := runner.DiscoverPartitions(ctx, r.client, ko, r.log, start); err != nil {
				return err
			}
		}
	}
}

// reading is what a loop's run reads its partitions with.
type reading struct {
	pr *ingest.PartitionReader
	// sub is what every subscription of the loop has in common.
	sub  ingest.Subscription
	trig *trigger
	// fetching holds the partitions the run started.
	fetching map[kafka.TopicPartition]bool
}

// start begins fetching the new partitions among tps that the agent owns
// (every one, but in a cluster), each from its committed offset, else from
// where the loop's positions say (starting for a partition the log does
// not hold); with a trigger, its micro-batches read them.
//
// In a cluster, the first start of a table also records where the
// partitions other agents own start: they start where the table started,
// as with a single agent, rather than at the earliest offset, as
// partitions found once the log holds offsets do.
func (l *loop) start(ctx context.Context, rd *reading, tps []kafka.TopicPartition, starting string) error {
	r := l.r
	fresh := runner.Unstarted(r.own.Of(tps), rd.fetching)
	logged := len(l.sink.Table().Snapshot().Txns) > 0
	var others []kafka.TopicPartition
	if !logged {
		others = r.own.Others(tps)
	}
	if len(fresh) == 0 && len(others) == 0 {
		return nil
	}
	// Topic ids first: offsets of a topic re-created meanwhile would
	// belong to the new one.
	ids, newIDs, err := l.learnTopicIDs(ctx, fresh)
	if err != nil {
		return err
	}
	defaults, ends, err := l.pos.Offsets(ctx, append(slices.Clone(fresh), others...), starting, logged, !r.cfg.Continuous && l.end == nil)
	if err != nil {
		return err
	}
	if ends != nil {
		for _, tp := range others {
			delete(ends, tp)
		}
		l.end, r.runEnd = ends, ends
	}
	// Record where new partitions start before reading them, so that a
	// restart before their first data commit resumes there rather than
	// at a newer "latest"; the ids of new topics, so that a topic
	// re-created while the agent is down is told apart; and the offsets
	// the log holds under legacy application ids, under the new ones.
	c := table.Commit{Txns: map[string]int64{}, From: map[string]int64{}, Configuration: newIDs}
	snap := l.sink.Table().Snapshot()
	for _, tp := range fresh {
		next, legacy, ok := r.recorded(snap.Txns, tp)
		switch {
		case !ok:
			next = defaults[tp]
			c.Txns[deltasink.AppID(tp)] = next
		case legacy:
			moveLegacy(&c, deltasink.AppID(tp), r.legacyAppID(tp), next)
		}
		// The epoch the log records with the offset, which the commit
		// leaves alone, validates it (see checkTruncation) and goes with
		// the partition's next commit until a record brings a newer one.
		epoch, ok := snap.Epochs[deltasink.AppID(tp)]
		if !ok {
			epoch = -1
		}
		l.sink.Resume(tp, next, epoch)
	}
	// Another agent that records them first makes this commit fail (it
	// expects no offset for them), and the loop start again from the log.
	for _, tp := range others {
		c.Txns[deltasink.AppID(tp)] = defaults[tp]
	}
	if len(c.Txns) > 0 || len(newIDs) > 0 {
		if err := l.sink.CommitStart(c); err != nil {
			return fmt.Errorf("record the starting offsets of new partitions: %w", err)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	// Then check that Kafka still holds what the log says was read.
	if err := l.checkTruncation(ctx, fresh); err != nil {
		return err
	}
	maps.Copy(l.topicIDs, ids) // known once recorded
	backlogEnds, err := l.backlogEnds(ctx, fresh, rd.sub.ReadCommitted)
	if err != nil {
		return err
	}
	from, until := map[kafka.TopicPartition]int64{}, map[kafka.TopicPartition]int64{}
	for _, tp := range fresh {
		next, _ := l.sink.CommittedOffset(tp)
		rd.fetching[tp] = true
		if end, ok := l.end[tp]; !r.cfg.Continuous && (!ok || next >= end) {
			continue // nothing to read in this triggered run
		}
		from[tp], until[tp] = next, l.end[tp]
	}
	if rd.trig == nil {
		l.read(rd.pr, rd.sub, from, until, backlogEnds)
	}
	l.sink.PublishOffsets()
	return nil
}

// write writes chunk d, under wctx, and flushes, under ctx, when the open
// file is full; the flush interval of clk counts from the first buffered
// record.
func (l *loop) write(ctx, wctx context.Context, d ingest.Decoded, clk *runner.Clock, trig *trigger) error {
	wasEmpty := l.sink.Empty()
	err := l.sink.Add(wctx, d)
	if d.Last && err == nil {
		l.r.sup.FetchRecovered(d.TP)
	}
	// At a batch's last chunk, what the batch held is in the open
	// file now (or, after an error, dropped).
	d.Free()
	l.sink.TrackMemory()
	if err != nil {
		return err
	}
	if l.sink.Full() {
		clk.Flush.Stop()
		if err := l.flush(ctx); err != nil {
			return err
		}
	} else if wasEmpty && !l.sink.Empty() {
		// The interval counts from the first buffered record, and
		// the flush fires even if no record follows it.
		clk.Flush.Reset(l.r.cfg.FlushEvery)
	}
	return l.endBatch(ctx, trig)
}

// learnTopicIDs looks up the ids of the topics of tps the loop does not
// know yet and returns them, with the table configuration keys of those the
// table has not recorded yet. A topic whose id differs from the one the
// table recorded was re-created: a [*kafka.TopicRecreatedError], unless the
// table goes on after data loss (see goOnRecreated).
func (l *loop) learnTopicIDs(ctx context.Context, tps []kafka.TopicPartition) (ids, unrecorded map[string]string, err error) {
	unknown := slices.DeleteFunc(kafka.TopicsOf(tps), func(topic string) bool {
		_, ok := l.topicIDs[topic]
		return ok
	})
	if len(unknown) == 0 {
		return nil, nil, nil
	}
	if ids, err = l.r.client.TopicIDs(ctx, unknown); err != nil {
		return nil, nil, runner.Lookup(err)
	}
	if unrecorded, err = deltasink.CheckTopicIDs(l.sink.Table().Snapshot().Configuration, ids); err != nil {
		if err := l.goOnRecreated(ctx, err, tps, ids); err != nil {
			return nil, nil, err
		}
		if unrecorded, err = deltasink.CheckTopicIDs(l.sink.Table().Snapshot().Configuration, ids); err != nil {
			return nil, nil, err
		}
	}
	return ids, unrecorded, nil
}

// reachedEnd reports whether a triggered run has everything up to its end
// offsets committed or buffered.
func (l *loop) reachedEnd() bool {
	for tp, end := range l.end {
		if l.sink.NextOffset(tp) < end {
			return false
		}
	}
	return true
}

// splitOptions returns max_records_per_partition and min_partitions of the
// loop's table, 0 for those not set.
func (l *loop) splitOptions() (maxRecords, minPartitions int64) {
	ko := &l.r.cfg.Table.ConnectorOptions.KafkaOptions
	return deref(ko.MaxRecordsPerPartition), deref(ko.MinPartitions)
}

// backlogEnds returns where the backlogs of the new partitions tps end,
// for splitting them: a triggered run's end offsets, or, for a continuous
// table, the offsets available now; nil when the table sets neither
// max_records_per_partition nor min_partitions. A failed look-up is a
// [runner.LookupError].
func (l *loop) backlogEnds(ctx context.Context, tps []kafka.TopicPartition, readCommitted bool) (map[kafka.TopicPartition]int64, error) {
	if maxRecords, minPartitions := l.splitOptions(); maxRecords <= 0 && minPartitions <= 0 {
		return nil, nil
	}
	if !l.r.cfg.Continuous {
		return l.end, nil
	}
	which := int64(kafka.Latest)
	if readCommitted {
		which = kafka.LastStable
	}
	ends, err := l.r.client.Offsets(ctx, tps, which)
	if err != nil {
		return nil, runner.Lookup(err)
	}
	return ends, nil
}

// read starts reading each partition of until from its offset in from, up
// to its offset in until (0: on, without end), with the subscription
// settings of sub. The backlog of a partition
// up to its offset in ends, when the table's max_records_per_partition or
// min_partitions split it (see [ingest.PartitionReader.ReadAll]), is read as ranges in
// parallel: at the loop's start, and at each trigger of a table with rate
// control (where ends are the micro-batch's).
func (l *loop) read(pr *ingest.PartitionReader, sub ingest.Subscription, from, until, ends map[kafka.TopicPartition]int64) {
	maxRecords, minPartitions := l.splitOptions()
	pr.ReadAll(sub, from, until, ends, maxRecords, minPartitions, l.topicIDs, l.r.sup.FetchFailing)
}

// positions returns the position look-ups of the table.
func (r *tableRunner) positions() *position.Finder {
	ko := &r.cfg.Table.ConnectorOptions.KafkaOptions
	return &position.Finder{Client: r.client, Options: ko, Group: position.GroupID(ko, r.cfg.Pipeline, r.cfg.Qualified), Owner: "the table"}
}
