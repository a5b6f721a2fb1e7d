package table

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/schema"
)

// CheckSchemaChange reports whether a table with schema prev may take schema
// next: every column of prev must still be there with the same type, and as
// nullable or more (NOT NULL may become nullable, never the reverse), and
// every column only next has, at any depth of nested structs, must be
// nullable.
// The error wraps [ErrSchemaChange] and names the column and the reason.
func CheckSchemaChange(prev, next []schema.Field) error {
	if err := evolveFields("", prev, next); err != nil {
		return fmt.Errorf("%w: %w", ErrSchemaChange, err)
	}
	return nil
}

func evolveFields(prefix string, prev, next []schema.Field) error {
	for i := range prev {
		o := &prev[i]
		name := prefix + o.Name
		j := slices.IndexFunc(next, func(f schema.Field) bool { return strings.EqualFold(f.Name, o.Name) })
		if j < 0 {
			return fmt.Errorf("column %s is missing: columns cannot be dropped or renamed", name)
		}
		n := &next[j]
		if n.Name != o.Name {
			return fmt.Errorf("column %s is renamed to %s: columns cannot be renamed", name, prefix+n.Name)
		}
		if o.Nullable && !n.Nullable {
			return fmt.Errorf("column %s becomes NOT NULL: existing files may hold nulls in it", name)
		}
		if err := evolveType(name, o.Type, n.Type); err != nil {
			return err
		}
	}
	for i := range next {
		n := &next[i]
		if !slices.ContainsFunc(prev, func(f schema.Field) bool { return strings.EqualFold(f.Name, n.Name) }) && !n.Nullable {
			return fmt.Errorf("new column %s%s is NOT NULL: existing files have no values for it, so it must be nullable", prefix, n.Name)
		}
	}
	return nil
}

// evolveType compares the types of column name. Structs may gain nullable
// fields, also inside arrays and maps; everything else must stay the same.
func evolveType(name string, prev, next *schema.Type) error {
	if prev == nil || next == nil {
		if prev != next {
			return fmt.Errorf("column %s has no type", name)
		}
		return nil
	}
	switch {
	case prev.Kind != next.Kind:
	case prev.Kind == schema.Struct:
		return evolveFields(name+".", prev.Fields, next.Fields)
	case prev.Kind == schema.Array:
		return evolveType(name+".element", prev.Elem, next.Elem)
	case prev.Kind == schema.Map:
		if err := evolveType(name+".key", prev.Key, next.Key); err != nil {
			return err
		}
		return evolveType(name+".value", prev.Value, next.Value)
	}
	if !prev.Equal(next) {
		return fmt.Errorf("column %s changes type from %s to %s: column types cannot change", name, prev, next)
	}
	return nil
}

// Table features this package can write, by protocol name.
const (
	featureTimestampNTZ = "timestampNtz"
	featureVariantType  = "variantType"
	featureAppendOnly   = "appendOnly"
	featureInvariants   = "invariants"
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
// schema fields and configuration config, given its current protocol (nil
// for a new table), or nil when cur already lists everything.
//
// What the metadata implies, as Spark's Delta checks it:
//   - a TIMESTAMP_NTZ column, at any depth: the timestampNtz reader and
//     writer feature, which exists only with reader version 3 and writer
//     version 7; a VARIANT column the same way with variantType;
//   - a NOT NULL column, at any depth: invariants (writer version 2, or the
//     writer feature);
//   - delta.appendOnly = true: appendOnly (writer version 2, or the writer
//     feature).
//
// Without such a reader-writer feature a new table gets reader 1 and writer
// 2, the legacy versions that imply appendOnly and invariants (what Spark
// writes for a plain table). With one, reader 3 and writer 7 list every feature above the
// metadata uses. An existing table is upgraded only as far as it must be:
// features are added, never removed, and a legacy writer version moved to 7
// lists the features it implied (appendOnly and invariants for version 2),
// as the protocol asks of an upgrade.
func requiredProtocol(cur *protocolAction, fields []schema.Field, config map[string]string) *protocolAction {
	rw := readerWriterFeatures(fields)
	var writer []string
	if strings.EqualFold(config[propAppendOnly], "true") {
		writer = append(writer, featureAppendOnly)
	}
	if hasNotNull(fields) {
		writer = append(writer, featureInvariants)
	}
	if cur == nil {
		if len(rw) == 0 {
			return &protocolAction{MinReaderVersion: 1, MinWriterVersion: 2}
		}
		return &protocolAction{
			MinReaderVersion: 3,
			MinWriterVersion: 7,
			ReaderFeatures:   rw,
			WriterFeatures:   append(writer, rw...),
		}
	}
	if cur.MinWriterVersion < 7 && len(rw) == 0 {
		if cur.MinWriterVersion >= 2 || len(writer) == 0 {
			return nil
		}
		return &protocolAction{MinReaderVersion: cur.MinReaderVersion, MinWriterVersion: 2}
	}

	p := &protocolAction{
		MinReaderVersion: cur.MinReaderVersion,
		MinWriterVersion: 7,
		ReaderFeatures:   slices.Clone(cur.ReaderFeatures),
		WriterFeatures:   slices.Clone(cur.WriterFeatures),
	}
	changed := false
	if cur.MinWriterVersion < 7 {
		// Moving to table features, a table lists the features its old
		// writer version implied: appendOnly and invariants for version 2.
		changed = true
		p.WriterFeatures = nil
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
	if len(rw) > 0 && p.MinReaderVersion < 3 {
		p.MinReaderVersion = 3
		changed = true
	}
	for _, f := range rw {
		add(&p.ReaderFeatures, f)
		add(&p.WriterFeatures, f)
	}
	if !changed {
		return nil
	}
	return p
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
