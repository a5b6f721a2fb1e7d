package storage

import (
	"crypto/rand"
	"fmt"
	"path"
	"regexp"
	"strings"
)

// The names the store gives inside a table's folder: its lock file and the
// temporary names of what the local store is writing.
const (
	// TempDir holds data files being written, so a half-written file is
	// never read.
	TempDir = "_tmp"
	// LockFile is the table's lock (see [Open]); it names its holder.
	LockFile = "_tributary.lock"
	// logTmpPrefix starts the name of a log entry being written.
	logTmpPrefix = "."
	tmpSuffix    = ".tmp"
)

// TempName is where name is written before it is linked into place: a data
// file in the table folder as _tmp/<name>.tmp (readers list the folder),
// anything else next to itself as .<stem>.<uuid>[.<rest>].tmp, where stem
// is its name up to the first dot: ".00000000000000000003.<uuid>.json.tmp".
// Garbage collection and [Open] know these names (see names.go).
func TempName(name string) string {
	dir, base := path.Split(name)
	if dir == "" {
		return TempDir + "/" + base + tmpSuffix
	}
	stem, rest, ok := strings.Cut(base, ".")
	if ok {
		rest = "." + rest
	}
	return dir + logTmpPrefix + stem + "." + NewUUID() + rest + tmpSuffix
}

// TempOf returns the name whose temporary name temp is (see [tempName]),
// and whether temp is one: "_tmp/<name>.tmp" gives <name>, and
// "<dir>/.<stem>.<uuid>[.<rest>].tmp" gives "<dir>/<stem>[.<rest>]".
func TempOf(temp string) (name string, ok bool) {
	dir, base := path.Split(temp)
	base, ok = strings.CutSuffix(base, tmpSuffix)
	if !ok {
		return "", false
	}
	if dir == TempDir+"/" {
		return base, true
	}
	base, ok = strings.CutPrefix(base, logTmpPrefix)
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

// UUIDPattern matches what newUUID returns, and uuidLen is its length.
const (
	UUIDPattern = `[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`
	uuidLen     = 36
)

// uuidRE matches a whole UUID newUUID returns.
var uuidRE = regexp.MustCompile(`^` + UUIDPattern + `$`)

// NewUUID returns a random (version 4) UUID.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
