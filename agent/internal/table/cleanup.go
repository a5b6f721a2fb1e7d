package table

import (
	"errors"
	"fmt"
	"time"
)

// cleanupLog deletes what Delta's metadata cleanup deletes (the protocol's
// "Metadata Cleanup"): the entries, checksums and checkpoints of every
// version before the cut-off checkpoint, the newest classic checkpoint
// whose commit is older than retention (counted from midnight UTC, as
// Delta does). The cut-off checkpoint, the entry of its version and
// everything after them stay: the log still opens from the newest
// checkpoint, and time travel reaches back at least retention. Ages are
// file modification times, against [Options.Now]. It returns how many
// files it deleted. t.mu must be held.
func (t *Table) cleanupLog(retention time.Duration) (int, error) {
	files, err := listLog(t.s, 0)
	if err != nil {
		return 0, err
	}
	cutoff := t.opts.Now().Add(-retention).UTC().Truncate(24 * time.Hour)
	entries := map[int64]logFile{}
	for _, f := range files {
		if f.kind == kindEntry {
			entries[f.version] = f
		}
	}
	cut := int64(-1)
	for _, f := range files {
		if f.kind != kindCheckpoint || f.version > t.st.version {
			continue
		}
		// The commit's time is its entry's, or the checkpoint's when the
		// entry is gone.
		committed, ok := entries[f.version]
		if !ok {
			committed = f
		}
		if !committed.modTime.After(cutoff) {
			cut = f.version
		}
	}
	removed := 0
	var errs []error
	for _, f := range files {
		if f.version >= cut {
			break
		}
		if f.kind == kindUUIDCheckpoint {
			continue // V2 checkpoints may be shared with sidecars; not ours to judge
		}
		if err := t.s.Remove(logDir + "/" + f.name); err != nil {
			errs = append(errs, err)
			continue
		}
		removed++
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("cleaning up the log: %w", err)
	}
	return removed, nil
}
