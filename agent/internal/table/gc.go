package table

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
)

// CollectGarbage deletes what crashed or losing writers of this package
// left behind, and nothing else. Candidates are, only in a table this
// package created (see below):
//
//   - data files in the table folder, or in a partitioned table's
//     partition folders (<column>=<value>/), named like the ones this package writes that no
//     add or remove action of the log names, and their temporary names
//     there;
//   - files under _tmp/ named like this package's temporary data files;
//   - this package's temporary log files (entries, checkpoints and
//     _last_checkpoint being written) in _delta_log/.
//
// A candidate is deleted once it is older than [Options.GCGrace], unless
// this Table is still writing it or has not yet committed it. Before
// looking, CollectGarbage reads the latest log. It returns how many files
// it deleted.
//
// A table this package created carries a marker in its metaData
// configuration, written by its first commit; a folder with no log yet
// counts too ([Open] refuses a folder that holds anything else). A table
// another engine created may be appended to, but CollectGarbage deletes
// nothing in it: Spark names its files like this package does, and they are
// not ours to delete.
//
// Why a grace period: a file of another writer of the table (an engine
// compacting it, or a second agent where the table lock does not hold)
// sits in the folder from its rename (or, under _tmp/, from its first
// rows) until the commit that adds it, and this process cannot see that
// writer's pending files: only their age tells them apart from garbage.
func (t *Table) CollectGarbage() (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return 0, fmt.Errorf("collecting garbage: %w", errClosed)
	}
	if _, err := t.catchUp(); err != nil {
		return 0, fmt.Errorf("collecting garbage: %w", err)
	}
	if !t.st.createdHere() {
		return 0, nil
	}
	cutoff := t.opts.Now().Add(-t.opts.GCGrace)
	removed := 0
	var errs []error
	partitioned := t.st.meta != nil && len(t.st.meta.PartitionColumns) > 0
	var sweep func(folder string, garbage func(rel string) bool)
	sweep = func(folder string, garbage func(rel string) bool) {
		entries, err := t.s.List(folder)
		if err != nil {
			errs = append(errs, err)
			return
		}
		for _, e := range entries {
			rel := e.Name
			if folder != "" {
				rel = folder + "/" + e.Name
			}
			if e.Dir && partitioned && folder != storage.TempDir && folder != logDir && isPartitionFolder(e.Name) {
				sweep(rel, garbage) // files of a partitioned table
				continue
			}
			if e.Dir || e.Other || !garbage(rel) {
				continue
			}
			if _, ok := t.pending[rel]; ok {
				continue
			}
			if e.ModTime.After(cutoff) {
				continue
			}
			if err := t.s.Remove(rel); err != nil {
				errs = append(errs, err)
				continue
			}
			removed++
		}
	}
	sweep("", func(rel string) bool {
		if name, ok := storage.TempOf(rel); ok {
			// A partitioned file's temporary name, in its folder.
			return isDataFile(name)
		}
		_, known := t.st.known[rel]
		return isDataFile(rel) && !known
	})
	sweep(storage.TempDir, func(rel string) bool { return isTempDataFile(path.Base(rel)) })
	sweep(logDir, func(rel string) bool { return isLogTemp(path.Base(rel)) })
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("collecting garbage: %w", err)
	}
	return removed, nil
}

// isPartitionFolder reports whether name, a folder in a table, holds the
// files of a partition value: <column>=<value>, as Hive and Spark name
// them, and not one of the table's own folders (_delta_log, _tmp).
func isPartitionFolder(name string) bool {
	return strings.Contains(name, "=") && !strings.HasPrefix(name, "_") && !strings.HasPrefix(name, ".")
}
