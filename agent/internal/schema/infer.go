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
	"unicode/utf8"
)

// InferOptions are the inference switches of json_options.
type InferOptions struct {
	// StringTypeInference infers DATE for strings of the form yyyy-MM-dd
	// and TIMESTAMP for yyyy-MM-ddTHH:mm:ss[.fraction][Z|±hh:mm] (the
	// shapes of Spark's default date and timestamp formats), and STRING
	// for other strings. Off, every string is STRING.
	StringTypeInference bool
	// PrimitiveAsString infers STRING for numbers and booleans, as Spark's
	// primitivesAsString.
	PrimitiveAsString bool
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
	opts   InferOptions
	fields []Field
}

// NewInferrer returns an Inferrer with no fields.
func NewInferrer(opts InferOptions) *Inferrer {
	return &Inferrer{opts: opts}
}

// Add folds one record, the complete text of a JSON object, into the
// schema. A record that is not a JSON object, or malformed JSON, returns an
// error and changes nothing.
func (in *Inferrer) Add(record []byte) error {
	s := jsonScanner{data: record, opts: in.opts, emptyIsNull: true}
	s.ws()
	if s.pos >= len(s.data) {
		return fmt.Errorf("a record must be a JSON object, found no value")
	}
	if c := s.data[s.pos]; c != '{' {
		return fmt.Errorf("a record must be a JSON object, found %s", describeByte(c))
	}
	t, err := s.object(0)
	if err != nil {
		return err
	}
	if fs, changed := unifyFields(in.fields, t.Fields); changed {
		in.fields = fs
	}
	return nil
}

// Fields returns the inferred columns in the order they were first seen,
// all nullable. A field only ever seen null (or "") is STRING, as is an
// array element, and a field only ever seen as {} is left out (see
// [Canonical]). The result is a copy the caller may keep.
func (in *Inferrer) Fields() []Field {
	return canonicalFields(in.fields)
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
	t, err := s.value(1)
	if err != nil {
		return nil, err
	}
	if s.ws(); s.pos < len(s.data) {
		return nil, s.errorf("%s after the value", describeByte(s.data[s.pos]))
	}
	return t, nil
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
	for _, f := range fields {
		if i, _ := Lookup(out, f.Name); i >= 0 || f.Name == "" {
			continue
		}
		if t, ok := Canonical(f.Type); ok {
			out = append(out, Field{Name: f.Name, Type: t, Nullable: true, Comment: f.Comment})
		}
	}
	return out
}

// maxJSONDepth bounds the nesting of JSON values, so that hostile input
// cannot exhaust the stack; it is the limit of Jackson, Spark's parser.
const maxJSONDepth = 1000

// jsonScanner infers the types of the values of one JSON text.
type jsonScanner struct {
	data []byte
	pos  int
	opts InferOptions
	// emptyIsNull makes empty strings fix no type, as in Spark's inference.
	emptyIsNull bool
	// scratch holds unescaped strings.
	scratch []byte
}

// errorf returns a malformed-JSON error at the current position.
func (s *jsonScanner) errorf(format string, args ...any) error {
	return fmt.Errorf("malformed JSON at byte %d: %s", s.pos, fmt.Sprintf(format, args...))
}

// describeByte names byte c for messages.
func describeByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// ws skips JSON whitespace.
func (s *jsonScanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value infers the type of the value at s.pos, a value depth levels into
// the record (its members are at depth 1).
func (s *jsonScanner) value(depth int) (*Type, error) {
	s.ws()
	if s.pos >= len(s.data) {
		return nil, s.errorf("unexpected end of input, expected a value")
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		return s.object(depth)
	case c == '[':
		return s.array(depth)
	case c == '"':
		return s.stringValue()
	case c == 't' || c == 'f':
		lit := "false"
		if c == 't' {
			lit = "true"
		}
		if err := s.literal(lit); err != nil {
			return nil, err
		}
		return s.primitive(typeBoolean), nil
	case c == 'n':
		return nil, s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	default:
		return nil, s.errorf("unexpected %s, expected a value", describeByte(c))
	}
}

// primitive returns t for a number or boolean, or STRING when
// PrimitiveAsString is set.
func (s *jsonScanner) primitive(t *Type) *Type {
	if s.opts.PrimitiveAsString {
		return typeString
	}
	return t
}

// literal consumes lit (true, false, null).
func (s *jsonScanner) literal(lit string) error {
	if len(s.data)-s.pos < len(lit) || string(s.data[s.pos:s.pos+len(lit)]) != lit {
		return s.errorf("invalid literal, expected %s", lit)
	}
	s.pos += len(lit)
	return nil
}

// object infers the STRUCT of the object at s.pos.
func (s *jsonScanner) object(depth int) (*Type, error) {
	if depth >= maxJSONDepth {
		return nil, s.errorf("values nest more than %d levels deep", maxJSONDepth)
	}
	s.pos++ // '{'
	var fields []Field
	if s.ws(); s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
	} else {
		for {
			s.ws()
			name, err := s.key()
			if err != nil {
				return nil, err
			}
			if s.ws(); s.pos >= len(s.data) || s.data[s.pos] != ':' {
				return nil, s.errorf("expected ':' after the object key %q", name)
			}
			s.pos++
			t, err := s.value(depth + 1)
			if err != nil {
				return nil, err
			}
			fields = addMember(fields, name, t)
			if done, err := s.next('}'); err != nil || done {
				if err != nil {
					return nil, err
				}
				break
			}
		}
	}
	return container(depth, &Type{Kind: Struct, Fields: fields}), nil
}

// addMember folds member name of type t into fields: a new name is
// appended and a name seen before unifies its types.
func addMember(fields []Field, name string, t *Type) []Field {
	if i := indexOf(fields, name); i >= 0 {
		fields[i].Type = Unify(fields[i].Type, t)
		return fields
	}
	return append(fields, Field{Name: name, Type: t, Nullable: true})
}

// indexOf returns the index of the field of fields named exactly name, or
// -1.
func indexOf(fields []Field, name string) int {
	for i := range fields {
		if fields[i].Name == name {
			return i
		}
	}
	return -1
}

// array infers the ARRAY of the array at s.pos.
func (s *jsonScanner) array(depth int) (*Type, error) {
	if depth >= maxJSONDepth {
		return nil, s.errorf("values nest more than %d levels deep", maxJSONDepth)
	}
	s.pos++ // '['
	var elem *Type
	if s.ws(); s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
	} else {
		for {
			t, err := s.value(depth + 1)
			if err != nil {
				return nil, err
			}
			elem = Unify(elem, t)
			if done, err := s.next(']'); err != nil || done {
				if err != nil {
					return nil, err
				}
				break
			}
		}
	}
	return container(depth, &Type{Kind: Array, Elem: elem}), nil
}

// container returns t, the type of an object or array depth levels into
// the record, or STRING when it is too deep for its members to be columns
// ([MaxDepth]).
func container(depth int, t *Type) *Type {
	if depth >= MaxDepth {
		return typeString
	}
	return t
}

// next consumes the ',' between members or the closing end, reporting
// whether it was end.
func (s *jsonScanner) next(end byte) (done bool, err error) {
	s.ws()
	if s.pos >= len(s.data) {
		return false, s.errorf("unexpected end of input, expected ',' or %q", rune(end))
	}
	switch s.data[s.pos] {
	case ',':
		s.pos++
		return false, nil
	case end:
		s.pos++
		return true, nil
	}
	return false, s.errorf("unexpected %s, expected ',' or %q", describeByte(s.data[s.pos]), rune(end))
}

// key reads an object key and returns it unescaped, with invalid UTF-8
// replaced by U+FFFD (Spark's parser reads it so).
func (s *jsonScanner) key() (string, error) {
	if s.pos >= len(s.data) || s.data[s.pos] != '"' {
		if s.pos >= len(s.data) {
			return "", s.errorf("unexpected end of input, expected an object key")
		}
		return "", s.errorf("unexpected %s, expected an object key", describeByte(s.data[s.pos]))
	}
	raw, esc, err := s.str()
	if err != nil {
		return "", err
	}
	if esc {
		s.scratch = unescapeJSON(s.scratch[:0], raw)
		raw = s.scratch
	}
	if !utf8.Valid(raw) {
		return strings.ToValidUTF8(string(raw), "\uFFFD"), nil
	}
	return string(raw), nil
}

// stringValue infers the type of the string at s.pos.
func (s *jsonScanner) stringValue() (*Type, error) {
	raw, esc, err := s.str()
	if err != nil {
		return nil, err
	}
	switch {
	case len(raw) == 0 && s.emptyIsNull:
		return nil, nil
	case !s.opts.StringTypeInference:
		return typeString, nil
	}
	if esc {
		s.scratch = unescapeJSON(s.scratch[:0], raw)
		raw = s.scratch
	}
	switch {
	case isDate(raw):
		return typeDate, nil
	case isTimestamp(raw):
		return typeTimestamp, nil
	}
	return typeString, nil
}

// str scans the string at s.pos (its opening quote) and returns its raw
// content and whether it holds escapes. Control characters must be
// escaped and escapes valid; invalid UTF-8 is accepted, as Spark replaces
// it.
func (s *jsonScanner) str() (raw []byte, esc bool, err error) {
	start := s.pos + 1
	for i := start; i < len(s.data); {
		switch c := s.data[i]; {
		case c == '"':
			s.pos = i + 1
			return s.data[start:i], esc, nil
		case c == '\\':
			esc = true
			n := escapeLen(s.data[i:])
			if n == 0 {
				s.pos = i
				return nil, false, s.errorf("invalid escape in a string")
			}
			i += n
		case c < 0x20:
			s.pos = i
			return nil, false, s.errorf("unescaped control character %s in a string", describeByte(c))
		default:
			i++
		}
	}
	return nil, false, s.errorf("unterminated string")
}

// escapeLen returns the length of the valid escape at the start of b (its
// backslash), or 0.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(b) < 6 {
			return 0
		}
		for _, c := range b[2:6] {
			if hexDigit(c) < 0 {
				return 0
			}
		}
		return 6
	}
	return 0
}

// hexDigit returns the value of hex digit c, or -1.
func hexDigit(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10
	}
	return -1
}

// unescapeJSON appends the content of a scanned JSON string (raw, between
// its quotes) to dst with escapes resolved; a UTF-16 surrogate pair
// becomes one character and a lone surrogate U+FFFD.
func unescapeJSON(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		switch raw[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hex4rune(raw[i+2:])
			i += 6
			if r >= 0xD800 && r < 0xDC00 && i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
				if lo := hex4rune(raw[i+2:]); lo >= 0xDC00 && lo < 0xE000 {
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
					i += 6
				}
			}
			dst = utf8.AppendRune(dst, r) // a lone surrogate encodes as U+FFFD
			continue
		default: // '"', '\\', '/'
			dst = append(dst, raw[i+1])
		}
		i += 2
	}
	return dst
}

// hex4rune returns the value of four validated hex digits.
func hex4rune(b []byte) rune {
	return hexDigit(b[0])<<12 | hexDigit(b[1])<<8 | hexDigit(b[2])<<4 | hexDigit(b[3])
}

// number infers the type of the number at s.pos: BIGINT for an integer
// that fits, DECIMAL(digits,0) for a larger one of up to 38 digits, and
// DOUBLE for others and for numbers with a fraction or exponent.
func (s *jsonScanner) number() (*Type, error) {
	start, i := s.pos, s.pos
	if s.data[i] == '-' {
		i++
	}
	intStart := i
	switch {
	case i < len(s.data) && s.data[i] == '0':
		i++
	case i < len(s.data) && s.data[i] >= '1' && s.data[i] <= '9':
		for i < len(s.data) && s.data[i] >= '0' && s.data[i] <= '9' {
			i++
		}
	default:
		return nil, s.errorf("invalid number")
	}
	digits := i - intStart
	integral := true
	if i < len(s.data) && s.data[i] == '.' {
		integral = false
		i++
		j := i
		for i < len(s.data) && s.data[i] >= '0' && s.data[i] <= '9' {
			i++
		}
		if i == j {
			s.pos = i
			return nil, s.errorf("invalid number: no digits after '.'")
		}
	}
	if i < len(s.data) && (s.data[i] == 'e' || s.data[i] == 'E') {
		integral = false
		i++
		if i < len(s.data) && (s.data[i] == '+' || s.data[i] == '-') {
			i++
		}
		j := i
		for i < len(s.data) && s.data[i] >= '0' && s.data[i] <= '9' {
			i++
		}
		if i == j {
			s.pos = i
			return nil, s.errorf("invalid number: no digits in the exponent")
		}
	}
	s.pos = i
	switch {
	case !integral:
		return s.primitive(typeDouble), nil
	case fitsInt64(s.data[start:i]):
		return s.primitive(typeLong), nil
	case digits <= maxPrecision:
		return s.primitive(&Type{Kind: Decimal, Precision: digits}), nil
	}
	return s.primitive(typeDouble), nil
}

// fitsInt64 reports whether the JSON integer text fits a BIGINT.
func fitsInt64(text []byte) bool {
	neg := text[0] == '-'
	if neg {
		text = text[1:]
	}
	const maxDigits = "9223372036854775807"
	switch {
	case len(text) < len(maxDigits):
		return true
	case len(text) > len(maxDigits):
		return false
	case neg && string(text) == "9223372036854775808":
		return true
	}
	return string(text) <= maxDigits
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
	return ok1 && ok2 && ok3 && y >= 1 && m >= 1 && m <= 12 && d >= 1 && d <= monthDays(y, m)
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

// monthDays returns the number of days in month m of year y.
func monthDays(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
