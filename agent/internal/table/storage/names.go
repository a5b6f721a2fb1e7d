package storage

import (
	"crypto/rand"
	"fmt"
	"path"
	"regexp"
	"strings"
)

// The names a store gives inside its folder besides the ones it is given:
// the lock file and the temporary names of what the local store is
// writing. They start with "_" or "." so that readers of a table folder
// (Spark, pyarrow, Hive, Delta's VACUUM) skip them. Whoever decides which
// files in a folder are garbage (a table's garbage collection) reads them
// back with [TempOf].
const (
	// TempDir holds the files of the folder itself being written (a
	// table's data files), so that a reader listing the folder never reads
	// a half-written file.
	TempDir = "_tmp"
	// LockFile is the local store's writer lock (see [Store.Lock]); it
	// names its holder.
	LockFile = "_tributary.lock"
	// tempPrefix starts the temporary name of a file in a subfolder.
	tempPrefix = "."
	tempSuffix = ".tmp"
)

// TempName is where the local store writes name before it links it into
// place: a file of the folder itself as _tmp/<name>.tmp (readers list the
// folder), anything else next to itself as .<stem>.<uuid>[.<rest>].tmp,
// where stem is its name up to the first dot:
// "_delta_log/.00000000000000000003.<uuid>.json.tmp". The uuid keeps two
// writers of one name apart until one of them wins the link.
func TempName(name string) string {
	dir, base := path.Split(name)
	if dir == "" {
		return TempDir + "/" + base + tempSuffix
	}
	stem, rest, ok := strings.Cut(base, ".")
	if ok {
		rest = "." + rest
	}
	return dir + tempPrefix + stem + "." + NewUUID() + rest + tempSuffix
}

// TempOf returns the name whose temporary name temp is (see [TempName]),
// and whether temp is one: "_tmp/<name>.tmp" gives <name>, and
// "<dir>/.<stem>.<uuid>[.<rest>].tmp" gives "<dir>/<stem>[.<rest>]".
func TempOf(temp string) (name string, ok bool) {
	dir, base := path.Split(temp)
	base, ok = strings.CutSuffix(base, tempSuffix)
	if !ok {
		return "", false
	}
	if dir == TempDir+"/" {
		return base, true
	}
	base, ok = strings.CutPrefix(base, tempPrefix)
	stem, after, cut := strings.Cut(base, ".")
	if !ok || !cut || len(after) < uuidLen || !uuidRE.MatchString(after[:uuidLen]) {
		return "", false
	}
	rest := after[uuidLen:]
	if rest != "" && rest[0] != '.' {
		return "", false
	}
	return dir + stem + rest, true
}

// UUIDPattern matches what [NewUUID] returns, and uuidLen is its length.
const (
	UUIDPattern = `[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`
	uuidLen     = 36
)

// uuidRE matches a whole UUID [NewUUID] returns.
var uuidRE = regexp.MustCompile(`^` + UUIDPattern + `$`)

// NewUUID returns a random (version 4) UUID: what makes temporary names
// unique, and a table's data files and column names.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
