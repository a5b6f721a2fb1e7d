package table

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/schema"
)

// CheckSchemaChange reports whether a table with schema prev may take schema
// next: every column of prev must still be there with the same type and
// nullability, and every column only next has, at any depth of nested
// structs, must be nullable.
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
		if n.Nullable != o.Nullable {
			return fmt.Errorf("column %s changes nullability: only new nullable columns can be added", name)
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
	featureAppendOnly   = "appendOnly"
	featureInvariants   = "invariants"
)

// checkWritable refuses tables whose protocol asks writers for features this
// package does not implement (column mapping, deletion vectors, generated
// columns, constraints, ...): writing them anyway could corrupt the table for
// the engines that do.
func checkWritable(p *protocolAction) error {
	if p.MinReaderVersion == 2 || p.MinReaderVersion > 3 {
		return fmt.Errorf("table needs reader version %d, which this writer does not support", p.MinReaderVersion)
	}
	switch {
	case p.MinWriterVersion <= 2:
		return nil
	case p.MinWriterVersion == 7:
		for _, f := range slices.Concat(p.ReaderFeatures, p.WriterFeatures) {
			if f != featureTimestampNTZ && f != featureAppendOnly && f != featureInvariants {
				return fmt.Errorf("table uses feature %q, which this writer does not support", f)
			}
		}
		return nil
	default:
		return fmt.Errorf("table needs writer version %d, which this writer does not support", p.MinWriterVersion)
	}
}

// requiredProtocol returns the protocol a table with schema fields needs,
// given its current protocol (nil for a new table), or nil when cur already
// suffices. TIMESTAMP_NTZ columns need the timestampNtz table feature, which
// exists only with reader version 3 and writer version 7; everything else
// needs reader 1 and writer 2 (what Spark writes for a plain table).
func requiredProtocol(cur *protocolAction, fields []schema.Field) *protocolAction {
	ntz := schema.HasKind(fields, schema.TimestampNTZ)
	if cur == nil {
		if ntz {
			return ntzProtocol(nil, nil)
		}
		return &protocolAction{MinReaderVersion: 1, MinWriterVersion: 2}
	}
	if !ntz || (slices.Contains(cur.ReaderFeatures, featureTimestampNTZ) && slices.Contains(cur.WriterFeatures, featureTimestampNTZ)) {
		return nil
	}
	writer := cur.WriterFeatures
	if cur.MinWriterVersion < 7 {
		// Moving to table features, a table lists the features its old
		// writer version implied: appendOnly and invariants for version 2.
		writer = nil
		if cur.MinWriterVersion >= 2 {
			writer = []string{featureAppendOnly, featureInvariants}
		}
	}
	return ntzProtocol(cur.ReaderFeatures, writer)
}

func ntzProtocol(reader, writer []string) *protocolAction {
	add := func(fs []string) []string {
		if slices.Contains(fs, featureTimestampNTZ) {
			return slices.Clone(fs)
		}
		return append(slices.Clone(fs), featureTimestampNTZ)
	}
	return &protocolAction{
		MinReaderVersion: 3,
		MinWriterVersion: 7,
		ReaderFeatures:   add(reader),
		WriterFeatures:   add(writer),
	}
}
