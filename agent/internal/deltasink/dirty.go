package deltasink

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// RawRecordColumns are the first columns of the tables that keep records
// as they came: their key, their value and the fields of the source
// metadata column, the timestamp type named tsType.
func RawRecordColumns(tsType string) []schema.Field {
	cols := []schema.Field{
		{Name: "key", Type: &schema.Type{Kind: schema.Binary}, Nullable: true},
		{Name: "value", Type: &schema.Type{Kind: schema.Binary}, Nullable: true},
	}
	for _, f := range spec.MetadataType.Fields { // written by decode.WriteMetadata
		if f.Name == "timestampType" {
			f.Name = tsType
		}
		cols = append(cols, f)
	}
	return cols
}

// RawRecordWidth is the number of [rawRecordColumns]: the columns a
// letters row has before its own.
var RawRecordWidth = len(RawRecordColumns(""))

// DirtyColumns are the columns of [spec.DirtyRecordsTable]: the raw record,
// the destination table that left it out, why, and when.
var DirtyColumns = slices.Concat(RawRecordColumns("timestamp_type"), []schema.Field{
	{Name: "table", Type: &schema.Type{Kind: schema.String}, Nullable: true},
	{Name: "error", Type: &schema.Type{Kind: schema.String}, Nullable: true},
	{Name: "error_time", Type: &schema.Type{Kind: schema.Timestamp}, Nullable: true},
})

// Letters builds the rows of a table of raw records: [spec.FanoutErrorsTable]
// and [spec.DirtyRecordsTable].
type Letters struct {
	name string
	B    *rows.Builder
}

// NewLetters returns the builder of table name, whose columns are cols:
// [rawRecordColumns] and then the table's own.
func NewLetters(name string, cols []schema.Field) (*Letters, error) {
	b, err := rows.NewBuilder(cols)
	if err != nil {
		return nil, fmt.Errorf("the columns of %s: %w", name, err)
	}
	return &Letters{name: name, B: b}, nil
}

// Batch returns a row per record of recs: the record's raw columns, then
// the table's own columns, which more writes for record i, starting at
// field [rawRecordWidth]. It aliases the builder's buffers and the
// records' bytes, as [decode.Decoder.Decode]'s batches do.
func (l *Letters) Batch(recs []record.Record, more func(b *rows.Builder, i int)) (decode.Batch, error) {
	b := l.B
	b.Reset()
	for i := range recs {
		r := &recs[i]
		b.BeginRow()
		for f, v := range [][]byte{r.Key, r.Value} {
			b.Field(f)
			if v == nil {
				b.Null()
			} else {
				b.Bytes(v)
			}
		}
		decode.WriteMetadata(b, 2, r)
		more(b, i)
		if err := b.EndRow(); err != nil {
			return decode.Batch{}, fmt.Errorf("a row of %s: %w", l.name, err)
		}
	}
	return decode.Batch{Columns: b.Columns(), Rows: b.Rows()}, nil
}

// DirtyRecord is a record a table left out because it did not decode
// (kafka_options.ignore_errors), copied out of its fetched batch.
type DirtyRecord struct {
	rec record.Record
	Err string
	at  time.Time
}

// NewDirtyRecord returns the dirtyRecord of r, which failed with err at
// time at; it copies r's bytes, which belong to a fetched batch.
func NewDirtyRecord(r *record.Record, err error, at time.Time) DirtyRecord {
	return DirtyRecord{rec: CopyRecord(r), Err: err.Error(), at: at}
}

// CopyRecord returns a copy of r that shares none of its bytes, which
// belong to a fetched batch.
func CopyRecord(r *record.Record) record.Record {
	c := *r
	c.Key, c.Value = bytes.Clone(r.Key), bytes.Clone(r.Value) // nil stays nil: a null key or value
	c.Headers = CopyHeaders(r.Headers)
	return c
}

// dirtyAppID is the application id, in the dirty records table, of the
// offsets of tp that the destination table dest has left out records of
// up to: "<dest>/<topic>/<partition>". The tables of one destination
// schema share the dirty records table, and each has its own ids there.
func dirtyAppID(dest string, tp kafka.TopicPartition) string {
	return fmt.Sprintf("%s/%s/%d", dest, tp.Topic, tp.Partition)
}

// DirtyTable writes the [spec.DirtyRecordsTable] of one destination schema,
// which every table of the schema, of pipelines and fanout schemas alike,
// leaves its bad records in. A table locks its folder for one writer (see
// [table.Open]), so the writers of one process take turns: each commit
// opens the table, writes and commits, and closes it. Bad records are
// rare, and a table that is closed between commits holds no lock that
// would outlive the pipelines using it.
type DirtyTable struct {
	dir string
	// Qualified is "<catalog>.<schema>._dirty_records", for messages.
	Qualified string
	mu        sync.Mutex
	letters   *Letters
	// collected says garbage collection ran once: what a crash left.
	collected bool
}

// dirtyTables holds the dirty records tables of the process, by folder.
// It is process-wide, as the folder locks are: two pipelines of one
// destination schema, in different managers or not, must take turns.
var dirtyTables = struct {
	mu sync.Mutex
	m  map[string]*DirtyTable
}{m: map[string]*DirtyTable{}}

// DirtyTableAt returns the dirty records table in folder dir, named
// qualified.
func DirtyTableAt(dir, qualified string) *DirtyTable {
	dirtyTables.mu.Lock()
	defer dirtyTables.mu.Unlock()
	d, ok := dirtyTables.m[dir]
	if !ok {
		d = &DirtyTable{dir: dir, Qualified: qualified}
		dirtyTables.m[dir] = d
	}
	return d
}

// Commit writes recs, the bad records of destination table dest, and
// records for each partition of next (the offsets the table's own commit
// will record) that the table's bad records up to there are in. It is
// called before the table's own commit: after a crash between the two, the
// table reads the records again and offers them again, and those below the
// offset recorded here are dropped rather than written twice.
func (d *DirtyTable) Commit(dest string, recs []DirtyRecord, next map[kafka.TopicPartition]int64, opts table.Options) error {
	return d.CommitAs(dest, dest, recs, next, opts)
}

// CommitAs is commit with the offsets recorded under id (see [dirtyAppID])
// and dest, which may differ, as the rows' table column.
func (d *DirtyTable) CommitAs(id, dest string, recs []DirtyRecord, next map[kafka.TopicPartition]int64, opts table.Options) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	opts.Owner = "dirty records of " + opts.Owner
	tbl, err := table.Open(d.dir, opts)
	if err != nil {
		return fmt.Errorf("open %s: %w", d.Qualified, err)
	}
	defer tbl.Close()
	if !d.collected {
		if _, err := tbl.CollectGarbage(); err != nil {
			opts.Logger.Warn("garbage collection failed", "table", d.Qualified, "err", err)
		}
		d.collected = true
	}
	snap := tbl.Snapshot()
	if snap.Schema != nil {
		if err := table.CheckSchemaChange(snap.Schema, DirtyColumns); err != nil {
			return runner.Fatal(fmt.Errorf("%s: %w", d.Qualified, err))
		}
	}
	c := table.Commit{Schema: DirtyColumns, Txns: map[string]int64{}, From: map[string]int64{}}
	keep := make([]record.Record, 0, len(recs))
	reasons := make([]DirtyRecord, 0, len(recs))
	for i := range recs {
		r := &recs[i]
		tp := kafka.TopicPartition{Topic: r.rec.Topic, Partition: int(r.rec.Partition)}
		app := dirtyAppID(id, tp)
		done, ok := snap.Txns[app]
		if ok && r.rec.Offset < done {
			continue // written before a crash stopped the table's commit
		}
		keep = append(keep, r.rec)
		reasons = append(reasons, *r)
		to := max(next[tp], r.rec.Offset+1)
		if ok {
			c.From[app], to = done, max(to, done)
		}
		c.Txns[app] = max(c.Txns[app], to)
	}
	if len(keep) == 0 {
		return nil
	}
	if d.letters == nil {
		if d.letters, err = NewLetters(spec.DirtyRecordsTable, DirtyColumns); err != nil {
			return runner.Fatal(err)
		}
	}
	destBytes := []byte(dest)
	batch, err := d.letters.Batch(keep, func(b *rows.Builder, i int) {
		b.Field(RawRecordWidth)
		b.Bytes(destBytes)
		b.Field(RawRecordWidth + 1)
		b.Bytes([]byte(reasons[i].Err))
		b.Field(RawRecordWidth + 2)
		b.Int64(reasons[i].at.UnixMicro())
	})
	if err != nil {
		return runner.Fatal(err)
	}
	f, err := tbl.NewFile(d.letters.B.Schema())
	if err != nil {
		return fmt.Errorf("%s: start a data file: %w", d.Qualified, err)
	}
	if err := f.WriteColumns(batch.Columns, batch.Rows); err != nil {
		f.Abort()
		return fmt.Errorf("%s: write rows: %w", d.Qualified, err)
	}
	add, err := f.Close()
	if err != nil {
		return fmt.Errorf("%s: finish data file: %w", d.Qualified, err)
	}
	c.Files = []table.AddFile{add}
	if _, err := tbl.Commit(c); err != nil {
		return fmt.Errorf("commit to %s: %w", d.Qualified, err)
	}
	return nil
}

// Rewind moves back, to the offsets of to, what the dirty records table
// records of the destination table dest's partitions: those of a topic
// that was deleted and created again, whose offsets start over (see
// a table loop's handling of re-created topics in pipeline), so that the new
// topic's bad records are not taken
// for records written already. It runs before the table's own commit of
// the new offsets: a crash in between makes the table rewind again.
func (d *DirtyTable) Rewind(dest string, to map[kafka.TopicPartition]int64, opts table.Options) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	snap, err := table.ReadSnapshot(d.dir)
	if err != nil {
		return fmt.Errorf("read %s: %w", d.Qualified, err)
	}
	c := table.Commit{Txns: map[string]int64{}, From: map[string]int64{}}
	for tp, next := range to {
		id := dirtyAppID(dest, tp)
		if done, ok := snap.Txns[id]; ok && done > next {
			c.Txns[id], c.From[id] = next, done
			c.Rewinds = append(c.Rewinds, id)
		}
	}
	if len(c.Txns) == 0 {
		return nil
	}
	opts.Owner = "dirty records of " + opts.Owner
	tbl, err := table.Open(d.dir, opts)
	if err != nil {
		return fmt.Errorf("open %s: %w", d.Qualified, err)
	}
	defer tbl.Close()
	if _, err := tbl.Commit(c); err != nil {
		return fmt.Errorf("rewind the offsets of %s in %s: %w", dest, d.Qualified, err)
	}
	return nil
}

// ErrorBudget is what a sink with kafka_options.ignore_errors does with
// the records it cannot decode: it leaves them out of its table, keeps
// them in dirty, and fails once more than max of them (-1: no limit) are
// counted in the table's log.
type ErrorBudget struct {
	// dest is the destination table's name, the dirty rows' table column.
	dest  string
	max   int64
	dirty *DirtyTable
	// opts are the options the dirty table opens with.
	opts table.Options
}

// NewErrorBudget returns the error budget of ko's table dest, whose bad
// records go to the dirty records table in folder dir named qualified;
// nil without ignore_errors.
func NewErrorBudget(ko *spec.KafkaOptions, dest, dir, qualified string, opts table.Options) *ErrorBudget {
	if !ko.IgnoresErrors() {
		return nil
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &ErrorBudget{dest: dest, max: ko.MaxErrors(), dirty: DirtyTableAt(dir, qualified), opts: opts}
}

// exceeded returns the error of a table that counted prior bad records
// and has a chunk of recs with more, bad, when they are more than the
// budget; nil within it.
func (e *ErrorBudget) exceeded(prior int64, recs []record.Record, bad []decode.BadRecord) error {
	n := prior + int64(len(bad))
	if e.max < 0 || n <= e.max {
		return nil
	}
	// The first record past the limit.
	first := bad[max(0, min(e.max-prior, int64(len(bad)-1)))]
	past := &recs[first.Record]
	return runner.Fatal(fmt.Errorf("%d records of table %s did not decode, more than kafka_options.error_tolerance_max_count "+
		"(%d) allows, the first past it %s[%d]@%d (%v); the table committed the records before that record's chunk, "+
		"and the bad ones among them are in %s: fix the data or the schema, or raise error_tolerance_max_count (-1 for no limit), "+
		"and apply again to resume from there",
		n, e.dest, e.max, past.Topic, past.Partition, past.Offset, first.Err, e.dirty.Qualified))

}

// DirtyQualified returns "<catalog>.<schema>._dirty_records".
func DirtyQualified(catalog, schemaName string) string {
	return strings.Join([]string{catalog, schemaName, spec.DirtyRecordsTable}, ".")
}

// CopyHeaders returns a copy of hs that does not point into the fetched
// records; a null value stays null and an empty one empty.
func CopyHeaders(hs []record.Header) []record.Header {
	if len(hs) == 0 {
		return nil
	}
	out := make([]record.Header, len(hs))
	for i, h := range hs {
		out[i] = record.Header{Key: h.Key, Value: bytes.Clone(h.Value)}
	}
	return out
}
