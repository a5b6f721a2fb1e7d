package table

import (
	"context"
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
// own. Before looking, Vacuum reads the latest log. A retention shorter
// than a week is honoured when the table's property asks for it, as
// Spark's VACUUM honours it (Spark's safety check refuses only a RETAIN
// shorter than the property).
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
// not delete for its next run. When ctx ends, it stops before the next
// file, keeps the tombstones it did not handle, and returns ctx's error
// with what it did.
func (t *Table) Vacuum(ctx context.Context) (VacuumResult, error) {
	res, expired, err := t.expiredTombstones()
	if err != nil {
		return res, fmt.Errorf("vacuuming: %w", err)
	}
	var handled []tombstone
	var errs []error
	for _, c := range expired {
		if ctx.Err() != nil {
			res.TombstonesKept++
			continue
		}
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
		case c.remove.DeletionTimestamp == nil && fi.ModTime.After(t.opts.Now().Add(-res.Retention)):
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
	t.forget(handled)
	if err := ctx.Err(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return res, fmt.Errorf("vacuuming %s: %w", t.s, err)
	}
	return res, nil
}

// tombstone is a remove action of the state, by its decoded path.
type tombstone struct {
	path   string
	remove *removeAction
}

// expiredTombstones reads the latest log and returns the tombstones
// [Table.Vacuum] must look at: the ones past the table's retention, or
// without a deletion time, whose path it may delete (see [inTable]). It
// forgets at once the expired tombstones of other paths, and counts the
// others in the result's TombstonesKept. A table property it cannot read
// is logged and its default used.
func (t *Table) expiredTombstones() (VacuumResult, []tombstone, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return VacuumResult{}, nil, errClosed
	}
	if _, err := t.catchUp(); err != nil {
		return VacuumResult{}, nil, err
	}
	var conf map[string]string
	if t.st.meta != nil {
		conf = t.st.meta.Configuration
	}
	cfg, errs := readLogConfig(conf)
	for _, err := range errs {
		t.opts.Logger.Warn("ignoring a table property", "table", t.s.String(), "err", err)
	}
	res := VacuumResult{Retention: cfg.deletedFileRetention}
	cutoff := t.opts.Now().Add(-cfg.deletedFileRetention).UnixMilli()
	var expired []tombstone
	for p, r := range t.st.tombstones {
		_, live := t.st.files[p]
		switch {
		case live || (r.DeletionTimestamp != nil && *r.DeletionTimestamp >= cutoff):
			res.TombstonesKept++
		case !inTable(p):
			// Not a file Vacuum deletes: the tombstone expires as
			// Delta's do, past the retention or without a time.
			delete(t.st.tombstones, p)
		default:
			expired = append(expired, tombstone{p, r})
		}
	}
	return res, expired, nil
}

// forget drops the tombstones Vacuum handled from the state, so that
// checkpoints stop carrying them. A commit read since may have added a
// path again, or removed it again: that tombstone is not the one handled,
// and stays.
func (t *Table) forget(handled []tombstone) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range handled {
		if t.st.tombstones[c.path] == c.remove {
			delete(t.st.tombstones, c.path)
		}
	}
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
