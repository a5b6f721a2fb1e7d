package compaction

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
)

// Options configures one pass of [Run].
type Options struct {
	// TargetSize is the size in bytes the new files aim at: the pipeline's
	// target_file_size_mb. The table's delta.targetFileSize, when another
	// engine set it, wins. It must be positive.
	TargetSize int64
	// Memory, when set, holds the memory the pass holds, for as long as
	// it holds it: the file being read when it was read whole (see
	// [table.FileReader.Held]) for as long as it is read, the new file's
	// buffered row group until it is written (and, on an object store,
	// its upload's buffers until the file is complete), and each batch of rows
	// decoded (a file is read a batch of at most 16,384 rows at a time)
	// until it is written. The pass reserves more before each batch and
	// gives back what it no longer holds after it; it gives back
	// everything by the time Run returns.
	Memory Memory
	// MaxMemory, when positive, is the most memory the pass holds at
	// once: it reads files of more than half of it a page at a time
	// rather than whole, reads smaller batches, and writes the new file's
	// row group early, to stay within it. An object store upload's
	// buffers (up to three 5 MiB parts) come on top: writing a row group
	// does not free them.
	MaxMemory int64
	// Pace, when set, is called after each batch with the time the pass
	// spent on it, and after each commit with the time spent closing the
	// new file and committing, so that the caller can cap the pass's CPU
	// share (by sleeping busy*(1-share)/share, say). An error stops the
	// pass.
	Pace func(ctx context.Context, busy time.Duration) error
}

// Memory is where a pass of [Run] reserves the memory it holds: a memory
// budget, say.
type Memory interface {
	// Reserve takes n more bytes, waiting for room if it must. An error
	// stops the pass.
	Reserve(ctx context.Context, n int64) error
	// Release gives back n bytes of those reserved.
	Release(n int64)
}

// Result says what a pass of [Run] did.
type Result struct {
	// Bins is the number of bins planned.
	Bins int
	// Commits is the number of rewrite commits made, one per bin.
	Commits int
	// FilesRemoved and FilesAdded count the files the commits removed
	// and added.
	FilesRemoved, FilesAdded int
	// BytesRemoved and BytesAdded are their sizes.
	BytesRemoved, BytesAdded int64
	// Rows is the number of rows rewritten.
	Rows int64
	// Skipped counts the bins left as they are because a file of theirs,
	// in a partitioned table, lacks the partition columns (another engine
	// wrote it; see [table.ErrNoPartitionColumns]).
	Skipped int
	// GaveWay is set when a rewrite gave way to another writer that
	// removed one of its files first; the pass stopped there.
	GaveWay *table.RewriteConflictError
}

// valueSize is the size of one decoded Parquet value, held for every value
// of the rows being rewritten, besides the bytes of strings and binaries.
const valueSize = int64(unsafe.Sizeof(parquet.Value{}))

// expansion is how many times its size in bytes a data file's strings and
// binaries are taken to fill once decompressed, for [batchMemory]:
// snappy-compressed text rarely shrinks to less than a quarter.
const expansion = 4

// readBatchRows is how many rows of a file a pass reads, holds and writes
// at a time: a file compaction wrote before holds millions of rows, which
// decoded would take gigabytes, and a bin may start with one. With 50 leaf
// columns a batch holds about 20 MB of values.
const readBatchRows = 16 * 1024

// batchMemory returns the bytes a pass holds in memory while it rewrites
// rows rows of f, a file of a table with leaves leaf columns, of which
// the file holds fileRows: their values decoded, and their share of the
// file's bytes decompressed.
func batchMemory(f table.LiveFile, fileRows, rows int64, leaves int) int64 {
	return rows*int64(leaves)*valueSize + f.Size*expansion*rows/max(fileRows, 1)
}

// Run makes one compaction pass over tbl: it plans bins from the table's
// live files (see [Plan]) and rewrites each bin into one new file, reading
// its files one at a time in the table's current columns, a batch of at
// most 16,384 rows at a time, and writing the rows as they are read, so
// that a pass holds one batch (and the file it came from, when it was
// read whole) and the new file's row group in memory at most, within
// [Options.MaxMemory] when set. Each bin is a commit of its own, so that a
// conflict loses the work of one bin only and ingestion commits
// interleave with the pass.
//
// When another writer removed a file of a bin first, the rewrite gives way:
// its new file is deleted, [Result.GaveWay] says which file, and the pass
// stops, since the other writer is likely compacting the table now; the
// next pass plans from what it left. When ctx ends, the pass stops and
// deletes the file it has not committed, and returns ctx's error. On any
// other error the result says what was committed before it; an error of a
// commit leaves that commit's outcome unknown, as for
// [table.Table.CommitRewrite], and the caller reopens the table as after a
// failed ingestion commit.
func Run(ctx context.Context, tbl *table.Table, opts Options) (Result, error) {
	var res Result
	if opts.TargetSize <= 0 {
		return res, fmt.Errorf("compaction: target size %d is not positive", opts.TargetSize)
	}
	snap := tbl.Snapshot()
	target := opts.TargetSize
	if size, ok, err := table.TargetFileSize(snap.Configuration); err != nil {
		return res, fmt.Errorf("compaction: %w", err)
	} else if ok {
		target = size
	}
	leaves := 1
	if ps, err := rows.Schema(snap.Schema); err == nil {
		leaves = max(len(ps.Columns()), 1)
	}
	bins := Plan(tbl.Files(), target)
	res.Bins = len(bins)
	for _, b := range bins {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("compaction: %w", err)
		}
		adds, n, closing, err := rewriteBin(ctx, tbl, b, leaves, opts)
		var gone *table.RewriteConflictError
		if errors.As(err, &gone) {
			res.GaveWay = gone // a file of the bin was removed since planning
			return res, nil
		}
		if errors.Is(err, table.ErrNoPartitionColumns) {
			// Another engine's files: their rows lack their partition
			// values, so the bin stays as it is.
			res.Skipped++
			continue
		}
		if err != nil {
			return res, fmt.Errorf("compaction: %w", err)
		}
		if err := ctx.Err(); err != nil {
			tbl.Discard(adds)
			return res, fmt.Errorf("compaction: %w", err)
		}
		removes := make([]string, len(b.Files))
		for i, f := range b.Files {
			removes[i] = f.Path
		}
		start := time.Now()
		_, err = tbl.CommitRewrite(table.Rewrite{Removes: removes, Adds: adds})
		var conflict *table.RewriteConflictError
		if errors.As(err, &conflict) {
			res.GaveWay = conflict
			return res, nil
		}
		if err != nil {
			return res, fmt.Errorf("compaction: %w", err)
		}
		// Closing the new file (its last row group encoded and written)
		// and the commit are the pass's work too.
		if opts.Pace != nil {
			if err := opts.Pace(ctx, closing+time.Since(start)); err != nil {
				return res, fmt.Errorf("compaction: pacing: %w", err)
			}
		}
		res.Commits++
		res.FilesRemoved += len(b.Files)
		res.BytesRemoved += b.Size
		res.FilesAdded += len(adds)
		for _, a := range adds {
			res.BytesAdded += a.Size
		}
		res.Rows += n
	}
	return res, nil
}

// rewriteBin writes the rows of b's files, in order, into new files of tbl,
// and returns them, closed and not committed, with the number of rows and
// the time spent closing the last file, which the caller paces. It
// writes one file, unless the table's columns change while it reads
// (ingestion added a column): then the rows read since are written to
// another file with the new columns. leaves is the number of leaf columns
// of the table, for [batchMemory]. On error it deletes what it wrote. It
// releases every byte it reserved before it returns.
func rewriteBin(ctx context.Context, tbl *table.Table, b Bin, leaves int, opts Options) ([]table.AddFile, int64, time.Duration, error) {
	w := &binWriter{tbl: tbl, opts: opts, leaves: leaves}
	defer w.shrink(0)
	var rows int64
	for _, f := range b.Files {
		n, err := w.copyFile(ctx, f)
		if err != nil {
			w.discard()
			return nil, 0, 0, err
		}
		rows += n
	}
	start := time.Now()
	if err := w.closeFile(); err != nil {
		w.discard()
		return nil, 0, 0, err
	}
	return w.adds, rows, time.Since(start), nil
}

// binWriter writes the rows of a bin's files into new files.
type binWriter struct {
	tbl  *table.Table
	opts Options
	// leaves is the number of leaf columns of the table.
	leaves int
	// fw is the file being written, nil before the first rows.
	fw *table.FileWriter
	// columns is the Parquet schema fw writes, as text.
	columns string
	// adds are the files written and closed.
	adds []table.AddFile
	// reserved is what the writer holds reserved in opts.Memory.
	reserved int64
}

// copyFile reads f and writes its rows, a batch at a time, and returns
// how many. Before it reads a batch, it reserves the memory it will hold
// (see [Options.Memory]); after it wrote one, it paces the pass with the
// time it spent reading and writing (not waiting for memory).
func (w *binWriter) copyFile(ctx context.Context, f table.LiveFile) (int64, error) {
	whole := int64(table.WholeFileBytes)
	if w.opts.MaxMemory > 0 {
		// Half the pass's memory at most, so that batches of rows fit
		// beside it.
		whole = min(whole, w.opts.MaxMemory/2)
	}
	fr, err := w.tbl.OpenFile(f.Path, whole)
	if err != nil {
		return 0, fmt.Errorf("opening a file to compact: %w", err)
	}
	defer func() {
		_ = fr.Close()
		w.shrink(w.buffered())
	}()
	if s := fr.Schema.String(); w.fw == nil || s != w.columns {
		if err := w.closeFile(); err != nil {
			return 0, err
		}
		// A bin holds the files of one partition: the new file goes in
		// their folder, with their partition values.
		if w.fw, err = w.tbl.NewPartitionFile(fr.Schema, fr.PartitionValues); err != nil {
			return 0, fmt.Errorf("starting a compacted file: %w", err)
		}
		w.columns = s
	}
	var done int64
	for done < fr.NumRows() {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		n, busy, err := w.copyBatch(ctx, f, fr, min(readBatchRows, fr.NumRows()-done))
		if err != nil {
			return 0, err
		}
		done += int64(n)
		if w.opts.Pace != nil {
			if err := w.opts.Pace(ctx, busy); err != nil {
				return 0, fmt.Errorf("pacing: %w", err)
			}
		}
	}
	return done, nil
}

// copyBatch reads the next rows of f (at most limit, fewer when
// MaxMemory asks) from fr and writes them, and returns how many and the
// time it spent reading and writing.
func (w *binWriter) copyBatch(ctx context.Context, f table.LiveFile, fr *table.FileReader, limit int64) (int, time.Duration, error) {
	start := time.Now()
	limit, err := w.fit(f, fr, limit)
	if err != nil {
		return 0, 0, err
	}
	if w.opts.Memory != nil {
		need := fr.Held() + w.fw.Buffered() + batchMemory(f, fr.NumRows(), limit, w.leaves)
		waited := time.Now()
		if err := w.grow(ctx, need); err != nil {
			return 0, 0, fmt.Errorf("reserving memory for data file %s: %w", f.Path, err)
		}
		start = start.Add(time.Since(waited)) // waiting for memory is not work
	}
	cols, n, err := fr.Read(int(limit))
	if errors.Is(err, io.EOF) {
		return 0, 0, fmt.Errorf("data file %s ended before the %d rows its footer counts", f.Path, fr.NumRows())
	}
	if err != nil {
		return 0, 0, fmt.Errorf("reading a file to compact: %w", err)
	}
	if err := w.fw.WriteColumns(cols, n); err != nil {
		return 0, 0, fmt.Errorf("writing the rows of data file %s: %w", f.Path, err)
	}
	// The batch's values are written: what stays is the file read whole
	// and the row group, which grew by less than the values decoded.
	w.shrink(fr.Held() + w.fw.Buffered())
	return n, time.Since(start), nil
}

// fit returns how many of the next limit rows of f, read from fr, to read
// as one batch so that the pass stays within MaxMemory, writing the new
// file's row group first if it must.
func (w *binWriter) fit(f table.LiveFile, fr *table.FileReader, limit int64) (int64, error) {
	most := w.opts.MaxMemory
	if most <= 0 {
		return limit, nil
	}
	// Writing the row group frees its part of what the file holds, not an
	// object store upload's buffers, which the reservation counts.
	if fr.Held()+w.fw.Pending()+batchMemory(f, fr.NumRows(), 1, w.leaves) > most && w.fw.Pending() > 0 {
		if err := w.fw.Flush(); err != nil {
			return 0, fmt.Errorf("writing a row group of a compacted file: %w", err)
		}
	}
	fixed := fr.Held() + w.fw.Pending()
	for limit > 1 && fixed+batchMemory(f, fr.NumRows(), limit, w.leaves) > most {
		limit = (limit + 1) / 2
	}
	return limit, nil
}

// buffered returns the bytes the new file holds (its row group, and an
// object store upload's buffers), 0 without one.
func (w *binWriter) buffered() int64 {
	if w.fw == nil {
		return 0
	}
	return w.fw.Buffered()
}

// grow reserves what the writer holds up to n bytes, when it holds less.
func (w *binWriter) grow(ctx context.Context, n int64) error {
	if w.opts.Memory == nil || n <= w.reserved {
		return nil
	}
	if err := w.opts.Memory.Reserve(ctx, n-w.reserved); err != nil {
		return err
	}
	w.reserved = n
	return nil
}

// shrink gives back what the writer holds reserved past n bytes.
func (w *binWriter) shrink(n int64) {
	if w.opts.Memory == nil || n >= w.reserved {
		return
	}
	w.opts.Memory.Release(w.reserved - n)
	w.reserved = n
}

// closeFile closes the file being written, if any, into w.adds.
func (w *binWriter) closeFile() error {
	if w.fw == nil {
		return nil
	}
	add, err := w.fw.Close()
	w.fw = nil
	w.shrink(0)
	if err != nil {
		return fmt.Errorf("closing a compacted file: %w", err)
	}
	w.adds = append(w.adds, add)
	return nil
}

// discard deletes every file w wrote.
func (w *binWriter) discard() {
	if w.fw != nil {
		w.fw.Abort()
		w.fw = nil
	}
	w.shrink(0)
	w.tbl.Discard(w.adds)
	w.adds = nil
}
