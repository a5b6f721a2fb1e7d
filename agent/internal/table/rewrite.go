package table

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"
)

// LiveFile is a data file of the table's latest version, as a compaction
// planner sees it.
type LiveFile struct {
	// Path is the file name relative to the table folder.
	Path string
	// Size is the file size in bytes.
	Size int64
	// PartitionValues are the file's partition values, by partition
	// column; empty in an unpartitioned table.
	PartitionValues map[string]string
	// NumRecords is the number of rows in the file, -1 when its stats do
	// not say.
	NumRecords int64
	// Version is the log version that added the file; for a file read
	// from a checkpoint, the checkpoint's version.
	Version int64
	// ModificationTime is the file's modification time as its add action
	// records it.
	ModificationTime time.Time
}

// Files returns the live data files of the latest version this Table has
// read or written, ordered by the version that added them, then by
// modification time and path: the order their rows were ingested in.
func (t *Table) Files() []LiveFile {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]LiveFile, 0, len(t.st.files))
	for path, f := range t.st.files {
		out = append(out, LiveFile{
			Path:             path,
			Size:             f.add.Size,
			PartitionValues:  maps.Clone(f.add.PartitionValues),
			NumRecords:       f.records,
			Version:          f.version,
			ModificationTime: time.UnixMilli(f.add.ModificationTime),
		})
	}
	slices.SortFunc(out, func(a, b LiveFile) int {
		return cmp.Or(cmp.Compare(a.Version, b.Version), a.ModificationTime.Compare(b.ModificationTime), cmp.Compare(a.Path, b.Path))
	})
	return out
}

// Rewrite is a log entry that replaces live data files by new files holding
// the same rows: a compaction. It changes no data (dataChange false), no
// offsets and no table property.
type Rewrite struct {
	// Removes are the paths of the live files whose rows the new files hold.
	// They must all have the same partition values.
	Removes []string
	// Adds are the new files, as returned by [FileWriter.Close] or
	// [SealedFile.Wait]; they get
	// the partition values of the removed files.
	Adds []AddFile
}

// operationRewrite is the operation of a rewrite's commitInfo, as Spark's
// OPTIMIZE writes it. Its entries carry no counters (see [Snapshot.Counters]).
const operationRewrite = "OPTIMIZE"

// Operation metrics of a rewrite commit, named as Spark's OPTIMIZE names
// them.
const (
	MetricRemovedFiles = "numRemovedFiles"
	MetricRemovedBytes = "numRemovedBytes"
	MetricAddedBytes   = "numAddedBytes"
)

// RewriteConflictError is returned by [Table.CommitRewrite] when a file the
// rewrite removes is no longer live: another engine's compaction or a
// delete removed it since the rewrite read it. The rewrite gives way:
// [Table.CommitRewrite] has deleted its new files, and nothing was lost,
// since the rows are in whatever replaced the file.
type RewriteConflictError struct {
	// Version is the latest log version read, which no longer has Path.
	Version int64
	// Path is the file the rewrite meant to remove.
	Path string
}

// Error names the file and the version, and says what happened.
func (e *RewriteConflictError) Error() string {
	return fmt.Sprintf("rewrite conflict: data file %q is no longer in the table at version %d (another writer compacted or deleted it); the rewrite gave way and deleted its new files",
		e.Path, e.Version)
}

// CommitRewrite writes one log entry that removes the files of r.Removes and
// adds those of r.Adds, both with dataChange false, with a commitInfo shaped
// like Spark's OPTIMIZE, and returns its version. Readers of the table's
// changes skip it ([ChangeReader.Changes]) and its counters
// ([Snapshot.Counters]) stay as they were.
//
// As [Table.Commit] does, it reads the entries other writers committed
// first, and again after losing a race for a version; ingestion commits,
// which only add files, never stop it. When a file of r.Removes is no
// longer live, it deletes r.Adds and returns [*RewriteConflictError]. The
// table's mutex is held for the commit only, as by [Table.Commit]. Other
// errors leave the outcome unknown, as those of [Table.Commit] do.
func (t *Table) CommitRewrite(r Rewrite) (int64, error) {
	if err := checkRewrite(r); err != nil {
		return 0, fmt.Errorf("commit rewrite: %w", err)
	}
	return t.publish("commit rewrite", r.Adds, func() ([]action, *entry, error) {
		for _, p := range r.Removes {
			if _, ok := t.st.files[p]; !ok {
				t.dropFiles(r.Adds)
				return nil, nil, &RewriteConflictError{Version: t.st.version, Path: p}
			}
		}
		if err := t.checkFiles(r.Adds); err != nil {
			return nil, nil, fmt.Errorf("commit rewrite: %w", err)
		}
		actions, e, err := t.buildRewrite(r)
		if err != nil {
			return nil, nil, fmt.Errorf("commit rewrite: %w", err)
		}
		return actions, e, nil
	}, nil)
}

// Discard deletes data files written for a commit that will not be made
// (a compaction cancelled after closing them), as a lost conflict would.
func (t *Table) Discard(files []AddFile) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dropFiles(files)
}

// checkRewrite validates r before anything is written.
func checkRewrite(r Rewrite) error {
	if len(r.Removes) == 0 {
		return errors.New("a rewrite removes at least one file")
	}
	seen := map[string]bool{}
	for _, p := range r.Removes {
		if seen[p] {
			return fmt.Errorf("file %q is removed twice", p)
		}
		seen[p] = true
	}
	return checkAdds(r.Adds, seen)
}

// buildRewrite returns the actions of r's entry at the version after t.st,
// and the same entry as replay would decode it. Every file of r.Removes is
// live. t.mu must be held.
func (t *Table) buildRewrite(r Rewrite) ([]action, *entry, error) {
	st := t.st
	if err := checkFormat(st.meta, t.s.String()); err != nil {
		return nil, nil, err
	}
	now := t.opts.Now().UnixMilli()
	e := &entry{}
	var actions []action
	parts := st.files[r.Removes[0]].add.PartitionValues
	var removedBytes, addedBytes int64
	extended := true
	for _, p := range r.Removes {
		add := st.files[p].add
		if !maps.Equal(add.PartitionValues, parts) {
			return nil, nil, fmt.Errorf("files %q and %q have different partition values: a rewrite stays within one partition", r.Removes[0], p)
		}
		size := add.Size
		rm := &removeAction{
			Path:                 p,
			DeletionTimestamp:    &now,
			DataChange:           false,
			ExtendedFileMetadata: &extended,
			PartitionValues:      add.PartitionValues,
			Size:                 &size,
			Stats:                add.Stats,
		}
		e.removes = append(e.removes, rm)
		wire := *rm
		wire.Path = encodePath(p)
		actions = append(actions, action{Remove: &wire})
		removedBytes += size
	}
	for _, f := range r.Adds {
		if len(f.PartitionValues) > 0 && !maps.Equal(f.PartitionValues, parts) {
			return nil, nil, fmt.Errorf("new file %q has partition values %v, not those of the files it replaces (%v)", f.Path, f.PartitionValues, parts)
		}
		add, wire := addActionOf(f, parts, false)
		e.adds = append(e.adds, add)
		actions = append(actions, wire)
		addedBytes += f.Size
	}
	info := &commitInfo{
		Timestamp: now,
		Operation: operationRewrite,
		OperationParameters: map[string]string{
			"predicate": "[]",
			"zOrderBy":  "[]",
			"auto":      strconv.FormatBool(false),
		},
		IsBlindAppend: false,
		OperationMetrics: map[string]metric{
			MetricRemovedFiles: metric(len(r.Removes)),
			MetricRemovedBytes: metric(removedBytes),
			MetricAddedFiles:   metric(len(r.Adds)),
			MetricAddedBytes:   metric(addedBytes),
		},
		EngineInfo: engineInfo,
	}
	rv := st.version
	info.ReadVersion = &rv
	actions = append([]action{{CommitInfo: info}}, actions...)
	return actions, e, nil
}
