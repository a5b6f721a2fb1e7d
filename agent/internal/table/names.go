package table

import (
	"regexp"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
)

// Folder and file names inside a table folder. Every name this package
// creates outside the data files starts with "_" (Spark, pyarrow, Hive and
// Delta's VACUUM skip those) or, inside _delta_log, with "." (Delta readers
// list only %020d.json and the checkpoint names). The lock file and the
// temporary names of files being written are package storage's
// ([storage.LockFile], [storage.TempName]); this package recognises its own
// among them ([isTempDataFile], [isLogTemp]).
const logDir = "_delta_log"

// firstFileMark is the file, in _delta_log, that a Table writes before the
// first data file of a table whose log holds nothing yet. With it, a
// folder holding this package's data files but no log entry is a table
// whose writer was killed before its first commit (see checkFolder);
// without it, those files are not leftovers of ours to take over: a table
// whose log was deleted, say. Delta readers list only the log's entries
// and checkpoints, and skip it.
const firstFileMark = logDir + "/.tributary-first-file"

// The marker of a table this package created: a key of the first
// metaData action's configuration. Other engines carry the configuration
// forward when they rewrite metaData, and checkpoints keep it, so it
// outlives version 0. Garbage collection deletes files only in tables
// that carry it.
const (
	createdByKey   = "tributary.createdBy"
	createdByValue = engineInfo
)

// dataFileRE matches the names newDataFileName gives: Spark's pattern with
// the agent's name in it,
// part-<5 digits>-tributary-<uuid>-c000[.<codec>].parquet. Other engines
// (Spark, delta-rs) name their files part-<5 digits>-<uuid>..., so a file
// another engine is about to commit (a long OPTIMIZE) never looks like an
// orphan of the agent's. In a partitioned table the name is inside the
// folders of its partition values, <column>=<value>/ each.
var dataFileRE = regexp.MustCompile(`^(?:[^/=]+=[^/]*/)*part-[0-9]{5}-tributary-` + storage.UUIDPattern + `-c000(\.[a-z0-9_]+)?\.parquet$`)

// newDataFileName returns a new, unique data file name; ext is the codec's
// extension ("snappy"), or "" for uncompressed files.
func newDataFileName(ext string) string {
	if ext != "" {
		ext = "." + ext
	}
	return "part-00000-tributary-" + storage.NewUUID() + "-c000" + ext + ".parquet"
}

// isDataFile reports whether name (relative to the table folder) is named
// like the data files this package writes. It decides which files a commit
// may add and which files garbage collection may delete; garbage collection
// also requires a table this package created.
func isDataFile(name string) bool { return dataFileRE.MatchString(name) }

// isTempDataFile reports whether base, a name inside _tmp/, is the
// temporary name the local store gives a data file (see [storage.TempName]).
func isTempDataFile(base string) bool {
	name, ok := storage.TempOf(storage.TempDir + "/" + base)
	return ok && isDataFile(name)
}

// isLogTemp reports whether base, a name inside _delta_log, is the
// temporary name the local store gives a log entry, checkpoint,
// _last_checkpoint or firstFileMark being written (see [storage.TempName]).
func isLogTemp(base string) bool {
	name, ok := storage.TempOf(logDir + "/" + base)
	if !ok {
		return false
	}
	if name == firstFileMark {
		return true // the mark, being written
	}
	name = strings.TrimPrefix(name, logDir+"/")
	if name == lastCheckpointFile {
		return true
	}
	m := logFileRE.FindStringSubmatch(name) // an entry or a classic checkpoint
	return m != nil && (m[kindEntry+1] != "" || m[kindCheckpoint+1] != "")
}
