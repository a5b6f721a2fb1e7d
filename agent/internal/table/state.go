package table

import (
	"fmt"
	"maps"
	"slices"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/schema"
)

// Snapshot is the table's state at one log version.
type Snapshot struct {
	// Version is the latest log version, -1 when the table has no log yet.
	Version int64
	// Schema is the table schema, nil before the first commit.
	Schema []schema.Field
	// Txns maps each application id ("<table>/<topic>/<partition>") to the
	// version of its latest txn action: the next offset to read.
	Txns map[string]int64
	// NumFiles is the number of data files in the table.
	NumFiles int
	// NumRows is the number of rows in the table, summed from the files'
	// stats; files whose stats lack numRecords are not counted.
	NumRows int64
	// Counters sums, over every entry this package wrote, the operation
	// metrics of its commitInfo: numOutputRows, numAddedFiles,
	// numOutputBytes and the caller's [Commit.Counters].
	Counters map[string]int64
}

// state is the replayed log. It is owned by a Table and guarded by its mutex.
type state struct {
	version  int64
	protocol *protocolAction
	meta     *metadataAction
	schema   []schema.Field
	txns     map[string]int64
	// txnVersions maps each application id to the version that recorded
	// its latest txn.
	txnVersions map[string]int64
	// files maps each active data file to its numRecords (-1 if unknown).
	files map[string]int64
	// known holds every path any add or remove ever named: garbage
	// collection keeps these (removed files belong to time travel and
	// VACUUM, not to this package).
	known    map[string]struct{}
	counters map[string]int64
}

func newState() *state {
	return &state{
		version:     -1,
		txns:        map[string]int64{},
		txnVersions: map[string]int64{},
		files:       map[string]int64{},
		known:       map[string]struct{}{},
		counters:    map[string]int64{},
	}
}

// apply replays entry e as version v. It checks everything that can fail
// before it changes s, so a rejected entry leaves s as it was.
func (s *state) apply(v int64, e *entry) error {
	if v != s.version+1 {
		return fmt.Errorf("version %d follows version %d", v, s.version)
	}
	if s.version < 0 && (e.protocol == nil || e.metaData == nil) {
		return fmt.Errorf("the first entry must hold protocol and metaData actions")
	}
	var fields []schema.Field
	if e.metaData != nil {
		if p := e.metaData.Format.Provider; p != "parquet" {
			return fmt.Errorf("metaData: format provider %q is not parquet", p)
		}
		var err error
		if fields, err = schema.ParseSparkJSON(e.metaData.SchemaString); err != nil {
			return fmt.Errorf("metaData schemaString: %w", err)
		}
	}
	records := make([]int64, len(e.adds))
	for i, a := range e.adds {
		n, err := numRecords(a.Stats)
		if err != nil {
			return fmt.Errorf("add %q: %w", a.Path, err)
		}
		records[i] = n
	}

	if e.protocol != nil {
		s.protocol = e.protocol
	}
	if e.metaData != nil {
		s.meta, s.schema = e.metaData, fields
	}
	for _, r := range e.removes {
		delete(s.files, r.Path)
		s.known[r.Path] = struct{}{}
	}
	for i, a := range e.adds {
		s.files[a.Path] = records[i]
		s.known[a.Path] = struct{}{}
	}
	for _, t := range e.txns {
		s.txns[t.AppID] = t.Version
		s.txnVersions[t.AppID] = v
	}
	for k, n := range e.counters {
		s.counters[k] += n
	}
	s.version = v
	return nil
}

// snapshot copies s into a Snapshot the caller may keep and modify.
func (s *state) snapshot() Snapshot {
	snap := Snapshot{
		Version:  s.version,
		Schema:   slices.Clone(s.schema),
		Txns:     maps.Clone(s.txns),
		NumFiles: len(s.files),
		Counters: maps.Clone(s.counters),
	}
	for _, n := range s.files {
		if n > 0 {
			snap.NumRows += n
		}
	}
	return snap
}

// createdHere reports whether this package created the table: its metaData
// carries the marker, or there is no log yet (the first commit will write
// the marker).
func (s *state) createdHere() bool {
	return s.meta == nil || s.meta.Configuration[createdByKey] == createdByValue
}
