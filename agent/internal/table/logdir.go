package table

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
)

// logKind is the kind of a file of the log in _delta_log.
type logKind uint8

// The kinds, in the order of logFileRE's groups.
const (
	// kindEntry is a log entry, <v>.json.
	kindEntry logKind = iota + 1
	// kindCheckpoint is a classic single-file checkpoint,
	// <v>.checkpoint.parquet: the only kind this package reads and writes.
	kindCheckpoint
	// kindMultiPart is one part of a multi-part checkpoint,
	// <v>.checkpoint.<part>.<parts>.parquet.
	kindMultiPart
	// kindUUIDCheckpoint is a V2 checkpoint, <v>.checkpoint.<uuid>.json or
	// .parquet.
	kindUUIDCheckpoint
	// kindChecksum is a version checksum, <v>.crc.
	kindChecksum
)

// unreadable names the kinds of checkpoints this package cannot read, as
// [UnsupportedFeatureError] reports them.
var unreadable = map[logKind]string{
	kindMultiPart:      "a multi-part checkpoint",
	kindUUIDCheckpoint: "a V2 (UUID-named) checkpoint",
}

// logFileRE matches the names of the log's files: the first group is the
// version, and the index of the other group that matched is the kind.
var logFileRE = regexp.MustCompile(`^([0-9]{20})\.(?:(json)|(checkpoint\.parquet)|(checkpoint\.[0-9]{10}\.[0-9]{10}\.parquet)|(checkpoint\.[^.]+\.(?:json|parquet))|(crc))$`)

// logFile is one file of the log.
type logFile struct {
	name    string // base name, in _delta_log
	version int64
	kind    logKind
	modTime time.Time
}

// listLog lists the files of the log of the table in s whose version is at
// least from, in version order; none when there is no log. Other files
// (temporary files, _last_checkpoint, log compactions) are left out.
func listLog(s storage.Store, from int64) ([]logFile, error) {
	entries, err := s.List(logDir)
	if err != nil {
		return nil, fmt.Errorf("listing log: %w", err)
	}
	var files []logFile
	for _, de := range entries {
		if de.Dir {
			continue
		}
		m := logFileRE.FindStringSubmatch(de.Name)
		if m == nil {
			continue
		}
		v, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil || v < from {
			continue
		}
		f := logFile{name: de.Name, version: v, modTime: de.ModTime}
		for i, group := range m[2:] {
			if group != "" {
				f.kind = logKind(i + 1)
			}
		}
		files = append(files, f)
	}
	slices.SortFunc(files, func(a, b logFile) int { return cmp.Compare(a.version, b.version) })
	return files, nil
}

// errNoStart is returned by replayFrom when the files it listed hold no
// checkpoint to start from.
var errNoStart = errors.New("no checkpoint to start from")

// replay reads the table in s at its latest version, as Delta
// readers do: from the newest classic checkpoint followed by every entry
// after it, or from every entry when no checkpoint covers the log.
// _last_checkpoint says where to start looking; when it is missing,
// invalid or stale (its checkpoint is gone), the whole log is considered.
//
// Multi-part and V2 checkpoints are not read: a log that only they cover
// (the entries before them deleted) is an [*UnsupportedFeatureError]. A
// checkpoint that cannot be read is skipped for an older one, or for the
// entries alone, when the log still has what that takes.
func replay(s storage.Store) (*state, error) {
	from := readLastCheckpoint(s)
	st, err := replayFrom(s, from)
	if errors.Is(err, errNoStart) {
		st, err = replayFrom(s, 0)
	}
	return st, err
}

// replayFrom is replay, considering only the files of versions from and
// later. When from > 0, a checkpoint is needed to start from.
func replayFrom(s storage.Store, from int64) (*state, error) {
	files, err := listLog(s, from)
	if err != nil {
		return nil, err
	}
	entries := map[int64]bool{}
	var checkpoints []int64
	var others []logFile
	latest := int64(-1)
	for _, f := range files {
		switch f.kind {
		case kindEntry:
			entries[f.version] = true
		case kindCheckpoint:
			checkpoints = append(checkpoints, f.version)
		case kindMultiPart, kindUUIDCheckpoint:
			others = append(others, f)
		default:
			continue
		}
		latest = max(latest, f.version)
	}
	// missing returns the first version in [lo, latest] with no entry, or
	// -1 when there is none.
	missing := func(lo int64) int64 {
		for v := lo; v <= latest; v++ {
			if !entries[v] {
				return v
			}
		}
		return -1
	}

	var skipped error
	for _, c := range slices.Backward(checkpoints) {
		if missing(c+1) >= 0 {
			break // an older checkpoint needs the same entries, and more
		}
		st, err := fromCheckpoint(s, c)
		if errors.Is(err, ErrCorruptLog) {
			skipped = err
			continue
		}
		if err == nil {
			err = readEntries(s, st, latest)
		}
		return st, err
	}
	if from > 0 {
		return nil, errNoStart
	}
	if m := missing(0); m >= 0 {
		if skipped != nil {
			return nil, skipped
		}
		for _, f := range others {
			if f.version >= m {
				return nil, &UnsupportedFeatureError{Feature: unreadable[f.kind], File: logName(s, f.name)}
			}
		}
		return nil, fmt.Errorf("%w: %s: log version %d is missing, and no checkpoint covers it", ErrCorruptLog, logName(s, ""), m)
	}
	st := newState()
	return st, readEntries(s, st, latest)
}

// fromCheckpoint returns the state the classic checkpoint of version c of
// the table in s holds. A checkpoint that cannot be read is an error
// wrapping [ErrCorruptLog]; one that asks for a feature this package
// lacks, an [*UnsupportedFeatureError].
func fromCheckpoint(s storage.Store, c int64) (*state, error) {
	name := logName(s, checkpointName(c))
	e, err := readCheckpoint(s, logDir+"/"+checkpointName(c), name)
	if err != nil {
		return nil, err
	}
	if e.protocol != nil {
		if err := checkProtocol(e.protocol, name); err != nil {
			return nil, err
		}
	}
	st := newState()
	if err := st.loadCheckpoint(c, e, countersAt(s, c)); err != nil {
		return nil, logError(name, err)
	}
	return st, nil
}

// readEntries applies the entries after st's version up to latest. On
// error, st is left at the last entry it could apply.
func readEntries(s storage.Store, st *state, latest int64) error {
	for v := st.version + 1; v <= latest; v++ {
		if _, err := readVersion(s, st, v); err != nil {
			return err
		}
	}
	return nil
}

// readVersion reads log version v of the table in s and applies it to
// st. A missing file is returned as an error wrapping fs.ErrNotExist; an
// entry that asks for a feature this package lacks, as an
// [*UnsupportedFeatureError], before anything of it is applied.
func readVersion(s storage.Store, st *state, v int64) (*entry, error) {
	name := logName(s, entryName(v))
	data, err := s.Read(logPath(v))
	if err != nil {
		return nil, fmt.Errorf("reading log: %w", err)
	}
	e, err := parseEntry(data)
	if err == nil && e.protocol != nil {
		if err := checkProtocol(e.protocol, name); err != nil {
			return nil, err
		}
	}
	if err == nil {
		err = st.apply(v, e)
	}
	if err != nil {
		return nil, logError(name, err)
	}
	return e, nil
}

// logError returns err, which replaying log file name gave: an
// [*UnsupportedFeatureError] naming the file, or else an error wrapping
// [ErrCorruptLog].
func logError(name string, err error) error {
	var unsupported *UnsupportedFeatureError
	if errors.As(err, &unsupported) {
		unsupported.File = name
		return unsupported
	}
	return fmt.Errorf("%w: %s: %w", ErrCorruptLog, name, err)
}

// entryName is the base name of the entry of log version v.
func entryName(v int64) string { return fmt.Sprintf("%020d.json", v) }

// logPath is the name of the entry of log version v in its table.
func logPath(v int64) string { return logDir + "/" + entryName(v) }

// logName is the log file base in the table in s, in full, for messages.
func logName(s storage.Store, base string) string { return filepath.Join(s.String(), logDir, base) }

// countersAt returns the counters of the table in s as of version v,
// for a state read from a checkpoint, which keeps no commitInfo: from the
// entries at and before v, back to the latest one this package wrote with
// totals (see [commitInfo.Totals]), summing the metrics of older entries of
// this package on the way. It is a best effort: it stops at the first
// entry that is gone (cleaned up) or unreadable.
func countersAt(s storage.Store, v int64) map[string]int64 {
	sum := map[string]int64{}
	for ; v >= 0; v-- {
		data, err := s.Read(logPath(v))
		if err != nil {
			break
		}
		e, err := commitCounters(data)
		if err != nil {
			break
		}
		if e.totals != nil {
			for k, n := range e.totals {
				sum[k] += n
			}
			break
		}
		for k, n := range e.counters {
			sum[k] += n
		}
	}
	return sum
}

// commitCounters decodes only the commitInfo of log entry data.
func commitCounters(data []byte) (*entry, error) {
	e := &entry{}
	for line := range bytes.Lines(data) {
		if !bytes.Contains(line, []byte(`"commitInfo"`)) {
			continue
		}
		var l struct {
			CommitInfo json.RawMessage `json:"commitInfo"`
		}
		if err := json.Unmarshal(line, &l); err != nil {
			return nil, err
		}
		if l.CommitInfo != nil {
			return e, e.setCounters(l.CommitInfo)
		}
	}
	return e, nil
}
