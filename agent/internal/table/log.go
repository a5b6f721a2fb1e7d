package table

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"
)

// The Delta log actions this package reads or writes. Field names and shapes
// follow the Delta transaction log protocol; unknown fields are ignored on
// read, and optional ones are omitted on write. The parquet tags give the
// columns of the same actions in a checkpoint (see checkpointRow).
type (
	// action is one line of a log entry. Exactly one field is set on write;
	// on read, a line with none of them is an action type this package does
	// not know (cdc, domainMetadata, checkpointMetadata, ...) and is ignored.
	action struct {
		Protocol   *protocolAction `json:"protocol,omitempty"`
		MetaData   *metadataAction `json:"metaData,omitempty"`
		Add        *addAction      `json:"add,omitempty"`
		Remove     *removeAction   `json:"remove,omitempty"`
		Txn        *txnAction      `json:"txn,omitempty"`
		CommitInfo *commitInfo     `json:"commitInfo,omitempty"`
	}

	protocolAction struct {
		MinReaderVersion int32    `json:"minReaderVersion" parquet:"minReaderVersion"`
		MinWriterVersion int32    `json:"minWriterVersion" parquet:"minWriterVersion"`
		ReaderFeatures   []string `json:"readerFeatures,omitempty" parquet:"readerFeatures,optional,list"`
		WriterFeatures   []string `json:"writerFeatures,omitempty" parquet:"writerFeatures,optional,list"`
	}

	metadataAction struct {
		ID               string            `json:"id" parquet:"id"`
		Name             *string           `json:"name,omitempty" parquet:"name,optional"`
		Description      *string           `json:"description,omitempty" parquet:"description,optional"`
		Format           formatSpec        `json:"format" parquet:"format"`
		SchemaString     string            `json:"schemaString" parquet:"schemaString"`
		PartitionColumns []string          `json:"partitionColumns" parquet:"partitionColumns,list"`
		Configuration    map[string]string `json:"configuration" parquet:"configuration"`
		CreatedTime      *int64            `json:"createdTime,omitempty" parquet:"createdTime,optional"`
	}

	formatSpec struct {
		Provider string            `json:"provider" parquet:"provider"`
		Options  map[string]string `json:"options" parquet:"options"`
	}

	addAction struct {
		Path             string            `json:"path" parquet:"path"`
		PartitionValues  map[string]string `json:"partitionValues" parquet:"partitionValues"`
		Size             int64             `json:"size" parquet:"size"`
		ModificationTime int64             `json:"modificationTime" parquet:"modificationTime"`
		DataChange       bool              `json:"dataChange" parquet:"dataChange"`
		Stats            string            `json:"stats,omitempty" parquet:"stats,optional"`
		Tags             map[string]string `json:"tags,omitempty" parquet:"tags,optional"`
	}

	// removeAction is the protocol's remove action. The extended file
	// metadata (partitionValues, size, stats) is what Spark's OPTIMIZE
	// writes: readers of a table's history learn from the remove alone
	// what the file held.
	removeAction struct {
		Path                 string            `json:"path" parquet:"path"`
		DeletionTimestamp    *int64            `json:"deletionTimestamp,omitempty" parquet:"deletionTimestamp,optional"`
		DataChange           bool              `json:"dataChange" parquet:"dataChange"`
		ExtendedFileMetadata *bool             `json:"extendedFileMetadata,omitempty" parquet:"extendedFileMetadata,optional"`
		PartitionValues      map[string]string `json:"partitionValues,omitempty" parquet:"partitionValues,optional"`
		Size                 *int64            `json:"size,omitempty" parquet:"size,optional"`
		Stats                string            `json:"stats,omitempty" parquet:"stats,optional"`
	}

	// txnAction is the protocol's txn action with one field of this
	// package's own: LeaderEpoch, the leader epoch of the last record
	// read, which other readers ignore, as they ignore unknown fields of
	// actions, and which logs written before it simply lack.
	txnAction struct {
		AppID       string `json:"appId" parquet:"appId"`
		Version     int64  `json:"version" parquet:"version"`
		LastUpdated *int64 `json:"lastUpdated,omitempty" parquet:"lastUpdated,optional"`
		LeaderEpoch *int32 `json:"tributaryLeaderEpoch,omitempty" parquet:"tributaryLeaderEpoch,optional"`
	}

	// commitInfo is free-form in the protocol; these are the fields this
	// package writes and reads back.
	commitInfo struct {
		Timestamp           int64             `json:"timestamp"`
		Operation           string            `json:"operation"`
		OperationParameters map[string]string `json:"operationParameters"`
		ReadVersion         *int64            `json:"readVersion,omitempty"`
		IsBlindAppend       bool              `json:"isBlindAppend"`
		OperationMetrics    map[string]metric `json:"operationMetrics"`
		EngineInfo          string            `json:"engineInfo"`
		// Totals sums every counter over the table's history up to and
		// including this commit. Checkpoints keep no commitInfo, so a
		// reader starting from one finds the counters here (see
		// countersAt).
		Totals map[string]int64 `json:"tributaryTotals,omitempty"`
	}

	// fileStats is the part of an add action's stats this package uses.
	fileStats struct {
		NumRecords *int64 `json:"numRecords"`
	}
)

// metric is one operationMetrics value. Spark writes them as strings of
// digits; metric writes them that way too and reads either form.
type metric int64

// MarshalJSON writes the value as a string of digits, like Spark.
func (m metric) MarshalJSON() ([]byte, error) {
	return strconv.AppendQuote(nil, strconv.FormatInt(int64(m), 10)), nil
}

// UnmarshalJSON accepts a JSON integer or a string holding one.
func (m *metric) UnmarshalJSON(b []byte) error {
	s := string(b)
	if u, err := strconv.Unquote(s); err == nil {
		s = u
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("operation metric %s is not an integer", b)
	}
	*m = metric(v)
	return nil
}

// engineInfo names this writer in commitInfo. Counters are summed only from
// entries carrying it: other engines' metrics mean other things.
const engineInfo = "tributary-agent"

// logLine mirrors action for reading, with commitInfo kept raw.
type logLine struct {
	Protocol   *protocolAction `json:"protocol"`
	MetaData   *metadataAction `json:"metaData"`
	Add        *addAction      `json:"add"`
	Remove     *removeAction   `json:"remove"`
	Txn        *txnAction      `json:"txn"`
	CommitInfo json.RawMessage `json:"commitInfo"`
}

// entry is one decoded log entry.
type entry struct {
	protocol *protocolAction
	metaData *metadataAction
	adds     []*addAction
	removes  []*removeAction
	txns     []*txnAction
	// counters are the operation metrics of an entry this package wrote; nil
	// for other engines' entries.
	counters map[string]int64
	// totals are the counters summed over the table's history, as an entry
	// this package wrote records them; nil when it does not.
	totals map[string]int64
}

// parseEntry decodes one log entry: newline-delimited JSON objects, one action
// each. Blank lines and unknown action types are skipped; anything else that
// is not a well-formed action is an error naming the line.
func parseEntry(data []byte) (*entry, error) {
	e := &entry{}
	for n, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if err := e.addLine(line); err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
	}
	return e, nil
}

func (e *entry) addLine(line []byte) error {
	if line[0] != '{' {
		return fmt.Errorf("not a JSON object")
	}
	var l logLine
	if err := json.Unmarshal(line, &l); err != nil {
		return err
	}
	kinds := 0
	if l.Protocol != nil {
		kinds++
		if e.protocol != nil {
			return fmt.Errorf("second protocol action in one entry")
		}
		if l.Protocol.MinReaderVersion < 1 || l.Protocol.MinWriterVersion < 1 {
			return fmt.Errorf("protocol versions must be at least 1")
		}
		e.protocol = l.Protocol
	}
	if l.MetaData != nil {
		kinds++
		if e.metaData != nil {
			return fmt.Errorf("second metaData action in one entry")
		}
		e.metaData = l.MetaData
	}
	if l.Add != nil {
		kinds++
		p, err := decodePath(l.Add.Path)
		if err != nil {
			return fmt.Errorf("add: %w", err)
		}
		l.Add.Path = p
		if _, err := numRecords(l.Add.Stats); err != nil {
			return fmt.Errorf("add %q: %w", p, err)
		}
		e.adds = append(e.adds, l.Add)
	}
	if l.Remove != nil {
		kinds++
		p, err := decodePath(l.Remove.Path)
		if err != nil {
			return fmt.Errorf("remove: %w", err)
		}
		l.Remove.Path = p
		e.removes = append(e.removes, l.Remove)
	}
	if l.Txn != nil {
		kinds++
		if l.Txn.AppID == "" {
			return fmt.Errorf("txn without appId")
		}
		e.txns = append(e.txns, l.Txn)
	}
	if l.CommitInfo != nil {
		kinds++
		if err := e.setCounters(l.CommitInfo); err != nil {
			return fmt.Errorf("commitInfo: %w", err)
		}
	}
	if kinds > 1 {
		return fmt.Errorf("%d actions on one line; the log holds one per line", kinds)
	}
	return nil
}

// setCounters keeps the operation metrics of this package's own commits.
// commitInfo is free-form in the protocol: other engines' entries are not
// decoded further.
func (e *entry) setCounters(raw json.RawMessage) error {
	var ci struct {
		EngineInfo       json.RawMessage `json:"engineInfo"`
		Operation        string          `json:"operation"`
		OperationMetrics json.RawMessage `json:"operationMetrics"`
		Totals           json.RawMessage `json:"tributaryTotals"`
	}
	if err := json.Unmarshal(raw, &ci); err != nil {
		return err
	}
	// A rewrite (see [Table.CommitRewrite]) ingests nothing: its metrics
	// count files rewritten, which the counters must not add up.
	if string(ci.EngineInfo) != strconv.Quote(engineInfo) || ci.Operation == operationRewrite {
		return nil
	}
	if len(ci.Totals) > 0 {
		if err := json.Unmarshal(ci.Totals, &e.totals); err != nil {
			return fmt.Errorf("tributaryTotals: %w", err)
		}
	}
	if len(ci.OperationMetrics) == 0 {
		return nil
	}
	var m map[string]metric
	if err := json.Unmarshal(ci.OperationMetrics, &m); err != nil {
		return fmt.Errorf("operationMetrics: %w", err)
	}
	e.counters = make(map[string]int64, len(m))
	for k, v := range m {
		e.counters[k] = int64(v)
	}
	return nil
}

// decodePath turns an add/remove path (a relative URI, percent-encoded) into
// the file path relative to the table folder. Absolute URIs are accepted for
// files outside the folder (shallow clones) and kept as they are.
func decodePath(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("empty path")
	}
	if strings.Contains(p, "://") {
		return p, nil
	}
	d, err := url.PathUnescape(p)
	if err != nil {
		return "", fmt.Errorf("path %q: %w", p, err)
	}
	return path.Clean(d), nil
}

// numRecords reads numRecords from an add action's stats; -1 when the stats
// are absent or do not carry it.
func numRecords(stats string) (int64, error) {
	if stats == "" {
		return -1, nil
	}
	var s fileStats
	if err := json.Unmarshal([]byte(stats), &s); err != nil {
		return 0, fmt.Errorf("stats: %w", err)
	}
	if s.NumRecords == nil {
		return -1, nil
	}
	if *s.NumRecords < 0 {
		return 0, fmt.Errorf("stats: negative numRecords %d", *s.NumRecords)
	}
	return *s.NumRecords, nil
}

// marshalEntry encodes actions as one log entry, one JSON object per line.
func marshalEntry(actions []action) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i := range actions {
		if err := enc.Encode(&actions[i]); err != nil {
			return nil, fmt.Errorf("encoding log action: %w", err)
		}
	}
	return buf.Bytes(), nil
}
