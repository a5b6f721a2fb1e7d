// Package iceberg holds the Iceberg table metadata of a Delta table's
// Iceberg mirror: the Delta schema as an Iceberg schema with field ids, the
// partition spec of its partition columns, and the manifests and manifest
// lists (Avro files) that list its Parquet files, as the Iceberg table
// spec (format version 2) defines them.
//
// It sits between the table's log and the catalog: the mirror (package
// mirror) reads what each Delta version did ([table.ChangeReader]),
// builds an Iceberg snapshot of the same Parquet files with this
// package, writes its manifests beside the Delta log, and commits the
// snapshot through an Iceberg REST catalog (package icebergrest). No data
// file is written twice.
//
// Delta types map to Iceberg types (format version 2) as the table in
// docs/guides/catalogs.md says, with the reasons for what is refused
// (VARIANT, which Iceberg has from format version 3 only) or narrowed
// (TINYINT and SMALLINT read as int).
//
// A table with column mapping keeps its column ids as Iceberg field ids,
// which its files carry; its arrays and maps are refused, since Delta
// gives their elements, keys and values no ids in the files. A table
// without column mapping gets ids from the mirror, kept from snapshot to
// snapshot, and a name mapping (schema.name-mapping.default) through
// which readers find the columns of its files by name. Partition columns
// (STRING, BOOLEAN, integers, DATE) are identity-partitioned: Delta keeps
// their values in the files' paths, and Iceberg readers take them from the
// manifests.
//
// [table.ChangeReader]: github.com/tributary-io/terraform-provider-tributary/agent/internal/table
package iceberg

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// Schema is an Iceberg schema in its JSON form (the spec's appendix C).
type Schema struct {
	Type     string  `json:"type"` // always "struct"
	SchemaID int     `json:"schema-id"`
	Fields   []Field `json:"fields"`
}

// Field is a struct field of an Iceberg schema.
type Field struct {
	ID       int    `json:"id"`
	Name     string `json:"name"`
	Required bool   `json:"required"`
	Type     *Type  `json:"type"`
	Doc      string `json:"doc,omitempty"`
}

// Type is an Iceberg type: a primitive (Primitive set, "long",
// "decimal(10,2)"...) or a struct, list or map.
type Type struct {
	Primitive string
	// Fields are a struct's fields.
	Fields []Field
	// ElementID, Element and ElementRequired describe a list's element.
	ElementID       int
	Element         *Type
	ElementRequired bool
	// KeyID, Key, ValueID, Value and ValueRequired describe a map's keys
	// and values.
	KeyID, ValueID int
	Key, Value     *Type
	ValueRequired  bool
}

// MarshalJSON writes a primitive as its name and a nested type as the
// object the spec's appendix C gives.
func (t *Type) MarshalJSON() ([]byte, error) {
	switch {
	case t.Primitive != "":
		return json.Marshal(t.Primitive)
	case t.Element != nil:
		return json.Marshal(struct {
			Type            string `json:"type"`
			ElementID       int    `json:"element-id"`
			Element         *Type  `json:"element"`
			ElementRequired bool   `json:"element-required"`
		}{"list", t.ElementID, t.Element, t.ElementRequired})
	case t.Key != nil:
		return json.Marshal(struct {
			Type          string `json:"type"`
			KeyID         int    `json:"key-id"`
			Key           *Type  `json:"key"`
			ValueID       int    `json:"value-id"`
			Value         *Type  `json:"value"`
			ValueRequired bool   `json:"value-required"`
		}{"map", t.KeyID, t.Key, t.ValueID, t.Value, t.ValueRequired})
	}
	return json.Marshal(struct {
		Type   string  `json:"type"`
		Fields []Field `json:"fields"`
	}{"struct", t.Fields})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (t *Type) UnmarshalJSON(b []byte) error {
	var name string
	if json.Unmarshal(b, &name) == nil {
		*t = Type{Primitive: name}
		return nil
	}
	var o struct {
		Type            string  `json:"type"`
		Fields          []Field `json:"fields"`
		ElementID       int     `json:"element-id"`
		Element         *Type   `json:"element"`
		ElementRequired bool    `json:"element-required"`
		KeyID           int     `json:"key-id"`
		Key             *Type   `json:"key"`
		ValueID         int     `json:"value-id"`
		Value           *Type   `json:"value"`
		ValueRequired   bool    `json:"value-required"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	switch o.Type {
	case "struct":
		*t = Type{Fields: o.Fields}
	case "list":
		if o.Element == nil {
			return fmt.Errorf("list type without an element")
		}
		*t = Type{ElementID: o.ElementID, Element: o.Element, ElementRequired: o.ElementRequired}
	case "map":
		if o.Key == nil || o.Value == nil {
			return fmt.Errorf("map type without a key or a value")
		}
		*t = Type{KeyID: o.KeyID, Key: o.Key, ValueID: o.ValueID, Value: o.Value, ValueRequired: o.ValueRequired}
	default:
		return fmt.Errorf("unknown Iceberg type %q", o.Type)
	}
	return nil
}

// UnsupportedError says why a Delta table cannot be mirrored as an
// Iceberg table: a column type Iceberg format version 2 lacks, say. The
// mirror reports it and leaves the table's Delta log alone.
type UnsupportedError struct {
	// Column is the column, as [schema.FieldPath] names it; empty when
	// the reason is the table's.
	Column string
	// Reason says what Iceberg lacks and what to do.
	Reason string
}

// Error names the column and the reason.
func (e *UnsupportedError) Error() string {
	if e.Column == "" {
		return "the table cannot be mirrored as an Iceberg table: " + e.Reason
	}
	return fmt.Sprintf("the table cannot be mirrored as an Iceberg table: column %s: %s", e.Column, e.Reason)
}

// Columns gives each struct field of a Delta table its name and field id
// in the data files, by [schema.FieldPath]; nil for a table without
// column mapping (see [table.Meta]).
//
// [table.Meta]: github.com/tributary-io/terraform-provider-tributary/agent/internal/table
type Columns = map[string]rows.Column

// FromDelta returns the Iceberg schema of a Delta table's columns fields,
// and the highest field id it uses. With column mapping (columns not
// nil), a struct field's id is its column mapping id, which the data
// files carry. Without it, the files carry no ids and a field keeps the
// id it has in prev, the mirror's previous schema (nil for the first),
// found by its path; a new field gets the next id after lastID, the
// highest id any schema of the mirror used. Types map as the package doc
// says; a column Iceberg cannot hold is an [*UnsupportedError].
func FromDelta(fields []schema.Field, columns Columns, prev *Schema, lastID int) (*Schema, int, error) {
	c := &converter{columns: columns, last: lastID, prev: map[string]int{}}
	if prev != nil {
		c.index(prev.Fields, nil)
	}
	for _, col := range columns {
		c.last = max(c.last, col.ID)
	}
	out, err := c.structFields(fields, nil)
	if err != nil {
		return nil, 0, err
	}
	return &Schema{Type: "struct", Fields: out}, c.last, nil
}

// converter maps Delta types to Iceberg types, handing out field ids.
type converter struct {
	columns Columns
	// prev maps the field paths of the previous schema to their ids.
	prev map[string]int
	last int
}

// index records the ids of prev's fields under path.
func (c *converter) index(fields []Field, path []string) {
	for _, f := range fields {
		p := append(slices.Clip(path), f.Name)
		c.prev[schema.FieldPath(p...)] = f.ID
		c.indexType(f.Type, p)
	}
}

func (c *converter) indexType(t *Type, path []string) {
	switch {
	case t.Element != nil:
		p := append(slices.Clip(path), "element")
		c.prev[schema.FieldPath(p...)] = t.ElementID
		c.indexType(t.Element, p)
	case t.Key != nil:
		k, v := append(slices.Clip(path), "key"), append(slices.Clip(path), "value")
		c.prev[schema.FieldPath(k...)], c.prev[schema.FieldPath(v...)] = t.KeyID, t.ValueID
		c.indexType(t.Key, k)
		c.indexType(t.Value, v)
	case t.Primitive == "":
		c.index(t.Fields, path)
	}
}

// id returns the id of the field at path: its column mapping id for a
// struct field of a table with column mapping, else its id in the
// previous schema, else a new one.
func (c *converter) id(path []string, structField bool) (int, error) {
	key := schema.FieldPath(path...)
	if c.columns != nil {
		if !structField {
			return 0, &UnsupportedError{Column: key, Reason: "the table has column mapping, and its data files carry no field ids " +
				"for the elements of arrays nor for the keys and values of maps, which Iceberg readers need: " +
				"mirror a table without column mapping, or one whose arrays and maps are inside no column"}
		}
		col, ok := c.columns[key]
		if !ok || col.ID <= 0 {
			return 0, &UnsupportedError{Column: key, Reason: "the table has column mapping but the column has no id"}
		}
		return col.ID, nil
	}
	if id, ok := c.prev[key]; ok {
		return id, nil
	}
	c.last++
	return c.last, nil
}

func (c *converter) structFields(fields []schema.Field, path []string) ([]Field, error) {
	out := make([]Field, 0, len(fields))
	for _, f := range fields {
		p := append(slices.Clip(path), f.Name)
		id, err := c.id(p, true)
		if err != nil {
			return nil, err
		}
		t, err := c.convert(f.Type, p)
		if err != nil {
			return nil, err
		}
		out = append(out, Field{ID: id, Name: f.Name, Required: !f.Nullable, Type: t, Doc: f.Comment})
	}
	return out, nil
}

// convert returns the Iceberg type of Delta type t, the type of the field
// at path.
func (c *converter) convert(t *schema.Type, path []string) (*Type, error) {
	switch t.Kind {
	case schema.Boolean:
		return &Type{Primitive: "boolean"}, nil
	case schema.Byte, schema.Short, schema.Int:
		// Iceberg has no 8- or 16-bit integers; the files' INT32 columns
		// read as int.
		return &Type{Primitive: "int"}, nil
	case schema.Long:
		return &Type{Primitive: "long"}, nil
	case schema.Float:
		return &Type{Primitive: "float"}, nil
	case schema.Double:
		return &Type{Primitive: "double"}, nil
	case schema.Decimal:
		return &Type{Primitive: fmt.Sprintf("decimal(%d, %d)", t.Precision, t.Scale)}, nil
	case schema.String:
		return &Type{Primitive: "string"}, nil
	case schema.Binary:
		return &Type{Primitive: "binary"}, nil
	case schema.Date:
		return &Type{Primitive: "date"}, nil
	case schema.Timestamp:
		return &Type{Primitive: "timestamptz"}, nil
	case schema.TimestampNTZ:
		return &Type{Primitive: "timestamp"}, nil
	case schema.Struct:
		fields, err := c.structFields(t.Fields, path)
		if err != nil {
			return nil, err
		}
		return &Type{Fields: fields}, nil
	case schema.Array:
		p := append(slices.Clip(path), "element")
		id, err := c.id(p, false)
		if err != nil {
			return nil, err
		}
		elem, err := c.convert(t.Elem, p)
		if err != nil {
			return nil, err
		}
		return &Type{ElementID: id, Element: elem}, nil
	case schema.Map:
		k, v := append(slices.Clip(path), "key"), append(slices.Clip(path), "value")
		keyID, err := c.id(k, false)
		if err != nil {
			return nil, err
		}
		valueID, err := c.id(v, false)
		if err != nil {
			return nil, err
		}
		key, err := c.convert(t.Key, k)
		if err != nil {
			return nil, err
		}
		value, err := c.convert(t.Value, v)
		if err != nil {
			return nil, err
		}
		return &Type{KeyID: keyID, Key: key, ValueID: valueID, Value: value}, nil
	case schema.Variant:
		return nil, &UnsupportedError{Column: schema.FieldPath(path...), Reason: "VARIANT has no Iceberg type before format version 3, " +
			"and the mirror writes version 2, which every Iceberg reader reads: store the column as STRING " +
			"(value_format JSON with the column typed STRING) to mirror the table"}
	}
	return nil, &UnsupportedError{Column: schema.FieldPath(path...), Reason: fmt.Sprintf("type %v has no Iceberg equivalent", t.Kind)}
}

// NameMapping returns the table property schema.name-mapping.default of s
// (the spec's "Column Projection"): Iceberg readers find the columns of
// files that carry no field ids by their names. Every file of a table
// without column mapping is such a file.
func NameMapping(s *Schema) (string, error) {
	b, err := json.Marshal(mapFields(s.Fields))
	if err != nil {
		return "", fmt.Errorf("encoding the name mapping: %w", err)
	}
	return string(b), nil
}

// mappedField is one field of a name mapping.
type mappedField struct {
	FieldID int           `json:"field-id"`
	Names   []string      `json:"names"`
	Fields  []mappedField `json:"fields,omitempty"`
}

func mapFields(fields []Field) []mappedField {
	out := make([]mappedField, len(fields))
	for i, f := range fields {
		out[i] = mappedField{FieldID: f.ID, Names: []string{f.Name}, Fields: mapType(f.Type)}
	}
	return out
}

func mapType(t *Type) []mappedField {
	switch {
	case t.Element != nil:
		return []mappedField{{FieldID: t.ElementID, Names: []string{"element"}, Fields: mapType(t.Element)}}
	case t.Key != nil:
		return []mappedField{
			{FieldID: t.KeyID, Names: []string{"key"}, Fields: mapType(t.Key)},
			{FieldID: t.ValueID, Names: []string{"value"}, Fields: mapType(t.Value)},
		}
	case t.Primitive == "":
		return mapFields(t.Fields)
	}
	return nil
}

// FieldByName returns the top-level field of s named name.
func (s *Schema) FieldByName(name string) (Field, bool) {
	i := slices.IndexFunc(s.Fields, func(f Field) bool { return strings.EqualFold(f.Name, name) })
	if i < 0 {
		return Field{}, false
	}
	return s.Fields[i], true
}
