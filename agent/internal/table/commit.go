package table

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/schema"
)

// Commit is what one log entry records.
type Commit struct {
	// Schema is the table schema after this commit. It is required on the
	// first commit; nil (or the current schema) leaves it unchanged. A
	// different schema may only add nullable columns, and becomes a
	// metaData action.
	Schema []schema.Field
	// Files are the data files to add, as returned by [FileWriter.Close].
	Files []AddFile
	// Txns maps each application id ("<table>/<topic>/<partition>") to the
	// next offset to read from that partition.
	Txns map[string]int64
	// Counters are added to the commit's operation metrics and summed into
	// [Snapshot.Counters], e.g. "numCorruptRecords". The names
	// numOutputRows, numAddedFiles and numOutputBytes are reserved.
	Counters map[string]int64
}

// Operation metrics every commit carries.
const (
	MetricOutputRows  = "numOutputRows"
	MetricAddedFiles  = "numAddedFiles"
	MetricOutputBytes = "numOutputBytes"
)

// Commit writes one log entry and returns its version.
//
// The entry is created put-if-absent at the version after the latest one this
// Table knows. If another writer created that version first, Commit reads the
// winner's entry: if it recorded a txn for any of c's application ids, Commit
// deletes c's files and returns [*ErrConflict]; otherwise it retries at the
// next version, re-checking c's schema against the winner's.
//
// On any other error the outcome is unknown (the entry may exist): the caller
// must discard its buffered state, [Open] the table again and resume from
// [Table.Snapshot].
func (t *Table) Commit(c Commit) (int64, error) {
	if err := t.checkCommit(&c); err != nil {
		return 0, fmt.Errorf("commit: %w", err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		actions, e, err := t.buildEntry(&c)
		if err != nil {
			return 0, fmt.Errorf("commit: %w", err)
		}
		v := t.st.version + 1
		won, err := t.putEntry(v, actions)
		if err != nil {
			return 0, fmt.Errorf("commit version %d: %w", v, err)
		}
		if won {
			if err := t.st.apply(v, e); err != nil {
				// Unreachable unless buildEntry and apply disagree; the
				// entry is durable, so report a state the caller must reload.
				return 0, fmt.Errorf("commit version %d: applying own entry: %w", v, err)
			}
			for _, f := range c.Files {
				delete(t.pending, f.Path)
			}
			return v, nil
		}
		if err := t.checkWinners(&c); err != nil {
			t.dropFiles(c.Files)
			return 0, err
		}
	}
}

// checkCommit validates c before anything is written.
func (t *Table) checkCommit(c *Commit) error {
	if len(c.Files) == 0 && len(c.Txns) == 0 && c.Schema == nil {
		return errors.New("nothing to commit: no files, txns or schema")
	}
	for name := range c.Counters {
		if name == MetricOutputRows || name == MetricAddedFiles || name == MetricOutputBytes {
			return fmt.Errorf("counter name %q is reserved", name)
		}
	}
	for appID, next := range c.Txns {
		if appID == "" {
			return errors.New("txn with an empty application id")
		}
		if next < 0 {
			return fmt.Errorf("txn %q: next offset %d is negative", appID, next)
		}
	}
	seen := map[string]bool{}
	for _, f := range c.Files {
		if !isDataFileName(f.Path) {
			return fmt.Errorf("file %q is not a data file written by this package", f.Path)
		}
		if seen[f.Path] {
			return fmt.Errorf("file %q is added twice", f.Path)
		}
		seen[f.Path] = true
		if _, err := os.Stat(filepath.Join(t.dir, f.Path)); err != nil {
			return fmt.Errorf("file %q: %w", f.Path, err)
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

	if st.protocol != nil {
		if err := checkWritable(st.protocol); err != nil {
			return nil, nil, err
		}
	}
	if st.meta != nil && len(st.meta.PartitionColumns) > 0 {
		return nil, nil, fmt.Errorf("table is partitioned by %v; this writer writes unpartitioned tables only", st.meta.PartitionColumns)
	}
	fields := c.Schema
	switch {
	case st.meta == nil && len(fields) == 0:
		return nil, nil, errors.New("the first commit of a table needs a schema with at least one column")
	case st.meta != nil && (fields == nil || schema.Equal(st.schema, fields)):
		fields = nil
	case st.meta != nil:
		if err := CheckSchemaChange(st.schema, fields); err != nil {
			return nil, nil, err
		}
	}
	if fields != nil {
		if p := requiredProtocol(st.protocol, fields); p != nil {
			e.protocol = p
			actions = append(actions, action{Protocol: p})
		}
		js, err := schema.SparkJSON(fields)
		if err != nil {
			return nil, nil, fmt.Errorf("encoding schema: %w", err)
		}
		var md metadataAction
		if st.meta != nil {
			md = *st.meta
		} else {
			md = metadataAction{
				ID:               newUUID(),
				Format:           formatSpec{Provider: "parquet", Options: map[string]string{}},
				PartitionColumns: []string{},
				Configuration:    map[string]string{},
				CreatedTime:      &now,
			}
		}
		md.SchemaString = js
		e.metaData = &md
		actions = append(actions, action{MetaData: &md})
	}

	for _, appID := range slices.Sorted(maps.Keys(c.Txns)) {
		txn := &txnAction{AppID: appID, Version: c.Txns[appID], LastUpdated: &now}
		e.txns = append(e.txns, txn)
		actions = append(actions, action{Txn: txn})
	}
	var rows, bytes int64
	for _, f := range c.Files {
		add := &addAction{
			Path:             f.Path,
			PartitionValues:  map[string]string{},
			Size:             f.Size,
			ModificationTime: f.ModificationTime.UnixMilli(),
			DataChange:       true,
			Stats:            fmt.Sprintf(`{"numRecords":%d}`, f.NumRecords),
		}
		e.adds = append(e.adds, add)
		actions = append(actions, action{Add: add})
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
	for k, n := range metrics {
		e.counters[k] = int64(n)
	}
	info := &commitInfo{
		Timestamp:           now,
		Operation:           "STREAMING UPDATE",
		OperationParameters: map[string]string{"outputMode": "Append"},
		IsBlindAppend:       true,
		OperationMetrics:    metrics,
		EngineInfo:          engineInfo,
	}
	if st.version >= 0 {
		rv := st.version
		info.ReadVersion = &rv
	}
	actions = append([]action{{CommitInfo: info}}, actions...)
	return actions, e, nil
}

// putEntry creates log version v put-if-absent. It returns false, and no
// error, when v already exists. The entry is written and fsynced under a
// temporary name, then hard-linked to its final name: link(2) fails when the
// name exists, and readers never see a partial entry.
func (t *Table) putEntry(v int64, actions []action) (bool, error) {
	data, err := marshalEntry(actions)
	if err != nil {
		return false, err
	}
	dir := filepath.Join(t.dir, logDir)
	tmp := filepath.Join(dir, fmt.Sprintf("%s%020d.%s.json%s", logTmpPrefix, v, newUUID(), tmpSuffix))
	if err := writeFileSync(tmp, data); err != nil {
		return false, err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, logPath(t.dir, v)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, fmt.Errorf("publishing log entry: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return true, err
	}
	return true, nil
}

// checkWinners reads the entries other writers committed since t.st and
// returns [*ErrConflict] if one of them recorded a txn for one of c's
// application ids. t.mu must be held.
func (t *Table) checkWinners(c *Commit) error {
	from := t.st.version + 1
	read, err := t.catchUp()
	if err != nil {
		return fmt.Errorf("commit: reading concurrent commits: %w", err)
	}
	for i, e := range read {
		for _, txn := range e.txns {
			if _, ok := c.Txns[txn.AppID]; ok {
				return &ErrConflict{Version: from + int64(i), AppID: txn.AppID}
			}
		}
	}
	return nil
}

// dropFiles deletes the files of a commit that lost a conflict. Their rows
// are either in the winner's files or will be read again from the resumed
// offsets; a file left behind is garbage collected later.
func (t *Table) dropFiles(files []AddFile) {
	for _, f := range files {
		os.Remove(filepath.Join(t.dir, f.Path))
		delete(t.pending, f.Path)
	}
}

// isDataFileName reports whether name is a file name this package gives data
// files in the table folder: a plain name (no folder) ending in .parquet.
func isDataFileName(name string) bool {
	return name != "" && !strings.ContainsAny(name, `/\`) && !strings.HasPrefix(name, "_") &&
		!strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".parquet")
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
