package table

import (
	"errors"
	"fmt"
)

// ErrConflict is returned by [Table.Commit] when another writer committed,
// after this writer's snapshot was taken, a txn for one of the topic-partitions
// this commit records. The rows in the losing commit's files were read from
// offsets that the winner may have committed too, so the commit cannot be
// retried: [Table.Commit] has already deleted its files, and the caller must
// drop everything it buffered and resume every partition from
// [Table.Snapshot], which reflects the winner.
type ErrConflict struct {
	// Version is the log version whose entry recorded AppID first.
	Version int64
	// AppID is one topic-partition ("<table>/<topic>/<partition>") that both
	// writers recorded.
	AppID string
}

// Error names the version and the application id the writers raced on.
func (e *ErrConflict) Error() string {
	return fmt.Sprintf("commit conflict: version %d, written by another writer, already records %q; drop buffered rows and resume from the log", e.Version, e.AppID)
}

// ErrCorruptLog is wrapped by every error [Open] and [Table.Commit] return
// for a log entry that cannot be replayed. The message names the file.
var ErrCorruptLog = errors.New("corrupt transaction log")

// ErrSchemaChange is wrapped by the error [Table.Commit] returns when the
// commit's schema is not the table's schema plus new nullable columns. The
// message names the column and the reason.
var ErrSchemaChange = errors.New("unsupported schema change")
