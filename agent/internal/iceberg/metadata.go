package iceberg

import "strconv"

// TableMetadata is the part of an Iceberg table's metadata (the spec's
// "Table Metadata Fields") the mirror reads.
type TableMetadata struct {
	FormatVersion      int               `json:"format-version"`
	TableUUID          string            `json:"table-uuid"`
	Location           string            `json:"location"`
	LastSequenceNumber int64             `json:"last-sequence-number"`
	LastColumnID       int               `json:"last-column-id"`
	CurrentSchemaID    int               `json:"current-schema-id"`
	Schemas            []Schema          `json:"schemas"`
	DefaultSpecID      int               `json:"default-spec-id"`
	PartitionSpecs     []PartitionSpec   `json:"partition-specs"`
	Properties         map[string]string `json:"properties"`
	CurrentSnapshotID  *int64            `json:"current-snapshot-id"`
	Snapshots          []Snapshot        `json:"snapshots"`
}

// Snapshot is an Iceberg snapshot in its JSON form.
type Snapshot struct {
	SnapshotID       int64             `json:"snapshot-id"`
	ParentSnapshotID *int64            `json:"parent-snapshot-id,omitempty"`
	SequenceNumber   int64             `json:"sequence-number"`
	TimestampMs      int64             `json:"timestamp-ms"`
	ManifestList     string            `json:"manifest-list"`
	Summary          map[string]string `json:"summary"`
	SchemaID         *int              `json:"schema-id,omitempty"`
}

// DeltaVersionProperty is the snapshot summary property that holds the
// Delta log version a snapshot of the mirror mirrors: a restarted mirror
// resumes after it.
const DeltaVersionProperty = "tributary.delta-version"

// CurrentSnapshot returns the table's current snapshot, nil when it has
// none.
func (m *TableMetadata) CurrentSnapshot() *Snapshot {
	if m.CurrentSnapshotID == nil {
		return nil
	}
	for i := range m.Snapshots {
		if m.Snapshots[i].SnapshotID == *m.CurrentSnapshotID {
			return &m.Snapshots[i]
		}
	}
	return nil
}

// CurrentSchema returns the table's current schema, nil when it lacks it.
func (m *TableMetadata) CurrentSchema() *Schema {
	for i := range m.Schemas {
		if m.Schemas[i].SchemaID == m.CurrentSchemaID {
			return &m.Schemas[i]
		}
	}
	return nil
}

// DefaultSpec returns the table's default partition spec, nil when it
// lacks it.
func (m *TableMetadata) DefaultSpec() *PartitionSpec {
	for i := range m.PartitionSpecs {
		if m.PartitionSpecs[i].SpecID == m.DefaultSpecID {
			return &m.PartitionSpecs[i]
		}
	}
	return nil
}

// MirroredVersion returns the Delta version the table's current snapshot
// mirrors, and false when the table has no snapshot of the mirror.
func (m *TableMetadata) MirroredVersion() (int64, bool) {
	s := m.CurrentSnapshot()
	if s == nil {
		return 0, false
	}
	v, err := strconv.ParseInt(s.Summary[DeltaVersionProperty], 10, 64)
	return v, err == nil
}
