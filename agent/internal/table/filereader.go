package table

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// ErrNoPartitionColumns is wrapped by the error of [Table.OpenFile] for a
// data file of a partitioned table that lacks a partition column: one
// another engine wrote (Spark keeps partition values in the log only).
// Its rows cannot be rewritten without their values; the file is left as
// it is.
var ErrNoPartitionColumns = errors.New("the data file lacks the table's partition columns")

// FileReader reads the rows of one data file in a table's columns, a batch
// at a time, so that the rows of a file of millions are never held in
// memory all at once: see [Table.OpenFile]. It is not safe for concurrent use.
type FileReader struct {
	// Schema is [rows.Schema] of the table's columns, the rows' schema:
	// what [Table.NewFile] takes to write them.
	Schema *parquet.Schema
	// PartitionValues are the file's partition values, in the table's
	// order of partition columns, for [Table.NewPartitionFile]; nil in an
	// unpartitioned table.
	PartitionValues []PartitionValue

	name       string // the file and its table, for errors
	f          storage.File
	fileSchema *parquet.Schema
	conv       parquet.Conversion
	groups     []parquet.RowGroup
	rows       parquet.Rows // the rows of groups[0], nil before it is opened
	total      int64
	// held is the size of the file when it was read whole into memory.
	held   int64
	leaves int
	buf    []parquet.Row
}

// OpenFile opens data file path, relative to the table, to read its rows
// into the leaf columns of [rows.Schema] of the table's latest columns, as
// [ChangeReader.ReadFile] does: column mapping is followed, a column the
// file lacks is null, and a column widened since is read widened. The
// table's mutex is held only to copy the columns, not while reading. A
// file of at most whole bytes is read whole, in one read, rather than a
// read per page (see [FileReader.Held]); pass [WholeFileBytes] unless
// memory is short.
//
// A partitioned table's files written by this package hold its partition
// columns too (see [Partitioning]); a file without them is refused with
// [ErrNoPartitionColumns] rather than read as null. A file no longer in
// the table (another writer removed it) is a [*RewriteConflictError]. The
// caller must close the reader.
func (t *Table) OpenFile(path string, whole int64) (*FileReader, error) {
	t.mu.Lock()
	fields, mapping := t.st.schema, t.st.mapping
	var parts []string
	if t.st.meta != nil {
		parts = t.st.meta.PartitionColumns
	}
	live, ok := t.st.files[path]
	version := t.st.version
	t.mu.Unlock()
	if !ok {
		// Another writer removed it since the caller listed the files.
		return nil, &RewriteConflictError{Version: version, Path: path}
	}
	ps, err := rows.Schema(fields)
	if err != nil {
		return nil, fmt.Errorf("the schema of table %s: %w", t.s, err)
	}
	r, err := openDataFile(t.s, ps, mapping, path, whole)
	if err != nil {
		return nil, err
	}
	for _, c := range parts {
		r.PartitionValues = append(r.PartitionValues, PartitionValue{Column: c, Value: live.add.PartitionValues[c]})
		physical := c
		if mc, ok := mapping.column(schema.FieldPath(c)); ok {
			physical = mc.physical
		}
		if !hasField(r.fileSchema, physical) {
			_ = r.Close()
			return nil, fmt.Errorf("%s, column %s: %w", r.name, c, ErrNoPartitionColumns)
		}
	}
	return r, nil
}

// openDataFile opens data file path of the table in s to read it as rows
// of ps, the [rows.Schema] of the table's columns, whose column mapping is
// mapping (nil without one), reading it whole when it is no bigger than
// whole bytes.
func openDataFile(s storage.Store, ps *parquet.Schema, mapping *columnMapping, path string, whole int64) (*FileReader, error) {
	r := &FileReader{Schema: ps, name: fmt.Sprintf("data file %s of table %s", path, s), leaves: len(ps.Columns())}
	f, err := s.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	r.f = f
	if err := r.open(ps, mapping, whole); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("%s: %w", r.name, err)
	}
	return r, nil
}

// open reads the footer of r's file (the whole file when it is no bigger
// than whole bytes) and prepares the conversion of its rows to ps, the
// table's columns under mapping.
func (r *FileReader) open(ps *parquet.Schema, mapping *columnMapping, whole int64) (err error) {
	defer func() {
		// parquet-go panics on some damaged files: that is an error too.
		if p := recover(); p != nil {
			err = fmt.Errorf("the Parquet reader failed: %v", p)
		}
	}()
	physical := ps
	if mapping != nil {
		physical = physicalSchema(ps, mapping)
	}
	var at io.ReaderAt = r.f
	if size := r.f.Size(); size <= whole {
		// One read rather than one per page: on object storage each is a
		// request.
		buf := make([]byte, size)
		if n, err := r.f.ReadAt(buf, 0); n < len(buf) {
			return fmt.Errorf("reading it whole: %w", cmp.Or(err, io.ErrUnexpectedEOF))
		}
		at, r.held = bytes.NewReader(buf), size
	}
	pf, err := parquet.OpenFile(at, r.f.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return err
	}
	if r.conv, err = parquet.Convert(physical, pf.Schema()); err != nil {
		return fmt.Errorf("the file's columns do not fit the table's: %w", err)
	}
	r.fileSchema, r.groups, r.total = pf.Schema(), pf.RowGroups(), pf.NumRows()
	return nil
}

// WholeFileBytes is the size up to which a data file is read whole when
// opened, in one read, rather than a read per page (a ranged request per
// page on object storage, dozens for a file of many columns).
const WholeFileBytes = 16 << 20

// Held returns the bytes of the file the reader holds in memory until it
// is closed: the whole file, when it was read whole, else none.
func (r *FileReader) Held() int64 { return r.held }

// NumRows returns the number of rows in the file, as its footer says.
func (r *FileReader) NumRows() int64 { return r.total }

// Read reads the next rows of the file, at most limit of them, column by
// column, as a [rows.Builder] would have built them: per leaf column of
// Schema, the value of every row, with its levels. The values do not
// alias the file's buffers. It reads fewer than limit rows only at the end
// of the file, and returns io.EOF when no rows are left.
func (r *FileReader) Read(limit int) (cols [][]parquet.Value, n int, err error) {
	defer func() {
		if p := recover(); p != nil {
			cols, n, err = nil, 0, fmt.Errorf("%s: the Parquet reader failed: %v", r.name, p)
		}
	}()
	cols = make([][]parquet.Value, r.leaves)
	if r.buf == nil {
		r.buf = make([]parquet.Row, 256)
	}
	for n < limit {
		if r.rows == nil {
			if len(r.groups) == 0 {
				break
			}
			r.rows = parquet.ConvertRowGroup(r.groups[0], r.conv).Rows()
			r.groups = r.groups[1:]
		}
		k, err := r.rows.ReadRows(r.buf[:min(len(r.buf), limit-n)])
		for _, row := range r.buf[:k] {
			for _, v := range row {
				c := v.Column()
				if c < 0 || c >= len(cols) {
					return nil, 0, fmt.Errorf("%s: row %d has a value of column %d, of %d", r.name, n, c, len(cols))
				}
				cols[c] = append(cols[c], v.Clone())
			}
			n++
		}
		if errors.Is(err, io.EOF) {
			_ = r.rows.Close()
			r.rows = nil
		} else if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", r.name, err)
		}
	}
	if n == 0 {
		return nil, 0, io.EOF
	}
	return cols, n, nil
}

// Close closes the file.
func (r *FileReader) Close() error {
	if r.rows != nil {
		_ = r.rows.Close()
		r.rows = nil
	}
	return r.f.Close()
}

// hasField reports whether the Parquet schema ps has a top-level field name.
func hasField(ps *parquet.Schema, name string) bool {
	for _, f := range ps.Fields() {
		if f.Name() == name {
			return true
		}
	}
	return false
}

// readDataFile reads the whole of data file path of the table in s as rows
// of ps, as openDataFile opens it.
func readDataFile(s storage.Store, ps *parquet.Schema, mapping *columnMapping, path string) (cols [][]parquet.Value, n int, err error) {
	r, err := openDataFile(s, ps, mapping, path, WholeFileBytes)
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	cols, n, err = r.Read(math.MaxInt)
	if errors.Is(err, io.EOF) {
		return make([][]parquet.Value, r.leaves), 0, nil
	}
	return cols, n, err
}
