package table

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
)

// AddFile describes a data file ready to be committed.
type AddFile struct {
	// Path is the file name relative to the table folder.
	Path string
	// Size is the file size in bytes.
	Size int64
	// ModificationTime is the file's modification time.
	ModificationTime time.Time
	// NumRecords is the number of rows in the file.
	NumRecords int64
	// Stats are the file's statistics as the add action carries them (a
	// JSON object: numRecords, minValues, maxValues, nullCount); empty
	// means numRecords only.
	Stats string
	// PartitionValues are the file's partitionValues: a value for each
	// partition column of the table (see [PartitionValue.Value]); nil in
	// an unpartitioned table.
	PartitionValues map[string]string
}

// dictionaryMaxBytes bounds the dictionary of a dictionary-encoded column
// (a VARIANT's metadata): past it, the rest of the row group's pages of
// the column are written PLAIN, as parquet-mr does past its default
// dictionary page size of 1 MiB, so that values that rarely repeat do not
// grow a dictionary as large as the values themselves.
const dictionaryMaxBytes = 1 << 20

// FileWriter streams rows into one new data file, a batch of rows at a time,
// column by column: each column's values go straight to parquet-go's writer
// of that column. Rows are buffered in memory for at most
// [Options.RowGroupRows] rows, then flushed to disk as a row group. A
// FileWriter is not safe for concurrent use.
type FileWriter struct {
	t    *Table
	name string // final name, relative to the table folder
	// partition holds the file's partition values, nil for none.
	partition map[string]string
	tmp       string // its temporary name on local disk (see storage.TempName)
	out       storage.Writer
	// written counts the bytes handed to out.
	written int64
	// w is parquet-go's untyped Writer, which parquet-go deprecates for
	// GenericWriter[T]: rows are written here column by column for a
	// schema known only at run time, which the untyped Writer serves.
	w *parquet.Writer //nolint:staticcheck // see above: a schema known only at run time
	// leaves describes ps's columns, to check batches before parquet-go
	// sees them.
	leaves []leafColumn
	rows   int64
	// groupRows is the number of rows in the row group being built.
	groupRows int64
	starts    []int // WriteColumns' scratch
	// err is sticky: after a failed write the file is unusable and only
	// Abort is allowed.
	err  error
	done bool
}

// NewFile starts a data file with Parquet schema ps, one [rows.Schema]
// returned for the table's columns (on local disk, under _tmp/). The
// caller must end it with [FileWriter.Close], [FileWriter.Seal] or
// [FileWriter.Abort].
//
// In a table with column mapping, or when ps has a name that needs it (see
// [Commit.Schema]), the file stores every struct field under its physical
// name with its column id as field id; fields the table does not have yet
// are given theirs now, and the commit that adds them to the schema keeps
// them. The columns and their order stay those of ps, so rows built for ps
// are written as they are.
func (t *Table) NewFile(ps *parquet.Schema) (*FileWriter, error) {
	return t.NewPartitionFile(ps, nil)
}

// NewPartitionFile is [Table.NewFile] for a data file of a partitioned
// table whose rows all have the partition values values, one per
// partition column in the table's order: the file goes in the folder
// <column>=<value>/ of each (Hive's layout, which Spark writes), and its
// add action carries the values.
func (t *Table) NewPartitionFile(ps *parquet.Schema, values []PartitionValue) (*FileWriter, error) {
	if ps == nil {
		return nil, errors.New("new data file: nil parquet schema")
	}
	codec := t.opts.Compression
	ext := ""
	if codec.CompressionCodec() != format.Uncompressed {
		ext = strings.ToLower(codec.CompressionCodec().String())
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, fmt.Errorf("new data file: %w", errClosed)
	}
	if m := t.mappingFor(rows.FieldPaths(ps)); m != nil {
		ps = physicalSchema(ps, m)
	}
	fw := &FileWriter{t: t, name: partitionDir(values) + newDataFileName(ext), leaves: leafColumns(ps)}
	if values != nil {
		fw.partition = make(map[string]string, len(values))
		for _, v := range values {
			fw.partition[v.Column] = v.Value
		}
	}
	fw.tmp = storage.TempName(fw.name)
	cfg, err := parquet.NewWriterConfig(ps, parquet.Compression(codec), parquet.DictionaryMaxBytes(dictionaryMaxBytes))
	if err != nil {
		t.mu.Unlock()
		return nil, fmt.Errorf("new data file: %w", err)
	}
	mark := t.st.version < 0 && !t.marked
	t.pending[fw.tmp] = struct{}{}
	t.pending[fw.name] = struct{}{}
	t.mu.Unlock()
	if mark {
		if err := t.markFirstFile(); err != nil {
			t.unpend(fw.tmp)
			t.unpend(fw.name)
			return nil, fmt.Errorf("new data file: %w", err)
		}
	}
	fw.out, err = t.s.Create(fw.name)
	if err != nil {
		t.unpend(fw.tmp)
		t.unpend(fw.name)
		return nil, fmt.Errorf("new data file: %w", err)
	}
	fw.w = parquet.NewWriter(counter{fw.out, &fw.written}, cfg)
	return fw, nil
}

// Name returns the name the file will have in the table folder; until it
// is durable (see [FileWriter.Close]) it is written as _tmp/<Name>.tmp.
func (fw *FileWriter) Name() string { return fw.name }

// WriteColumns appends a batch of rows given column by column: cols[c] holds
// the values of leaf column c of the schema passed to [Table.NewFile] for
// each of the batch's rows, in row order, with the levels and column index
// [parquet.Schema.Deconstruct] gives them (what a rows.Builder builds).
// The batch is checked, a column at a time, before anything is written: a
// malformed batch is refused whole and the file stays usable. After any
// other error only [FileWriter.Abort] is left.
//
// Each column's values go to its column writer as they are, so a data page
// holds whole batches: batches of about a thousand rows keep pages near
// parquet-go's page buffer size.
func (fw *FileWriter) WriteColumns(cols [][]parquet.Value, rows int) error {
	if err := fw.usable(); err != nil {
		return err
	}
	if err := checkColumns(cols, rows, fw.leaves); err != nil {
		// Nothing of this batch was written: the file stays usable.
		return fmt.Errorf("writing rows to %s: the batch does not match the schema: %w", fw.name, err)
	}
	writers := fw.w.ColumnWriters()
	// A batch that fills the row group is split: starts holds, per column,
	// the first value not written yet.
	fw.starts = slices.Grow(fw.starts[:0], len(cols))[:len(cols)]
	clear(fw.starts)
	for done := 0; done < rows; {
		n := rows - done
		if room := fw.t.opts.RowGroupRows - fw.groupRows; int64(n) > room {
			n = int(room)
		}
		for c, values := range cols {
			start, end := fw.starts[c], len(values)
			if done+n < rows {
				end = start + rowStart(values[start:], n, fw.leaves[c].maxRep)
			}
			if _, err := writers[c].WriteRowValues(values[start:end]); err != nil {
				fw.err = fmt.Errorf("writing rows to %s: column %s: %w", fw.name, fw.leaves[c].path, err)
				return fw.err
			}
			fw.starts[c] = end
		}
		done += n
		fw.rows += int64(n)
		fw.groupRows += int64(n)
		if fw.groupRows == fw.t.opts.RowGroupRows {
			if err := fw.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Flush writes the rows buffered since the last row group as a row group
// of their own, before [Options.RowGroupRows] rows fill it: a writer short
// of memory gives up the buffered rows' memory this way, at the cost of a
// smaller row group. After an error only [FileWriter.Abort] is left.
func (fw *FileWriter) Flush() error {
	if err := fw.usable(); err != nil {
		return err
	}
	if fw.groupRows == 0 {
		return nil
	}
	if err := fw.w.Flush(); err != nil {
		fw.err = fmt.Errorf("writing a row group to %s: %w", fw.name, err)
		return fw.err
	}
	fw.groupRows = 0
	return nil
}

// SplitRows cuts cols, a batch given column by column as
// [FileWriter.WriteColumns] takes it, after its first n rows: head holds
// those rows, tail the others. Both share cols's values.
func (fw *FileWriter) SplitRows(cols [][]parquet.Value, n int) (head, tail [][]parquet.Value) {
	head, tail = make([][]parquet.Value, len(cols)), make([][]parquet.Value, len(cols))
	for c, values := range cols {
		maxRep := 0
		if c < len(fw.leaves) {
			maxRep = fw.leaves[c].maxRep
		}
		i := rowStart(values, n, maxRep)
		head[c], tail[c] = values[:i:i], values[i:]
	}
	return head, tail
}

// Rows returns the number of rows written so far.
func (fw *FileWriter) Rows() int64 { return fw.rows }

// Size returns an estimate of the file size in bytes so far, counting the
// buffered row group uncompressed; good enough to close at a target size.
func (fw *FileWriter) Size() int64 {
	if fw.done {
		return 0
	}
	return fw.w.Size()
}

// Buffered returns an estimate of the bytes the file holds in memory: what
// [FileWriter.Pending] counts, and on an object store the upload's
// buffers, which writing a row group does not free.
func (fw *FileWriter) Buffered() int64 {
	if fw.done {
		return 0
	}
	return fw.Pending() + fw.out.Held()
}

// Pending returns an estimate of the bytes of the row group being built,
// counted uncompressed as by Size, and of what is not yet handed to the
// store: what [FileWriter.Flush] frees. Unlike Size, it drops when a row
// group is written.
func (fw *FileWriter) Pending() int64 {
	if fw.done {
		return 0
	}
	return fw.w.Size() - fw.written
}

// counter is a writer that counts the bytes written through it.
type counter struct {
	w io.Writer
	n *int64
}

func (c counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	*c.n += int64(n)
	return n, err
}

// Close finishes the file and makes it durable under its final name in the
// table (on local disk: fsyncs it, moves it into the table folder and
// fsyncs the folder; on an object store: completes the upload). The file is
// not part of the table until a [Table.Commit] adds the returned AddFile.
// After an error the file is removed.
func (fw *FileWriter) Close() (AddFile, error) {
	sf, err := fw.Seal()
	if err != nil {
		return AddFile{}, err
	}
	<-sf.Done()
	return sf.add, sf.err
}

// Seal is [FileWriter.Close] that does not wait for the store: it writes
// the file's last row group and footer, and the rest (the upload's last
// part and its completion, or the fsyncs and the move into the table
// folder) goes on, on a goroutine of its own, while the caller writes the
// next file. [SealedFile.Wait] returns the file's AddFile once it is
// durable; wait for it before [Table.Close], which closes the store the
// file is finishing in (a file still finishing then fails, and garbage
// collection takes it). The FileWriter takes nothing more after Seal.
func (fw *FileWriter) Seal() (*SealedFile, error) {
	if err := fw.usable(); err != nil {
		fw.Abort()
		return nil, err
	}
	if err := fw.w.Close(); err != nil {
		fw.Abort()
		return nil, fmt.Errorf("closing %s: %w", fw.name, err)
	}
	stats, err := fileStatistics(fw.w.Schema(), fw.w.File().Metadata())
	if err != nil {
		fw.Abort()
		return nil, fmt.Errorf("closing %s: file statistics: %w", fw.name, err)
	}
	fw.done = true
	sf := &SealedFile{name: fw.name, held: fw.out.Held(), done: make(chan struct{})}
	add := AddFile{Path: fw.name, NumRecords: fw.rows, Stats: stats, PartitionValues: fw.partition}
	t, out, tmp := fw.t, fw.out, fw.tmp
	go func() {
		defer close(sf.done)
		fi, err := out.Commit()
		t.unpend(tmp)
		if err != nil {
			out.Abort()
			t.unpend(add.Path)
			sf.err = fmt.Errorf("closing %s: %w", add.Path, err)
			return
		}
		add.Size, add.ModificationTime = fi.Size, fi.ModTime
		sf.add = add
	}()
	return sf, nil
}

// SealedFile is a data file [FileWriter.Seal] finished writing, on its way
// to being durable in the store.
type SealedFile struct {
	name string
	// held is what the store's writer held in memory when the file was
	// sealed (an upload's buffers), until it is durable.
	held int64
	done chan struct{}
	add  AddFile
	err  error
}

// Wait waits until the file is durable under its final name and returns
// its AddFile; after an error the file is removed. When ctx ends first, it
// returns ctx's error and the file goes on finishing: a later Wait gets
// its outcome. Wait may be called more than once, from any goroutine.
func (sf *SealedFile) Wait(ctx context.Context) (AddFile, error) {
	select {
	case <-sf.done: // a file already durable, whatever ctx says
		return sf.add, sf.err
	default:
	}
	select {
	case <-sf.done:
		return sf.add, sf.err
	case <-ctx.Done():
		return AddFile{}, fmt.Errorf("waiting for %s to be durable: %w", sf.name, context.Cause(ctx))
	}
}

// Done returns a channel closed once the file is durable, or failed:
// [SealedFile.Wait] then returns at once.
func (sf *SealedFile) Done() <-chan struct{} { return sf.done }

// Held returns an estimate of the bytes the file still holds in memory:
// those of its upload until it completes, 0 afterwards.
func (sf *SealedFile) Held() int64 {
	select {
	case <-sf.done:
		return 0
	default:
		return sf.held
	}
}

// Abort discards the file. It may be called at any time, also after Close
// or Seal failed; after a successful Close or Seal it does nothing (an
// uncommitted closed file is left to garbage collection, and a sealed
// file whose store then fails is removed as it fails).
func (fw *FileWriter) Abort() {
	if fw.done {
		return
	}
	fw.done = true
	fw.out.Abort()
	fw.t.unpend(fw.tmp)
	fw.t.unpend(fw.name)
}

func (fw *FileWriter) usable() error {
	if fw.done {
		return fmt.Errorf("data file %s is already closed", fw.name)
	}
	return fw.err
}

// markFirstFile writes firstFileMark, before the first data file of a table
// whose log holds nothing yet.
func (t *Table) markFirstFile() error {
	if err := t.s.PutIfAbsent(firstFileMark, nil); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("marking the table's first data file: %w", err)
	}
	t.mu.Lock()
	t.marked = true
	t.mu.Unlock()
	return nil
}

func (t *Table) unpend(name string) {
	t.mu.Lock()
	delete(t.pending, name)
	t.mu.Unlock()
}
