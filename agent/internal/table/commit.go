package table

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// Commit is what one log entry records.
type Commit struct {
	// Schema is the table schema after this commit. It is required on the
	// first commit; nil (or the current schema) leaves it unchanged. A
	// different schema may only add nullable columns (see
	// [CheckSchemaChange]), and becomes a metaData action. Column names
	// may hold any character: a schema with a name plain Delta tables
	// cannot hold (a space or any of ,;{}()= tab newline, at any depth)
	// turns on column mapping (see [Table.NewFile]).
	Schema []schema.Field
	// AllowTypeWidening lets Schema also change column types as Delta's
	// type widening allows (see [CheckSchemaWidening]). A commit that
	// widens a type gives the table the typeWidening feature and the
	// property delta.enableTypeWidening = true, and records the change in
	// the field's delta.typeChanges metadata; files written before keep
	// their narrower types, which readers widen.
	AllowTypeWidening bool
	// Files are the data files to add, as returned by [FileWriter.Close] or
	// [SealedFile.Wait].
	Files []AddFile
	// Txns maps each application id ("<topic>/<partition>") to the
	// next offset to read from that partition.
	Txns map[string]int64
	// Epochs maps application ids of Txns to the Kafka leader epoch of the
	// last record read before the Txns offset, written with the txn (see
	// [Snapshot.Epochs]); an id it leaves out has no epoch from then on.
	Epochs map[string]int32
	// From maps application ids of Txns to the offset the commit's rows of
	// that partition start from: the value the log must hold for the id
	// when the entry is written (the previous commit's Txns value). An id
	// of Txns absent from From must have no txn in the log yet: the
	// partition's first commit. Otherwise [Table.Commit] fails with
	// [*ConflictError]. A Txns value may not be lower than its From value:
	// offsets never move backwards.
	From map[string]int64
	// Rewinds lists application ids of Txns whose offset may go below its
	// From value: the partitions of a topic that was deleted and created
	// again, whose offsets start over.
	Rewinds []string
	// Counters are added to the commit's operation metrics and summed into
	// [Snapshot.Counters], e.g. "numCorruptRecords". The names
	// numOutputRows, numAddedFiles and numOutputBytes are reserved.
	Counters map[string]int64
	// Parameters are added to the commit's operation parameters (its
	// commitInfo's operationParameters), e.g. the offsets a table skipped;
	// outputMode is reserved.
	Parameters map[string]string
	// Configuration sets keys of the table configuration (the metaData
	// action's); a commit that changes any writes a metaData action. Other
	// engines carry the configuration forward, so it suits facts about the
	// table that must outlive checkpoints, such as the ids of the topics
	// it reads.
	Configuration map[string]string
	// Partitioning is the partition layout of the writer's files: on the
	// first commit, the table's; afterwards it must be the table's (see
	// [Table.CheckPartitioning]), else Commit fails with
	// [*PartitionChangeError]. nil leaves it unchecked, for commits that
	// only rearrange files the table has; Files must still carry the
	// table's partition columns.
	Partitioning *Partitioning
}

// Operation metrics every commit carries.
const (
	MetricOutputRows  = "numOutputRows"
	MetricAddedFiles  = "numAddedFiles"
	MetricOutputBytes = "numOutputBytes"
)

// paramOutputMode is the operation parameter every commit carries, as
// Spark's streaming writes do.
const paramOutputMode = "outputMode"

// noTxn stands for "no txn recorded" in [ConflictError].
const noTxn = -1

// Commit writes one log entry and returns its version.
//
// Commit first reads the entries other writers committed, then checks the
// offset preconditions of [Commit.From] against that latest state and that
// every file to add is still there. It then creates the entry put-if-absent
// at the next version; if another writer created that version first, it
// reads the winner's entry and checks again, so the preconditions hold
// against the version right before the entry written. When they do not
// hold, Commit deletes c's files and returns [*ConflictError]: nothing is
// written twice and offsets never move backwards, whoever else writes.
//
// When another writer changed the table's schema since this Table last
// committed one (read by a catch-up), and c's schema does not fit the
// new one (a column the other writer added is missing, or has another
// type), Commit deletes c's files and returns [*SchemaConflictError]: the
// caller's columns are behind the log's, not wrong.
//
// On any other error the outcome is unknown (the entry may exist): the
// caller must discard its buffered state, [Table.Close] the table, [Open]
// it again and resume from [Table.Snapshot]. An error wrapping
// [*UnsupportedFeatureError] means another engine gave the table a feature
// this package does not implement, and a [*NewerFormatError] that a newer
// agent wrote the table: no retry will succeed.
//
// After an entry whose version is a multiple of the table's
// delta.checkpointInterval (10 unless the table says otherwise), Commit
// writes a checkpoint and cleans up the log; what fails there goes to
// [Options.Logger], not to the caller, since the entry is durable.
func (t *Table) Commit(c Commit) (int64, error) {
	if err := checkCommit(&c); err != nil {
		return 0, fmt.Errorf("commit: %w", err)
	}
	return t.publish("commit", c.Files, func() ([]action, *entry, error) {
		if err := t.checkFrom(&c); err != nil {
			t.dropFiles(c.Files)
			return nil, nil, err
		}
		if err := t.checkFiles(c.Files); err != nil {
			return nil, nil, fmt.Errorf("commit: %w", err)
		}
		if err := t.checkPartitionValues(&c); err != nil {
			return nil, nil, fmt.Errorf("commit: %w", err)
		}
		actions, e, err := t.buildEntry(&c)
		if err != nil && t.schemaMoved && errors.Is(err, ErrSchemaChange) {
			t.dropFiles(c.Files)
			return nil, nil, &SchemaConflictError{Version: t.st.version, Reason: err}
		}
		if err != nil {
			return nil, nil, fmt.Errorf("commit: %w", err)
		}
		return actions, e, nil
	}, func() {
		if c.Schema != nil {
			t.schemaMoved = false // the log's schema is the commit's
		}
	})
}

// publish writes a log entry at the version after the latest, holding
// t.mu: it reads the entries other writers committed, asks prepare for the
// entry's actions (and the entry as replay would decode it) against that
// state, and creates the entry put-if-absent; when another writer created
// that version first, it reads the winner's entry and asks prepare again.
// The error of prepare is returned as it is. Once the entry is written and
// applied, it calls applied (when set) and maintains the log. adds are the
// data files the entry adds, no longer pending once it is written. op
// names the operation in errors.
func (t *Table) publish(op string, adds []AddFile, prepare func() ([]action, *entry, error), applied func()) (int64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return 0, fmt.Errorf("%s: %w", op, errClosed)
	}
	for {
		if _, err := t.catchUp(); err != nil {
			return 0, fmt.Errorf("%s: reading the latest log: %w", op, err)
		}
		actions, e, err := prepare()
		if err != nil {
			return 0, err
		}
		v := t.st.version + 1
		won, err := t.putEntry(v, actions)
		if err != nil {
			return 0, fmt.Errorf("%s version %d: %w", op, v, err)
		}
		if won {
			if err := t.st.apply(v, e); err != nil {
				// Unreachable unless the entry's actions and e disagree;
				// the entry is durable, so report a state the caller must
				// reload.
				return 0, fmt.Errorf("%s version %d: applying own entry: %w", op, v, err)
			}
			for _, f := range adds {
				delete(t.pending, f.Path)
			}
			if applied != nil {
				applied()
			}
			if t.marked || v == 0 {
				// The log holds an entry now: the mark has done its work.
				t.marked = false
				_ = t.s.Remove(firstFileMark) // one left behind is harmless
			}
			t.maintainLog()
			return v, nil
		}
		// Another writer created version v first: read it and check again.
	}
}

// configurationChanges reports whether setting conf changes the
// configuration of meta (nil before the first commit).
func configurationChanges(meta *metadataAction, conf map[string]string) bool {
	for k, v := range conf {
		if meta == nil {
			return true
		}
		if cur, ok := meta.Configuration[k]; !ok || cur != v {
			return true
		}
	}
	return false
}

// checkCommit validates c before anything is written.
func checkCommit(c *Commit) error {
	if len(c.Files) == 0 && len(c.Txns) == 0 && c.Schema == nil && len(c.Configuration) == 0 {
		return errors.New("nothing to commit: no files, txns, schema or configuration")
	}
	for key := range c.Configuration {
		if key == "" || key == createdByKey || key == formatKey {
			return fmt.Errorf("configuration key %q cannot be set", key)
		}
	}
	for name := range c.Counters {
		if name == MetricOutputRows || name == MetricAddedFiles || name == MetricOutputBytes {
			return fmt.Errorf("counter name %q is reserved", name)
		}
	}
	if _, ok := c.Parameters[paramOutputMode]; ok {
		return fmt.Errorf("operation parameter %q is reserved", paramOutputMode)
	}
	for appID, next := range c.Txns {
		if appID == "" {
			return errors.New("txn with an empty application id")
		}
		if next < 0 {
			return fmt.Errorf("txn %q: next offset %d is negative", appID, next)
		}
	}
	for appID, from := range c.From {
		next, ok := c.Txns[appID]
		switch {
		case !ok:
			return fmt.Errorf("from offset for %q, which the commit records no txn for", appID)
		case from < 0:
			return fmt.Errorf("txn %q: from offset %d is negative", appID, from)
		case next < from && !slices.Contains(c.Rewinds, appID):
			return fmt.Errorf("txn %q: next offset %d is before the from offset %d: offsets never move backwards", appID, next, from)
		}
	}
	return checkAdds(c.Files, map[string]bool{})
}

// checkAdds validates the files a commit adds: data files this package
// wrote, none named twice, nor in seen (the paths the commit names
// otherwise), and stats that count the rows the file holds.
func checkAdds(files []AddFile, seen map[string]bool) error {
	for _, f := range files {
		if !isDataFile(f.Path) {
			return fmt.Errorf("file %q is not a data file written by this package", f.Path)
		}
		if seen[f.Path] {
			return fmt.Errorf("file %q is added twice, or removed and added, in one commit", f.Path)
		}
		seen[f.Path] = true
		if f.Stats == "" {
			continue
		}
		if n, err := numRecords(f.Stats); err != nil {
			return fmt.Errorf("file %q: %w", f.Path, err)
		} else if n != f.NumRecords {
			return fmt.Errorf("file %q: its stats count %d records, not %d", f.Path, n, f.NumRecords)
		}
	}
	return nil
}

// checkFrom returns [*ConflictError] unless, for every application id c
// records, the log's latest txn is the offset c starts from. t.mu must be
// held.
func (t *Table) checkFrom(c *Commit) error {
	for _, appID := range slices.Sorted(maps.Keys(c.Txns)) {
		want, ok := c.From[appID]
		if !ok {
			want = noTxn
		}
		got, ok := t.st.txns[appID]
		at := t.st.txnVersions[appID]
		if !ok {
			got, at = noTxn, -1
		}
		if got != want {
			return &ConflictError{Version: at, AppID: appID, Expected: want, Actual: got}
		}
	}
	return nil
}

// checkFiles reports whether every file is in the table folder with the
// size it was written with, so that a commit never adds a file that is
// gone. t.mu must be held: it keeps this Table's garbage collection away.
func (t *Table) checkFiles(files []AddFile) error {
	for _, f := range files {
		fi, err := t.s.Stat(f.Path)
		if err != nil {
			return fmt.Errorf("file %q: %w", f.Path, err)
		}
		if fi.Size != f.Size {
			return fmt.Errorf("file %q has %d bytes, not the %d it was written with", f.Path, fi.Size, f.Size)
		}
	}
	return nil
}

// buildEntry returns the actions of c's entry at the version after t.st, and
// the same entry as replay would decode it. t.mu must be held.
func (t *Table) buildEntry(c *Commit) ([]action, *entry, error) {
	st := t.st
	now := t.opts.Now().UnixMilli()
	e := &entry{counters: map[string]int64{}}
	var actions []action

	if err := checkFormat(st.meta, t.s.String()); err != nil {
		return nil, nil, err
	}
	if c.Partitioning != nil {
		if err := t.checkPartitioning(c.Partitioning); err != nil {
			return nil, nil, err
		}
	}
	fields := c.Schema
	var changes []typeChange
	switch {
	case st.meta == nil && len(fields) == 0:
		return nil, nil, errors.New("the first commit of a table needs a schema with at least one column")
	case st.meta != nil && (fields == nil || schema.Equal(st.schema, fields)):
		fields = nil
	case st.meta != nil:
		var err error
		if changes, err = compareSchemas(st.schema, fields, c.AllowTypeWidening); err != nil {
			return nil, nil, err
		}
	}
	meta, metaFields := st.meta, st.schema
	newMeta := fields != nil || configurationChanges(st.meta, c.Configuration)
	if newMeta {
		var md metadataAction
		if st.meta != nil {
			md = *st.meta
			md.Configuration = maps.Clone(md.Configuration)
			if md.Configuration == nil {
				md.Configuration = map[string]string{}
			}
		} else {
			md = metadataAction{
				ID:               storage.NewUUID(),
				Format:           formatSpec{Provider: "parquet", Options: map[string]string{}},
				PartitionColumns: []string{},
				Configuration:    map[string]string{createdByKey: createdByValue, formatKey: strconv.Itoa(FormatVersion)},
				CreatedTime:      &now,
			}
			md.Configuration[propAppendOnly] = "true"
			if c.Partitioning != nil && len(c.Partitioning.Columns) > 0 {
				md.PartitionColumns = slices.Clone(c.Partitioning.Columns)
			}
		}
		maps.Copy(md.Configuration, c.Configuration)
		if fields != nil {
			var generated map[string]string
			if st.meta == nil && c.Partitioning != nil {
				generated = c.Partitioning.Generated
			}
			js, err := t.schemaString(fields, changes, md.Configuration, generated)
			if err != nil {
				return nil, nil, err
			}
			md.SchemaString, metaFields = js, fields
		}
		meta = &md
	}
	// Every entry leaves a protocol that lists what the metadata implies: a
	// new schema may need more, and a table an earlier version wrote (NOT
	// NULL fields without the invariants feature) is repaired.
	generated := hasGenerated(st.extra) || st.meta == nil && c.Partitioning != nil && len(c.Partitioning.Generated) > 0
	if p := requiredProtocol(st.protocol, metaFields, meta.Configuration, generated); p != nil {
		e.protocol = p
		actions = append(actions, action{Protocol: p})
	}
	if newMeta {
		e.metaData = meta
		actions = append(actions, action{MetaData: meta})
	}

	for _, appID := range slices.Sorted(maps.Keys(c.Txns)) {
		txn := &txnAction{AppID: appID, Version: c.Txns[appID], LastUpdated: &now}
		if e, ok := c.Epochs[appID]; ok {
			txn.LeaderEpoch = &e
		}
		e.txns = append(e.txns, txn)
		actions = append(actions, action{Txn: txn})
	}
	var rows, bytes int64
	for _, f := range c.Files {
		add, wire := addActionOf(f, f.PartitionValues, true)
		e.adds = append(e.adds, add)
		actions = append(actions, wire)
		rows += f.NumRecords
		bytes += f.Size
	}

	metrics := map[string]metric{
		MetricOutputRows:  metric(rows),
		MetricAddedFiles:  metric(len(c.Files)),
		MetricOutputBytes: metric(bytes),
	}
	for k, n := range c.Counters {
		metrics[k] = metric(n)
	}
	e.totals = maps.Clone(st.counters)
	for k, n := range metrics {
		e.counters[k] = int64(n)
		e.totals[k] += int64(n)
	}
	params := map[string]string{paramOutputMode: "Append"}
	maps.Copy(params, c.Parameters)
	info := &commitInfo{
		Timestamp:           now,
		Operation:           "STREAMING UPDATE",
		OperationParameters: params,
		IsBlindAppend:       true,
		OperationMetrics:    metrics,
		EngineInfo:          engineInfo,
		Totals:              e.totals,
	}
	if st.version >= 0 {
		rv := st.version
		info.ReadVersion = &rv
	}
	actions = append([]action{{CommitInfo: info}}, actions...)
	return actions, e, nil
}

// addActionOf returns the add action of data file f, whose partition
// values are parts, as replay decodes it, and as the log entry holds it:
// its path percent-encoded, as the protocol asks of every path.
func addActionOf(f AddFile, parts map[string]string, dataChange bool) (*addAction, action) {
	add := &addAction{
		Path:             f.Path,
		PartitionValues:  maps.Clone(parts),
		Size:             f.Size,
		ModificationTime: f.ModificationTime.UnixMilli(),
		DataChange:       dataChange,
		Stats:            f.Stats,
	}
	if add.PartitionValues == nil {
		add.PartitionValues = map[string]string{}
	}
	if add.Stats == "" {
		add.Stats = fmt.Sprintf(`{"numRecords":%d}`, f.NumRecords)
	}
	wire := *add
	wire.Path = encodePath(f.Path)
	return add, action{Add: &wire}
}

// schemaString returns the schemaString of a new metaData action with
// columns fields and configuration config, which it updates: the field
// metadata of the current schema this package keeps, the column mapping
// (turned on when fields need it), and the type changes from the current
// schema, and the generation expressions of a new table's generated
// columns. t.mu must be held.
func (t *Table) schemaString(fields []schema.Field, changes []typeChange, config map[string]string, generated map[string]string) (string, error) {
	extra := keepOwn(t.st.extra)
	if err := generatedMetadata(extra, generated); err != nil {
		return "", fmt.Errorf("recording generated columns: %w", err)
	}
	paths, err := fieldPaths(fields)
	if err != nil {
		return "", fmt.Errorf("encoding schema: %w", err)
	}
	if m := t.mappingFor(paths); m != nil {
		m.record(config, extra)
	}
	if len(changes) > 0 {
		config[propTypeWidening] = "true"
		if err := recordTypeChanges(extra, changes); err != nil {
			return "", fmt.Errorf("recording type changes: %w", err)
		}
	}
	js, err := schema.SparkJSONWithMetadata(fields, extra)
	if err != nil {
		return "", fmt.Errorf("encoding schema: %w", err)
	}
	return js, nil
}

// putEntry creates log version v put-if-absent (a hard link on local disk,
// a conditional write on an object store): readers never see a partial
// entry, and of two writers of one version only one wins. It returns
// false, and no error, when v already exists.
func (t *Table) putEntry(v int64, actions []action) (bool, error) {
	data, err := marshalEntry(actions)
	if err != nil {
		return false, err
	}
	if err := t.s.PutIfAbsent(logPath(v), data); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, fmt.Errorf("publishing log entry: %w", err)
	}
	return true, nil
}

// dropFiles deletes the files of a commit that lost a conflict. Their rows
// are either in the winner's files or will be read again from the resumed
// offsets; a file left behind is garbage collected later. t.mu must be held.
func (t *Table) dropFiles(files []AddFile) {
	for _, f := range files {
		_ = t.s.Remove(f.Path)
		delete(t.pending, f.Path)
	}
}
