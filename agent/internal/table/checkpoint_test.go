package table_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
)

// checkpointRow reads the columns of a checkpoint the tests look at.
type checkpointRow struct {
	Txn *struct {
		AppID   string `parquet:"appId"`
		Version int64  `parquet:"version"`
	} `parquet:"txn,optional"`
	Add *struct {
		Path       string `parquet:"path"`
		DataChange bool   `parquet:"dataChange"`
		Stats      string `parquet:"stats,optional"`
	} `parquet:"add,optional"`
	Remove *struct {
		Path string `parquet:"path"`
	} `parquet:"remove,optional"`
	MetaData *struct {
		ID string `parquet:"id"`
	} `parquet:"metaData,optional"`
	Protocol *struct {
		MinReaderVersion int32 `parquet:"minReaderVersion"`
	} `parquet:"protocol,optional"`
}

func readCheckpoint(t *testing.T, dir string, v int) []checkpointRow {
	t.Helper()
	rows, err := parquet.ReadFile[checkpointRow](logFile(dir, checkpointName(v)))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func exists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// TestCheckpoints commits 25 versions: a checkpoint follows versions 10 and
// 20 (the default interval), _last_checkpoint points to the latest, and a
// table whose entries before it are gone opens from it with the same
// state, counters included.
func TestCheckpoints(t *testing.T) {
	dir := t.TempDir()
	tb := openTable(t, dir, table.Options{})
	appendCommits(t, tb, 25)
	for v := range 25 {
		if want := v == 10 || v == 20; exists(logFile(dir, checkpointName(v))) != want {
			t.Errorf("checkpoint of version %d exists: %t, want %t", v, !want, want)
		}
	}
	data, err := os.ReadFile(logFile(dir, "_last_checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	var last map[string]int64
	if err := json.Unmarshal(data, &last); err != nil {
		t.Fatal(err)
	}
	size := int64(len(readCheckpoint(t, dir, 20)))
	fi, err := os.Stat(logFile(dir, checkpointName(20)))
	if err != nil {
		t.Fatal(err)
	}
	// protocol, metaData, one txn, 21 files.
	if want := map[string]int64{"version": 20, "size": 24, "sizeInBytes": fi.Size(), "numOfAddFiles": 21}; !reflect.DeepEqual(last, want) || size != 24 {
		t.Errorf("_last_checkpoint = %s (checkpoint of %d rows), want %v", data, size, want)
	}
	want := tb.Snapshot()
	if want.Counters["numCorruptRecords"] != 25 || want.NumRows != 50 {
		t.Fatalf("snapshot = %+v", want)
	}
	tb.Close()

	removeLog(t, dir, 0, 20)
	if got := openTable(t, dir, table.Options{}).Snapshot(); !reflect.DeepEqual(got, want) {
		t.Errorf("snapshot from the checkpoint =\n%+v, want\n%+v", got, want)
	}
	if got, err := table.ReadSnapshot(dir); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ReadSnapshot = %+v, %v; want %+v", got, err, want)
	}
}

// TestCheckpointContent checks the rows of a checkpoint: the latest txn per
// application, every live file (dataChange false) with its stats, and the
// removes of another engine's compaction, the one older than
// delta.deletedFileRetentionDuration too: a tombstone stays until
// Table.Vacuum deletes its file.
func TestCheckpointContent(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	tb := openTable(t, dir, table.Options{Now: func() time.Time { return now }})
	appendCommits(t, tb, 3)
	var files []string
	for _, l := range readLog(t, dir, 1)[1:] {
		var a struct{ Add *struct{ Path string } }
		if json.Unmarshal([]byte(l), &a) == nil && a.Add != nil {
			files = append(files, a.Add.Path)
		}
	}
	for _, l := range readLog(t, dir, 2)[1:] {
		var a struct{ Add *struct{ Path string } }
		if json.Unmarshal([]byte(l), &a) == nil && a.Add != nil {
			files = append(files, a.Add.Path)
		}
	}
	// Another engine compacts the files of versions 1 and 2 into one: one
	// remove is recent, the other older than the default week.
	recent, old := now.Add(-time.Hour).UnixMilli(), now.Add(-8*24*time.Hour).UnixMilli()
	writeLog(t, dir, 3, strings.Join([]string{
		`{"commitInfo":{"timestamp":1,"operation":"OPTIMIZE"}}`,
		`{"remove":{"path":"` + files[0] + `","deletionTimestamp":` + itoa(recent) + `,"dataChange":false}}`,
		`{"remove":{"path":"` + files[1] + `","deletionTimestamp":` + itoa(old) + `,"dataChange":false}}`,
		`{"add":{"path":"compacted.parquet","partitionValues":{},"size":1,"modificationTime":1,"dataChange":false,"stats":"{\"numRecords\":4}"}}`,
	}, "\n"))
	appendCommits(t, tb, 6) // versions 4..9
	mustCommit(t, tb, table.Commit{Txns: map[string]int64{"t/b/0": 7}})

	rows := readCheckpoint(t, dir, 10)
	var txns, adds, removes []string
	for i, r := range rows {
		switch {
		case r.Protocol != nil:
			if i != 0 {
				t.Errorf("protocol at row %d", i)
			}
		case r.MetaData != nil:
			if i != 1 {
				t.Errorf("metaData at row %d", i)
			}
		case r.Txn != nil:
			txns = append(txns, r.Txn.AppID+"="+itoa(r.Txn.Version))
		case r.Add != nil:
			if r.Add.DataChange || !strings.HasPrefix(r.Add.Stats, `{"numRecords":`) {
				t.Errorf("add %+v: want dataChange false and stats", *r.Add)
			}
			adds = append(adds, r.Add.Path)
		case r.Remove != nil:
			removes = append(removes, r.Remove.Path)
		}
	}
	if want := []string{"t/a/0=18", "t/b/0=7"}; !reflect.DeepEqual(txns, want) {
		t.Errorf("txns = %v, want %v", txns, want)
	}
	if len(adds) != 8 || !contains(adds, "compacted.parquet") || contains(adds, files[0]) || contains(adds, files[1]) {
		t.Errorf("adds = %v: want the 7 files not compacted and the compacted one", adds)
	}
	if want := []string{files[0], files[1]}; !reflect.DeepEqual(removes, want) && !reflect.DeepEqual(removes, []string{files[1], files[0]}) {
		t.Errorf("removes = %v, want both tombstones %v", removes, want)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// TestCheckpointInterval: delta.checkpointInterval set on the table by
// another engine is honoured.
func TestCheckpointInterval(t *testing.T) {
	dir := writeForeignTable(t, `{"minReaderVersion":1,"minWriterVersion":2}`, `{"delta.checkpointInterval":"3"}`)
	appendCommits(t, openTable(t, dir, table.Options{}), 7)
	for v := 1; v <= 7; v++ {
		if want := v%3 == 0; exists(logFile(dir, checkpointName(v))) != want {
			t.Errorf("checkpoint of version %d exists: %t, want %t", v, !want, want)
		}
	}
}

// TestCheckpointFailure: a checkpoint that cannot be written is logged and
// does not fail the commit, which is durable.
func TestCheckpointFailure(t *testing.T) {
	dir := t.TempDir()
	var logged bytes.Buffer
	tb := openTable(t, dir, table.Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	appendCommits(t, tb, 10)
	// _last_checkpoint cannot be replaced by a file.
	if err := os.MkdirAll(logFile(dir, "_last_checkpoint/x"), 0o755); err != nil {
		t.Fatal(err)
	}
	appendCommits(t, tb, 1)
	if v := tb.Snapshot().Version; v != 10 {
		t.Fatalf("version %d, want 10", v)
	}
	if !strings.Contains(logged.String(), "checkpoint failed") || !strings.Contains(logged.String(), "_last_checkpoint") {
		t.Errorf("log = %q, want the checkpoint failure", logged.String())
	}
	tb.Close()
	if s := openTable(t, dir, table.Options{}).Snapshot(); s.Version != 10 || s.NumRows != 22 {
		t.Errorf("snapshot after reopening = %+v", s)
	}
}

// TestReplayStart: whatever _last_checkpoint says, Open starts from the
// newest checkpoint that it can read and that the entries after it
// complete, and refuses a log whose missing entries no checkpoint covers.
func TestReplayStart(t *testing.T) {
	// newTable returns a table of 23 versions, checkpointed at 10 and 20.
	newTable := func(t *testing.T) (string, table.Snapshot) {
		dir := t.TempDir()
		tb := openTable(t, dir, table.Options{})
		appendCommits(t, tb, 23)
		s := tb.Snapshot()
		tb.Close()
		return dir, s
	}
	write := func(t *testing.T, name, content string) {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string // an error, or "" for the snapshot
	}{
		{"invalid _last_checkpoint", func(t *testing.T, dir string) {
			write(t, logFile(dir, "_last_checkpoint"), "{not json")
			removeLog(t, dir, 0, 20)
		}, ""},
		{"_last_checkpoint of a checkpoint gone", func(t *testing.T, dir string) {
			write(t, logFile(dir, "_last_checkpoint"), `{"version":22,"size":3}`)
			removeLog(t, dir, 0, 20)
		}, ""},
		{"stale _last_checkpoint", func(t *testing.T, dir string) {
			write(t, logFile(dir, "_last_checkpoint"), `{"version":10,"size":3}`)
			removeLog(t, dir, 0, 20)
		}, ""},
		{"no _last_checkpoint", func(t *testing.T, dir string) {
			os.Remove(logFile(dir, "_last_checkpoint"))
			removeLog(t, dir, 0, 20)
		}, ""},
		{"corrupt checkpoint, older one usable", func(t *testing.T, dir string) {
			write(t, logFile(dir, checkpointName(20)), "PAR1 garbage")
			removeLog(t, dir, 0, 10)
		}, ""},
		{"corrupt checkpoint, nothing else", func(t *testing.T, dir string) {
			write(t, logFile(dir, checkpointName(20)), "PAR1 garbage")
			removeLog(t, dir, 0, 20)
		}, checkpointName(20)},
		{"entries missing after the checkpoint", func(t *testing.T, dir string) {
			removeLog(t, dir, 0, 11)
			removeLog(t, dir, 21, 22)
		}, "log version 0 is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, want := newTable(t)
			tt.setup(t, dir)
			tb, err := table.Open(dir, table.Options{})
			if tt.want != "" {
				if !errors.Is(err, table.ErrCorruptLog) || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("Open error = %v, want ErrCorruptLog mentioning %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			if got := tb.Snapshot(); !reflect.DeepEqual(got, want) {
				t.Errorf("snapshot =\n%+v, want\n%+v", got, want)
			}
		})
	}
}

// TestUnreadableCheckpoints: multi-part and V2 checkpoints are not read; a
// log that only they cover is refused with UnsupportedFeatureError naming
// them, while one whose entries are all there opens from the entries.
func TestUnreadableCheckpoints(t *testing.T) {
	tests := []struct {
		name, file, want string
		content          func(t *testing.T) []byte
	}{
		{name: "multi-part", file: "00000000000000000010.checkpoint.0000000001.0000000001.parquet", want: "multi-part checkpoint"},
		{name: "UUID-named", file: "00000000000000000010.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.parquet", want: "V2 (UUID-named) checkpoint"},
		{name: "V2 classic", file: checkpointName(10), want: "V2 checkpoint (checkpointMetadata actions)", content: func(t *testing.T) []byte {
			type row struct {
				CheckpointMetadata *struct {
					Version int64 `parquet:"version"`
				} `parquet:"checkpointMetadata,optional"`
			}
			var b bytes.Buffer
			w := parquet.NewGenericWriter[row](&b)
			if _, err := w.Write([]row{{CheckpointMetadata: &struct {
				Version int64 `parquet:"version"`
			}{10}}}); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			return b.Bytes()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tb := openTable(t, dir, table.Options{})
			appendCommits(t, tb, 12)
			want := tb.Snapshot()
			tb.Close()
			os.Remove(logFile(dir, "_last_checkpoint"))
			if tt.content != nil {
				if err := os.WriteFile(logFile(dir, tt.file), tt.content(t), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Rename(logFile(dir, checkpointName(10)), logFile(dir, tt.file)); err != nil {
				t.Fatal(err)
			}
			// A checkpoint named like a V1 one is read; holding V2 actions,
			// it is refused at once (only V2 tables have those).
			if got, err := table.ReadSnapshot(dir); tt.content == nil && (err != nil || !reflect.DeepEqual(got, want)) {
				t.Errorf("with every entry: ReadSnapshot = %+v, %v; want %+v", got, err, want)
			}
			removeLog(t, dir, 0, 10)
			_, err := table.Open(dir, table.Options{})
			var unsupported *table.UnsupportedFeatureError
			if !errors.As(err, &unsupported) || unsupported.Feature != "a "+tt.want || !strings.HasSuffix(unsupported.File, tt.file) {
				t.Fatalf("Open error = %v, want UnsupportedFeatureError for %s in %s", err, tt.want, tt.file)
			}
		})
	}
}
