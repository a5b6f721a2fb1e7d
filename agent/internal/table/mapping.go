package table

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// Column mapping, as the Delta protocol's "Column Mapping" section
// describes it: a table whose column names hold characters plain Delta
// names cannot (see needsMapping) stores every struct field, at any depth,
// under a physical name with a numeric id, and its data files use those.
// Callers never see it: they pass and get logical names, [Table.NewFile]
// renames the Parquet schema and [Table.Commit] records the mapping.
const (
	// propMappingMode is the table property naming the mode: none (or
	// absent), name or id. This package writes name; it also writes id
	// tables correctly, since it always writes both physical names and
	// field ids.
	propMappingMode = "delta.columnMapping.mode"
	// propMaxColumnID is the highest column id assigned so far.
	propMaxColumnID = "delta.columnMapping.maxColumnId"
	// metaColumnID and metaPhysicalName are the field metadata keys of a
	// field's id and physical name.
	metaColumnID     = "delta.columnMapping.id"
	metaPhysicalName = "delta.columnMapping.physicalName"
	// mappingModeName is the mode this package turns on.
	mappingModeName = "name"
	// physicalPrefix starts the physical names of new columns whose own
	// names cannot serve (see takenNames.physicalName), as in Spark:
	// col-<uuid>.
	physicalPrefix = "col-"
)

// ownMetadata are the field metadata keys this package carries from one
// schema to the next; other keys (another engine's) are dropped when the
// agent rewrites the schema, as before column mapping.
var ownMetadata = []string{metaColumnID, metaPhysicalName, metaTypeChanges, metaGeneration}

// mappedColumn is the physical side of one struct field.
type mappedColumn struct {
	id       int
	physical string
}

// columnMapping is the column mapping of a table: by [schema.FieldPath] of
// every struct field, its id and physical name.
type columnMapping struct {
	maxID int
	cols  map[string]mappedColumn
}

// invalidNameChars are the characters Delta refuses in column names of a
// table without column mapping.
const invalidNameChars = " ,;{}()\n\t="

// needsMapping reports whether the struct field at path has a name a table
// without column mapping cannot hold.
func needsMapping(path []string) bool {
	return strings.ContainsAny(path[len(path)-1], invalidNameChars)
}

// isMapped reports whether config turns column mapping on.
func isMapped(config map[string]string) bool {
	m := config[propMappingMode]
	return m != "" && !strings.EqualFold(m, "none")
}

// fieldPaths returns the field path of every struct field of fields, at
// any depth, parents first.
func fieldPaths(fields []schema.Field) ([][]string, error) {
	ps, err := rows.Schema(fields)
	if err != nil {
		return nil, err
	}
	return rows.FieldPaths(ps), nil
}

// readMapping returns the column mapping of a table with configuration
// config, columns fields and the field metadata extra; nil when the table
// has no column mapping. Every field must carry an id and a physical name.
func readMapping(config map[string]string, fields []schema.Field, extra schema.Metadata) (*columnMapping, error) {
	if !isMapped(config) {
		return nil, nil
	}
	switch mode := config[propMappingMode]; strings.ToLower(mode) {
	case "name", "id":
	default:
		return nil, fmt.Errorf("table property %s is %q, not none, name or id", propMappingMode, mode)
	}
	paths, err := fieldPaths(fields)
	if err != nil {
		return nil, err
	}
	m := &columnMapping{cols: make(map[string]mappedColumn, len(paths))}
	for _, p := range paths {
		key := schema.FieldPath(p...)
		var c mappedColumn
		raw := extra[key]
		if json.Unmarshal(raw[metaColumnID], &c.id) != nil || json.Unmarshal(raw[metaPhysicalName], &c.physical) != nil ||
			c.physical == "" {
			return nil, fmt.Errorf("column %s lacks a valid %s or %s in a table with column mapping", key, metaColumnID, metaPhysicalName)
		}
		m.cols[key] = c
		m.maxID = max(m.maxID, c.id)
	}
	if s, ok := config[propMaxColumnID]; ok {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("table property %s: %q is not a number", propMaxColumnID, s)
		}
		m.maxID = max(m.maxID, n)
	}
	return m, nil
}

// mappingFor returns the column mapping of the table once its struct fields
// have the given paths: nil when the table has none and none of the names
// needs one; otherwise the table's mapping, with new fields given an id
// after every id handed out so far and a physical name. New fields keep
// what an earlier call assigned them, since files with those names and ids
// may already be written. When the mapping starts (the table had none),
// every field whose name needs no mapping keeps it as its physical name,
// as Delta does when it turns column mapping on for an existing table: files
// already written stay readable. Other new fields get a physical name from
// physicalName. t.mu must be held.
func (t *Table) mappingFor(paths [][]string) *columnMapping {
	base := t.st.mapping
	if base == nil && t.draft == nil && !slices.ContainsFunc(paths, needsMapping) {
		return nil
	}
	m := &columnMapping{cols: map[string]mappedColumn{}}
	if base != nil {
		m.maxID = base.maxID
		maps.Copy(m.cols, base.cols)
	}
	fresh := base == nil && t.draft == nil
	next := m.maxID
	if t.draft != nil {
		next = max(next, t.draft.maxID)
	}
	// First the physical names that are fixed: the table's, the draft's
	// and, when the mapping starts, the plain names files already use; the
	// new names must differ from them.
	taken := takenNames{}
	var added [][]string
	for _, p := range paths {
		key := schema.FieldPath(p...)
		if c, ok := m.cols[key]; ok {
			taken.add(p, c.physical)
			continue
		}
		if d, ok := t.draft.column(key); ok && d.id > m.maxID {
			m.cols[key] = d
			taken.add(p, d.physical)
			continue
		}
		if fresh && !needsMapping(p) {
			taken.add(p, p[len(p)-1])
		}
		added = append(added, p)
	}
	reuse := base.noneDropped()
	for _, p := range added {
		next++
		c := mappedColumn{id: next, physical: p[len(p)-1]}
		if !fresh || needsMapping(p) {
			c.physical = taken.physicalName(p, reuse)
		}
		m.cols[schema.FieldPath(p...)] = c
	}
	m.maxID = next
	t.draft = m
	return m
}

// unsafeParquetChars are the characters a logical name must not hold to
// serve as its own physical name: Delta's own list of characters column
// names without mapping cannot hold, less the space, plus those that
// Hive-style schema strings and dotted column paths read as structure
// (the dot of nested paths, the colon, angle and square brackets of type
// strings, the quotes around names).
const unsafeParquetChars = ",;{}()\n\t=.:<>[]`\"'"

// safeParquetName reports whether name, a logical column name, can be a
// Parquet column name as it is for every reader we know of: not empty, no
// leading or trailing space, no control character and none of
// unsafeParquetChars. A space inside is fine: Parquet, pyarrow, DuckDB and
// Spark's Parquet reader all take it.
func safeParquetName(name string) bool {
	return name != "" && strings.TrimSpace(name) == name && !strings.ContainsAny(name, unsafeParquetChars) &&
		!strings.ContainsFunc(name, unicode.IsControl)
}

// takenNames holds, by the [schema.FieldPath] of the parent struct (empty
// for the top level), the physical names its fields use, in lower case:
// Spark and some Parquet readers match names regardless of case.
type takenNames map[string]map[string]bool

// add records physical as the name of the field at path.
func (n takenNames) add(path []string, physical string) {
	parent := schema.FieldPath(path[:len(path)-1]...)
	if n[parent] == nil {
		n[parent] = map[string]bool{}
	}
	n[parent][strings.ToLower(physical)] = true
}

// physicalName returns, and records, the physical name of the new field at
// path: its logical name when reuse is set, the name is safe for Parquet
// readers (safeParquetName) and no sibling uses it in any case; otherwise
// col-<uuid>, as in Spark. Files then carry the real column names where
// they can, for readers that do not apply column mapping (plain Parquet
// readers, delta-rs's to_pyarrow_table); the protocol asks only that
// physical names be unique.
func (n takenNames) physicalName(path []string, reuse bool) string {
	name := path[len(path)-1]
	parent := schema.FieldPath(path[:len(path)-1]...)
	if !reuse || !safeParquetName(name) || n[parent][strings.ToLower(name)] {
		name = physicalPrefix + storage.NewUUID()
	}
	n.add(path, name)
	return name
}

// noneDropped reports whether no column can have left the table mapped by
// m: its ids are exactly 1 to its highest id. A dropped column leaves its id
// unused for good, since new ids only grow; its data stays in the files
// under its physical name, so reusing that name would bring the old values
// back. A nil mapping (the table has none yet) dropped nothing: Delta drops
// columns only from tables with column mapping.
func (m *columnMapping) noneDropped() bool {
	if m == nil {
		return true
	}
	if len(m.cols) != m.maxID {
		return false
	}
	seen := make(map[int]bool, len(m.cols))
	for _, c := range m.cols {
		if c.id < 1 || c.id > m.maxID || seen[c.id] {
			return false
		}
		seen[c.id] = true
	}
	return true
}

// column returns the mapping of the field whose [schema.FieldPath] is key.
func (m *columnMapping) column(key string) (mappedColumn, bool) {
	if m == nil {
		return mappedColumn{}, false
	}
	c, ok := m.cols[key]
	return c, ok
}

// physicalSchema returns ps, the Parquet schema of a data file with logical
// names, with the physical names and field ids of m.
func physicalSchema(ps *parquet.Schema, m *columnMapping) *parquet.Schema {
	return rows.Renamed(ps, func(path []string) rows.Column {
		c := m.cols[schema.FieldPath(path...)]
		return rows.Column{Name: c.physical, ID: c.id}
	})
}

// record writes m into a new metaData action: the mode (name, unless the
// table already has one) and maxColumnId into config, each field's id and
// physical name into extra.
func (m *columnMapping) record(config map[string]string, extra schema.Metadata) {
	if !isMapped(config) {
		config[propMappingMode] = mappingModeName
	}
	config[propMaxColumnID] = strconv.Itoa(m.maxID)
	for key, c := range m.cols {
		if extra[key] == nil {
			extra[key] = map[string]json.RawMessage{}
		}
		extra[key][metaColumnID] = json.RawMessage(strconv.Itoa(c.id))
		name, _ := json.Marshal(c.physical) // a string always encodes
		extra[key][metaPhysicalName] = name
	}
}

// keepOwn returns the keys of ownMetadata in extra.
func keepOwn(extra schema.Metadata) schema.Metadata {
	out := schema.Metadata{}
	for path, kv := range extra {
		for _, k := range ownMetadata {
			if v, ok := kv[k]; ok {
				if out[path] == nil {
					out[path] = map[string]json.RawMessage{}
				}
				out[path][k] = v
			}
		}
	}
	return out
}
