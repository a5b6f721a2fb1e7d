package table

// OpenUnlocked is [Open] without the table folder's lock: tests use it to
// run several writers on one folder on purpose, as writers on a file system
// where flock does not hold would, and prove the log alone keeps them from
// losing or duplicating rows.
func OpenUnlocked(dir string, opts Options) (*Table, error) { return open(dir, opts, false) }

// FirstFileMark is where a Table marks a new table's first data file.
const FirstFileMark = firstFileMark
