package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// LocalFormat is the version of the format of a single agent's data folder
// this agent writes and reads. The version is in the folder's format.json
// ({"format": 2}); a folder without one is format 1, the format of every
// release before format.json existed.
//
// Format 2 differs from format 1 in one promise: every secret is stored
// encrypted (agents before the secrets key stored them in plain text,
// which format 1 allows). Format 3 adds fields to the stored objects (a
// pipeline's auto_compact, auto_compact_min_files and auto_vacuum, a
// table's partition_by), which an agent of format 2 would refuse as
// unknown: refusing the folder says why. [Open] migrates a folder of an older format on
// start and refuses one of a newer format, which an agent newer than this
// one wrote: this agent could misread it, or write over what it does not
// know.
const LocalFormat = 3

// formatFile names the file holding the format version: format.json, in a
// single agent's data folder and in a cluster's shared state.
const formatFile = "format.json"

// formatDoc is format.json. A single agent's holds the format alone; a
// cluster's also names the cluster and proves its key.
type formatDoc struct {
	Format  int    `json:"format"`
	Cluster string `json:"cluster,omitempty"`
	// KeyCheck is a known text sealed with the cluster's secrets key: an
	// agent with another key cannot open it, and refuses to join rather
	// than write secrets no other agent can read.
	KeyCheck string `json:"key_check,omitempty"`
}

// parseFormat reads data, the content of the format.json file, and
// refuses (see [newerFormat]) a format newer than known.
func parseFormat(data []byte, file string, known int, fix string) (formatDoc, error) {
	var doc formatDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return doc, fmt.Errorf("reading %s: %w", file, err)
	}
	if doc.Format < 1 {
		return doc, fmt.Errorf("%s holds format %d, which no agent writes: fix the file, or restore it from a backup", file, doc.Format)
	}
	return doc, newerFormat(file, doc.Format, known, fix)
}

// newerFormat returns nil when what, a file or an entry written in format
// got, is of a format this agent reads (known or older), and otherwise an
// error naming it, both formats and fix, what to do.
func newerFormat(what string, got, known int, fix string) error {
	if got <= known {
		return nil
	}
	return fmt.Errorf("%s is written in format %d, and this agent knows format %d and older only: %s", what, got, known, fix)
}

// localFormatFix is what to do about a data folder of a newer format.
const localFormatFix = "run the agent version that wrote it, or a newer one; or restore a backup of the data folder " +
	"taken before that version ran (tributary-agent state restore)"

// readLocalFormat returns the format of the data folder dir: 1 when it has
// no format.json. A newer format than [LocalFormat] is an error naming the
// file and saying what to do.
func readLocalFormat(dir string) (int, error) {
	path := filepath.Join(dir, formatFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading the data folder's format: %w", err)
	}
	doc, err := parseFormat(data, path, LocalFormat, localFormatFix)
	if err != nil {
		return 0, err
	}
	return doc.Format, nil
}

// writeLocalFormat records that the data folder dir is in format, durably.
func writeLocalFormat(dir string, format int) error {
	data, err := encode(&formatDoc{Format: format})
	if err == nil {
		err = writeFileAtomic(dir, formatFile, data)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(dir, formatFile), err)
	}
	return nil
}
