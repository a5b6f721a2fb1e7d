package table

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// Snapshot is the table's state at one log version.
type Snapshot struct {
	// Version is the latest log version, -1 when the table has no log yet.
	Version int64
	// Schema is the table schema, nil before the first commit.
	Schema []schema.Field
	// Txns maps each application id ("<topic>/<partition>") to the
	// version of its latest txn action: the next offset to read.
	Txns map[string]int64
	// Epochs maps application ids of Txns to the Kafka leader epoch of
	// the last record read before that offset, for the ids whose latest
	// txn records one (see [Commit.Epochs]); nil when none does.
	Epochs map[string]int32
	// NumFiles is the number of data files in the table.
	NumFiles int
	// NumRows is the number of rows in the table, summed from the files'
	// stats; files whose stats lack numRecords are not counted.
	NumRows int64
	// Counters sums, over every entry this package wrote, the operation
	// metrics of its commitInfo: numOutputRows, numAddedFiles,
	// numOutputBytes and the caller's [Commit.Counters].
	Counters map[string]int64
	// Configuration is the table configuration of the metaData action, nil
	// before the first commit.
	Configuration map[string]string
}

// state is the replayed log. It is owned by a Table and guarded by its mutex.
type state struct {
	version  int64
	protocol *protocolAction
	meta     *metadataAction
	schema   []schema.Field
	// extra holds the field metadata of schema this package carries to
	// the next schema (see ownMetadata).
	extra schema.Metadata
	// mapping is the table's column mapping, nil without one.
	mapping *columnMapping
	txns    map[string]int64
	// txnVersions maps each application id to the version that recorded
	// its latest txn (for a txn read from a checkpoint, the checkpoint's).
	txnVersions map[string]int64
	// txnUpdated maps each application id to its latest txn's lastUpdated,
	// when it has one.
	txnUpdated map[string]int64
	// txnEpochs maps each application id to its latest txn's leader
	// epoch, when it has one.
	txnEpochs map[string]int32
	// files maps each active data file to its add action.
	files map[string]liveFile
	// tombstones maps each removed data file to its remove action, until
	// [Table.Vacuum] has deleted the file: checkpoints carry them till then.
	tombstones map[string]*removeAction
	// known holds every path any add or remove this state replayed named:
	// garbage collection keeps these (removed files belong to time travel
	// and VACUUM, not to this package).
	known    map[string]struct{}
	counters map[string]int64
}

// liveFile is an active data file: its add action, the numRecords of
// its stats (-1 when unknown) and the version that added it (for a file
// read from a checkpoint, the checkpoint's).
type liveFile struct {
	add     *addAction
	records int64
	version int64
}

func newState() *state {
	return &state{
		version:     -1,
		txns:        map[string]int64{},
		txnVersions: map[string]int64{},
		txnUpdated:  map[string]int64{},
		txnEpochs:   map[string]int32{},
		files:       map[string]liveFile{},
		tombstones:  map[string]*removeAction{},
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
	fields, extra, mapping := s.schema, s.extra, s.mapping
	if e.metaData != nil {
		if p := e.metaData.Format.Provider; p != "parquet" {
			return fmt.Errorf("metaData: format provider %q is not parquet", p)
		}
		var all schema.Metadata
		var err error
		if fields, all, err = schema.ParseSparkJSONWithMetadata(e.metaData.SchemaString); err != nil {
			return fmt.Errorf("metaData schemaString: %w", err)
		}
		if mapping, err = readMapping(e.metaData.Configuration, fields, all); err != nil {
			return fmt.Errorf("metaData: %w", err)
		}
		extra = keepOwn(all)
		if err := checkLegacyFeatures(cmp.Or(e.protocol, s.protocol), e.metaData.Configuration, all); err != nil {
			return err
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
		s.meta, s.schema, s.extra, s.mapping = e.metaData, fields, extra, mapping
	}
	for _, r := range e.removes {
		delete(s.files, r.Path)
		s.tombstones[r.Path] = r
		s.known[r.Path] = struct{}{}
	}
	for i, a := range e.adds {
		s.files[a.Path] = liveFile{add: a, records: records[i], version: v}
		delete(s.tombstones, a.Path)
		s.known[a.Path] = struct{}{}
	}
	for _, t := range e.txns {
		s.txns[t.AppID] = t.Version
		s.txnVersions[t.AppID] = v
		if t.LastUpdated != nil {
			s.txnUpdated[t.AppID] = *t.LastUpdated
		} else {
			delete(s.txnUpdated, t.AppID)
		}
		if t.LeaderEpoch != nil {
			s.txnEpochs[t.AppID] = *t.LeaderEpoch
		} else {
			delete(s.txnEpochs, t.AppID)
		}
	}
	if e.totals != nil {
		s.counters = maps.Clone(e.totals)
	} else {
		for k, n := range e.counters {
			s.counters[k] += n
		}
	}
	s.version = v
	return nil
}

// loadCheckpoint makes s, a new state, the state a checkpoint of version v
// holds, given as an entry, with counters as countersAt found them.
func (s *state) loadCheckpoint(v int64, e *entry, counters map[string]int64) error {
	if e.protocol == nil || e.metaData == nil {
		return fmt.Errorf("the checkpoint lacks a protocol or a metaData action")
	}
	s.version = v - 1
	if err := s.apply(v, e); err != nil {
		return err
	}
	s.counters = counters
	return nil
}

// checkpointRows returns the rows of a checkpoint of s: protocol, metaData,
// then txns, adds and removes, each sorted by key. Adds are marked dataChange false, as in Spark's checkpoints: they
// describe the table, not a change to it.
func (s *state) checkpointRows() []checkpointRow {
	proto := *s.protocol
	// The protocol wants the feature lists present (possibly empty) in a
	// checkpoint exactly when the versions have them.
	proto.ReaderFeatures, proto.WriterFeatures = nil, nil
	if proto.MinReaderVersion >= 3 {
		proto.ReaderFeatures = append([]string{}, s.protocol.ReaderFeatures...)
	}
	if proto.MinWriterVersion >= 7 {
		proto.WriterFeatures = append([]string{}, s.protocol.WriterFeatures...)
	}
	rows := make([]checkpointRow, 0, 2+len(s.txns)+len(s.files)+len(s.tombstones))
	rows = append(rows, checkpointRow{Protocol: &proto}, checkpointRow{MetaData: s.meta})
	for _, appID := range slices.Sorted(maps.Keys(s.txns)) {
		txn := &txnAction{AppID: appID, Version: s.txns[appID]}
		if u, ok := s.txnUpdated[appID]; ok {
			txn.LastUpdated = &u
		}
		if e, ok := s.txnEpochs[appID]; ok {
			txn.LeaderEpoch = &e
		}
		rows = append(rows, checkpointRow{Txn: txn})
	}
	for _, path := range slices.Sorted(maps.Keys(s.files)) {
		add := *s.files[path].add
		add.DataChange = false
		add.Path = encodePath(add.Path) // the state holds decoded paths
		rows = append(rows, checkpointRow{Add: &add})
	}
	for _, path := range slices.Sorted(maps.Keys(s.tombstones)) {
		rm := *s.tombstones[path]
		rm.Path = encodePath(rm.Path)
		rows = append(rows, checkpointRow{Remove: &rm})
	}
	return rows
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
	if len(s.txnEpochs) > 0 {
		snap.Epochs = maps.Clone(s.txnEpochs)
	}
	if s.meta != nil {
		snap.Configuration = maps.Clone(s.meta.Configuration)
	}
	for _, f := range s.files {
		if f.records > 0 {
			snap.NumRows += f.records
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

// expireTombstones forgets the remove actions deleted before cutoff, so
// that checkpoints stop carrying them; one without a deletion time stays
// for vacuum, which ages it by its file.
func (s *state) expireTombstones(cutoff time.Time) {
	for path, r := range s.tombstones {
		if r.DeletionTimestamp != nil && *r.DeletionTimestamp < cutoff.UnixMilli() {
			delete(s.tombstones, path)
		}
	}
}
