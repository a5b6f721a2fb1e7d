package schema

// Schema inference for JSON records, as Spark's JsonInferSchema does it
// (the inference of spark.read.json and of Auto Loader), with these
// decisions:
//
//   - Columns and struct members keep the order they were first seen in;
//     Spark sorts them by name. A table whose later records add fields gets
//     them at the end, which is where schema evolution adds columns.
//   - Integers are BIGINT, or DECIMAL(p,0) beyond BIGINT's range (up to 38
//     digits, DOUBLE beyond), and numbers with a fraction or an exponent
//     DOUBLE, as in Spark with prefersDecimal off (its default). Inferring
//     DECIMAL for fractions would give a column the scale of the first
//     records, and every later value with one more digit would have to
//     widen it or be rescued; a DOUBLE holds them all.
//   - In an inferred schema, empty strings are like nulls: they fix no type
//     (Spark treats them so for data that writes "" for a missing value).
//     [InferValue] gives them STRING, since a value "" does not fit a
//     BIGINT column.
//   - A key written twice in one object counts with both values: its type
//     holds both, so it holds the last, the one Spark's from_json keeps.
//     (Spark's inference gives two columns of the same name and fails.)
//   - Column names are case-insensitive, as in Delta: of keys that differ
//     only in case ("Id" and "id"), the one seen first names the column
//     and the others are left out of the schema, as [Canonical] does; the
//     runtime rescues their values ([Lookup]). Spark's inference gives two
//     columns and fails. Inferred types ([InferValue], [Unify]) keep every
//     spelling, so that [Fits] can tell such keys from the column's.
//   - A key that is empty names no column, and a field only ever seen as {}
//     (or an array of them) has none (as in Spark).
//   - Values nested deeper than [MaxDepth] are STRING, the JSON text of the
//     value, so that the schema stays valid.
//   - The text after the record's first complete JSON value is ignored, as
//     Spark does.

import (
	"fmt"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/sparktime"
)

// InferOptions are the inference switches of json_options.
type InferOptions struct {
	// StringTypeInference infers DATE for strings of the form yyyy-MM-dd
	// and TIMESTAMP for yyyy-MM-ddTHH:mm:ss[.fraction][Z|±hh:mm] (the
	// shapes of Spark's default date and timestamp formats), and STRING
	// for other strings. Off, every string is STRING. A time of day
	// (HH:mm:ss) stays STRING, where Flink infers TIME: the Delta protocol
	// has no TIME type, so a table could not hold the column.
	StringTypeInference bool
	// PrimitiveAsString infers STRING for numbers and booleans, as Spark's
	// primitivesAsString.
	PrimitiveAsString bool
	// AllowSingleQuotes accepts strings and keys in single quotes ('a'),
	// in which \' escapes a quote, as Spark's allowSingleQuotes (whose
	// default is true).
	AllowSingleQuotes bool
	// AllowNonNumericNumbers accepts the unquoted numbers NaN, Infinity,
	// +Infinity, -Infinity, +INF and -INF, inferred DOUBLE, as Spark's
	// allowNonNumericNumbers (whose default is true).
	AllowNonNumericNumbers bool
	// FlattenNested makes each field of a nested object a top-level
	// column named by its dotted path ("user.name") instead of a field of
	// a STRUCT column, as [Flatten] does; objects inside arrays and maps
	// stay STRUCTs. json_options.flatten_nested_columns.
	FlattenNested bool
}

// The scalar types inference gives. Types are immutable, so every value
// of a kind shares one.
var (
	typeBoolean   = &Type{Kind: Boolean}
	typeLong      = &Type{Kind: Long}
	typeDouble    = &Type{Kind: Double}
	typeString    = &Type{Kind: String}
	typeDate      = &Type{Kind: Date}
	typeTimestamp = &Type{Kind: Timestamp}
)

// Inferrer accumulates the schema of JSON object records. The zero value
// is not usable; call [NewInferrer]. It is not safe for concurrent use.
type Inferrer struct {
	opts InferOptions
	root node
	// scanner is reused across records for its scratch buffer.
	scanner jsonScanner
}

// NewInferrer returns an Inferrer with no fields.
func NewInferrer(opts InferOptions) *Inferrer {
	return &Inferrer{opts: opts, root: node{kind: nodeStruct}}
}

// Add folds one record, the complete text of a JSON object, into the
// schema. A record that is not a JSON object, or malformed JSON, returns an
// error and changes nothing. Adding a record whose fields and types are
// already known allocates nothing.
func (in *Inferrer) Add(record []byte) error {
	s := &in.scanner
	*s = jsonScanner{data: record, opts: in.opts, emptyIsNull: true, scratch: s.scratch}
	defer func() { s.data = nil }()
	switch c := s.peek(); {
	case s.pos >= len(s.data):
		return fmt.Errorf("a record must be a JSON object, found no value")
	case c != '{':
		return fmt.Errorf("a record must be a JSON object, found %s", describeByte(c))
	}
	start := s.pos
	if err := s.skip(0); err != nil {
		return err
	}
	s.pos = start
	s.fold(&in.root, 0)
	return nil
}

// Fields returns the inferred columns in the order they were first seen,
// all nullable. A field only ever seen null (or "") is STRING, as is an
// array element, and a field only ever seen as {} is left out (see
// [Canonical]). The result is a copy the caller may keep.
func (in *Inferrer) Fields() []Field {
	fs := canonicalFields(in.root.typ().Fields)
	if in.opts.FlattenNested {
		return Flatten(fs)
	}
	return fs
}

// Flatten returns fields with each STRUCT field, at any depth outside
// arrays and maps, replaced by its fields named by their dotted paths from
// the top ("user.addr.city"), in order. A name that differs from an
// earlier one only in case is left out, as [Canonical] leaves such
// members out.
func Flatten(fields []Field) []Field {
	out := make([]Field, 0, len(fields))
	seen := map[string]bool{}
	var walk func(prefix string, fs []Field)
	walk = func(prefix string, fs []Field) {
		for _, f := range fs {
			name := prefix + f.Name
			if f.Type != nil && f.Type.Kind == Struct {
				walk(name+".", f.Type.Fields)
				continue
			}
			if !seen[strings.ToLower(name)] {
				seen[strings.ToLower(name)] = true
				f.Name = name
				out = append(out, f)
			}
		}
	}
	walk("", fields)
	return out
}

// InferValue returns the type of one JSON value, the complete text of
// which is value: nil for null, STRUCT for an object, with its members in
// order (a STRUCT without fields for {}), ARRAY for an array whose element
// is the [Unify] of the elements' types (nil for [] and for an array of
// nulls), and the scalar types described at [InferOptions]. Unlike in
// [Inferrer.Add], an empty string is STRING. It is an error for value to
// be malformed or to hold anything but whitespace after the value.
// [Canonical] turns the result into a column type.
func InferValue(value []byte, opts InferOptions) (*Type, error) {
	s := jsonScanner{data: value, opts: opts}
	if err := s.skip(1); err != nil {
		return nil, err
	}
	if s.peek(); s.pos < len(s.data) {
		return nil, s.errorf("%s after the value", describeByte(s.data[s.pos]))
	}
	s.pos = 0
	var n node
	s.fold(&n, 1)
	return n.typ(), nil
}

// node is what inference knows of the type of a field: nothing yet (only
// nulls seen), a scalar type, or the members of a struct or the element
// of an array, which it folds values into in place.
type node struct {
	kind nodeKind
	// t is the type of a nodeScalar.
	t *Type
	// members of a nodeStruct, in first-seen order; index finds them by
	// name once there are many.
	members []member
	index   map[string]int
	// elem of a nodeArray; nil while the arrays seen were empty.
	elem *node
}

// nodeKind says what a node holds.
type nodeKind uint8

const (
	nodeNull nodeKind = iota
	nodeScalar
	nodeStruct
	nodeArray
)

// member is one named member of a struct node.
type member struct {
	name string
	node node
}

// indexedMembers is how many members a struct node has before it finds
// them through a map rather than by comparing names one by one.
const indexedMembers = 16

// scalar folds a value of scalar type t into n: a struct or array meeting
// a scalar is STRING, and scalars unify.
func (n *node) scalar(t *Type) {
	switch n.kind {
	case nodeNull:
		*n = node{kind: nodeScalar, t: t}
	case nodeScalar:
		n.t = Unify(n.t, t)
	default:
		*n = node{kind: nodeScalar, t: typeString}
	}
}

// member returns the index of n's member called name (valid UTF-8, see
// [jsonScanner.text]), adding it if it is new. Keys mostly come in the same
// order record after record, so the member after the previous key's, next,
// is tried first.
func (n *node) member(name []byte, next int) int {
	if next < len(n.members) && n.members[next].name == string(name) {
		return next
	}
	if n.index != nil {
		if i, ok := n.index[string(name)]; ok {
			return i
		}
	} else {
		for i := range n.members {
			if n.members[i].name == string(name) {
				return i
			}
		}
	}
	n.members = append(n.members, member{name: string(name)})
	i := len(n.members) - 1
	switch {
	case n.index != nil:
		n.index[n.members[i].name] = i
	case len(n.members) > indexedMembers:
		n.index = make(map[string]int, 2*len(n.members))
		for j, m := range n.members {
			n.index[m.name] = j
		}
	}
	return i
}

// typ returns the inferred type n describes.
func (n *node) typ() *Type {
	switch n.kind {
	case nodeScalar:
		return n.t
	case nodeStruct:
		fields := make([]Field, len(n.members))
		for i := range n.members {
			m := &n.members[i]
			fields[i] = Field{Name: m.name, Type: m.node.typ(), Nullable: true}
		}
		return &Type{Kind: Struct, Fields: fields}
	case nodeArray:
		var elem *Type
		if n.elem != nil {
			elem = n.elem.typ()
		}
		return &Type{Kind: Array, Elem: elem}
	}
	return nil
}

// Canonical returns the column type inference settles on for an inferred
// type t, as Spark's canonicalizeType: nil (only nulls seen) becomes
// STRING, also as an array's element; struct members with an empty name
// are left out, and so are those whose name differs from an earlier
// member's only in case; and a struct left without members, or an array
// of such structs, holds no column (ok false), as Spark drops such fields.
func Canonical(t *Type) (_ *Type, ok bool) {
	if t == nil {
		return typeString, true
	}
	switch t.Kind {
	case Struct:
		fs := canonicalFields(t.Fields)
		if len(fs) == 0 {
			return nil, false
		}
		return &Type{Kind: Struct, Fields: fs}, true
	case Array:
		e, ok := Canonical(t.Elem)
		if !ok {
			return nil, false
		}
		return &Type{Kind: Array, Elem: e}, true
	case Map:
		v, ok := Canonical(t.Value)
		if !ok {
			return nil, false
		}
		return &Type{Kind: Map, Key: t.Key, Value: v}, true
	}
	return t, true
}

// canonicalFields returns the fields that hold a column, with canonical
// types, all nullable.
func canonicalFields(fields []Field) []Field {
	out := make([]Field, 0, len(fields))
	seen := make(map[string]bool, len(fields)) // lower-case names, as Validate compares them
	for _, f := range fields {
		if f.Name == "" || seen[strings.ToLower(f.Name)] {
			continue
		}
		if t, ok := Canonical(f.Type); ok {
			seen[strings.ToLower(f.Name)] = true
			out = append(out, Field{Name: f.Name, Type: t, Nullable: true, Comment: f.Comment})
		}
	}
	return out
}

// isDate reports whether b is a valid date written yyyy-MM-dd.
func isDate(b []byte) bool {
	return len(b) == 10 && isDatePrefix(b)
}

// isDatePrefix reports whether b starts with a valid date written
// yyyy-MM-dd (year 0001 to 9999).
func isDatePrefix(b []byte) bool {
	if len(b) < 10 || b[4] != '-' || b[7] != '-' {
		return false
	}
	y, ok1 := num(b[0:4])
	m, ok2 := num(b[5:7])
	d, ok3 := num(b[8:10])
	return ok1 && ok2 && ok3 && y >= 1 && m >= 1 && m <= 12 && d >= 1 && int64(d) <= sparktime.DaysInMonth(int64(y), int64(m))
}

// isTimestamp reports whether b is a valid timestamp written
// yyyy-MM-ddTHH:mm:ss, with an optional fraction of 1 to 9 digits and an
// optional zone, Z or ±hh:mm.
func isTimestamp(b []byte) bool {
	if len(b) < 19 || !isDatePrefix(b) || b[10] != 'T' || b[13] != ':' || b[16] != ':' {
		return false
	}
	h, ok1 := num(b[11:13])
	m, ok2 := num(b[14:16])
	sec, ok3 := num(b[17:19])
	if !ok1 || !ok2 || !ok3 || h > 23 || m > 59 || sec > 59 {
		return false
	}
	b = b[19:]
	if len(b) > 0 && b[0] == '.' {
		n := 1
		for n < len(b) && b[n] >= '0' && b[n] <= '9' {
			n++
		}
		if n == 1 || n > 10 {
			return false
		}
		b = b[n:]
	}
	switch {
	case len(b) == 0 || string(b) == "Z":
		return true
	case len(b) == 6 && (b[0] == '+' || b[0] == '-') && b[3] == ':':
		zh, ok1 := num(b[1:3])
		zm, ok2 := num(b[4:6])
		return ok1 && ok2 && zh <= 18 && zm <= 59
	}
	return false
}

// num parses a non-empty run of ASCII digits.
func num(b []byte) (int, bool) {
	v := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, len(b) > 0
}
