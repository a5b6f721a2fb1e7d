package table

import (
	"crypto/rand"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// Folder and file names inside a table folder. Every name this package
// creates outside the data files starts with "_" (Spark, pyarrow, Hive and
// Delta's VACUUM skip those) or, inside _delta_log, with "." (Delta readers
// list only %020d.json and the checkpoint names).
const (
	logDir = "_delta_log"
	// tmpDir holds data files being written, so a half-written file is
	// never read.
	tmpDir = "_tmp"
	// lockFile is the table's lock (see [Open]); it names its holder.
	lockFile = "_tributary.lock"
	// logTmpPrefix starts the name of a log entry being written.
	logTmpPrefix = "."
	tmpSuffix    = ".tmp"
)

// The marker of a table this package created: a key of the first
// metaData action's configuration. Other engines carry the configuration
// forward when they rewrite metaData, and checkpoints keep it, so it
// outlives version 0. Garbage collection deletes files only in tables
// that carry it.
const (
	createdByKey   = "tributary.createdBy"
	createdByValue = engineInfo
)

// uuidPattern matches what newUUID returns.
const uuidPattern = `[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`

var (
	// dataFileRE matches the names newDataFileName gives: Spark's pattern
	// with the agent's name in it,
	// part-<5 digits>-tributary-<uuid>-c000[.<codec>].parquet. Other
	// engines (Spark, delta-rs) name their files part-<5 digits>-<uuid>...,
	// so a file another engine is about to commit (a long OPTIMIZE) never
	// looks like an orphan of the agent's.
	dataFileRE = regexp.MustCompile(`^part-[0-9]{5}-tributary-` + uuidPattern + `-c000(\.[a-z0-9_]+)?\.parquet$`)
	// logTmpRE matches the temporary names of log files on local disk.
	logTmpRE = regexp.MustCompile(`^\.([0-9]{20}\.` + uuidPattern + `\.(json|checkpoint\.parquet)|_last_checkpoint\.` + uuidPattern + `)\.tmp$`)
)

// newDataFileName returns a new, unique data file name; ext is the codec's
// extension ("snappy"), or "" for uncompressed files.
func newDataFileName(ext string) string {
	if ext != "" {
		ext = "." + ext
	}
	return "part-00000-tributary-" + newUUID() + "-c000" + ext + ".parquet"
}

// isDataFile reports whether name (relative to the table folder) is named
// like the data files this package writes. It decides which files a commit
// may add and which files garbage collection may delete; garbage collection
// also requires a table this package created.
func isDataFile(name string) bool { return dataFileRE.MatchString(name) }

// tempDataName is where data file name is written on local disk:
// _tmp/<name>.tmp (see [localStore.tempName]).
func tempDataName(name string) string { return filepath.Join(tmpDir, name+tmpSuffix) }

// isTempDataFile reports whether base, a name inside _tmp/, is one
// tempDataName gives.
func isTempDataFile(base string) bool {
	name, ok := strings.CutSuffix(base, tmpSuffix)
	return ok && isDataFile(name)
}

// isLogTemp reports whether base, a name inside _delta_log, is one the
// local store gives a log entry, checkpoint or _last_checkpoint being
// written (see [localStore.tempName]).
func isLogTemp(base string) bool { return logTmpRE.MatchString(base) }

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
