package table

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// ErrVersionGone is wrapped by the error of [ChangeReader.Versions] for a
// version the log no longer holds (deleted after
// delta.logRetentionDuration): what it did can no longer be read one
// version at a time, only the table as it is now ([ChangeReader.Current]).
var ErrVersionGone = errors.New("log version no longer in the log")

// Meta is a table's metadata as a mirror of the table in another format
// needs it.
type Meta struct {
	// Schema is the table's columns.
	Schema []schema.Field
	// PartitionColumns are the table's partition columns, in order: their
	// values are in the files' paths and add actions, not in the files.
	PartitionColumns []string
	// Columns maps the [schema.FieldPath] of every struct field, at any
	// depth, to its name and field id in the data files, for a table with
	// column mapping; nil without it: then the files name every column by
	// its name and carry no field ids.
	Columns map[string]rows.Column
	// Configuration is the table configuration of the metaData action.
	Configuration map[string]string
}

// DataFile is one data file of the table, as an add or remove action
// names it.
type DataFile struct {
	// Path is the file's path relative to the table folder, or an
	// absolute URI for a file outside it.
	Path string
	// Size is the file's size in bytes; 0 when a remove action omits it.
	Size int64
	// PartitionValues maps each partition column to its value in the
	// file's path; a nil value is null.
	PartitionValues map[string]*string
	// Records is the number of rows in the file, -1 when its stats do
	// not say.
	Records int64
	// Stats is the add action's stats JSON (numRecords, minValues,
	// maxValues, nullCount by physical column name), empty when it has
	// none.
	Stats string
}

// VersionFiles is what one log version did to the table's files and
// metadata.
type VersionFiles struct {
	// Version is the log version.
	Version int64
	// Meta is the table's metadata after the version when the version
	// changed it (a schema change, say), nil when it did not.
	Meta *Meta
	// Added and Removed are the data files the version added and removed,
	// in the order of its actions.
	Added, Removed []DataFile
	// DataChange reports whether the version changed the table's rows:
	// false when every add and remove says dataChange false, as a
	// compaction's do.
	DataChange bool
}

// Meta returns the table's metadata as of the last version read, nil
// before the first.
func (r *ChangeReader) Meta() *Meta {
	if r.st.meta == nil {
		return nil
	}
	return metaOf(r.st.meta, r.st.schema, r.st.mapping)
}

// Current returns the version the reader has read up to, the table's
// metadata then (nil before the first commit) and its live data files,
// sorted by path. It reads no new versions: [ChangeReader.Versions] does.
func (r *ChangeReader) Current() (version int64, meta *Meta, files []DataFile) {
	meta = r.Meta()
	files = make([]DataFile, 0, len(r.st.files))
	for _, f := range r.st.files {
		files = append(files, DataFile{Path: f.add.Path, Size: f.add.Size, PartitionValues: partitionValues(f.add.PartitionValues),
			Records: f.records, Stats: f.add.Stats})
	}
	slices.SortFunc(files, func(a, b DataFile) int { return strings.Compare(a.Path, b.Path) })
	return r.st.version, meta, files
}

// Versions returns what the versions from version from on did, at most
// limit of them, in version order; none when the table has no version
// from yet. It first reads the versions committed since the last call
// (see [ChangeReader.Current]). A version the log no longer holds is an
// error wrapping [ErrVersionGone].
func (r *ChangeReader) Versions(from int64, limit int) ([]VersionFiles, error) {
	if err := r.catchUp(); err != nil {
		return nil, err
	}
	var out []VersionFiles
	for v := from; v <= r.st.version && len(out) < limit; v++ {
		e, err := r.entry(v)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s: version %d", ErrVersionGone, logName(r.s, entryName(v)), v)
		}
		if err != nil {
			return nil, err
		}
		vf := VersionFiles{Version: v}
		if e.metaData != nil {
			fields, all, err := schema.ParseSparkJSONWithMetadata(e.metaData.SchemaString)
			if err != nil {
				return nil, logError(logName(r.s, entryName(v)), fmt.Errorf("metaData schemaString: %w", err))
			}
			mapping, err := readMapping(e.metaData.Configuration, fields, all)
			if err != nil {
				return nil, logError(logName(r.s, entryName(v)), fmt.Errorf("metaData: %w", err))
			}
			vf.Meta = metaOf(e.metaData, fields, mapping)
		}
		for _, a := range e.adds {
			n, _ := numRecords(a.Stats) // parseEntry checked it
			vf.Added = append(vf.Added, DataFile{Path: a.Path, Size: a.Size, PartitionValues: partitionValues(a.PartitionValues),
				Records: n, Stats: a.Stats})
			vf.DataChange = vf.DataChange || a.DataChange
		}
		for _, rm := range e.removes {
			f := DataFile{Path: rm.Path, PartitionValues: partitionValues(rm.PartitionValues), Records: -1, Stats: rm.Stats}
			if rm.Size != nil {
				f.Size = *rm.Size
			}
			if n, err := numRecords(rm.Stats); err == nil {
				f.Records = n
			}
			vf.Removed = append(vf.Removed, f)
			vf.DataChange = vf.DataChange || rm.DataChange
		}
		out = append(out, vf)
	}
	return out, nil
}

// catchUp reads the versions committed since the reader last looked.
func (r *ChangeReader) catchUp() error {
	for {
		_, err := readVersion(r.s, r.st, r.st.version+1)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// entry reads and parses log version v; a version the log does not hold
// is an error wrapping [fs.ErrNotExist].
func (r *ChangeReader) entry(v int64) (*entry, error) {
	name := logName(r.s, entryName(v))
	data, err := r.s.Read(logPath(v))
	if err != nil {
		return nil, fmt.Errorf("reading log: %w", err)
	}
	e, err := parseEntry(data)
	if err != nil {
		return nil, logError(name, err)
	}
	return e, nil
}

// metaOf returns the [Meta] of metadata action m, whose schema is fields
// and column mapping mapping.
func metaOf(m *metadataAction, fields []schema.Field, mapping *columnMapping) *Meta {
	meta := &Meta{Schema: slices.Clone(fields), PartitionColumns: slices.Clone(m.PartitionColumns),
		Configuration: maps.Clone(m.Configuration)}
	if mapping != nil {
		meta.Columns = make(map[string]rows.Column, len(mapping.cols))
		for k, c := range mapping.cols {
			meta.Columns[k] = rows.Column{Name: c.physical, ID: c.id}
		}
	}
	return meta
}

// partitionValues returns the partition values of an add or remove
// action. An empty value is null: the protocol says so for every type,
// and a JSON null decodes to an empty string here.
func partitionValues(pv map[string]string) map[string]*string {
	if pv == nil {
		return nil
	}
	out := make(map[string]*string, len(pv))
	for k, v := range pv {
		if v == "" {
			out[k] = nil
		} else {
			out[k] = &v
		}
	}
	return out
}
