package table

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// CheckSchemaChange reports whether a table with schema prev may take schema
// next: every column of prev must still be there with the same type, and as
// nullable or more (NOT NULL may become nullable, never the reverse), and
// every column only next has, at any depth of nested structs, must be
// nullable.
// The error wraps [ErrSchemaChange] and names the column and the reason.
func CheckSchemaChange(prev, next []schema.Field) error {
	_, err := compareSchemas(prev, next, false)
	return err
}

// CheckSchemaWidening is [CheckSchemaChange] that also lets a column, a
// struct field, an array element or a map key or value change its type as
// Delta's type widening allows: BYTE to SHORT to INT to BIGINT, FLOAT to
// DOUBLE, BYTE, SHORT or INT to DOUBLE, DATE to TIMESTAMP_NTZ,
// DECIMAL(p,s) to DECIMAL(p+k1,s+k2) with k1 >= k2 >= 0, BYTE, SHORT or
// INT to a DECIMAL with at least 10 integer digits and BIGINT to one with
// at least 20. Such a schema is what [Commit.AllowTypeWidening] commits.
func CheckSchemaWidening(prev, next []schema.Field) error {
	_, err := compareSchemas(prev, next, true)
	return err
}

// typeChange is one entry of a field's delta.typeChanges metadata (the
// protocol's "Type Change Metadata").
type typeChange struct {
	// field is the [schema.FieldPath] of the struct field that records it:
	// the changed field, or the nearest struct field holding the changed
	// array element or map key or value.
	field     string
	FromType  string `json:"fromType"`
	ToType    string `json:"toType"`
	FieldPath string `json:"fieldPath,omitempty"`
}

// metaTypeChanges is the field metadata key of a field's type changes.
const metaTypeChanges = "delta.typeChanges"

// propTypeWidening is the table property that lets writers widen types;
// this package sets it to true when it widens one.
const propTypeWidening = "delta.enableTypeWidening"

// compareSchemas checks that prev may become next (see CheckSchemaChange;
// with widen, CheckSchemaWidening) and returns the type changes it makes.
func compareSchemas(prev, next []schema.Field, widen bool) ([]typeChange, error) {
	ev := evolution{widen: widen}
	if err := ev.fields(nil, prev, next); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSchemaChange, err)
	}
	return ev.changes, nil
}

// evolution compares two schemas, collecting the type changes it accepts.
type evolution struct {
	widen   bool
	changes []typeChange
}

// fields compares the fields of the struct at path (nil at the top).
func (ev *evolution) fields(path []string, prev, next []schema.Field) error {
	for i := range prev {
		o := &prev[i]
		p := append(slices.Clip(path), o.Name)
		name := schema.FieldPath(p...)
		j := slices.IndexFunc(next, func(f schema.Field) bool { return strings.EqualFold(f.Name, o.Name) })
		if j < 0 {
			return fmt.Errorf("column %s is missing: columns cannot be dropped or renamed", name)
		}
		n := &next[j]
		if n.Name != o.Name {
			return fmt.Errorf("column %s is renamed to %s: columns cannot be renamed", name, schema.FieldPath(append(slices.Clip(path), n.Name)...))
		}
		if o.Nullable && !n.Nullable {
			return fmt.Errorf("column %s becomes NOT NULL: existing files may hold nulls in it", name)
		}
		if err := ev.typ(p, len(p), o.Type, n.Type); err != nil {
			return err
		}
	}
	for i := range next {
		n := &next[i]
		if !slices.ContainsFunc(prev, func(f schema.Field) bool { return strings.EqualFold(f.Name, n.Name) }) && !n.Nullable {
			return fmt.Errorf("new column %s is NOT NULL: existing files have no values for it, so it must be nullable",
				schema.FieldPath(append(slices.Clip(path), n.Name)...))
		}
	}
	return nil
}

// typ compares the types at path, whose first field elements are the
// path of the nearest struct field. Structs may gain nullable fields, also
// inside arrays and maps; primitives may widen when ev.widen; everything
// else must stay the same.
func (ev *evolution) typ(path []string, field int, prev, next *schema.Type) error {
	name := schema.FieldPath(path...)
	if prev == nil || next == nil {
		if prev != next {
			return fmt.Errorf("column %s has no type", name)
		}
		return nil
	}
	switch {
	case prev.Kind != next.Kind:
	case prev.Kind == schema.Struct:
		return ev.fields(path, prev.Fields, next.Fields)
	case prev.Kind == schema.Array:
		return ev.typ(append(slices.Clip(path), "element"), field, prev.Elem, next.Elem)
	case prev.Kind == schema.Map:
		if err := ev.typ(append(slices.Clip(path), "key"), field, prev.Key, next.Key); err != nil {
			return err
		}
		return ev.typ(append(slices.Clip(path), "value"), field, prev.Value, next.Value)
	}
	if prev.Equal(next) {
		return nil
	}
	if !ev.widen {
		return fmt.Errorf("column %s changes type from %s to %s: column types cannot change", name, prev, next)
	}
	if !widens(prev, next) {
		return fmt.Errorf("column %s changes type from %s to %s, which Delta's type widening does not allow", name, prev, next)
	}
	ev.changes = append(ev.changes, typeChange{
		field:     schema.FieldPath(path[:field]...),
		FromType:  schema.SparkTypeName(prev),
		ToType:    schema.SparkTypeName(next),
		FieldPath: strings.Join(path[field:], "."),
	})
	return nil
}

// widens reports whether Delta's type widening allows changing a
// primitive type from prev to next, a different type.
func widens(prev, next *schema.Type) bool {
	integer := map[schema.Kind]int{schema.Byte: 1, schema.Short: 2, schema.Int: 3, schema.Long: 4}
	from, fromInt := integer[prev.Kind]
	to, toInt := integer[next.Kind]
	intDigits := next.Precision - next.Scale
	switch {
	case fromInt && toInt:
		return from < to
	case fromInt && next.Kind == schema.Double:
		return prev.Kind != schema.Long
	case fromInt && next.Kind == schema.Decimal:
		return prev.Kind != schema.Long && intDigits >= 10 || prev.Kind == schema.Long && intDigits >= 20
	case prev.Kind == schema.Float:
		return next.Kind == schema.Double
	case prev.Kind == schema.Date:
		return next.Kind == schema.TimestampNTZ
	case prev.Kind == schema.Decimal && next.Kind == schema.Decimal:
		return next.Scale >= prev.Scale && intDigits >= prev.Precision-prev.Scale
	}
	return false
}

// recordTypeChanges appends changes to the delta.typeChanges metadata of
// their fields in extra.
func recordTypeChanges(extra schema.Metadata, changes []typeChange) error {
	for _, c := range changes {
		var list []json.RawMessage
		if raw, ok := extra[c.field][metaTypeChanges]; ok {
			if err := json.Unmarshal(raw, &list); err != nil {
				return fmt.Errorf("column %s: metadata %s: %w", c.field, metaTypeChanges, err)
			}
		}
		entry, err := json.Marshal(c)
		if err != nil {
			return err
		}
		all, err := json.Marshal(append(list, entry))
		if err != nil {
			return err
		}
		if extra[c.field] == nil {
			extra[c.field] = map[string]json.RawMessage{}
		}
		extra[c.field][metaTypeChanges] = all
	}
	return nil
}

// Table features this package can write, by protocol name.
const (
	featureTimestampNTZ  = "timestampNtz"
	featureVariantType   = "variantType"
	featureAppendOnly    = "appendOnly"
	featureInvariants    = "invariants"
	featureColumnMapping = "columnMapping"
	featureTypeWidening  = "typeWidening"
	// featureGeneratedColumns is a writer feature: the agent fills the
	// generated columns of the partitions it derives from timestamps,
	// and appends only to tables whose generated columns are those.
	featureGeneratedColumns = "generatedColumns"
)

// Table properties this package reads or writes in the metaData
// configuration.
const (
	// propAppendOnly = "true" forbids commits that remove or change data
	// (Delta's append-only tables); the agent sets it on the tables it
	// creates. Other engines must set it to false to delete rows.
	propAppendOnly = "delta.appendOnly"
)

// requiredProtocol returns the protocol a table needs whose metaData has
// schema fields and configuration config, and generated columns when
// generated is true, given its current protocol (nil for a new table), or
// nil when cur already lists everything.
//
// What the metadata implies, as Spark's Delta checks it:
//   - a TIMESTAMP_NTZ column, at any depth: the timestampNtz reader and
//     writer feature, which exists only with reader version 3 and writer
//     version 7; a VARIANT column the same way with variantType;
//   - delta.enableTypeWidening = true: the typeWidening reader and writer
//     feature, likewise only with reader 3 and writer 7;
//   - a delta.columnMapping.mode other than none: column mapping, reader
//     version 2 and writer version 5, or the columnMapping reader and
//     writer feature;
//   - a NOT NULL column, at any depth: invariants (writer version 2, or the
//     writer feature);
//   - delta.appendOnly = true: appendOnly (writer version 2, or the writer
//     feature);
//   - generated columns: the generatedColumns writer feature with writer
//     version 7 (reader version 1 unless another feature needs 3).
//
// Without the features of version 3 and 7, a new table gets the legacy
// versions: reader 1 and writer 2, which imply appendOnly and invariants
// (what Spark writes for a plain table), or reader 2 and writer 5 with
// column mapping. With them, reader 3 and writer 7 list every feature above
// the metadata uses. An existing table is upgraded only as far as it must
// be: features are added, never removed, and a legacy writer version
// moved to 7 lists the features of its old versions the table uses
// (appendOnly and invariants for version 2, columnMapping for reader 2 and
// writer 5), as the protocol asks of an upgrade.
func requiredProtocol(cur *protocolAction, fields []schema.Field, config map[string]string, generated bool) *protocolAction {
	var writer, both []string
	needs7 := false
	if generated {
		// Writer version 4 would also ask for CHECK constraints and the
		// change data feed, which this package does not implement: the
		// feature alone needs table features.
		writer, needs7 = append(writer, featureGeneratedColumns), true
	}
	if strings.EqualFold(config[propAppendOnly], "true") {
		writer = append(writer, featureAppendOnly)
	}
	if hasNotNull(fields) {
		writer = append(writer, featureInvariants)
	}
	mapped := isMapped(config)
	if mapped {
		both = append(both, featureColumnMapping)
	}
	if rw := readerWriterFeatures(fields); len(rw) > 0 {
		both, needs7 = append(both, rw...), true
	}
	if strings.EqualFold(config[propTypeWidening], "true") {
		both, needs7 = append(both, featureTypeWidening), true
	}

	if !needs7 && (cur == nil || cur.MinWriterVersion < 7) {
		// Legacy versions.
		var r, w int32 = 1, 2
		if cur != nil {
			r, w = cur.MinReaderVersion, cur.MinWriterVersion
			if len(writer) > 0 {
				w = max(w, 2)
			}
		}
		if mapped {
			r, w = max(r, 2), max(w, 5)
		}
		if cur != nil && r == cur.MinReaderVersion && w == cur.MinWriterVersion {
			return nil
		}
		return &protocolAction{MinReaderVersion: r, MinWriterVersion: w}
	}

	p := &protocolAction{MinReaderVersion: 1, MinWriterVersion: 7}
	changed := true
	if cur != nil {
		p.MinReaderVersion = cur.MinReaderVersion
		p.ReaderFeatures = slices.Clone(cur.ReaderFeatures)
		p.WriterFeatures = slices.Clone(cur.WriterFeatures)
		changed = false
	}
	if cur != nil && cur.MinWriterVersion < 7 {
		// Moving to table features, a table lists the features its old
		// versions implied that it uses: appendOnly and invariants for
		// writer version 2, column mapping for reader 2 and writer 5.
		changed = true
		p.ReaderFeatures, p.WriterFeatures = nil, nil
		if cur.MinWriterVersion >= 2 {
			p.WriterFeatures = []string{featureAppendOnly, featureInvariants}
		}
	}
	add := func(fs *[]string, f string) {
		if !slices.Contains(*fs, f) {
			*fs = append(*fs, f)
			changed = true
		}
	}
	for _, f := range writer {
		add(&p.WriterFeatures, f)
	}
	if len(both) > 0 && p.MinReaderVersion < 3 {
		// Reader version 2 (column mapping) becomes the feature.
		p.MinReaderVersion = 3
		changed = true
	}
	for _, f := range both {
		add(&p.ReaderFeatures, f)
		add(&p.WriterFeatures, f)
	}
	if !changed {
		return nil
	}
	return p
}

// hasNotNull reports whether any field of fields, or nested in their types
// (struct fields, also inside arrays and maps), is NOT NULL.
func hasNotNull(fields []schema.Field) bool {
	for _, f := range fields {
		if !f.Nullable || typeHasNotNull(f.Type) {
			return true
		}
	}
	return false
}

func typeHasNotNull(t *schema.Type) bool {
	switch {
	case t == nil:
		return false
	case t.Kind == schema.Struct:
		return hasNotNull(t.Fields)
	case t.Kind == schema.Array:
		return typeHasNotNull(t.Elem)
	case t.Kind == schema.Map:
		return typeHasNotNull(t.Key) || typeHasNotNull(t.Value)
	}
	return false
}

// readerWriterFeatures returns the reader-writer table features that the
// column types of fields need, at any depth: timestampNtz for TIMESTAMP_NTZ
// and variantType for VARIANT.
func readerWriterFeatures(fields []schema.Field) []string {
	var fs []string
	if schema.HasKind(fields, schema.TimestampNTZ) {
		fs = append(fs, featureTimestampNTZ)
	}
	if schema.HasKind(fields, schema.Variant) {
		fs = append(fs, featureVariantType)
	}
	return fs
}
