package table

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go/compress"
)

// Folder and file names inside a table folder.
const (
	logDir = "_delta_log"
	// tmpDir holds data files being written. Delta readers only read files
	// the log adds, and Spark, pyarrow and Hive skip folders starting with
	// "_", so a half-written file is never read.
	tmpDir = "_tmp"
	// logTmpPrefix starts the name of a log entry being written: readers
	// list only names of the form %020d.json and ignore dot files.
	logTmpPrefix = "."
	tmpSuffix    = ".tmp"
)

// DefaultRowGroupRows is the number of rows buffered in memory before a row
// group is flushed to the file being written.
const DefaultRowGroupRows = 128 * 1024

// Options configures a [Table]. The zero value is usable.
type Options struct {
	// GCGrace is how old an unreferenced data file or temporary file must be
	// before [Table.CollectGarbage] deletes it. Defaults to 0: everything
	// unreferenced is deleted, which is right only while this process is the
	// table's only writer (see [Table.CollectGarbage]).
	GCGrace time.Duration
	// Compression is the codec of data pages, overriding the default
	// Snappy (what Spark writes by default).
	Compression compress.Codec
	// RowGroupRows is the number of rows per row group, overriding
	// [DefaultRowGroupRows]. It bounds the memory a [FileWriter] holds.
	RowGroupRows int64
	// Now is the clock for timestamps and GC ages, overriding time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() (Options, error) {
	if o.GCGrace < 0 {
		return o, fmt.Errorf("GCGrace %v is negative", o.GCGrace)
	}
	if o.RowGroupRows < 0 {
		return o, fmt.Errorf("RowGroupRows %d is negative", o.RowGroupRows)
	}
	if o.RowGroupRows == 0 {
		o.RowGroupRows = DefaultRowGroupRows
	}
	if o.Compression == nil {
		o.Compression = &fastSnappy{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}

// Table is one table folder: its replayed log and the files being written
// into it. Several Tables, in one process or several, may share a folder;
// the log's put-if-absent versions serialize their commits.
type Table struct {
	dir  string
	opts Options

	mu sync.Mutex
	st *state
	// pending holds the names (relative to dir) of files this Table is
	// writing or has written but not yet committed; garbage collection
	// skips them whatever their age.
	pending map[string]struct{}
}

// Open opens the table in folder dir, creating the folder if needed, and
// replays its log. A log entry that cannot be replayed is an error wrapping
// [ErrCorruptLog] that names the file.
func Open(dir string, opts Options) (*Table, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("table options: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, logDir), 0o755); err != nil {
		return nil, fmt.Errorf("creating table folder: %w", err)
	}
	t := &Table{dir: dir, opts: opts, st: newState(), pending: map[string]struct{}{}}
	versions, err := listVersions(filepath.Join(dir, logDir))
	if err != nil {
		return nil, err
	}
	for i, v := range versions {
		if v != int64(i) {
			return nil, fmt.Errorf("%w: %s: log version %d is missing (checkpointed or cleaned-up logs are not supported)",
				ErrCorruptLog, filepath.Join(dir, logDir), i)
		}
		if _, err := t.readVersion(v); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Snapshot returns the state as of the latest version this Table has read
// or written; a new [Open] sees other writers' commits.
func (t *Table) Snapshot() Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.st.snapshot()
}

// catchUp reads versions after t.st.version until one does not exist, and
// returns the entries it applied. t.mu must be held.
func (t *Table) catchUp() ([]*entry, error) {
	var read []*entry
	for {
		e, err := t.readVersion(t.st.version + 1)
		if errors.Is(err, fs.ErrNotExist) {
			return read, nil
		}
		if err != nil {
			return read, err
		}
		read = append(read, e)
	}
}

// readVersion reads log version v and applies it to t.st. A missing file is
// returned as an error wrapping fs.ErrNotExist.
func (t *Table) readVersion(v int64) (*entry, error) {
	name := logPath(t.dir, v)
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("reading log: %w", err)
	}
	e, err := parseEntry(data)
	if err == nil {
		err = t.st.apply(v, e)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorruptLog, name, err)
	}
	return e, nil
}

// logPath is the file of log version v.
func logPath(dir string, v int64) string {
	return filepath.Join(dir, logDir, fmt.Sprintf("%020d.json", v))
}

// listVersions returns the versions of the log entries in folder logDir, in
// order. Other files (checkpoints, CRCs, temporary files) are ignored.
func listVersions(dir string) ([]int64, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("listing log: %w", err)
	}
	var versions []int64
	for _, de := range des {
		base, ok := strings.CutSuffix(de.Name(), ".json")
		if !ok || len(base) != 20 {
			continue
		}
		v, err := strconv.ParseInt(base, 10, 64)
		if err != nil || v < 0 {
			continue
		}
		versions = append(versions, v)
	}
	slices.Sort(versions)
	return versions, nil
}
