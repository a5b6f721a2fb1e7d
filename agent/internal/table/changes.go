package table

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// ErrNotChangelog is wrapped by the error of [ChangeReader.Changes] for a
// version that no changelog of appends can carry: one the log no longer
// holds, or one that removed rows. Reading again does not help.
var ErrNotChangelog = errors.New("not a changelog of appends")

// ChangeReader reads the rows a table's commits appended, version by
// version, without locking the table or changing anything in it: a
// Kafka sink reads the changelog of a table a pipeline writes this way
// while the pipeline writes it. It is not safe for concurrent use.
type ChangeReader struct {
	s  storage.Store
	st *state
}

// Change is what one log version appended to the table.
type Change struct {
	// Version is the log version.
	Version int64
	// Files are the data files the version added, relative to the table,
	// in the order of its add actions; none for a version that added no
	// rows (a schema change, a compaction).
	Files []string
}

// OpenChanges opens the table at location (see [Open]) for reading its
// changes. A folder without a log yet is a table with no version: its
// changes come as it gets them. The caller must [ChangeReader.Close] it.
func OpenChanges(location string) (*ChangeReader, error) {
	s, err := storage.Open(location, DefaultFileMode) // creates nothing
	if err != nil {
		return nil, err
	}
	if err := checkFolder(s); err != nil {
		_ = s.Close()
		return nil, err
	}
	st, err := replay(s)
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	return &ChangeReader{s: s, st: st}, nil
}

// Close releases the reader's store.
func (r *ChangeReader) Close() error { return r.s.Close() }

// Schema returns the table's columns as of the latest version read, nil
// before the first commit.
func (r *ChangeReader) Schema() []schema.Field { return r.st.schema }

// Changes returns what the versions from version from on appended, at
// most limit of them, in version order; none when the table has no
// version from yet. It first reads the versions committed since the last
// call, so the schema ([ChangeReader.Schema]) is the latest one.
//
// Only appends are changes: an add action with dataChange false (a
// compaction by another engine) adds no rows, and its remove actions
// neither. A remove with dataChange true deletes rows, which an append
// changelog cannot tell: that version is an error. So is a version the
// log no longer holds (deleted after delta.logRetentionDuration). Both
// wrap [ErrNotChangelog].
func (r *ChangeReader) Changes(from int64, limit int) ([]Change, error) {
	if err := r.catchUp(); err != nil {
		return nil, err
	}
	var out []Change
	for v := from; v <= r.st.version && len(out) < limit; v++ {
		name := logName(r.s, entryName(v))
		e, err := r.entry(v)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s: log version %d is no longer in the log (deleted after delta.logRetentionDuration): "+
				"its changes cannot be read", ErrNotChangelog, name, v)
		}
		if err != nil {
			return nil, err
		}
		c := Change{Version: v}
		for _, rm := range e.removes {
			if rm.DataChange {
				return nil, fmt.Errorf("%w: %s: version %d removes data file %q: rows were deleted or rewritten, "+
					"which a changelog of appends cannot carry", ErrNotChangelog, name, v, rm.Path)
			}
		}
		for _, a := range e.adds {
			if a.DataChange {
				c.Files = append(c.Files, a.Path)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// ReadFile reads data file path, relative to the table, into the leaf
// columns of [rows.Schema] of the table's latest columns
// ([ChangeReader.Schema]), as a [rows.Builder] would have built them: per
// leaf column, the value of every row, with its levels. Column mapping is
// followed (the file's columns are found by their physical names); a
// column the file lacks, being older than the column, is null, and a
// column Delta's type widening widened since is read widened. The values
// do not alias the file's buffers.
func (r *ChangeReader) ReadFile(path string) (cols [][]parquet.Value, n int, err error) {
	ps, err := rows.Schema(r.st.schema)
	if err != nil {
		return nil, 0, fmt.Errorf("the schema of table %s: %w", r.s, err)
	}
	return readDataFile(r.s, ps, r.st.mapping, path)
}
