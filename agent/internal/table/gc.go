package table

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// CollectGarbage deletes what crashed or losing writers left behind: data
// files in the table folder that no add or remove action of the log names,
// files under _tmp/, and temporary log entries, once they are older than
// [Options.GCGrace]. It first reads the latest log, and never deletes files
// this Table is still writing or has not yet committed. It returns how many
// files it deleted.
//
// Why a grace period: when several agents share a table, another agent's
// file can sit in the folder between its rename (or while it is written
// under _tmp/) and the commit that adds it, and this process cannot see that
// agent's pending files. A grace longer than the longest write-to-commit
// interval keeps them safe. A process that is the table's only writer can
// use 0 on open: nothing it did not write is in flight, and whatever its
// previous run left uncommitted will never be committed (the resumed
// offsets read those rows again).
func (t *Table) CollectGarbage() (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, err := t.catchUp(); err != nil {
		return 0, fmt.Errorf("collecting garbage: %w", err)
	}
	cutoff := t.opts.Now().Add(-t.opts.GCGrace)
	removed := 0
	var errs []error
	sweep := func(folder string, garbage func(name string) bool) {
		des, err := os.ReadDir(filepath.Join(t.dir, folder))
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		if err != nil {
			errs = append(errs, err)
			return
		}
		for _, de := range des {
			rel := filepath.Join(folder, de.Name())
			if !de.Type().IsRegular() || !garbage(de.Name()) {
				continue
			}
			if _, ok := t.pending[rel]; ok {
				continue
			}
			fi, err := de.Info()
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if fi.ModTime().After(cutoff) {
				continue
			}
			if err := os.Remove(filepath.Join(t.dir, rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
				continue
			}
			removed++
		}
	}
	sweep(".", func(name string) bool {
		_, known := t.st.known[name]
		return isDataFileName(name) && !known
	})
	sweep(tmpDir, func(string) bool { return true })
	sweep(logDir, func(name string) bool {
		return strings.HasPrefix(name, logTmpPrefix) && strings.HasSuffix(name, tmpSuffix)
	})
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("collecting garbage: %w", err)
	}
	return removed, nil
}
