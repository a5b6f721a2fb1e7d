package table_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
)

const day = 24 * time.Hour

// addedPaths returns the paths the add actions of log version v name.
func addedPaths(t *testing.T, dir string, v int) []string {
	t.Helper()
	var paths []string
	for _, l := range readLog(t, dir, v) {
		var a struct{ Add *struct{ Path string } }
		if json.Unmarshal([]byte(l), &a) == nil && a.Add != nil {
			paths = append(paths, a.Add.Path)
		}
	}
	return paths
}

// removeLine is a remove action of path (as the log writes it) deleted at
// ts, or with no deletion time when ts is zero.
func removeLine(path string, ts time.Time) string {
	if ts.IsZero() {
		return `{"remove":{"path":"` + path + `","dataChange":false}}`
	}
	return `{"remove":{"path":"` + path + `","deletionTimestamp":` + itoa(ts.UnixMilli()) + `,"dataChange":false}}`
}

// addLine is an add action of path (as the log writes it), of one row.
func addLine(path string) string {
	return `{"add":{"path":"` + path + `","partitionValues":{},"size":1,"modificationTime":1,"dataChange":false,"stats":"{\"numRecords\":1}"}}`
}

// sizeOf returns the size of file name in dir.
func sizeOf(t *testing.T, dir, name string) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestVacuum has another engine remove files of the agent's table at
// several ages and in several forms; Vacuum deletes exactly the removed
// files older than the default week, and a later run the rest once they
// age.
func TestVacuum(t *testing.T) {
	dir := t.TempDir()
	clk := &clock{now: time.Now()}
	tb := openTable(t, dir, table.Options{Now: clk.Now})
	appendCommits(t, tb, 5) // versions 0 to 4, a file each
	var f []string
	for v := range 5 {
		f = append(f, addedPaths(t, dir, v)[0])
	}
	// A file in a partition folder whose name Hive escaped (":" as %3A),
	// named in the log as a URI, escaped again.
	partFolder := "ts=2024-01-01 10%3A00"
	partFile := partFolder + "/" + ourName(1)
	if err := os.Mkdir(filepath.Join(dir, partFolder), 0o755); err != nil {
		t.Fatal(err)
	}
	touch(t, filepath.Join(dir, partFile), clk.now.Add(-9*day))
	partURI := "ts=2024-01-01%2010%253A00/" + ourName(1)
	// Files no add names: Vacuum never deletes them, whatever their age.
	untracked := []string{ourName(2), "part-00000-0000000a-0000-4000-8000-000000000000-c000.snappy.parquet"}
	for _, name := range untracked {
		touch(t, filepath.Join(dir, name), clk.now.Add(-30*day))
	}
	// Without a deletion time a tombstone is aged by its file.
	touch(t, filepath.Join(dir, f[3]), clk.now.Add(-8*day))

	writeLog(t, dir, 5, strings.Join([]string{
		`{"commitInfo":{"timestamp":1,"operation":"OPTIMIZE"}}`,
		addLine(partURI),
		addLine("compacted.parquet"),
	}, "\n"))
	writeLog(t, dir, 6, strings.Join([]string{
		`{"commitInfo":{"timestamp":1,"operation":"OPTIMIZE"}}`,
		removeLine(f[0], clk.now.Add(-8*day)),
		removeLine(f[1], clk.now.Add(-6*day)),
		removeLine(f[2], clk.now.Add(-8*day)),
		removeLine(f[3], time.Time{}),
		removeLine(f[4], time.Time{}),
		removeLine(partURI, clk.now.Add(-8*day)),
		removeLine(missingFile, clk.now.Add(-8*day)),
		// Not the table's to delete: the log, another table's file; their
		// tombstones are forgotten.
		removeLine("_delta_log/"+logName(0), clk.now.Add(-8*day)),
		removeLine("file:///elsewhere/"+ourName(3), clk.now.Add(-8*day)),
	}, "\n"))
	// f[2] is added back (a RESTORE): live again, so never deleted.
	writeLog(t, dir, 7, addLine(f[2]))

	wantBytes := sizeOf(t, dir, f[0]) + sizeOf(t, dir, f[3]) + sizeOf(t, dir, partFile)
	res, err := tb.Vacuum(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := table.VacuumResult{FilesDeleted: 3, BytesDeleted: wantBytes, FilesGone: 1, TombstonesKept: 2, Retention: 7 * day}
	if res != want {
		t.Errorf("Vacuum = %+v, want %+v", res, want)
	}
	checkGone(t, dir, f[0], f[3], partFile)
	checkKept(t, dir, append(untracked, f[1], f[2], f[4], "_delta_log/"+logName(0))...)
	// Vacuum forgets tombstones only: the snapshot is the log's.
	if want, err := table.ReadSnapshot(dir); err != nil || !reflect.DeepEqual(tb.Snapshot(), want) || want.Version != 7 {
		t.Errorf("snapshot after Vacuum =\n%+v, want the log's at version 7\n%+v (%v)", tb.Snapshot(), want, err)
	}

	// Two days later f[1] is old enough; f[4]'s file was written now.
	clk.now = clk.now.Add(2 * day)
	res, err = tb.Vacuum(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesDeleted != 1 || res.FilesGone != 0 || res.TombstonesKept != 1 {
		t.Errorf("second Vacuum = %+v, want f[1] deleted and f[4]'s tombstone kept", res)
	}
	checkGone(t, dir, f[1])
	checkKept(t, dir, append(untracked, f[2], f[4])...)
}

// TestVacuumForeignTable vacuums a table another engine created and set
// delta.deletedFileRetentionDuration on: its removed files go after that
// retention, its files no log entry names stay.
func TestVacuumForeignTable(t *testing.T) {
	dir := writeForeignTable(t, `{"minReaderVersion":1,"minWriterVersion":2}`,
		`{"delta.deletedFileRetentionDuration":"interval 1 day"}`)
	clk := &clock{now: time.Now()}
	foreign := "part-00000-0000000b-0000-4000-8000-000000000000-c000.snappy.parquet"
	pending := "part-00001-0000000c-0000-4000-8000-000000000000-c000.snappy.parquet" // being written
	touch(t, filepath.Join(dir, foreign), clk.now.Add(-3*day))
	touch(t, filepath.Join(dir, pending), clk.now.Add(-30*day))
	writeLog(t, dir, 1, addLine(foreign))
	tb := openTable(t, dir, table.Options{Now: clk.Now})
	ours := writeFile(t, tb, 0, 2)
	mustCommit(t, tb, table.Commit{Files: []table.AddFile{ours}, Txns: map[string]int64{"t/a/0": 2}})
	writeLog(t, dir, 3, removeLine(foreign, clk.now.Add(-25*time.Hour))+"\n"+removeLine(ours.Path, clk.now.Add(-23*time.Hour)))

	res, err := tb.Vacuum(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesDeleted != 1 || res.TombstonesKept != 1 || res.Retention != day {
		t.Errorf("Vacuum = %+v, want one file deleted and one kept with a retention of a day", res)
	}
	checkGone(t, dir, foreign)
	checkKept(t, dir, ours.Path, pending)
}

// TestVacuumRetentionProperty: a retention Delta does not accept falls
// back to the week, with a warning naming the property.
func TestVacuumRetentionProperty(t *testing.T) {
	dir := writeForeignTable(t, `{"minReaderVersion":1,"minWriterVersion":2}`,
		`{"delta.deletedFileRetentionDuration":"interval 1 month"}`)
	var logged bytes.Buffer
	tb := openTable(t, dir, table.Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	res, err := tb.Vacuum(context.Background())
	if err != nil || res.Retention != 7*day {
		t.Errorf("Vacuum = %+v, %v; want the default week", res, err)
	}
	if !strings.Contains(logged.String(), "delta.deletedFileRetentionDuration") {
		t.Errorf("no warning naming the property; logged:\n%s", logged.String())
	}
}

// TestVacuumAfterCheckpoint: a tombstone past its retention but not yet
// vacuumed stays in every checkpoint, so that a Vacuum after the entry
// that removed it is cleaned up (and the table reopened from the
// checkpoint) still deletes the file; once vacuumed, the next checkpoint
// drops it.
func TestVacuumAfterCheckpoint(t *testing.T) {
	dir := writeForeignTable(t, `{"minReaderVersion":1,"minWriterVersion":2}`, `{}`)
	clk := &clock{now: time.Now()}
	tb := openTable(t, dir, table.Options{Now: clk.Now})
	appendCommits(t, tb, 2) // versions 1 and 2
	removed := addedPaths(t, dir, 1)[0]
	writeLog(t, dir, 3, removeLine(removed, clk.now.Add(-8*day)))
	appendCommits(t, tb, 7) // to version 10, checkpointed
	tombstones := func(v int) (paths []string) {
		for _, r := range readCheckpoint(t, dir, v) {
			if r.Remove != nil {
				paths = append(paths, r.Remove.Path)
			}
		}
		return paths
	}
	if got := tombstones(10); len(got) != 1 || got[0] != removed {
		t.Fatalf("checkpoint 10 removes %v, want %s", got, removed)
	}
	tb.Close()
	removeLog(t, dir, 0, 10)

	tb = openTable(t, dir, table.Options{Now: clk.Now})
	if res, err := tb.Vacuum(context.Background()); err != nil || res.FilesDeleted != 1 {
		t.Fatalf("Vacuum = %+v, %v; want the removed file deleted", res, err)
	}
	checkGone(t, dir, removed)
	appendCommits(t, tb, 10) // to version 20, checkpointed
	if got := tombstones(20); len(got) != 0 {
		t.Errorf("checkpoint 20 removes %v, want none: the file is vacuumed", got)
	}
}

// TestTombstonesExpireWithoutVacuum: a tombstone no vacuum handled (the
// agent's vacuum is off) leaves the checkpoints a day after the retention,
// so that they do not carry every removed file for ever; one within that
// day stays.
func TestTombstonesExpireWithoutVacuum(t *testing.T) {
	dir := writeForeignTable(t, `{"minReaderVersion":1,"minWriterVersion":2}`, `{}`)
	clk := &clock{now: time.Now()}
	tb := openTable(t, dir, table.Options{Now: clk.Now})
	appendCommits(t, tb, 2) // versions 1 and 2
	paths := addedPaths(t, dir, 1)
	old, recent := paths[0], addedPaths(t, dir, 2)[0]
	writeLog(t, dir, 3, removeLine(old, clk.now.Add(-9*day))+"\n"+removeLine(recent, clk.now.Add(-7*day-time.Hour)))
	appendCommits(t, tb, 7) // to version 10, checkpointed
	var got []string
	for _, r := range readCheckpoint(t, dir, 10) {
		if r.Remove != nil {
			got = append(got, r.Remove.Path)
		}
	}
	if len(got) != 1 || got[0] != recent {
		t.Errorf("checkpoint 10 removes %v, want only %s (the one within a day of the retention)", got, recent)
	}
}

// TestVacuumCancelled: a vacuum whose context ended deletes nothing more,
// keeps the tombstones, and says why; the next one deletes the files.
func TestVacuumCancelled(t *testing.T) {
	dir := writeForeignTable(t, `{"minReaderVersion":1,"minWriterVersion":2}`, `{}`)
	clk := &clock{now: time.Now()}
	tb := openTable(t, dir, table.Options{Now: clk.Now})
	appendCommits(t, tb, 1)
	removed := addedPaths(t, dir, 1)[0]
	writeLog(t, dir, 2, removeLine(removed, clk.now.Add(-8*day)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res, err := tb.Vacuum(ctx); !errors.Is(err, context.Canceled) || res.FilesDeleted != 0 || res.TombstonesKept != 1 {
		t.Fatalf("cancelled Vacuum = %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(dir, removed)); err != nil {
		t.Fatalf("a cancelled vacuum deleted %s: %v", removed, err)
	}
	if res, err := tb.Vacuum(context.Background()); err != nil || res.FilesDeleted != 1 {
		t.Fatalf("Vacuum = %+v, %v", res, err)
	}
}

// TestVacuumClosed: a closed Table does not vacuum.
func TestVacuumClosed(t *testing.T) {
	tb := openTable(t, t.TempDir(), table.Options{})
	tb.Close()
	if _, err := tb.Vacuum(context.Background()); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Vacuum after Close = %v, want an error saying the table is closed", err)
	}
}

// TestDeltaRSCompactThenVacuum has delta-rs compact the agent's table
// (OPTIMIZE: the small files removed, at delta-rs's clock); the agent's
// Vacuum keeps them six days later and deletes them eight days later, and
// delta-rs still reads every row. Skipped without the tool venv.
func TestDeltaRSCompactThenVacuum(t *testing.T) {
	python := toolPython(t)
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	appendCommits(t, tb, 5)
	tb.Close()
	var compacted map[string]int64
	runDeltaRS(t, python, &compacted, "compact", dir)
	if compacted["version"] != 5 || compacted["removed"] != 5 {
		t.Fatalf("delta-rs compact: %v, want version 5 removing 5 files", compacted)
	}
	for _, ahead := range []struct {
		by      time.Duration
		deleted int
	}{{6 * day, 0}, {8 * day, 5}} {
		now := time.Now().Add(ahead.by)
		tb = openTable(t, dir, table.Options{Now: func() time.Time { return now }})
		if res, err := tb.Vacuum(context.Background()); err != nil || res.FilesDeleted != ahead.deleted {
			t.Errorf("Vacuum %v after the compaction = %+v, %v; want %d files deleted", ahead.by, res, err, ahead.deleted)
		}
		tb.Close()
	}
	for v := range 5 {
		checkGone(t, dir, addedPaths(t, dir, v)...)
	}
	var read map[string]int64
	runDeltaRS(t, python, &read, "read", dir, "t/a/0")
	if want := map[string]int64{"version": 5, "rows": 10, "files": 1, "txn": 10}; !maps.Equal(read, want) {
		t.Errorf("delta-rs reads %v, want %v", read, want)
	}
}
