package table

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"
)

// VacuumResult is what one [Table.Vacuum] did: counts a caller can add to
// its metrics as they are.
type VacuumResult struct {
	// FilesDeleted and BytesDeleted count the removed data files Vacuum
	// deleted.
	FilesDeleted int
	BytesDeleted int64
	// FilesGone counts the expired tombstones whose file was already gone
	// (another engine's VACUUM, or a run of this one that stopped before
	// forgetting them).
	FilesGone int
	// TombstonesKept counts the removed files kept for now: younger than
	// the retention, or whose delete failed.
	TombstonesKept int
	// Retention is the delta.deletedFileRetentionDuration applied.
	Retention time.Duration
}

// Vacuum deletes the data files the table's log removed longer ago than
// the table's delta.deletedFileRetentionDuration (a week unless the table
// says otherwise, whoever set it), as Delta's VACUUM does, in any table,
// whichever engine created it: a file a remove action names is the table's
// own. Before looking, Vacuum reads the latest log.
//
// What it deletes, and what never:
//
//   - A tombstone's age is its deletionTimestamp against [Options.Now]; a
//     remove action without one is aged by its file's modification time.
//   - A file the current snapshot references is never deleted, even when
//     an older version removed it (a file removed, then added again).
//   - A file no add or remove action names is never deleted: that is
//     [Table.CollectGarbage]'s job, with its own rules and grace. So a file
//     another engine is still writing, which no log entry names until its
//     commit, is safe from Vacuum whatever its age.
//   - Only paths inside the table folder are deleted: not absolute URIs
//     (shallow clones name files of other tables), nor anything under a
//     folder or file whose name starts with '.' or '_' (the log, _tmp/),
//     except partition folders ("_col=value"). The tombstones of other
//     paths are just forgotten once past the retention.
//   - A file already gone counts as handled.
//
// Once a file is deleted (or found gone), its tombstone is forgotten, so the
// next checkpoint no longer carries it. Tombstones are only forgotten here:
// until Vacuum handles them, checkpoints keep them past the retention, so
// that a removed file of a table another engine created is still known
// after the log entry that removed it is cleaned up.
//
// Deleting a removed file ends time travel to the versions that still read
// it, as in Delta; readers of an older snapshot than the retention may fail.
// The deletes run without holding the table, so commits go on meanwhile;
// call Vacuum before [Table.Close], not during it.
//
// On an error, Vacuum still handles every other file, returns what it did
// with the errors joined, and keeps the tombstones of the files it could
// not delete for its next run.
func (t *Table) Vacuum() (VacuumResult, error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return VacuumResult{}, fmt.Errorf("vacuuming: %w", errClosed)
	}
	if _, err := t.catchUp(); err != nil {
		t.mu.Unlock()
		return VacuumResult{}, fmt.Errorf("vacuuming: %w", err)
	}
	var res VacuumResult
	if t.st.meta == nil {
		t.mu.Unlock()
		return res, nil // no log yet, so nothing removed
	}
	cfg, cfgErrs := readLogConfig(t.st.meta.Configuration)
	res.Retention = cfg.deletedFileRetention
	cutoff := t.opts.Now().Add(-cfg.deletedFileRetention)
	type candidate struct {
		path   string
		remove *removeAction
	}
	var candidates []candidate
	for p, r := range t.st.tombstones {
		_, live := t.st.files[p]
		recent := r.DeletionTimestamp != nil && *r.DeletionTimestamp >= cutoff.UnixMilli()
		switch {
		case live || recent:
			res.TombstonesKept++
		case !inTable(p):
			// Not a file Vacuum deletes: the tombstone expires as
			// Delta's do, past the retention or without a time.
			delete(t.st.tombstones, p)
		default:
			candidates = append(candidates, candidate{p, r})
		}
	}
	t.mu.Unlock()

	if len(cfgErrs) > 0 {
		log := t.opts.Logger.With("table", t.s.String())
		for _, err := range cfgErrs {
			log.Warn("ignoring a table property", "err", err)
		}
	}
	var handled []candidate
	var errs []error
	for _, c := range candidates {
		fi, err := t.s.Stat(c.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			res.FilesGone++
			handled = append(handled, c)
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("removed file %s: %w", c.path, err))
			res.TombstonesKept++
			continue
		case fi.Dir || fi.Other:
			res.TombstonesKept++ // not a data file: left alone
			continue
		case c.remove.DeletionTimestamp == nil && fi.ModTime.After(cutoff):
			res.TombstonesKept++ // no deletion time: aged by the file's
			continue
		}
		if err := t.s.Remove(c.path); err != nil {
			errs = append(errs, fmt.Errorf("deleting removed file %s: %w", c.path, err))
			res.TombstonesKept++
			continue
		}
		res.FilesDeleted++
		res.BytesDeleted += fi.Size
		handled = append(handled, c)
	}

	t.mu.Lock()
	for _, c := range handled {
		// A commit read meanwhile may have added the path again, or
		// removed it again later: that tombstone is not the one handled.
		if t.st.tombstones[c.path] == c.remove {
			delete(t.st.tombstones, c.path)
		}
	}
	t.mu.Unlock()
	if err := errors.Join(errs...); err != nil {
		return res, fmt.Errorf("vacuuming %s: %w", t.s, err)
	}
	return res, nil
}

// inTable reports whether p, a decoded add or remove path, names a data
// file inside the table folder that Vacuum may delete: relative, not
// climbing out with "..", and with no hidden component (a name starting
// with '.' or '_', as Delta's VACUUM skips them), except partition folders,
// whose names hold '='.
func inTable(p string) bool {
	if strings.Contains(p, "://") || strings.HasPrefix(p, "/") {
		return false
	}
	parts := strings.Split(p, "/")
	for i, part := range parts {
		last := i == len(parts)-1
		switch {
		case part == "" || part == "." || part == "..":
			return false
		case strings.HasPrefix(part, "."):
			return false
		case strings.HasPrefix(part, "_") && (last || !strings.Contains(part, "=")):
			return false
		}
	}
	return true
}
