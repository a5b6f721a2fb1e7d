package deltasink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/columns"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/ingest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/maintenance"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/registration"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/registry"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TableState is a table's status, which the table's writer updates and
// status requests read.
type TableState struct {
	mu     sync.Mutex
	Status spec.TableStatus
	// maint is what the table's maintenance did, once a sink of the table
	// maintained it; it outlives the sink, as the status does.
	maint *maintenance.State
	// reg is the table's registrar while a sink of this agent runs one.
	reg *registration.Registrar
}

// Snapshot returns a copy of the status.
func (st *TableState) Snapshot() spec.TableStatus {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.Status
	s.Partitions = append([]spec.PartitionStatus{}, s.Partitions...)
	if st.maint != nil {
		m := st.maint.Snapshot()
		s.Maintenance = &m
	}
	if st.reg != nil {
		c := st.reg.Status()
		s.Catalog = &c
	}
	return s
}

// maintenance returns the table's maintenance status, made on first use.
func (st *TableState) maintenance() *maintenance.State {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.maint == nil {
		st.maint = &maintenance.State{}
	}
	return st.maint
}

// Sink is the writing side of one run of a table: its log, its open file,
// the offsets of what it buffered and committed, its columns as they
// evolve, and its status. A table loop feeds it the chunks of the
// partitions it fetches; a fanout runner feeds each routed table's sink the
// chunks routed to it. A sink is used by one goroutine.
//
// A runner opens the table, makes its sink with [NewSink] (or
// [NewRawSink]) and then, per partition it starts, tells it where the
// partition goes on from ([Sink.Resume]), then records with
// [Sink.CommitStart] what the log must hold before the partitions are
// read (new partitions' starting offsets, moved legacy ids).
// It hands it the decoded chunks in offset order ([Sink.Add]), sets what
// the open file holds in the memory budget once it released each chunk's
// batch ([Sink.TrackMemory]), and flushes it ([Sink.Flush]) at its flush
// interval, when the file is full ([Sink.Full]), or when the budget asks
// ([Sink.FlushAsked]); a final flush and [Sink.Close] end it. The offsets
// buffered and committed, and the leader epochs and lag that go with them,
// stay inside the sink: a runner reads them ([Sink.CommittedOffset],
// [Sink.NextOffset]) and moves them back only with [Sink.Rewind].
type Sink struct {
	tbl *table.Table
	log *slog.Logger
	// maxRows and maxBytes are the open file's limits (see full).
	maxRows, maxBytes int64
	// state is the status the sink keeps up to date.
	state *TableState
	// decoders decode the fetched records, several partitions at once.
	decoders *ingest.DecoderPool
	schema   *parquet.Schema
	// columns is the table schema every commit carries.
	columns []schema.Field
	// layout is the table's column layout. The Fields of an inferred part
	// grow as records bring new fields (see evolve), and version counts
	// those changes; sources are the registry sources decoders need.
	layout  *spec.Layout
	sources *decode.Sources
	version int
	// own decodes, on the sink's goroutine, the records of a chunk from
	// the one that asked for new columns on; nil until needed. redecoded
	// counts the records it went through, for tests.
	own       *decode.Decoder
	redecoded int
	// closed holds the data files closed since the last flush: full ones
	// (see write), and those closed for rows of other columns (a change of
	// columns, or a chunk decoded before one), written with the columns
	// their rows have. The next flush commits them with the open file and
	// the current columns, in one commit: Delta reads a column a file
	// lacks as nulls, and a narrower type as its widened one. They are
	// sealed (see [table.FileWriter.Seal]): their uploads finish while the
	// sink writes on, and the flush waits for them.
	closed []*table.SealedFile

	// files are the open data files, written with the table's current
	// columns (schema version version): one per partition value, keyed
	// by the values ("" in an unpartitioned table).
	files map[string]*table.FileWriter
	// olders are the open data files of the columns before the last
	// change, olderVersion their schema version: they take the chunks the
	// decoder pool decoded with them before it learnt of the change, so
	// that they do not close the current files one after the other.
	// Empty when none.
	olders       map[string]*table.FileWriter
	olderVersion int
	// reg keeps the table registered in its catalog; nil when this agent
	// does not maintain the table, or it has no catalog.
	reg *registration.Registrar
	// maint maintains the table beside the sink's writes; nil when this
	// sink does not (see Maintain).
	maint *maintenance.Maintainer
	// part splits the rows of a partitioned table by their partition
	// values, nil for an unpartitioned table; partitioning is the layout
	// every commit states (see [table.Commit.Partitioning]).
	part         *partitioner
	partitioning table.Partitioning
	// mem holds the open files' buffers in the memory budget, and the
	// uploads of the closed ones until they complete; the budget asks
	// through it for a flush when the sink is the biggest holder and the
	// budget is full.
	mem     *memory.Account
	corrupt int64
	// filtered counts the records since the last commit that gave no row
	// because they carry none (see [decode.Stats.Filtered]).
	filtered int64
	// pending holds the next offsets of buffered rows; committed those of
	// the log, for the partitions the sink resumed (see Resume) or
	// committed.
	pending   map[kafka.TopicPartition]int64
	committed map[kafka.TopicPartition]int64
	// epochs holds, per partition, the leader epoch of the last record
	// buffered or committed, which each commit records with the
	// partition's offset for a restart to validate it: set by Resume
	// from the log, then by each chunk added.
	epochs map[kafka.TopicPartition]int32
	// readEnd is, per partition, the offset up to which the last fetch
	// could read (see [kafka.Batch.End]); it measures lag.
	readEnd map[kafka.TopicPartition]int64
	// sizes measures the records written, for the lag in bytes.
	sizes RecordSizes
	// loss keeps the gaps skipped and not committed yet (see dataLoss);
	// nil for a sink whose gaps are committed elsewhere.
	loss *DataLoss
	// group mirrors committed offsets to a consumer group; nil for none.
	group *GroupCommitter
	// errs is the table's error budget, nil without ignore_errors; bad
	// holds the records left out since the last commit, and errors counts
	// those the log holds, as of the sink's last commit (with those of the
	// other writers committed before it).
	errs   *ErrorBudget
	bad    []DirtyRecord
	errors int64
}

// SinkOptions is what a sink needs besides its table and columns.
type SinkOptions struct {
	// MaxRows and MaxBytes bound a data file.
	MaxRows, MaxBytes int64
	// Budget is the memory budget the open file draws from.
	Budget *memory.Budget
	// State is the table's status, which the sink keeps up to date.
	State *TableState
	// Log is the table's logger.
	Log *slog.Logger
	// Loss keeps the gaps the table's fetches skipped, which the sink's
	// commits record; nil for a table that fails on data loss, or whose
	// gaps are committed elsewhere (a fanout table's).
	Loss *DataLoss
	// Errs is the table's error budget; nil without ignore_errors.
	Errs *ErrorBudget
	// Group mirrors the committed offsets to a consumer group; nil for
	// none.
	Group *GroupCommitter
	// SizeWindow is how far back the record sizes of the lag in bytes
	// go: kafka_options.bytes_estimate_window_length.
	SizeWindow time.Duration
}

// NewSink returns the sink of tbl writing the columns of layout, whose
// registry parts sources resolved, and loads the status of tbl's log into
// o.state. End it with close.
func NewSink(tbl *table.Table, layout *spec.Layout, sources *decode.Sources, o SinkOptions) (*Sink, error) {
	dec, err := ingest.NewDecoder(layout, sources, o.DecodeOptions())
	if err != nil {
		return nil, runner.Fatal(fmt.Errorf("build decoder: %w", err))
	}
	part, partitioning, err := newPartitioner(layout)
	if err != nil {
		return nil, err
	}
	if err := tbl.CheckPartitioning(partitioning); err != nil {
		return nil, runner.Fatal(partitionChange(err))
	}
	s := NewRawSink(tbl, layout.Columns(), dec.Schema(), o)
	s.decoders, s.layout, s.sources = ingest.NewDecoderPool(layout, sources, dec, o.Budget), layout, sources
	s.part, s.partitioning = part, partitioning
	s.decoders.Opts = o.DecodeOptions()
	return s, nil
}

// DecodeOptions returns the options of the sink's decoders: with an error
// budget, records that do not decode are left out of the batch.
func (o *SinkOptions) DecodeOptions() decode.Options {
	return decode.Options{SkipBad: o.Errs != nil}
}

// NewRawSink returns a sink of tbl whose writer builds rows of columns,
// whose Parquet schema is ps, itself: chunks come with their batch and
// without a decoder, and the columns never change. It loads the status of
// tbl's log into o.state. End it with close.
func NewRawSink(tbl *table.Table, columns []schema.Field, ps *parquet.Schema, o SinkOptions) *Sink {
	s := &Sink{
		tbl: tbl, log: o.Log, maxRows: o.MaxRows, maxBytes: o.MaxBytes, state: o.State,
		schema: ps, columns: columns, group: o.Group,
		files: map[string]*table.FileWriter{}, olders: map[string]*table.FileWriter{},
		partitioning: table.Partitioning{Columns: []string{}},
		pending:      map[kafka.TopicPartition]int64{},
		committed:    map[kafka.TopicPartition]int64{},
		epochs:       map[kafka.TopicPartition]int32{},
		readEnd:      map[kafka.TopicPartition]int64{},
		sizes:        NewRecordSizes(o.SizeWindow),
		loss:         o.Loss,
		mem:          o.Budget.NewAccount(),
		errs:         o.Errs,
	}
	snap := tbl.Snapshot()
	st := o.State
	st.mu.Lock()
	st.Status.Version = snap.Version
	st.setCounters(snap.Counters)
	// Skipped offsets count as they are skipped (see DataLoss.skip).
	st.Status.DataLossOffsets = snap.Counters[counterDataLoss]
	s.errors = snap.Counters[CounterErrors]
	if snap.Schema != nil {
		st.Status.Columns = columnStatus(snap.Schema)
	}
	st.mu.Unlock()
	return s
}

// Close drops the open files, if any (their rows are read again), waits
// up to 30 seconds for the closed ones still finishing in the store
// (uncommitted, they are left to garbage collection), and gives their
// memory back: past the 30 seconds, the budget no longer counts the
// uploads it stopped waiting for, which fail once the table closes.
func (s *Sink) Close() {
	if s.reg != nil {
		s.reg.Stop()
		// The next owner of the table reports its registrations: this
		// agent's would stay as they were when it stopped.
		s.state.mu.Lock()
		if s.state.reg == s.reg {
			s.state.reg = nil
		}
		s.state.mu.Unlock()
		s.reg = nil
	}
	if s.maint != nil {
		s.maint.Stop()
		s.maint = nil
	}
	for _, set := range []map[string]*table.FileWriter{s.files, s.olders} {
		for k, f := range set {
			f.Abort()
			delete(set, k)
		}
	}
	// The closed files are left to garbage collection, once their
	// uploads no longer use the table's store. A store that stopped
	// answering does not hold the stop longer than a final flush would.
	bound := time.NewTimer(finalFlushTime)
	defer bound.Stop()
wait:
	for _, sf := range s.closed {
		select {
		case <-sf.Done():
		case <-bound.C:
			s.log.Warn("stopped before the store finished the closed data files", "after", finalFlushTime)
			break wait
		}
	}
	s.closed = nil
	if s.decoders != nil {
		s.decoders.Close()
	}
	s.mem.Close()
}

// Add writes a decoded chunk to the open file and moves the partition's next
// offset past it. A chunk decoded with columns older than the table's goes
// as it is into a file of those columns. A chunk that stopped at a record
// asking for new columns for an inferred part has the rows of the records
// before it written, then the table's columns change (see evolve), and
// the records from that one on are decoded on the sink's own decoder, under
// ctx, and written the same way: each record is decoded once, the one that
// asked twice.
func (s *Sink) Add(ctx context.Context, d ingest.Decoded) error {
	if d.Dec != nil {
		defer s.decoders.Put(d.Dec)
	}
	recs, batch, err, version, dec := d.Recs, d.Batch, d.Err, d.Version, d.Dec
	for {
		var nc *decode.NewColumnsError
		if err != nil && !errors.As(err, &nc) {
			return s.decodeFailed(err)
		}
		var layout *spec.Layout
		if nc != nil {
			if layout, err = s.next(nc); err != nil {
				return err
			}
			if layout == nil && version == s.version {
				return runner.Fatal(fmt.Errorf("a bug: the table's columns already have what the chunk asks for: %w", nc))
			}
		}
		if err := s.put(d.TP, recs, &batch, version, dec); err != nil {
			return err
		}
		if nc == nil {
			break
		}
		if nc.Record > 0 {
			// What is written so far is a chunk of its own: a flush commits
			// it with the offset of the record that asked.
			s.advance(d.TP, recs[nc.Record].Offset, recs[nc.Record-1].LeaderEpoch)
		}
		if layout != nil {
			if err := s.evolve(layout, nc); err != nil {
				return err
			}
		}
		if s.own == nil {
			if s.own, err = ingest.NewDecoder(s.layout, s.sources, s.decoders.Opts); err != nil {
				return runner.Fatal(fmt.Errorf("build decoder: %w", err))
			}
		}
		recs = recs[nc.Record:]
		batch, err = s.own.Decode(ctx, recs)
		version, dec = s.version, s.own
		s.redecoded += decodedRecords(len(recs), err)
	}
	s.sizes.Add(d.TP, d.Recs, time.Now())
	s.advance(d.TP, d.Next, d.LeaderEpoch())
	if d.Last {
		s.readEnd[d.TP] = d.End
	}
	return nil
}

// decodedRecords is how many of n records a Decode call that returned err
// went through: up to the record that asked for new columns, else all.
func decodedRecords(n int, err error) int {
	if nc := (*decode.NewColumnsError)(nil); errors.As(err, &nc) && !nc.Fail {
		return nc.Record + 1
	}
	return n
}

// put writes batch, the rows of recs of partition tp that dec decoded with
// the columns of schema version version, and keeps the records it left
// out and its counts for the next flush.
func (s *Sink) put(tp kafka.TopicPartition, recs []record.Record, batch *decode.Batch, version int, dec *decode.Decoder) error {
	if len(batch.Bad) > 0 {
		if err := s.leaveOut(recs, batch.Bad); err != nil {
			return err
		}
	}
	if batch.Rows > 0 {
		ps := s.schema
		if version != s.version {
			ps = dec.Schema()
		}
		if err := s.write(version, ps, batch.Columns, batch.Rows); err != nil {
			return fmt.Errorf("write rows of %s: %w", tp, err)
		}
		s.corrupt += int64(batch.Corrupt)
	}
	s.filtered += int64(batch.Filtered)
	return nil
}

// advance moves tp's next offset to next, when past it, with the leader
// epoch of the record before it (-1 when unknown).
func (s *Sink) advance(tp kafka.TopicPartition, next int64, epoch int32) {
	if next > s.NextOffset(tp) {
		s.pending[tp] = next
		if epoch >= 0 {
			s.epochs[tp] = epoch
		}
	}
}

// write appends n rows, given column by column in the columns of schema
// version version, whose Parquet schema is ps, to the open files of that
// version, opening them as needed: the current files, or for an older
// version the older files (those of another older version are closed
// first). In a partitioned table the rows go to the file of their
// partition values, one per value.
func (s *Sink) write(version int, ps *parquet.Schema, cols [][]parquet.Value, n int) error {
	set := s.files
	if version != s.version {
		if len(s.olders) > 0 && s.olderVersion != version {
			if err := s.closeFiles(s.olders); err != nil {
				return err
			}
		}
		set, s.olderVersion = s.olders, version
	}
	if s.part == nil {
		return s.writeFile(set, "", nil, ps, cols, n)
	}
	batches, err := s.part.split(ps, cols, n)
	if err != nil {
		return runner.Fatal(err)
	}
	for _, b := range batches {
		if err := s.writeFile(set, partitionDirKey(b.values), b.values, ps, b.cols, b.rows); err != nil {
			return err
		}
	}
	return nil
}

// writeFile appends n rows to the file of set under key, whose partition
// values are values, opening it if needed. A file never holds more than
// maxRows rows: the rows that would take it past go to a new file, and
// the full one waits in closed for the next flush, which commits them
// together with the offsets.
func (s *Sink) writeFile(set map[string]*table.FileWriter, key string, values []table.PartitionValue, ps *parquet.Schema, cols [][]parquet.Value, n int) error {
	for n > 0 {
		f := set[key]
		if f != nil && f.Rows() >= s.maxRows {
			if err := s.closeFile(set, key); err != nil {
				return err
			}
			f = nil
		}
		if f == nil {
			w, err := s.tbl.NewPartitionFile(ps, values)
			if err != nil {
				return fmt.Errorf("start a data file: %w", err)
			}
			f, set[key] = w, w
		}
		head, take := cols, n
		if room := s.maxRows - f.Rows(); int64(n) > room {
			take = int(room)
			head, cols = f.SplitRows(cols, take)
		}
		if err := f.WriteColumns(head, take); err != nil {
			return err
		}
		n -= take
	}
	return nil
}

// closeFile seals the open file of set under key and keeps it in closed
// for the next flush.
func (s *Sink) closeFile(set map[string]*table.FileWriter, key string) error {
	sf, err := set[key].Seal()
	delete(set, key)
	if err != nil {
		s.mem.Set(s.Buffered())
		return fmt.Errorf("finish data file: %w", err)
	}
	s.closed = append(s.closed, sf)
	s.mem.Set(s.Buffered())
	return nil
}

// durable waits until every closed file is durable, or ctx ends, and
// returns their add actions, in the order they were closed.
func (s *Sink) durable(ctx context.Context) ([]table.AddFile, error) {
	adds := make([]table.AddFile, 0, len(s.closed))
	var first error
	for _, sf := range s.closed {
		add, err := sf.Wait(ctx)
		if err != nil && first == nil {
			first = fmt.Errorf("finish data file: %w", err)
		}
		adds = append(adds, add)
	}
	return adds, first
}

// closeFiles closes every file of set, in the order of their keys.
func (s *Sink) closeFiles(set map[string]*table.FileWriter) error {
	for _, k := range sortedKeys(set) {
		if err := s.closeFile(set, k); err != nil {
			return err
		}
	}
	return nil
}

// leaveOut keeps bad, the records of recs a chunk left out because they do
// not decode, for the next flush to write to the dirty records table. When
// they take the table's count past its budget, it commits what was
// buffered before the chunk instead, and fails the table: the chunk stays
// uncommitted, so a restart reads it again and fails again.
func (s *Sink) leaveOut(recs []record.Record, bad []decode.BadRecord) error {
	if s.errs == nil {
		return runner.Fatal(fmt.Errorf("a bug: the decoder left out records of a table without ignore_errors: %w", bad[0].Err))
	}
	if err := s.errs.exceeded(s.errors+int64(len(s.bad)), recs, bad); err != nil {
		if ferr := FinalFlush(s.Flush); ferr != nil {
			return ferr
		}
		return err
	}
	now := time.Now()
	for _, b := range bad {
		s.bad = append(s.bad, NewDirtyRecord(&recs[b.Record], b.Err, now))
	}
	return nil
}

// next returns the table's layout once the columns nc asks for are added,
// nil when the columns have them already. In FAIL_ON_NEW_COLUMNS, or when
// the columns would be more than a Parquet file holds, it commits what was
// buffered before the record instead, and fails the table.
func (s *Sink) next(nc *decode.NewColumnsError) (*spec.Layout, error) {
	layout := *s.layout
	side := &layout.Value
	if nc.Side == "key" {
		side = &layout.Key
	}
	fields, changed := nc.Apply(side.Fields)
	if !changed {
		return nil, nil
	}
	side.Fields = fields // of the copy
	if fail := columns.TooWide(&layout); nc.Fail || fail != nil {
		if err := FinalFlush(s.Flush); err != nil {
			return nil, err
		}
		if fail == nil {
			fail = runner.Fatal(nc)
		}
		return nil, fail
	}
	return &layout, nil
}

// evolve gives the table layout, the columns nc asked for: the open file,
// written with the columns before, becomes the older file, for the chunks
// still decoded with them (an older one is closed), all committed with the
// new columns at the next flush; and every decoder decodes into the new
// columns from now on.
func (s *Sink) evolve(layout *spec.Layout, nc *decode.NewColumnsError) error {
	if len(s.files) > 0 {
		if err := s.closeFiles(s.olders); err != nil {
			return err
		}
		s.olders, s.olderVersion, s.files = s.files, s.version, s.olders
	}
	own, err := ingest.NewDecoder(layout, s.sources, s.decoders.Opts)
	if err != nil {
		return runner.Fatal(fmt.Errorf("build the decoder of the new columns: %w", err))
	}
	s.layout, s.own, s.schema, s.columns = layout, own, own.Schema(), layout.Columns()
	s.version++
	s.decoders.Swap(s.layout, s.version)
	s.log.Info("new columns", "columns", nc.Columns, "record", fmt.Sprintf("%s[%d]@%d", nc.Topic, nc.Partition, nc.Offset))
	return nil
}

// widening reports whether the table's inferred part widens column types
// (ADD_NEW_COLUMNS_WITH_TYPE_WIDENING), which its commits then allow.
func (s *Sink) widening() bool {
	if s.layout == nil {
		return false // a raw sink's columns never change
	}
	for _, p := range []*spec.Part{&s.layout.Key, &s.layout.Value} {
		if p.Inferred() && p.Transformer.JSONOptions.EvolutionMode() == spec.SchemaEvolutionAddNewColumnsWithTypeWidening {
			return true
		}
	}
	return false
}

// NextOffset is the offset after everything buffered or committed for tp.
func (s *Sink) NextOffset(tp kafka.TopicPartition) int64 {
	if n, ok := s.pending[tp]; ok {
		return n
	}
	return s.committed[tp]
}

// Table returns the table the sink writes, which its runner opened and
// closes.
func (s *Sink) Table() *table.Table { return s.tbl }

// Decoders returns the pool of decoders the sink's chunks are decoded
// with, before [Sink.Add] takes them; it hands them back to the pool.
func (s *Sink) Decoders() *ingest.DecoderPool { return s.decoders }

// FlushAsked receives when the memory budget is full and the sink holds
// the most of it (its open files, and the uploads of its closed ones): its
// runner then flushes it.
func (s *Sink) FlushAsked() <-chan struct{} { return s.mem.Flush() }

// TrackMemory sets what the sink buffers (see [Sink.Buffered]) in the
// memory budget. A runner calls it after [Sink.Add], once it released the
// chunk's batch, so that the budget never counts the same rows twice,
// fetched and buffered.
func (s *Sink) TrackMemory() { s.mem.Set(s.Buffered()) }

// Resume sets where the sink goes on with tp: next, the offset the log
// holds for it (or the one it starts from, which the runner records with
// [Sink.CommitStart]), with epoch, the leader epoch the log records beside
// it; a negative epoch for none. The sink's commits of tp then check that
// the log still holds its offset, and its status lists tp.
func (s *Sink) Resume(tp kafka.TopicPartition, next int64, epoch int32) {
	s.committed[tp] = next
	if epoch >= 0 {
		s.epochs[tp] = epoch
	}
}

// CommittedOffset returns the offset the log holds for tp: the next to
// read after what the sink committed; ok false for a partition the sink
// neither resumed nor committed.
func (s *Sink) CommittedOffset(tp kafka.TopicPartition) (next int64, ok bool) {
	next, ok = s.committed[tp]
	return next, ok
}

// NextOffsets returns the next offset, after what is buffered or
// committed, of every partition the sink resumed or committed.
func (s *Sink) NextOffsets() map[kafka.TopicPartition]int64 {
	next := make(map[kafka.TopicPartition]int64, len(s.committed))
	for tp := range s.committed {
		next[tp] = s.NextOffset(tp)
	}
	return next
}

// Pending reports whether the sink buffers offsets of tp it has not
// committed yet.
func (s *Sink) Pending(tp kafka.TopicPartition) bool {
	_, ok := s.pending[tp]
	return ok
}

// SetReadEnd sets the offset up to which tp could be read, as the last
// fetch of it (see [kafka.Batch.End]) or a look-up found: the status's lag
// counts from it.
func (s *Sink) SetReadEnd(tp kafka.TopicPartition, end int64) { s.readEnd[tp] = end }

// CommitStart commits c, which adds no rows: what a runner records before
// it reads new partitions, such as where those the log holds no offset of
// start and the ids of new topics. It carries the table's
// columns, which a new table's first commit needs.
func (s *Sink) CommitStart(c table.Commit) error {
	c.Schema, c.Partitioning = s.columns, &s.partitioning
	return s.commit(c)
}

// Empty reports whether nothing is buffered: no rows, no offsets.
func (s *Sink) Empty() bool {
	return len(s.files) == 0 && len(s.olders) == 0 && len(s.pending) == 0 && len(s.closed) == 0
}

// Buffered is the memory the open files hold, and the closed ones until
// their uploads complete; 0 with none.
func (s *Sink) Buffered() int64 {
	var n int64
	for _, set := range []map[string]*table.FileWriter{s.files, s.olders} {
		for _, f := range set {
			n += f.Buffered()
		}
	}
	for _, sf := range s.closed {
		n += sf.Held()
	}
	return n
}

// Full reports whether an open file reached a size or row limit.
func (s *Sink) Full() bool {
	for _, set := range []map[string]*table.FileWriter{s.files, s.olders} {
		for _, f := range set {
			if f.Rows() >= s.maxRows || f.Size() >= s.maxBytes {
				return true
			}
		}
	}
	return false
}

// Flush closes the open file, waits until it and the files closed before
// it are durable, and commits them with the buffered offsets. When ctx
// ends during the wait, Flush returns its error and commits nothing: the
// files stay closed for a later flush, or for garbage collection once the
// sink closes. Whatever it returns, the memory budget then holds what the
// sink still buffers: the sealed files' uploads counted until they
// completed, and a flush the budget asked for is answered.
func (s *Sink) Flush(ctx context.Context) error {
	defer func() { s.mem.Set(s.Buffered()) }()
	if s.Empty() {
		return nil
	}
	for _, set := range []map[string]*table.FileWriter{s.olders, s.files} {
		if err := s.closeFiles(set); err != nil {
			return err
		}
	}
	files, err := s.durable(ctx)
	if err != nil {
		return err
	}
	c := table.Commit{Txns: map[string]int64{}, Epochs: map[string]int32{}, From: map[string]int64{}, Schema: s.columns, Files: files,
		AllowTypeWidening: s.widening(), Partitioning: &s.partitioning}
	for tp, next := range s.pending {
		id := AppID(tp)
		c.Txns[id] = next
		if e, ok := s.epochs[tp]; ok {
			c.Epochs[id] = e
		}
		if from, ok := s.committed[tp]; ok {
			c.From[id] = from
		}
	}
	c.Counters = map[string]int64{counterCorrupt: s.corrupt}
	if s.filtered > 0 {
		c.Counters[counterFiltered] = s.filtered
	}
	s.loss.AddTo(&c, s.pending)
	if len(s.bad) > 0 {
		// The dirty records first: after a crash before the table's
		// commit, they come again and the dirty table drops them.
		if err := s.errs.dirty.Commit(s.errs.dest, s.bad, s.pending, s.errs.opts); err != nil {
			return err
		}
		c.Counters[CounterErrors] = int64(len(s.bad))
	}
	if err := s.commit(c); err != nil {
		return err
	}
	// The log's count, which holds the bad records the other agents of a
	// cluster committed too: the budget is the table's, not an agent's.
	s.errors = s.tbl.Counters()[CounterErrors]
	clear(s.bad) // let the copies go
	s.bad = s.bad[:0]
	for tp, next := range s.pending {
		s.committed[tp] = next
	}
	clear(s.pending)
	s.closed = nil
	s.corrupt, s.filtered = 0, 0
	s.PublishOffsets()
	if s.group != nil {
		s.group.Offer(s.committed)
	}
	return nil
}

// commit writes one log entry and updates the status.
func (s *Sink) commit(c table.Commit) error {
	version, err := s.tbl.Commit(c)
	if err != nil {
		return fmt.Errorf("commit to the log: %w", err)
	}
	st := s.state
	st.mu.Lock()
	st.Status.Version = version
	// From the log, which holds the commits of the other agents of a
	// cluster that write the table too.
	st.setCounters(s.tbl.Counters())
	if c.Schema != nil {
		st.Status.Columns = columnStatus(c.Schema)
	}
	st.mu.Unlock()
	if s.maint != nil {
		s.maint.Committed()
	}
	if s.reg != nil {
		s.reg.Committed()
	}
	return nil
}

// Maintain starts the upkeep of the sink's table: its maintenance with
// u.Maintenance (see package maintenance), unless that turns every job
// off, and its registration in u.Catalog, when set (see package
// registration). The sink tells both after each commit and stops them
// when it closes. A runner calls it once, on the one agent of a cluster
// that maintains the table; both stop when ctx ends too.
func (s *Sink) Maintain(ctx context.Context, u runner.Upkeep) {
	if s.reg == nil && u.Catalog != nil {
		s.reg = registration.Start(ctx, *u.Catalog, u.Table, s.log)
		s.state.mu.Lock()
		s.state.reg = s.reg
		s.state.mu.Unlock()
	}
	o := u.Maintenance
	if s.maint != nil || (!o.Compact && !o.Vacuum) {
		return
	}
	o.State = s.state.maintenance()
	if o.Log == nil {
		o.Log = s.log
	}
	s.maint = maintenance.Start(ctx, s.tbl, o)
}

// setCounters sets the status's counts from counters, the sums of the
// metrics of the agents' log entries: not the rows and files other
// engines append, nor the files a compaction rewrote. The caller holds
// st.mu.
func (st *TableState) setCounters(counters map[string]int64) {
	st.Status.Rows, st.Status.Files = counters[table.MetricOutputRows], counters[table.MetricAddedFiles]
	st.Status.CorruptRecords = counters[counterCorrupt]
	st.Status.FilteredRecords = counters[counterFiltered]
	st.Status.ErrorRecords = counters[CounterErrors]
}

// PublishOffsets copies committed offsets and lag into the status.
func (s *Sink) PublishOffsets() {
	ps := make([]spec.PartitionStatus, 0, len(s.committed))
	for tp, next := range s.committed {
		ps = append(ps, s.sizes.PartitionStatus(tp, next, s.readEnd[tp]))
	}
	SortPartitions(ps)
	lag, lagBytes := lagTotals(ps)
	s.state.mu.Lock()
	s.state.Status.Partitions = ps
	s.state.Status.Lag, s.state.Status.LagBytes = lag, lagBytes
	s.state.mu.Unlock()
}

// The commit counters of a table's log, summed into its status on start.
const (
	// counterCorrupt sums corrupt records.
	counterCorrupt = "numCorruptRecords"
	// counterFiltered sums the records that gave no row because they
	// carry none (change events filtered out, see [decode.Stats.Filtered]).
	counterFiltered = "numFilteredRecords"
	// CounterErrors sums the records left out because they did not decode
	// (kafka_options.ignore_errors), which are in the dirty records table.
	CounterErrors = "numErrorRecords"
)

// AppID is the application id of tp's offsets in a table's log (the txn
// action's appId): "<topic>/<partition>", each table having a log of its
// own.
func AppID(tp kafka.TopicPartition) string {
	return fmt.Sprintf("%s/%d", tp.Topic, tp.Partition)
}

// TopicIDKey is the table configuration key that records the id of a
// topic the table reads.
func TopicIDKey(topic string) string { return "tributary.topicId." + topic }

// finalFlushTime bounds the last flush before a loop returns, and the
// wait of a stopping sink for its closed files.
const finalFlushTime = 30 * time.Second

// FinalFlush runs flush, the last before a loop returns, on a context of
// its own (the loop's may be done), bounded to 30 seconds.
func FinalFlush(flush func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), finalFlushTime)
	defer cancel()
	return flush(ctx)
}

// decodeFailed returns what the loop does with the error of a decoded
// chunk. A record written with a newer version of a registry subject first
// commits what is buffered, so that the restart with the new columns goes
// on from there; a record a FAILFAST transformer cannot decode fails the
// table (the chunk's offsets stay uncommitted); a registry that cannot be
// reached, refuses the credentials or lost the subject restarts the table
// from its log, with backoff; anything else is a bug, which fails the table.
func (s *Sink) decodeFailed(err error) error {
	var evolved *decode.SchemaChangedError
	var failFast *decode.RecordError
	switch {
	case errors.As(err, &evolved):
		if ferr := FinalFlush(s.Flush); ferr != nil {
			return ferr
		}
		return err
	case errors.As(err, &failFast):
		return err
	case errors.Is(err, registry.ErrUnavailable), errors.Is(err, registry.ErrRefused), errors.Is(err, registry.ErrNotFound),
		errors.Is(err, context.DeadlineExceeded):
		// The registry's, not the records': ErrNotFound here is the
		// subject, gone while the table reads it.
		return err
	}
	return runner.Fatal(err)
}

// columnStatus returns the status form of a table's columns.
func columnStatus(fields []schema.Field) []spec.ColumnStatus {
	cols := make([]spec.ColumnStatus, 0, len(fields))
	for _, f := range fields {
		cols = append(cols, spec.ColumnStatus{Name: f.Name, Type: f.Type.String(), Nullable: f.Nullable})
	}
	return cols
}
