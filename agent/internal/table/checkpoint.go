package table

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
)

// checkpointRow is one row of a classic checkpoint: one action, in the
// columns the protocol's "Checkpoint Schema" lists, in Spark's order. Add
// stats stay a JSON string (stats_parsed is optional and not written).
type checkpointRow struct {
	Txn      *txnAction      `parquet:"txn,optional"`
	Add      *addAction      `parquet:"add,optional"`
	Remove   *removeAction   `parquet:"remove,optional"`
	MetaData *metadataAction `parquet:"metaData,optional"`
	Protocol *protocolAction `parquet:"protocol,optional"`
}

// checkpointActions are the action columns a checkpoint is read for, in
// the order they are applied; v2Columns are the columns only V2
// checkpoints fill.
var (
	checkpointActions = []string{"protocol", "metaData", "txn", "add", "remove"}
	v2Columns         = []string{"checkpointMetadata", "sidecar"}
)

// lastCheckpointFile, in _delta_log, points to the latest checkpoint.
const lastCheckpointFile = "_last_checkpoint"

// lastCheckpoint is the content of _last_checkpoint, as the protocol's
// "Last Checkpoint File Schema" describes it: version and size are
// required, the rest optional.
type lastCheckpoint struct {
	Version       int64 `json:"version"`
	Size          int64 `json:"size"`
	SizeInBytes   int64 `json:"sizeInBytes"`
	NumOfAddFiles int64 `json:"numOfAddFiles"`
}

// checkpointName is the name of the classic checkpoint of version v.
func checkpointName(v int64) string { return fmt.Sprintf("%020d.checkpoint.parquet", v) }

// readLastCheckpoint returns the version _last_checkpoint of the table in s
// points to, or 0 when the file is missing or invalid: it is only a hint
// of where to start reading.
func readLastCheckpoint(s storage.Store) int64 {
	data, err := s.Read(logDir + "/" + lastCheckpointFile)
	if err != nil {
		return 0
	}
	var lc struct {
		Version *int64 `json:"version"`
	}
	if json.Unmarshal(data, &lc) != nil || lc.Version == nil || *lc.Version < 0 {
		return 0
	}
	return *lc.Version
}

// writeCheckpoint writes the classic checkpoint of t's state, which must be
// at a version a commit of t just wrote, then points _last_checkpoint to
// it. The checkpoint is created put-if-absent: it never replaces a
// checkpoint another writer made of the same version (it holds the same
// state); only _last_checkpoint is replaced, atomically. t.mu must be held.
func (t *Table) writeCheckpoint() error {
	v := t.st.version
	rows := t.st.checkpointRows()
	w, err := t.s.Create(logDir + "/" + checkpointName(v))
	if err != nil {
		return fmt.Errorf("writing checkpoint %d: %w", v, err)
	}
	pw := parquet.NewGenericWriter[checkpointRow](w, parquet.Compression(t.opts.Compression))
	if _, err = pw.Write(rows); err == nil {
		err = pw.Close()
	}
	if err != nil {
		w.Abort()
		return fmt.Errorf("writing checkpoint %d: %w", v, err)
	}
	written, err := w.Commit()
	if errors.Is(err, fs.ErrExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("publishing checkpoint %d: %w", v, err)
	}
	if readLastCheckpoint(t.s) > v {
		return nil // another writer checkpointed a later version meanwhile
	}
	data, err := json.Marshal(lastCheckpoint{Version: v, Size: int64(len(rows)), SizeInBytes: written.Size, NumOfAddFiles: int64(len(t.st.files))})
	if err != nil {
		return fmt.Errorf("encoding %s: %w", lastCheckpointFile, err)
	}
	if err := t.s.Put(logDir+"/"+lastCheckpointFile, data); err != nil {
		return fmt.Errorf("publishing %s: %w", lastCheckpointFile, err)
	}
	return nil
}

// readCheckpoint reads the classic checkpoint file of s, called name in
// messages, as one entry
// holding all its actions. Whatever writer made it (this package, Spark,
// delta-rs), its columns are read by name and nesting, not position: see
// [assembler]. A file that cannot be read is an error wrapping
// [ErrCorruptLog]; one that holds V2 checkpoint actions, an
// [*UnsupportedFeatureError].
func readCheckpoint(s storage.Store, file, name string) (*entry, error) {
	e, err := readCheckpointFile(s, file, name)
	var unsupported *UnsupportedFeatureError
	if err != nil && !errors.As(err, &unsupported) {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorruptLog, name, err)
	}
	return e, err
}

func readCheckpointFile(s storage.Store, file, name string) (*entry, error) {
	f, err := s.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return decodeCheckpoint(f, f.Size(), name)
}

// decodeCheckpoint decodes the checkpoint of size bytes in r, whose file
// is name. parquet-go panics on some damaged files: that is an error too.
func decodeCheckpoint(r io.ReaderAt, size int64, name string) (_ *entry, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the Parquet reader failed: %v", p)
		}
	}()
	if err := checkFooterSize(r, size); err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, err
	}
	if err := checkChunks(r, size, pf.Metadata()); err != nil {
		return nil, err
	}
	nodes := map[string]*asmNode{}
	for _, c := range pf.Root().Columns() {
		if slices.Contains(checkpointActions, c.Name()) || slices.Contains(v2Columns, c.Name()) {
			if nodes[c.Name()], err = newAsmNode(c, 0, 0); err != nil {
				return nil, err
			}
		}
	}
	columns := len(pf.Schema().Columns())
	e := &entry{}
	a := &assembler{}
	buf := make([]parquet.Row, 64)
	for _, rg := range pf.RowGroups() {
		rows := rg.Rows()
		for {
			n, err := rows.ReadRows(buf)
			for _, row := range buf[:n] {
				if err := e.addRow(a, row, columns, nodes, name); err != nil {
					_ = rows.Close()
					return nil, err
				}
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				_ = rows.Close()
				return nil, err
			}
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// addRow adds the action of one checkpoint row to e, by turning it into
// the JSON line a log entry would hold.
func (e *entry) addRow(a *assembler, row parquet.Row, columns int, nodes map[string]*asmNode, file string) error {
	a.reset(row, columns)
	for _, col := range v2Columns {
		if n := nodes[col]; n != nil && a.present(n) {
			return &UnsupportedFeatureError{Feature: "a V2 checkpoint (" + col + " actions)", File: file}
		}
	}
	for _, col := range checkpointActions {
		n := nodes[col]
		if n == nil {
			continue
		}
		v := a.read(n)
		if a.err != nil {
			return a.err
		}
		if v == nil {
			continue
		}
		line, err := json.Marshal(map[string]any{col: v})
		if err != nil {
			return err
		}
		if err := e.addLine(line); err != nil {
			return fmt.Errorf("%s action: %w", col, err)
		}
	}
	return nil
}

// tombstoneGrace is how long after the retention a tombstone no vacuum
// handled stays in checkpoints: long enough for an hourly vacuum to run.
const tombstoneGrace = 24 * time.Hour

// maintainLog runs after each commit of t, with t's state at the commit's
// version: when the version is a multiple of the table's
// delta.checkpointInterval, it writes a checkpoint, then cleans up the log
// (see [Table.cleanupLog]). Failures are logged, not returned: the commit
// is durable, readers do without the checkpoint, and the next one will
// cover this one's state. t.mu must be held.
func (t *Table) maintainLog() {
	v := t.st.version
	cfg, errs := readLogConfig(t.st.meta.Configuration)
	if v == 0 || v%cfg.checkpointInterval != 0 {
		return
	}
	log := t.opts.Logger.With("table", t.s.String(), "version", v)
	for _, err := range errs {
		log.Warn("ignoring a table property", "err", err)
	}
	// Vacuum forgets a tombstone once it deleted the file; one no vacuum
	// handled (the agent's vacuum is off, or has not run since) is
	// forgotten a day after the retention, so that checkpoints do not
	// carry every removed file for ever.
	t.st.expireTombstones(t.opts.Now().Add(-cfg.deletedFileRetention - tombstoneGrace))
	if err := t.writeCheckpoint(); err != nil {
		log.Warn("checkpoint failed; the commit is durable, and the next checkpoint will cover it", "err", err)
		return
	}
	if !cfg.cleanup {
		return
	}
	n, err := t.cleanupLog(cfg.logRetention)
	if err != nil {
		log.Warn("log cleanup failed", "err", err)
	}
	if n > 0 {
		log.Info("cleaned up the log", "files", n)
	}
}
