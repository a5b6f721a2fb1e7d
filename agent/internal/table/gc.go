package table

import (
	"errors"
	"fmt"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
)

// CollectGarbage deletes what crashed or losing writers of this package
// left behind, and nothing else. Candidates are, only in a table this
// package created (see below):
//
//   - data files in the table folder named like the ones this package
//     writes that no add or remove action of the log names;
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
	sweep := func(folder string, garbage func(name string) bool) {
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
			if e.Dir || e.Other || !garbage(e.Name) {
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
	sweep("", func(name string) bool {
		_, known := t.st.known[name]
		return isDataFile(name) && !known
	})
	sweep(storage.TempDir, isTempDataFile)
	sweep(logDir, isLogTemp)
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("collecting garbage: %w", err)
	}
	return removed, nil
}
