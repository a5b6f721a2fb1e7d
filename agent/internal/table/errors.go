package table

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ConflictError is returned by [Table.Commit] when the log does not hold, for
// one of the application ids the commit records, the offset the commit
// starts from ([Commit.From]): another writer committed that partition since
// this writer's rows were read. The rows in the commit's files may overlap
// what the other writer committed, or leave a gap, so the commit cannot be
// retried: [Table.Commit] has already deleted its files, and the caller must
// drop everything it buffered and resume every partition from
// [Table.Snapshot], which reflects the latest log.
type ConflictError struct {
	// Version is the log version whose entry recorded Actual; -1 when the
	// log holds no txn for AppID.
	Version int64
	// AppID is the topic-partition ("<topic>/<partition>") whose
	// offset differs.
	AppID string
	// Expected is the offset the commit starts from (its [Commit.From]
	// value); -1 when the commit expected no txn for AppID yet.
	Expected int64
	// Actual is the offset the log holds; -1 when it holds no txn for AppID.
	Actual int64
}

// Error names the partition, both offsets and the version that wrote the
// log's.
func (e *ConflictError) Error() string {
	offset := func(o int64) string {
		if o < 0 {
			return "no offset"
		}
		return "offset " + strconv.FormatInt(o, 10)
	}
	at := ""
	if e.Version >= 0 {
		at = fmt.Sprintf(" (written at version %d)", e.Version)
	}
	return fmt.Sprintf("commit conflict on %q: the commit's rows start at %s, but the log holds %s%s: another writer committed this partition; drop the buffered rows and resume from the log",
		e.AppID, offset(e.Expected), offset(e.Actual), at)
}

// SchemaConflictError is returned by [Table.Commit] when another writer
// of the table (another agent of a cluster) changed its schema since this
// writer last committed one, and the commit's schema does not fit the new
// one: it lacks a column the other writer added, or gives one another
// type. The writer's columns are behind the log's rather than wrong, so,
// as after a [*ConflictError], [Table.Commit] has deleted the commit's
// files, and the caller must drop what it buffered and start again from
// [Table.Snapshot], with the log's columns. It does not wrap
// [ErrSchemaChange], which says the caller's own columns cannot be
// committed, however often it starts again.
type SchemaConflictError struct {
	// Version is the log version the schema was compared with.
	Version int64
	// Reason says why the commit's schema does not fit the log's.
	Reason error
}

// Error names the version and the reason, and says what to do.
func (e *SchemaConflictError) Error() string {
	return fmt.Sprintf("schema conflict: another writer changed the table's schema, and at version %d this commit's columns do not fit it (%v); "+
		"drop the buffered rows and resume from the log with its columns", e.Version, e.Reason)
}

// LockedError is returned by [Open] when another writer holds the table
// folder's lock: another table loop in this process, or another process.
type LockedError struct {
	// Dir is the table folder.
	Dir string
	// Holder is who holds the lock, as the holder wrote it: its
	// [Options.Owner], pid, host and since when; empty when it has not
	// written it yet.
	Holder string
}

// Error names the folder and the holder, and says what to do.
func (e *LockedError) Error() string {
	holder := e.Holder
	if holder == "" {
		holder = "a writer that has not written its name yet"
	}
	return fmt.Sprintf("table folder %s is being written by %s; a table has one writer at a time: stop that pipeline or agent, or write to another destination table",
		e.Dir, holder)
}

// NotTableError is returned by [Open] and [ReadSnapshot] for a folder that
// holds data but no Delta log: another tool's files, which this package
// must neither mix rows into nor garbage collect. This package's own data
// files, left by a writer killed before the table's first commit (which
// marked the table's first data file), do not count.
type NotTableError struct {
	// Dir is the folder.
	Dir string
	// Found lists what the folder holds, relative to it.
	Found []string
}

// Error names the folder and up to three of the names found, and says what
// to do.
func (e *NotTableError) Error() string {
	names := e.Found
	more := ""
	if len(names) > 3 {
		names, more = names[:3], fmt.Sprintf(" and %d more", len(e.Found)-3)
	}
	return fmt.Sprintf("folder %s holds data that is not a Tributary table (%s%s, but no Delta log); choose another destination table name, or empty the folder",
		e.Dir, strings.Join(names, ", "), more)
}

// ErrCorruptLog is wrapped by every error [Open] and [Table.Commit] return
// for a log entry that cannot be replayed. The message names the file.
var ErrCorruptLog = errors.New("corrupt transaction log")

// ErrSchemaChange is wrapped by the error [Table.Commit] returns when the
// commit's schema is not the table's schema plus new nullable columns. The
// message names the column and the reason.
var ErrSchemaChange = errors.New("unsupported schema change")

// UnsupportedFeatureError is returned by [Open], [ReadSnapshot] and
// [Table.Commit] (wrapped) for a table whose log asks for something this
// package does not implement: a table feature such as deletion vectors or
// column mapping, a protocol version above reader 3 or writer 7, or a kind of
// checkpoint it cannot read. Reading such a table could miscount its rows,
// and writing it could corrupt it for the engines that do implement the
// feature, so the error is final: retrying cannot help until someone changes
// the table.
type UnsupportedFeatureError struct {
	// Feature names what the table uses, in the Delta protocol's terms:
	// "table feature deletionVectors", "reader version 4",
	// "a multi-part checkpoint", ...
	Feature string
	// File is the log file that asks for it.
	File string
}

// Error names the feature and the file, and says what to do.
func (e *UnsupportedFeatureError) Error() string {
	return fmt.Sprintf("%s: the table uses %s, which this agent does not support, so it neither reads nor writes the table; write to another destination table, or have the engine that enabled the feature remove it",
		e.File, e.Feature)
}
