package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Field metadata keys of the Spark JSON schema.
const (
	// metaComment holds a column's COMMENT.
	metaComment = "comment"
	// metaCharVarchar holds the catalog string of a top-level column whose
	// type is or contains CHAR(n)/VARCHAR(n), which Spark stores as "string"
	// (CharVarcharUtils.replaceCharVarcharWithStringInSchema).
	metaCharVarchar = "__CHAR_VARCHAR_TYPE_STRING"
)

// jsonPrimitives maps the Spark JSON names of the types without parameters
// to their kinds; the index is the kind.
var jsonPrimitives = [...]string{
	Boolean:      "boolean",
	Byte:         "byte",
	Short:        "short",
	Int:          "integer",
	Long:         "long",
	Float:        "float",
	Double:       "double",
	String:       "string",
	Binary:       "binary",
	Date:         "date",
	Timestamp:    "timestamp",
	TimestampNTZ: "timestamp_ntz",
	Variant:      "variant",
}

// SparkJSON returns fields as a Spark StructType in JSON, the schemaString
// of a Delta Lake metaData action:
//
//	{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}}]}
//
// Array elements and map values are written as nullable (containsNull and
// valueContainsNull true). A COMMENT goes into the field's metadata as
// "comment". CHAR(n) and VARCHAR(n) are written as "string", and a top-level
// field whose type is or contains one records its full type in the metadata
// key "__CHAR_VARCHAR_TYPE_STRING" ("varchar(10)", "array<char(2)>"), as Spark
// does. It fails when [Validate] does.
func SparkJSON(fields []Field) (string, error) {
	return SparkJSONWithMetadata(fields, nil)
}

// Metadata holds field metadata the type system does not model (Delta's
// column mapping and type changes, say), by field: the key is the field's
// [FieldPath]. The values are raw JSON.
type Metadata map[string]map[string]json.RawMessage

// FieldPath returns the key of the struct field at path in a [Metadata]:
// the names of the struct fields from the top, with "element" for an
// array's element and "key" or "value" for a map's, as the Delta protocol
// forms a field path; each name is quoted as [QuoteName] quotes it, and
// they are joined by dots. It is also how errors name a nested column.
func FieldPath(path ...string) string {
	quoted := make([]string, len(path))
	for i, name := range path {
		quoted[i] = QuoteName(name)
	}
	return strings.Join(quoted, ".")
}

// SparkJSONWithMetadata is [SparkJSON] with the metadata extra holds added to
// its fields. Keys SparkJSON writes itself (comment, the CHAR/VARCHAR type)
// keep SparkJSON's value.
func SparkJSONWithMetadata(fields []Field, extra Metadata) (string, error) {
	if err := Validate(fields); err != nil {
		return "", fmt.Errorf("encoding Spark schema JSON: %w", err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(jsonStruct(fields, "", extra)); err != nil {
		return "", fmt.Errorf("encoding Spark schema JSON: %w", err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// jsonStructOut, jsonFieldOut, jsonArrayOut and jsonMapOut are the Spark JSON
// shapes, with their members in the order Spark writes them.
type (
	jsonStructOut struct {
		Type   string         `json:"type"`
		Fields []jsonFieldOut `json:"fields"`
	}
	jsonFieldOut struct {
		Name     string         `json:"name"`
		Type     any            `json:"type"`
		Nullable bool           `json:"nullable"`
		Metadata map[string]any `json:"metadata"`
	}
	jsonArrayOut struct {
		Type         string `json:"type"`
		ElementType  any    `json:"elementType"`
		ContainsNull bool   `json:"containsNull"`
	}
	jsonMapOut struct {
		Type              string `json:"type"`
		KeyType           any    `json:"keyType"`
		ValueType         any    `json:"valueType"`
		ValueContainsNull bool   `json:"valueContainsNull"`
	}
)

// jsonStruct converts a validated field list of the struct at path prefix
// ("" for the table's columns, the only level where Spark records
// CHAR/VARCHAR types in metadata), adding the metadata of extra.
func jsonStruct(fields []Field, prefix string, extra Metadata) jsonStructOut {
	out := jsonStructOut{Type: "struct", Fields: make([]jsonFieldOut, 0, len(fields))}
	for _, f := range fields {
		path := joinPath(prefix, QuoteName(f.Name))
		jf := jsonFieldOut{Name: f.Name, Type: jsonType(f.Type, path, extra), Nullable: f.Nullable, Metadata: map[string]any{}}
		for k, v := range extra[path] {
			jf.Metadata[k] = v
		}
		if f.Comment != "" {
			jf.Metadata[metaComment] = f.Comment
		}
		if prefix == "" && f.Type.hasCharVarchar() {
			jf.Metadata[metaCharVarchar] = catalogString(f.Type)
		}
		out.Fields = append(out.Fields, jf)
	}
	return out
}

// joinPath appends a quoted name, or element, key or value, to the path of
// a field ("" for the top).
func joinPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// jsonType converts a validated type of the field at path.
func jsonType(t *Type, path string, extra Metadata) any {
	switch t.Kind {
	case Decimal:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale)
	case Array:
		return jsonArrayOut{Type: "array", ElementType: jsonType(t.Elem, path+".element", extra), ContainsNull: true}
	case Map:
		return jsonMapOut{Type: "map", KeyType: jsonType(t.Key, path+".key", extra),
			ValueType: jsonType(t.Value, path+".value", extra), ValueContainsNull: true}
	case Struct:
		return jsonStruct(t.Fields, path, extra)
	}
	return jsonPrimitives[t.Kind]
}

// hasCharVarchar reports whether t is or contains a CHAR(n) or VARCHAR(n).
func (t *Type) hasCharVarchar() bool {
	switch {
	case t == nil:
		return false
	case t.Kind == String:
		return t.Length > 0
	case t.Kind == Array:
		return t.Elem.hasCharVarchar()
	case t.Kind == Map:
		return t.Key.hasCharVarchar() || t.Value.hasCharVarchar()
	case t.Kind == Struct:
		for _, f := range t.Fields {
			if f.Type.hasCharVarchar() {
				return true
			}
		}
	}
	return false
}

// ParseSparkJSON parses a Spark StructType in JSON, as SparkJSON, Spark and
// delta-rs write it in a Delta table's metaData schemaString. It reads
// "comment" and "__CHAR_VARCHAR_TYPE_STRING" from field metadata and ignores
// other metadata keys (column mapping, generated columns and the like, which
// the table layer checks through the table's configuration). A missing
// "nullable" means nullable, as in Spark. It refuses what the type system
// cannot hold: array elements or map values declared non-nullable
// (containsNull or valueContainsNull false), types it does not know (such as
// intervals), and anything [Validate] refuses.
func ParseSparkJSON(s string) ([]Field, error) {
	fields, _, err := ParseSparkJSONWithMetadata(s)
	return fields, err
}

// ParseSparkJSONWithMetadata is [ParseSparkJSON] that also returns the
// metadata of every field, at any depth, that it does not read itself
// (all keys but comment and the CHAR/VARCHAR type); fields without any are
// absent from it.
func ParseSparkJSONWithMetadata(s string) ([]Field, Metadata, error) {
	extra := Metadata{}
	fields, err := parseSparkJSON(s, extra)
	if err != nil {
		return nil, nil, fmt.Errorf("parsing Spark schema JSON: %w", err)
	}
	return fields, extra, nil
}

// jsonTypeIn and jsonFieldIn are what ParseSparkJSON reads; nested types
// stay raw until their turn comes, so that nesting depth is checked before
// recursing.
type (
	jsonTypeIn struct {
		Type              string          `json:"type"`
		Fields            json.RawMessage `json:"fields"`
		ElementType       json.RawMessage `json:"elementType"`
		ContainsNull      *bool           `json:"containsNull"`
		KeyType           json.RawMessage `json:"keyType"`
		ValueType         json.RawMessage `json:"valueType"`
		ValueContainsNull *bool           `json:"valueContainsNull"`
	}
	jsonFieldIn struct {
		Name     *string                    `json:"name"`
		Type     json.RawMessage            `json:"type"`
		Nullable *bool                      `json:"nullable"`
		Metadata map[string]json.RawMessage `json:"metadata"`
	}
)

func parseSparkJSON(s string, extra Metadata) ([]Field, error) {
	var top jsonTypeIn
	if err := json.Unmarshal([]byte(s), &top); err != nil {
		return nil, err
	}
	if top.Type != "struct" {
		return nil, fmt.Errorf("the schema has type %q, want \"struct\"", top.Type)
	}
	fields, err := jsonFields(top.Fields, "", 0, extra)
	if err != nil {
		return nil, err
	}
	if err := Validate(fields); err != nil {
		return nil, err
	}
	return fields, nil
}

// jsonFields parses the "fields" array of a struct whose path is prefix,
// with a dot ("" at the top), keeping the metadata it does not read in
// extra.
func jsonFields(raw json.RawMessage, prefix string, depth int, extra Metadata) ([]Field, error) {
	var in []jsonFieldIn
	if len(raw) == 0 {
		return nil, fmt.Errorf("struct %s has no \"fields\"", strings.TrimSuffix(prefix, "."))
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, err
	}
	var fields []Field
	for i, jf := range in {
		if jf.Name == nil {
			return nil, fmt.Errorf("field %d of struct %q has no \"name\"", i, strings.TrimSuffix(prefix, "."))
		}
		f := Field{Name: *jf.Name, Nullable: jf.Nullable == nil || *jf.Nullable}
		path := prefix + QuoteName(f.Name)
		t, err := jsonFieldType(jf.Type, path, depth+1, extra)
		if err != nil {
			return nil, err
		}
		f.Type = t
		if err := f.applyMetadata(jf.Metadata, path); err != nil {
			return nil, err
		}
		for k, v := range jf.Metadata {
			if k == metaComment || k == metaCharVarchar {
				continue
			}
			if extra[path] == nil {
				extra[path] = map[string]json.RawMessage{}
			}
			extra[path][k] = v
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// applyMetadata reads the comment and the CHAR/VARCHAR type of f from its
// metadata.
func (f *Field) applyMetadata(meta map[string]json.RawMessage, path string) error {
	if raw, ok := meta[metaComment]; ok {
		if err := json.Unmarshal(raw, &f.Comment); err != nil {
			return fmt.Errorf("column %s: metadata %q: %w", path, metaComment, err)
		}
	}
	raw, ok := meta[metaCharVarchar]
	if !ok {
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("column %s: metadata %q: %w", path, metaCharVarchar, err)
	}
	declared, err := parseTypeString(s)
	if err != nil {
		return fmt.Errorf("column %s: metadata %q: type %q: %w", path, metaCharVarchar, s, err)
	}
	t, ok := withCharVarchar(f.Type, declared)
	if !ok {
		return fmt.Errorf("column %s: metadata %q declares type %s, which does not match its type %s",
			path, metaCharVarchar, declared, f.Type)
	}
	f.Type = t
	return nil
}

// withCharVarchar returns t with its strings' lengths taken from declared,
// the same type as written before Spark replaced CHAR and VARCHAR with
// STRING; ok is false when the two differ in anything else.
func withCharVarchar(t, declared *Type) (_ *Type, ok bool) {
	if t == nil || declared == nil || t.Kind != declared.Kind {
		return nil, false
	}
	switch t.Kind {
	case String:
		return &Type{Kind: String, Length: declared.Length, Fixed: declared.Fixed}, true
	case Array:
		elem, ok := withCharVarchar(t.Elem, declared.Elem)
		return &Type{Kind: Array, Elem: elem}, ok
	case Map:
		key, okKey := withCharVarchar(t.Key, declared.Key)
		value, okValue := withCharVarchar(t.Value, declared.Value)
		return &Type{Kind: Map, Key: key, Value: value}, okKey && okValue
	case Struct:
		if len(t.Fields) != len(declared.Fields) {
			return nil, false
		}
		fields := make([]Field, len(t.Fields))
		for i, f := range t.Fields {
			if f.Name != declared.Fields[i].Name {
				return nil, false
			}
			if f.Type, ok = withCharVarchar(f.Type, declared.Fields[i].Type); !ok {
				return nil, false
			}
			fields[i] = f
		}
		return &Type{Kind: Struct, Fields: fields}, true
	}
	return t, t.Equal(declared)
}

// jsonFieldType parses the type of the column at path, keeping the metadata
// of nested fields that jsonFields does not read in extra.
func jsonFieldType(raw json.RawMessage, path string, depth int, extra Metadata) (*Type, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("column %s: types nest more than %d levels deep", path, MaxDepth)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, fmt.Errorf("column %s has no \"type\"", path)
	}
	if raw[0] == '"' {
		var name string
		if err := json.Unmarshal(raw, &name); err != nil {
			return nil, fmt.Errorf("column %s: %w", path, err)
		}
		t, err := jsonTypeName(name)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", path, err)
		}
		return t, nil
	}
	var in jsonTypeIn
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("column %s: %w", path, err)
	}
	switch in.Type {
	case "array":
		if in.ContainsNull != nil && !*in.ContainsNull {
			return nil, fmt.Errorf("column %s: arrays with non-nullable elements (containsNull false) are not supported", path)
		}
		elem, err := jsonFieldType(in.ElementType, path+".element", depth+1, extra)
		if err != nil {
			return nil, err
		}
		return &Type{Kind: Array, Elem: elem}, nil
	case "map":
		if in.ValueContainsNull != nil && !*in.ValueContainsNull {
			return nil, fmt.Errorf("column %s: maps with non-nullable values (valueContainsNull false) are not supported", path)
		}
		key, err := jsonFieldType(in.KeyType, path+".key", depth+1, extra)
		if err != nil {
			return nil, err
		}
		value, err := jsonFieldType(in.ValueType, path+".value", depth+1, extra)
		if err != nil {
			return nil, err
		}
		return &Type{Kind: Map, Key: key, Value: value}, nil
	case "struct":
		fields, err := jsonFields(in.Fields, path+".", depth, extra)
		if err != nil {
			return nil, err
		}
		return &Type{Kind: Struct, Fields: fields}, nil
	}
	return nil, fmt.Errorf("column %s: unknown Spark type %q (want \"array\", \"map\" or \"struct\" in a type object)", path, in.Type)
}

// supportedJSONTypes lists the Spark JSON type names ParseSparkJSON reads,
// for error messages.
const supportedJSONTypes = "boolean, byte, short, integer, long, float, double, decimal(p,s), string, " +
	"char(n), varchar(n), binary, date, timestamp, timestamp_ntz, variant, array, map, struct"

// jsonTypeName parses a Spark JSON type name: a primitive, "decimal(p,s)",
// or the "char(n)"/"varchar(n)" that Spark writes when it keeps those types.
func jsonTypeName(name string) (*Type, error) {
	for k, n := range jsonPrimitives {
		if n != "" && n == name {
			return &Type{Kind: Kind(k)}, nil
		}
	}
	want := Kind(0)
	switch {
	case name == "decimal":
		return &Type{Kind: Decimal, Precision: defaultPrecision}, nil
	case strings.HasPrefix(name, "decimal("):
		want = Decimal
	case strings.HasPrefix(name, "char("), strings.HasPrefix(name, "varchar("):
		want = String
	default:
		return nil, fmt.Errorf("unsupported Spark type %q (supported: %s)", name, supportedJSONTypes)
	}
	t, err := parseTypeString(name)
	if err != nil || t.Kind != want {
		return nil, fmt.Errorf("unsupported Spark type %q (supported: %s)", name, supportedJSONTypes)
	}
	return t, nil
}

// SparkTypeName returns the name of a primitive or DECIMAL type as Spark's
// JSON schema writes it ("integer", "decimal(10,2)", "timestamp_ntz"), and
// "" for other types.
func SparkTypeName(t *Type) string {
	if t == nil {
		return ""
	}
	if s, ok := jsonType(t, "", nil).(string); ok {
		return s
	}
	return ""
}
