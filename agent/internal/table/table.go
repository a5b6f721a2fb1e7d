package table

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go/compress"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/flock"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// DefaultRowGroupRows is the number of rows buffered in memory before a row
// group is flushed to the file being written.
const DefaultRowGroupRows = 128 * 1024

// DefaultGCGrace is the default of [Options.GCGrace]. It is far above any
// sensible flush interval (the pipeline's default is 5 seconds), so a file
// that is still being written or waits for its commit is never old enough;
// the price is that what a crash leaves behind stays on disk for an hour.
const DefaultGCGrace = time.Hour

// Options configures a [Table]. The zero value is usable.
type Options struct {
	// Owner describes the writer in the table's lock file, and so in the
	// [*LockedError] a second writer gets, e.g. `pipeline "orders", table
	// main.sales.orders`. The lock adds the pid, the host and the time.
	Owner string
	// GCGrace is how old an unreferenced data file or temporary file must
	// be before [Table.CollectGarbage] deletes it; 0 means
	// [DefaultGCGrace]. It must be longer than the longest time between
	// writing a file's first rows and committing it (the flush interval,
	// plus a slow commit), for every writer of the table: a file of
	// another writer (another engine compacting, or a writer on a file
	// system where the table lock does not hold) is invisible to this one
	// until its commit, and only its age keeps it safe. There is no way to
	// ask for no grace at all.
	GCGrace time.Duration
	// Compression is the codec of data pages, overriding the default
	// Snappy (what Spark writes by default).
	Compression compress.Codec
	// RowGroupRows is the number of rows per row group, overriding
	// [DefaultRowGroupRows]. It bounds the memory a [FileWriter] holds.
	RowGroupRows int64
	// Now is the clock for timestamps and the ages of garbage and of log
	// entries, overriding time.Now.
	Now func() time.Time
	// Logger receives what goes wrong after a commit is durable (writing a
	// checkpoint, cleaning up the log), which [Table.Commit] does not
	// return, overriding slog.Default().
	Logger *slog.Logger
	// FileMode is the permission of the files created in a local folder,
	// overriding [DefaultFileMode]; folders get the same bits plus x
	// wherever r is set (0640 gives 0750). The process umask still
	// applies. Object stores have no modes.
	FileMode os.FileMode
}

// DefaultFileMode is the permission of a local table's files: the owner
// reads and writes, its group reads (a reader such as Spark run in the
// agent's group), others nothing. Folders get 0750.
const DefaultFileMode os.FileMode = 0o640

func (o Options) withDefaults() (Options, error) {
	if o.GCGrace < 0 {
		return o, fmt.Errorf("GCGrace %v is negative", o.GCGrace)
	}
	if o.RowGroupRows < 0 {
		return o, fmt.Errorf("RowGroupRows %d is negative", o.RowGroupRows)
	}
	if o.GCGrace == 0 {
		o.GCGrace = DefaultGCGrace
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
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.FileMode == 0 {
		o.FileMode = DefaultFileMode
	}
	if o.FileMode&^os.ModePerm != 0 || o.FileMode&0o600 != 0o600 {
		return o, fmt.Errorf("FileMode %v is not permission bits that let the owner read and write", o.FileMode)
	}
	return o, nil
}

// errClosed is returned by the methods that write once [Table.Close] ran.
var errClosed = errors.New("the table is closed")

// Table is one table opened for writing: its replayed log, its lock and
// the files being written into it.
type Table struct {
	s    storage.Store
	opts Options
	// unlock releases the table's lock; nil without one (an object store,
	// or tests that open several writers on one folder on purpose).
	unlock func() error

	mu     sync.Mutex
	closed bool
	st     *state
	// draft is the column mapping of the files written and the commits
	// built since the last commit: the table's, with the fields new since
	// then (see [Table.mappingFor]); nil when none needed one.
	draft *columnMapping
	// pending holds the names (relative to the table) of files this Table is
	// writing or has written but not yet committed; garbage collection
	// skips them whatever their age.
	pending map[string]struct{}
	// schemaMoved says that another writer changed the table's schema
	// since this Table's last commit of a schema: read from the log by a
	// catch-up (see [Table.Commit] and [SchemaConflictError]).
	schemaMoved bool
	// marked says that this Table wrote firstFileMark (or found it
	// written) for the table's first data file.
	marked bool
}

// Open opens the table at location for writing and replays its log. The
// location is a local folder (a path or a file:// URL), created if needed,
// or a prefix in an object store: s3://bucket/prefix, gs://bucket/prefix,
// azblob://container/prefix or abfss://container@account.dfs.core.windows.net/prefix,
// with credentials from each cloud's standard chain (environment, shared
// configuration, instance or workload identity) and driver options as
// query parameters (for an S3-compatible server: endpoint, region,
// use_path_style). The caller must [Table.Close] it.
//
// One writer per table: in a local folder, Open takes an exclusive lock on
// the file _tributary.lock and writes [Options.Owner] into it; while the
// Table is open, another Open of the folder, in this process or another,
// fails at once with a [*LockedError] that names the holder. An object store
// has no lock: log entries are created with conditional writes, so two
// writers never both commit one version, and [Commit.From] keeps a writer
// from committing offsets another one moved.
//
// A folder that holds data but no log (another tool's Parquet files, say)
// is not a table: Open returns a [*NotTableError] and changes nothing in it.
// Data files named as this package names them, in a folder without a log
// whose writer marked its first data file, are a writer's that was killed
// before the table's first commit: the folder is still a new table, and
// those files are garbage.
// A log entry that cannot be replayed is an error wrapping [ErrCorruptLog]
// that names the file. A table of a newer tributary format than this
// package writes is a [*NewerFormatError] (see [FormatVersion]).
func Open(location string, opts Options) (*Table, error) {
	return open(location, opts, true)
}

// OpenStore is [Open] on store s, which the Table takes: [Table.Close]
// closes it, as a failed OpenStore does. [Options.FileMode] does not apply:
// s was opened with its own.
func OpenStore(s storage.Store, opts Options) (*Table, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("table options: %w", err)
	}
	return openIn(s, opts, true)
}

// open is Open, taking the folder's lock only when lock is true.
func open(location string, opts Options, lock bool) (*Table, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("table options: %w", err)
	}
	s, err := storage.Open(location, opts.FileMode)
	if err != nil {
		return nil, err
	}
	return openIn(s, opts, lock)
}

// openIn is open on store s, with opts' defaults set.
func openIn(s storage.Store, opts Options, lock bool) (*Table, error) {
	if err := checkFolder(s); err != nil {
		_ = s.Close()
		return nil, err
	}
	t := &Table{s: s, opts: opts, pending: map[string]struct{}{}}
	var err error
	if lock {
		if t.unlock, err = s.Lock(opts.Owner); err != nil {
			_ = s.Close()
			var held *flock.HeldError
			if errors.As(err, &held) {
				return nil, &LockedError{Dir: s.String(), Holder: held.Holder}
			}
			return nil, err
		}
	}
	if t.st, err = replay(s); err != nil {
		_ = t.Close()
		return nil, err
	}
	if err := checkFormat(t.st.meta, s.String()); err != nil {
		_ = t.Close()
		return nil, err
	}
	if t.st.version >= 0 {
		// A mark that outlived the first commit (a crash before its
		// removal, or a writer that marked after another one's commit)
		// goes: without a log, it would vouch for data files it never
		// saw.
		_ = s.Remove(firstFileMark)
	}
	return t, nil
}

// ReadSnapshot returns the state of the table in folder dir at its latest
// log version, without locking, creating or changing anything: for checks
// and status reports while a writer may hold the table. A folder that does
// not exist or holds no log yet gives an empty Snapshot (Version -1), as
// does one holding only what a writer killed before the first commit left;
// one that holds other data but no log is a [*NotTableError].
func ReadSnapshot(dir string) (Snapshot, error) {
	s, err := storage.Open(dir, DefaultFileMode) // creates nothing
	if err != nil {
		return Snapshot{}, err
	}
	defer s.Close()
	if err := checkFolder(s); err != nil {
		return Snapshot{}, err
	}
	st, err := replay(s)
	if err != nil {
		return Snapshot{}, err
	}
	return st.snapshot(), nil
}

// CheckWritable reports whether the agent may create objects at location,
// an object store URL, by creating and deleting an object named like a
// temporary log file (garbage collection takes it if the delete fails): a
// bucket whose credentials or policy let the agent list but not write
// fails here rather than at the table's first commit. A local folder is
// not probed; opening the table tells.
func CheckWritable(location string) error {
	s, err := storage.Open(location, DefaultFileMode) // probes object stores only
	if err != nil {
		return err
	}
	defer s.Close()
	if storage.IsLocal(location) {
		return nil
	}
	probe := storage.TempName(logDir + "/" + lastCheckpointFile)
	if err := s.PutIfAbsent(probe, nil); err != nil {
		return fmt.Errorf("the agent cannot write to %s: %w", s, err)
	}
	return s.Remove(probe)
}

// Close releases the table's lock and its store's connections. Afterwards
// [Table.NewFile], [Table.Commit], [Table.CollectGarbage] and
// [Table.Vacuum] fail and [Table.Snapshot] still works; finish or abort
// every [FileWriter], wait for every [SealedFile], and let a running
// Vacuum return, first.
// Close may be called more than once.
func (t *Table) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	var err error
	if t.unlock != nil {
		err = t.unlock()
	}
	if cerr := t.s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("closing table %s: %w", t.s, err)
	}
	return nil
}

// checkFolder returns a [*NotTableError] when the table's location holds
// anything but a log, this package's lock file, and what a writer that
// crashed before its first commit left (see foreignFiles).
//
// On an object store another writer may create the table between the two
// listings: the folder then holds its first log entry and data files. The
// log is listed again before the folder is called foreign, so a writer
// racing to create the table opens it instead.
func checkFolder(s storage.Store) error {
	if ok, err := hasLog(s); ok || err != nil {
		return err
	}
	found, err := foreignFiles(s)
	if err != nil || len(found) == 0 {
		return err
	}
	if ok, err := hasLog(s); ok || err != nil {
		return err
	}
	return &NotTableError{Dir: s.String(), Found: found}
}

// hasLog reports whether the table's log holds a commit or a checkpoint.
func hasLog(s storage.Store) (bool, error) {
	files, err := listLog(s, 0)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(files, func(f logFile) bool { return f.kind != kindChecksum }), nil
}

// foreignFiles lists what the table's folder holds that is neither a log,
// the lock file, nor what a writer of this package leaves when it is
// killed before the table's first commit: temporary files and, once the
// writer marked the table's first data file (firstFileMark), data files
// named as this package names them, in the folder or in partition folders
// (<column>=<value>/), linked into place or under their temporary names.
// No log names those data files, so they hold no committed rows; garbage
// collection takes them.
func foreignFiles(s storage.Store) ([]string, error) {
	entries, err := s.List("")
	if err != nil {
		return nil, fmt.Errorf("listing table folder: %w", err)
	}
	var found, ours []string
	marked := false
	for _, e := range entries {
		switch {
		case e.Name == storage.LockFile && !e.Dir && !e.Other:
		case e.Name == logDir && e.Dir:
			found = append(found, foreignIn(s, logDir, func(base string) bool {
				if logDir+"/"+base == firstFileMark {
					marked = true
					return true
				}
				return isLogTemp(base)
			})...)
		case e.Name == storage.TempDir && e.Dir:
			found = append(found, foreignIn(s, storage.TempDir, isTempDataFile)...)
		case e.Dir && isPartitionFolder(e.Name):
			theirs, mine := foreignData(s, e.Name)
			found, ours = append(found, theirs...), append(ours, mine...)
		case !e.Dir && !e.Other && isDataFile(e.Name):
			ours = append(ours, e.Name)
		default:
			found = append(found, e.Name)
		}
	}
	if !marked {
		found = append(found, ours...)
	}
	return found, nil
}

// foreignData returns the names in partition folder dir, and in the
// partition folders inside it, that are neither data files named as this
// package names them nor their temporary names, and those that are. A
// folder it cannot list counts as foreign.
func foreignData(s storage.Store, dir string) (theirs, ours []string) {
	entries, err := s.List(dir)
	if err != nil {
		return []string{dir}, nil
	}
	for _, e := range entries {
		rel := dir + "/" + e.Name
		switch {
		case e.Dir && isPartitionFolder(e.Name):
			t, o := foreignData(s, rel)
			theirs, ours = append(theirs, t...), append(ours, o...)
		case e.Dir || e.Other:
			theirs = append(theirs, rel)
		case isDataFile(rel):
			ours = append(ours, rel)
		default:
			if name, ok := storage.TempOf(rel); ok && isDataFile(name) {
				ours = append(ours, rel)
			} else {
				theirs = append(theirs, rel)
			}
		}
	}
	return theirs, ours
}

// foreignIn lists the names in folder sub, as sub/<name>, that ours does
// not accept. A folder it cannot list counts as foreign.
func foreignIn(s storage.Store, sub string, ours func(string) bool) []string {
	entries, err := s.List(sub)
	if err != nil {
		return []string{sub}
	}
	var found []string
	for _, e := range entries {
		if e.Dir || e.Other || !ours(e.Name) {
			found = append(found, sub+"/"+e.Name)
		}
	}
	return found
}

// Snapshot returns the state as of the latest version this Table has read
// or written.
func (t *Table) Snapshot() Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.st.snapshot()
}

// Refresh reads the log entries other writers committed since this Table
// last read the log (the other agents of a cluster, another engine), so
// that [Table.Files] and [Table.Snapshot] include them.
func (t *Table) Refresh() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return fmt.Errorf("refresh: %w", errClosed)
	}
	if _, err := t.catchUp(); err != nil {
		return fmt.Errorf("refresh: reading the latest log: %w", err)
	}
	return nil
}

// Counters returns the sums of the commit counters of the table's log as
// read so far (see [Snapshot.Counters]): the cheap part of a snapshot.
func (t *Table) Counters() map[string]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.st.counters)
}

// catchUp reads versions after t.st.version until one does not exist, and
// returns the entries it applied; it notes when they changed the schema
// (see [Table.schemaMoved]). t.mu must be held.
func (t *Table) catchUp() ([]*entry, error) {
	var read []*entry
	prev := t.st.schema
	defer func() {
		if !schema.Equal(prev, t.st.schema) {
			t.schemaMoved = true // the entries read are other writers'
		}
	}()
	for {
		e, err := readVersion(t.s, t.st, t.st.version+1)
		if errors.Is(err, fs.ErrNotExist) {
			return read, nil
		}
		if err != nil {
			return read, err
		}
		read = append(read, e)
	}
}
