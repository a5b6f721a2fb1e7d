package iceberg

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/hamba/avro/v2/ocf"
)

// FormatVersion is the Iceberg format version the mirror writes: version
// 2, which every Iceberg reader reads.
const FormatVersion = 2

// Entry statuses of a manifest (the spec's manifest_entry).
const (
	StatusExisting = 0
	StatusAdded    = 1
	StatusDeleted  = 2
)

// PartitionSpec is an Iceberg partition spec in its JSON form.
type PartitionSpec struct {
	SpecID int              `json:"spec-id"`
	Fields []PartitionField `json:"fields"`
}

// PartitionField is one field of a partition spec.
type PartitionField struct {
	SourceID  int    `json:"source-id"`
	FieldID   int    `json:"field-id"`
	Name      string `json:"name"`
	Transform string `json:"transform"`
}

// firstPartitionFieldID is the id of a spec's first partition field, as
// the spec reserves ids from 1000 for them.
const firstPartitionFieldID = 1000

// Partitioning returns the partition spec of a Delta table with schema s
// (as [FromDelta] returned it) and partition columns columns: an identity
// transform of each. Delta stores partition values in the files' paths,
// not in the files; Iceberg readers take an identity-partitioned column a
// file lacks from its manifest entry (the spec's "Column Projection").
func Partitioning(s *Schema, columns []string) (*PartitionSpec, error) {
	spec := &PartitionSpec{Fields: []PartitionField{}}
	for i, c := range columns {
		f, ok := s.FieldByName(c)
		if !ok {
			return nil, fmt.Errorf("partition column %q is not a column of the table", c)
		}
		if _, err := partitionAvroType(f.Type); err != nil {
			return nil, &UnsupportedError{Column: c, Reason: err.Error()}
		}
		spec.Fields = append(spec.Fields, PartitionField{SourceID: f.ID, FieldID: firstPartitionFieldID + i, Name: f.Name, Transform: "identity"})
	}
	return spec, nil
}

// partitionAvroType returns the Avro type of a partition value of Iceberg
// type t.
func partitionAvroType(t *Type) (any, error) {
	switch t.Primitive {
	case "boolean", "int", "long", "string":
		return t.Primitive, nil
	case "date":
		return map[string]string{"type": "int", "logicalType": "date"}, nil
	}
	b, _ := json.Marshal(t)
	return nil, fmt.Errorf("a partition column of Iceberg type %s cannot be mirrored (the agent partitions by STRING, BOOLEAN, integer and DATE columns)", b)
}

// PartitionValue returns the value a manifest stores for partition value
// v of a Delta add action (nil is null), of Iceberg type t: the protocol
// writes every partition value as a string.
func PartitionValue(t *Type, v *string) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch t.Primitive {
	case "string":
		return *v, nil
	case "boolean":
		return strconv.ParseBool(*v)
	case "int":
		n, err := strconv.ParseInt(*v, 10, 32)
		return int32(n), err
	case "long":
		return strconv.ParseInt(*v, 10, 64)
	case "date":
		d, err := time.Parse(time.DateOnly, *v)
		return d, err
	}
	return nil, fmt.Errorf("partition value %q: type %s cannot partition a mirrored table", *v, t.Primitive)
}

// DataFile is a Parquet data file as a manifest lists it.
type DataFile struct {
	// Path is the file's full URI.
	Path string
	// Partition maps each partition field's name to the file's value
	// (see [PartitionValue]).
	Partition map[string]any
	// Records and Size are the file's row count and byte size.
	Records, Size int64
	// Metrics are its column statistics.
	Metrics Metrics
}

// ManifestEntry is one file of a manifest, with the snapshot and the
// sequence numbers that added it (or deleted it, for status deleted).
type ManifestEntry struct {
	Status int
	// SnapshotID is the snapshot that added (or deleted) the file.
	SnapshotID int64
	// Sequence and FileSequence are the entry's data and file sequence
	// numbers; an added entry inherits them from its manifest.
	Sequence, FileSequence int64
	File                   DataFile
}

// ManifestFile is one manifest of a snapshot, as its manifest list holds
// it (the spec's manifest_file).
type ManifestFile struct {
	Path            string          `avro:"manifest_path"`
	Length          int64           `avro:"manifest_length"`
	SpecID          int32           `avro:"partition_spec_id"`
	Content         int32           `avro:"content"`
	Sequence        int64           `avro:"sequence_number"`
	MinSequence     int64           `avro:"min_sequence_number"`
	AddedSnapshotID int64           `avro:"added_snapshot_id"`
	AddedFiles      int32           `avro:"added_files_count"`
	ExistingFiles   int32           `avro:"existing_files_count"`
	DeletedFiles    int32           `avro:"deleted_files_count"`
	AddedRows       int64           `avro:"added_rows_count"`
	ExistingRows    int64           `avro:"existing_rows_count"`
	DeletedRows     int64           `avro:"deleted_rows_count"`
	Partitions      *[]fieldSummary `avro:"partitions"`
	KeyMetadata     *[]byte         `avro:"key_metadata"`
}

// fieldSummary is a manifest's summary of one partition field. The mirror
// writes none: readers then read every manifest, as for a manifest
// without summaries.
type fieldSummary struct {
	ContainsNull bool    `avro:"contains_null"`
	ContainsNaN  *bool   `avro:"contains_nan"`
	LowerBound   *[]byte `avro:"lower_bound"`
	UpperBound   *[]byte `avro:"upper_bound"`
}

// The Avro records of a manifest, as the spec's tables give them.
type (
	avroEntry struct {
		Status       int32        `avro:"status"`
		SnapshotID   *int64       `avro:"snapshot_id"`
		Sequence     *int64       `avro:"sequence_number"`
		FileSequence *int64       `avro:"file_sequence_number"`
		DataFile     avroDataFile `avro:"data_file"`
	}
	avroDataFile struct {
		Content         int32          `avro:"content"`
		FilePath        string         `avro:"file_path"`
		FileFormat      string         `avro:"file_format"`
		Partition       map[string]any `avro:"partition"`
		RecordCount     int64          `avro:"record_count"`
		FileSizeInBytes int64          `avro:"file_size_in_bytes"`
		ColumnSizes     *[]kv[int64]   `avro:"column_sizes"`
		ValueCounts     *[]kv[int64]   `avro:"value_counts"`
		NullValueCounts *[]kv[int64]   `avro:"null_value_counts"`
		NaNValueCounts  *[]kv[int64]   `avro:"nan_value_counts"`
		LowerBounds     *[]kv[[]byte]  `avro:"lower_bounds"`
		UpperBounds     *[]kv[[]byte]  `avro:"upper_bounds"`
		KeyMetadata     *[]byte        `avro:"key_metadata"`
		SplitOffsets    *[]int64       `avro:"split_offsets"`
		EqualityIDs     *[]int32       `avro:"equality_ids"`
		SortOrderID     *int32         `avro:"sort_order_id"`
	}
)

// kv is an entry of a manifest's map keyed by field id (an Avro array of
// key-value records).
type kv[V any] struct {
	Key   int32 `avro:"key"`
	Value V     `avro:"value"`
}

// manifestSchema is the Avro schema of a manifest; %s is the partition
// record's fields.
const manifestSchema = `{"type":"record","name":"manifest_entry","fields":[
{"name":"status","type":"int","field-id":0},
{"name":"snapshot_id","type":["null","long"],"default":null,"field-id":1},
{"name":"sequence_number","type":["null","long"],"default":null,"field-id":3},
{"name":"file_sequence_number","type":["null","long"],"default":null,"field-id":4},
{"name":"data_file","field-id":2,"type":{"type":"record","name":"r2","fields":[
 {"name":"content","type":"int","field-id":134},
 {"name":"file_path","type":"string","field-id":100},
 {"name":"file_format","type":"string","field-id":101},
 {"name":"partition","field-id":102,"type":{"type":"record","name":"r102","fields":[%s]}},
 {"name":"record_count","type":"long","field-id":103},
 {"name":"file_size_in_bytes","type":"long","field-id":104},
 {"name":"column_sizes","default":null,"field-id":108,"type":["null",{"type":"array","logicalType":"map","items":{"type":"record","name":"k117_v118","fields":[{"name":"key","type":"int","field-id":117},{"name":"value","type":"long","field-id":118}]}}]},
 {"name":"value_counts","default":null,"field-id":109,"type":["null",{"type":"array","logicalType":"map","items":{"type":"record","name":"k119_v120","fields":[{"name":"key","type":"int","field-id":119},{"name":"value","type":"long","field-id":120}]}}]},
 {"name":"null_value_counts","default":null,"field-id":110,"type":["null",{"type":"array","logicalType":"map","items":{"type":"record","name":"k121_v122","fields":[{"name":"key","type":"int","field-id":121},{"name":"value","type":"long","field-id":122}]}}]},
 {"name":"nan_value_counts","default":null,"field-id":137,"type":["null",{"type":"array","logicalType":"map","items":{"type":"record","name":"k138_v139","fields":[{"name":"key","type":"int","field-id":138},{"name":"value","type":"long","field-id":139}]}}]},
 {"name":"lower_bounds","default":null,"field-id":125,"type":["null",{"type":"array","logicalType":"map","items":{"type":"record","name":"k126_v127","fields":[{"name":"key","type":"int","field-id":126},{"name":"value","type":"bytes","field-id":127}]}}]},
 {"name":"upper_bounds","default":null,"field-id":128,"type":["null",{"type":"array","logicalType":"map","items":{"type":"record","name":"k129_v130","fields":[{"name":"key","type":"int","field-id":129},{"name":"value","type":"bytes","field-id":130}]}}]},
 {"name":"key_metadata","type":["null","bytes"],"default":null,"field-id":131},
 {"name":"split_offsets","default":null,"field-id":132,"type":["null",{"type":"array","items":"long","element-id":133}]},
 {"name":"equality_ids","default":null,"field-id":135,"type":["null",{"type":"array","items":"int","element-id":136}]},
 {"name":"sort_order_id","type":["null","int"],"default":null,"field-id":140}
]}}]}`

// manifestListSchema is the Avro schema of a manifest list.
const manifestListSchema = `{"type":"record","name":"manifest_file","fields":[
{"name":"manifest_path","type":"string","field-id":500},
{"name":"manifest_length","type":"long","field-id":501},
{"name":"partition_spec_id","type":"int","field-id":502},
{"name":"content","type":"int","field-id":517},
{"name":"sequence_number","type":"long","field-id":515},
{"name":"min_sequence_number","type":"long","field-id":516},
{"name":"added_snapshot_id","type":"long","field-id":503},
{"name":"added_files_count","type":"int","field-id":504},
{"name":"existing_files_count","type":"int","field-id":505},
{"name":"deleted_files_count","type":"int","field-id":506},
{"name":"added_rows_count","type":"long","field-id":512},
{"name":"existing_rows_count","type":"long","field-id":513},
{"name":"deleted_rows_count","type":"long","field-id":514},
{"name":"partitions","default":null,"field-id":507,"type":["null",{"type":"array","element-id":508,"items":{"type":"record","name":"r508","fields":[
 {"name":"contains_null","type":"boolean","field-id":509},
 {"name":"contains_nan","type":["null","boolean"],"default":null,"field-id":518},
 {"name":"lower_bound","type":["null","bytes"],"default":null,"field-id":510},
 {"name":"upper_bound","type":["null","bytes"],"default":null,"field-id":511}]}}]},
{"name":"key_metadata","type":["null","bytes"],"default":null,"field-id":519}
]}`

// ManifestWriter writes the manifests of one table's schema and partition
// spec. It is safe for concurrent use once made.
type ManifestWriter struct {
	schema    avro.Schema
	schemaID  int
	spec      *PartitionSpec
	specTypes map[string]*Type
	meta      map[string][]byte
}

// NewManifestWriter returns a writer of manifests for tables with schema
// s (its id schemaID) and partition spec spec.
func NewManifestWriter(s *Schema, schemaID int, spec *PartitionSpec) (*ManifestWriter, error) {
	fields := make([]string, len(spec.Fields))
	types := make(map[string]*Type, len(spec.Fields))
	for i, pf := range spec.Fields {
		src := fieldByID(s.Fields, pf.SourceID)
		if src == nil {
			return nil, fmt.Errorf("partition field %q: the schema has no field %d", pf.Name, pf.SourceID)
		}
		at, err := partitionAvroType(src.Type)
		if err != nil {
			return nil, &UnsupportedError{Column: src.Name, Reason: err.Error()}
		}
		b, err := json.Marshal(map[string]any{"name": pf.Name, "type": []any{"null", at}, "default": nil, "field-id": pf.FieldID})
		if err != nil {
			return nil, err
		}
		fields[i] = string(b)
		types[pf.Name] = src.Type
	}
	as, err := avro.Parse(fmt.Sprintf(manifestSchema, strings.Join(fields, ",")))
	if err != nil {
		return nil, fmt.Errorf("the manifest's Avro schema: %w", err)
	}
	schemaJSON, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	specJSON, err := json.Marshal(spec.Fields)
	if err != nil {
		return nil, err
	}
	return &ManifestWriter{schema: as, schemaID: schemaID, spec: spec, specTypes: types, meta: map[string][]byte{
		"schema":            schemaJSON,
		"schema-id":         []byte(strconv.Itoa(schemaID)),
		"partition-spec":    specJSON,
		"partition-spec-id": []byte(strconv.Itoa(spec.SpecID)),
		"format-version":    []byte(strconv.Itoa(FormatVersion)),
		"content":           []byte("data"),
	}}, nil
}

// Write encodes entries as a manifest and returns its bytes and its entry
// in a manifest list, but for its path and length, which the caller sets
// once it stored it. sequence is the sequence number of the snapshot that
// writes the manifest, snapshotID its id: added entries inherit both.
func (w *ManifestWriter) Write(entries []ManifestEntry, snapshotID, sequence int64) ([]byte, ManifestFile, error) {
	var buf bytes.Buffer
	enc, err := ocf.NewEncoderWithSchema(w.schema, &buf, ocf.WithCodec(ocf.Deflate), ocf.WithMetadata(w.meta),
		ocf.WithSchemaMarshaler(ocf.FullSchemaMarshaler))
	if err != nil {
		return nil, ManifestFile{}, fmt.Errorf("writing a manifest: %w", err)
	}
	mf := ManifestFile{SpecID: int32(w.spec.SpecID), Sequence: sequence, MinSequence: sequence, AddedSnapshotID: snapshotID}
	for _, e := range entries {
		ae := avroEntry{Status: int32(e.Status), DataFile: avroDataFile{Content: 0, FilePath: e.File.Path, FileFormat: "PARQUET",
			Partition: e.File.Partition, RecordCount: e.File.Records, FileSizeInBytes: e.File.Size}}
		ae.DataFile.ValueCounts, ae.DataFile.NullValueCounts = toKVs(e.File.Metrics.ValueCounts), toKVs(e.File.Metrics.NullCounts)
		ae.DataFile.LowerBounds, ae.DataFile.UpperBounds = toKVs(e.File.Metrics.Lower), toKVs(e.File.Metrics.Upper)
		if ae.DataFile.Partition == nil {
			ae.DataFile.Partition = map[string]any{}
		}
		for name := range w.specTypes {
			if _, ok := ae.DataFile.Partition[name]; !ok {
				ae.DataFile.Partition[name] = nil
			}
		}
		switch e.Status {
		case StatusAdded:
			mf.AddedFiles++
			mf.AddedRows += e.File.Records
			ae.SnapshotID = &snapshotID
		default:
			id, seq, fseq := e.SnapshotID, e.Sequence, e.FileSequence
			ae.SnapshotID, ae.Sequence, ae.FileSequence = &id, &seq, &fseq
			mf.MinSequence = min(mf.MinSequence, seq)
			if e.Status == StatusExisting {
				mf.ExistingFiles++
				mf.ExistingRows += e.File.Records
			} else {
				mf.DeletedFiles++
				mf.DeletedRows += e.File.Records
			}
		}
		if err := enc.Encode(ae); err != nil {
			return nil, ManifestFile{}, fmt.Errorf("writing a manifest entry of %s: %w", e.File.Path, err)
		}
	}
	if err := enc.Close(); err != nil {
		return nil, ManifestFile{}, fmt.Errorf("writing a manifest: %w", err)
	}
	return buf.Bytes(), mf, nil
}

// ReadManifest decodes a manifest's entries; m is its entry in the
// manifest list, whose snapshot and sequence number added entries
// inherit.
func ReadManifest(data []byte, m ManifestFile) ([]ManifestEntry, error) {
	dec, err := ocf.NewDecoder(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("reading manifest %s: %w", m.Path, err)
	}
	var out []ManifestEntry
	for dec.HasNext() {
		var ae avroEntry
		if err := dec.Decode(&ae); err != nil {
			return nil, fmt.Errorf("reading manifest %s: %w", m.Path, err)
		}
		e := ManifestEntry{Status: int(ae.Status), SnapshotID: m.AddedSnapshotID, Sequence: m.Sequence, FileSequence: m.Sequence,
			File: DataFile{Path: ae.DataFile.FilePath, Partition: ae.DataFile.Partition, Records: ae.DataFile.RecordCount,
				Size: ae.DataFile.FileSizeInBytes, Metrics: Metrics{ValueCounts: fromKVs(ae.DataFile.ValueCounts),
					NullCounts: fromKVs(ae.DataFile.NullValueCounts), Lower: fromKVs(ae.DataFile.LowerBounds),
					Upper: fromKVs(ae.DataFile.UpperBounds)}}}
		if ae.SnapshotID != nil {
			e.SnapshotID = *ae.SnapshotID
		}
		if ae.Sequence != nil {
			e.Sequence = *ae.Sequence
		}
		if ae.FileSequence != nil {
			e.FileSequence = *ae.FileSequence
		}
		out = append(out, e)
	}
	if err := dec.Error(); err != nil {
		return nil, fmt.Errorf("reading manifest %s: %w", m.Path, err)
	}
	return out, nil
}

// WriteManifestList encodes a snapshot's manifest list.
func WriteManifestList(manifests []ManifestFile, snapshotID int64, parentID *int64, sequence int64) ([]byte, error) {
	meta := map[string][]byte{
		"snapshot-id":     []byte(strconv.FormatInt(snapshotID, 10)),
		"sequence-number": []byte(strconv.FormatInt(sequence, 10)),
		"format-version":  []byte(strconv.Itoa(FormatVersion)),
	}
	if parentID != nil {
		meta["parent-snapshot-id"] = []byte(strconv.FormatInt(*parentID, 10))
	} else {
		meta["parent-snapshot-id"] = []byte("null")
	}
	var buf bytes.Buffer
	enc, err := ocf.NewEncoder(manifestListSchema, &buf, ocf.WithCodec(ocf.Deflate), ocf.WithMetadata(meta),
		ocf.WithSchemaMarshaler(ocf.FullSchemaMarshaler))
	if err != nil {
		return nil, fmt.Errorf("writing a manifest list: %w", err)
	}
	for _, m := range manifests {
		if err := enc.Encode(m); err != nil {
			return nil, fmt.Errorf("writing a manifest list: %w", err)
		}
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("writing a manifest list: %w", err)
	}
	return buf.Bytes(), nil
}

// ReadManifestList decodes a manifest list.
func ReadManifestList(data []byte) ([]ManifestFile, error) {
	dec, err := ocf.NewDecoder(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("reading a manifest list: %w", err)
	}
	var out []ManifestFile
	for dec.HasNext() {
		var m ManifestFile
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("reading a manifest list: %w", err)
		}
		out = append(out, m)
	}
	if err := dec.Error(); err != nil {
		return nil, fmt.Errorf("reading a manifest list: %w", err)
	}
	return out, nil
}

// fieldByID returns the top-level field of fields with id id.
func fieldByID(fields []Field, id int) *Field {
	for i := range fields {
		if fields[i].ID == id {
			return &fields[i]
		}
	}
	return nil
}

// toKVs returns m as a manifest's map keyed by field id, nil when empty.
func toKVs[V any](m map[int]V) *[]kv[V] {
	if len(m) == 0 {
		return nil
	}
	out := make([]kv[V], 0, len(m))
	for _, id := range sortedIDs(m) {
		out = append(out, kv[V]{Key: int32(id), Value: m[id]})
	}
	return &out
}

// fromKVs is the inverse of toKVs.
func fromKVs[V any](kvs *[]kv[V]) map[int]V {
	if kvs == nil {
		return nil
	}
	m := make(map[int]V, len(*kvs))
	for _, e := range *kvs {
		m[int(e.Key)] = e.Value
	}
	return m
}
