package table

import (
	"fmt"
	"strconv"
)

// The table format is the version of what this package keeps in a table
// beyond the Delta protocol: the tributary.* keys of its configuration
// (the creator's mark, the topics' ids, a fanout's progress), the fields it
// reads back from its own commitInfo (the counters' totals), the txn
// actions' application ids and leader epochs. The Delta protocol's own
// versions and features say what any Delta engine must know; this says
// what an agent must know to append to the table without breaking what a
// newer agent keeps there.
//
// The first commit of a table writes the version into the table property
// tributary.format; a table without the property is format 1, the format of
// every release before the property existed, which is what format 1 still
// is. Existing tables are not given the property: that would take a log
// entry of its own in every table (a metaData action, which Delta
// streaming readers see as a change of the table), for nothing, since
// their content is format 1 already.
const (
	// FormatVersion is the table format this package writes; it appends
	// to tables of this format and older ones, and refuses newer ones
	// (see [NewerFormatError]).
	FormatVersion = 1
	formatKey     = "tributary.format"
)

// NewerFormatError is returned by [Open] and [Table.Commit] for a table
// whose tributary.format property is newer than [FormatVersion], or is not
// a format at all: an agent newer than this one wrote it, and this one
// could break what that one keeps there by appending. The error is final:
// retrying cannot help until this agent is upgraded.
type NewerFormatError struct {
	// Dir is the table folder.
	Dir string
	// Format is the property's value.
	Format string
}

// Error names the table, both formats and what to do.
func (e *NewerFormatError) Error() string {
	return fmt.Sprintf("table %s is in tributary format %q (table property %s), and this agent appends to format %d and older only: "+
		"upgrade this agent to the version that wrote the table, or write to another destination table", e.Dir, e.Format, formatKey, FormatVersion)
}

// checkFormat returns a [*NewerFormatError] unless this package may append
// to the table of metadata meta (nil before the first commit) in dir.
func checkFormat(meta *metadataAction, dir string) error {
	if meta == nil {
		return nil
	}
	v, ok := meta.Configuration[formatKey]
	if !ok {
		return nil // format 1
	}
	if n, err := strconv.Atoi(v); err != nil || n < 1 || n > FormatVersion {
		return &NewerFormatError{Dir: dir, Format: v}
	}
	return nil
}
