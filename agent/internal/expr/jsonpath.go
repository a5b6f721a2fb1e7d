package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
)

// jsonPath extracts the value at path from the JSON text doc with the
// semantics of Databricks' : operator on STRING: a bare name matches a
// field case-insensitively (the first match), a bracketed one exactly; a
// missing field, a JSON null or invalid JSON is NULL (ok false); a string
// gives its unescaped text, any other value its JSON text.
//
// The document is read as Spark's get_json_object reads it (Jackson with
// single quotes and unescaped control characters allowed): the first JSON
// value of doc must be well formed, whatever follows it is ignored. A field
// that matches but holds null, or whose value does not have the rest of the
// path, does not stop the search: a later field of the same name may match.
// Objects and arrays come back as Jackson writes them again: without
// insignificant whitespace, strings re-escaped, numbers as Jackson prints
// them (see [appendJSONNumber]).
func jsonPath(doc []byte, path []PathStep) (s string, ok bool) {
	return jsonExtract(doc, path, false)
}

// jsonExtract is jsonPath; nullText makes a null reached at the end of the
// path (through an array index, or a path of no steps) the text "null", as
// get_json_object returns it, rather than NULL. A null field value is NULL
// either way.
func jsonExtract(doc []byte, path []PathStep, nullText bool) (string, bool) {
	s := jsonScan{doc: doc}
	var m jsonMatch
	found, ok := s.find(path, &m)
	if !found || !ok {
		return "", false
	}
	raw := doc[m.start:m.end]
	switch m.kind {
	case jsonString:
		body := raw[1 : len(raw)-1]
		if !m.escaped && utf8.Valid(body) {
			return string(body), true
		}
		return string(jsontext.AppendUnescaped(nil, body)), true
	case jsonNull:
		if !nullText {
			return "", false
		}
		return "null", true
	case jsonNumber:
		return string(appendJSONNumber(nil, raw)), true
	case jsonTrue, jsonFalse:
		return string(raw), true
	}
	return string(appendCompact(nil, raw)), true
}

// The kinds of JSON value the scanner tells apart.
const (
	jsonString = iota + 1
	jsonNumber
	jsonTrue
	jsonFalse
	jsonNull
	jsonObject
	jsonArray
)

// maxJSONDepth is how deeply objects and arrays may nest, as Jackson's
// default stream read constraints allow; deeper documents are invalid.
const maxJSONDepth = 1000

// jsonMatch is the value a path selected: doc[start:end], its kind and, for
// a string, whether it has escapes.
type jsonMatch struct {
	start, end int
	kind       int
	escaped    bool
}

// jsonScan reads one JSON document from its start, skipping what the path
// does not select without decoding it.
type jsonScan struct {
	doc   []byte
	i     int
	depth int
	// scratch holds an escaped field name while it is compared.
	scratch []byte
}

// find reads the value at s.i and, in it, the value at path into m. found
// says there was one; ok false says the document is not valid JSON there.
func (s *jsonScan) find(path []PathStep, m *jsonMatch) (found, ok bool) {
	s.ws()
	if len(path) == 0 {
		start := s.i
		kind, escaped, ok := s.skip()
		*m = jsonMatch{start: start, end: s.i, kind: kind, escaped: escaped}
		return ok, ok
	}
	if s.i < len(s.doc) {
		switch c := s.doc[s.i]; {
		case c == '{' && !path[0].IsIndex:
			return s.findField(path, m)
		case c == '[' && path[0].IsIndex:
			return s.findIndex(path, m)
		}
	}
	_, _, ok = s.skip()
	return false, ok
}

// findField reads the object at s.i and, in it, the value at path, whose
// first step is a name.
func (s *jsonScan) findField(path []PathStep, m *jsonMatch) (found, ok bool) {
	if !s.open() {
		return false, false
	}
	if s.i < len(s.doc) && s.doc[s.i] == '}' {
		return false, s.close()
	}
	for {
		s.ws()
		start := s.i
		end, escaped, ok := s.str()
		if s.ws(); !ok || s.i >= len(s.doc) || s.doc[s.i] != ':' {
			return false, false
		}
		s.i++
		s.ws()
		switch {
		case found || !s.nameIs(s.doc[start+1:end], escaped, &path[0]):
			_, _, ok = s.skip()
		case s.i < len(s.doc) && s.doc[s.i] == 'n': // null: no match, keep looking
			_, _, ok = s.skip()
		default:
			found, ok = s.find(path[1:], m)
		}
		if !ok || !s.next('}') {
			return false, false
		}
		if s.doc[s.i-1] == '}' {
			return found, true
		}
	}
}

// findIndex reads the array at s.i and, in it, the value at path, whose
// first step is an index.
func (s *jsonScan) findIndex(path []PathStep, m *jsonMatch) (found, ok bool) {
	if !s.open() {
		return false, false
	}
	if s.i < len(s.doc) && s.doc[s.i] == ']' {
		return false, s.close()
	}
	for k := 0; ; k++ {
		if k == path[0].Index {
			found, ok = s.find(path[1:], m)
		} else {
			s.ws()
			_, _, ok = s.skip()
		}
		if !ok || !s.next(']') {
			return false, false
		}
		if s.doc[s.i-1] == ']' {
			return found, true
		}
	}
}

// nameIs says whether the field name raw (between its quotes; escaped if it
// has escapes) is what step names: exactly for a bracketed name, else
// case-insensitively.
func (s *jsonScan) nameIs(raw []byte, escaped bool, step *PathStep) bool {
	if len(raw) > 0 && raw[0] != '\\' && differsFirst(raw[0], step) {
		return false
	}
	if escaped || !utf8.Valid(raw) {
		s.scratch = jsontext.AppendUnescaped(s.scratch[:0], raw)
		raw = s.scratch
	}
	return namedBy(raw, step)
}

// differsFirst says whether a name whose first byte is c (not the start of
// an escape) is not what step names, from that byte alone. Most names
// differ from the step's in their first letter. When both start with
// ASCII, those letters are the names' first characters, which fold only
// into each other.
func differsFirst(c byte, step *PathStep) bool {
	if len(step.Name) == 0 {
		return false
	}
	d := step.Name[0]
	return c < utf8.RuneSelf && d < utf8.RuneSelf && c != d && (step.Bracketed || lowerASCII(c) != lowerASCII(d))
}

// keyIs says whether the field name key (its text, unescaped) is what step
// names: exactly for a bracketed name, else case-insensitively.
func keyIs(key []byte, step *PathStep) bool {
	if len(key) > 0 && differsFirst(key[0], step) {
		return false
	}
	return namedBy(key, step)
}

// namedBy is keyIs without its look at the first byte, which nameIs took.
func namedBy(key []byte, step *PathStep) bool {
	if step.Bracketed {
		return string(key) == step.Name
	}
	return equalFold(key, step.Name)
}

// equalFold is strings.EqualFold without converting b to a string when both
// are ASCII.
func equalFold(b []byte, s string) bool {
	for i := 0; i < len(b) && i < len(s); i++ {
		c, d := b[i], s[i]
		if c >= utf8.RuneSelf || d >= utf8.RuneSelf {
			return strings.EqualFold(string(b), s)
		}
		if c != d && lowerASCII(c) != lowerASCII(d) {
			return false
		}
	}
	if len(b) == len(s) {
		return true
	}
	// Only non-ASCII text folds to a different length (ſ is s, K is k).
	n := min(len(b), len(s))
	return (hasNonASCII(b[n:]) || hasNonASCII([]byte(s[n:]))) && strings.EqualFold(string(b), s)
}

// hasNonASCII says whether b has a byte outside ASCII.
func hasNonASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// lowerASCII lower-cases an ASCII letter.
func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// open steps into the object or array at s.i.
func (s *jsonScan) open() bool {
	s.i++
	s.depth++
	s.ws()
	return s.depth <= maxJSONDepth
}

// close steps out of the object or array whose closing bracket is at s.i.
func (s *jsonScan) close() bool {
	s.i++
	s.depth--
	return true
}

// next reads what follows a member of an object or an array: a comma, or
// the closing bracket end (after which s.doc[s.i-1] is end).
func (s *jsonScan) next(end byte) bool {
	s.ws()
	if s.i >= len(s.doc) {
		return false
	}
	switch s.doc[s.i] {
	case ',':
		s.i++
		return true
	case end:
		return s.close()
	}
	return false
}

// ws skips whitespace: the four characters JSON allows.
func (s *jsonScan) ws() {
	for s.i < len(s.doc) && s.doc[s.i] <= ' ' && isJSONSpace(s.doc[s.i]) {
		s.i++
	}
}

// isJSONSpace says whether c is JSON whitespace.
func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skip reads the value at s.i (after whitespace) and returns its kind and,
// for a string, whether it has escapes.
func (s *jsonScan) skip() (kind int, escaped, ok bool) {
	if s.i >= len(s.doc) {
		return 0, false, false
	}
	switch c := s.doc[s.i]; c {
	case '"', '\'':
		_, escaped, ok = s.str()
		return jsonString, escaped, ok
	case '{':
		if !s.open() {
			return 0, false, false
		}
		if s.i < len(s.doc) && s.doc[s.i] == '}' {
			return jsonObject, false, s.close()
		}
		for {
			s.ws()
			if _, _, ok := s.str(); !ok {
				return 0, false, false
			}
			if s.ws(); s.i >= len(s.doc) || s.doc[s.i] != ':' {
				return 0, false, false
			}
			s.i++
			s.ws()
			if _, _, ok := s.skip(); !ok || !s.next('}') {
				return 0, false, false
			}
			if s.doc[s.i-1] == '}' {
				return jsonObject, false, true
			}
		}
	case '[':
		if !s.open() {
			return 0, false, false
		}
		if s.i < len(s.doc) && s.doc[s.i] == ']' {
			return jsonArray, false, s.close()
		}
		for {
			s.ws()
			if _, _, ok := s.skip(); !ok || !s.next(']') {
				return 0, false, false
			}
			if s.doc[s.i-1] == ']' {
				return jsonArray, false, true
			}
		}
	case 't':
		return jsonTrue, false, s.literal("true")
	case 'f':
		return jsonFalse, false, s.literal("false")
	case 'n':
		return jsonNull, false, s.literal("null")
	}
	return jsonNumber, false, s.number()
}

// str reads the string at s.i, in double or single quotes, and returns
// its content's end (the closing quote) and whether it has escapes. A
// backslash must start a valid escape; control characters may appear
// unescaped, as Spark's get_json_object allows.
func (s *jsonScan) str() (end int, escaped, ok bool) {
	if s.i >= len(s.doc) || (s.doc[s.i] != '"' && s.doc[s.i] != '\'') {
		return 0, false, false
	}
	d := s.doc
	q := d[s.i]
	for j := s.i + 1; j < len(d); j++ {
		switch d[j] {
		case q:
			s.i = j + 1
			return j, escaped, true
		case '\\':
			n := jsontext.EscapeLen(d[j:], true)
			if n == 0 {
				return 0, false, false
			}
			escaped = true
			j += n - 1
		}
	}
	return 0, false, false
}

// literal reads the keyword word at s.i. As Jackson, a keyword run on
// into letters or digits (truex) is invalid.
func (s *jsonScan) literal(word string) bool {
	if !strings.HasPrefix(string(s.doc[s.i:min(len(s.doc), s.i+len(word))]), word) {
		return false
	}
	s.i += len(word)
	return s.i >= len(s.doc) || !isIdentPart(s.doc[s.i])
}

// isIdentPart approximates Java's identifier characters, which may not
// follow a keyword: ASCII letters, digits, '_', '$' and any non-ASCII byte.
func isIdentPart(c byte) bool {
	return c >= utf8.RuneSelf || c == '_' || c == '$' || (c >= '0' && c <= '9') ||
		(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// number reads the number at s.i: JSON's grammar (no leading zeros, no
// '+', digits on both sides of a '.'). A number that is the whole document
// must be followed by whitespace or nothing, as Jackson checks at the root.
func (s *jsonScan) number() bool {
	d := s.doc
	j := s.i
	if j < len(d) && d[j] == '-' {
		j++
	}
	digits := func() int {
		k := j
		for j < len(d) && d[j] >= '0' && d[j] <= '9' {
			j++
		}
		return j - k
	}
	switch n := digits(); {
	case n == 0, n > 1 && d[j-n] == '0':
		return false
	}
	if j < len(d) && d[j] == '.' {
		j++
		if digits() == 0 {
			return false
		}
	}
	if j < len(d) && (d[j] == 'e' || d[j] == 'E') {
		j++
		if j < len(d) && (d[j] == '+' || d[j] == '-') {
			j++
		}
		if digits() == 0 {
			return false
		}
	}
	s.i = j
	return s.depth > 0 || j == len(d) || isJSONSpace(d[j])
}

// appendCompact appends the object or array raw, valid JSON as the scanner
// reads it, as Jackson writes it back: no whitespace between tokens,
// strings in double quotes with Jackson's escapes, numbers as
// [appendJSONNumber] writes them.
func appendCompact(dst, raw []byte) []byte {
	s := jsonScan{doc: raw, depth: 1}
	for s.i < len(raw) {
		c := raw[s.i]
		switch {
		case isJSONSpace(c):
			s.i++
		case c == '"' || c == '\'':
			start := s.i
			end, _, _ := s.str()
			s.scratch = jsontext.AppendUnescaped(s.scratch[:0], raw[start+1:end])
			dst = jsontext.AppendQuoted(dst, s.scratch)
		case c == '-' || (c >= '0' && c <= '9'):
			start := s.i
			s.number()
			dst = appendJSONNumber(dst, raw[start:s.i])
		default: // brackets, ',', ':' and keywords
			start := s.i
			s.i++
			for s.i < len(raw) && raw[s.i] >= 'a' && raw[s.i] <= 'z' {
				s.i++
			}
			dst = append(dst, raw[start:s.i]...)
		}
	}
	return dst
}

// appendJSONNumber appends the JSON number raw as Jackson's generator writes
// the number it parsed: an integer as its value (-0 is 0), any other
// number as Java's Double.toString writes the double nearest to it (1.50
// is 1.5, 1e2 is 100.0, 1e-5 is 1.0E-5), and one too large for a double as
// the string "Infinity" or "-Infinity" in quotes.
func appendJSONNumber(dst, raw []byte) []byte {
	neg := raw[0] == '-'
	digits := raw
	if neg {
		digits = raw[1:]
	}
	isInt := true
	for _, c := range digits {
		if c < '0' || c > '9' {
			isInt = false
			break
		}
	}
	if isInt {
		if string(digits) == "0" {
			return append(dst, '0')
		}
		return append(dst, raw...)
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil && !math.IsInf(f, 0) {
		return append(dst, raw...) // not reached: raw is a valid number
	}
	return appendJavaDouble(dst, f)
}

// appendJavaDouble appends f as Java's Double.toString writes it, with the
// shortest digits that identify it: plain decimal with at least one
// fraction digit from 10^-3 up to 10^7, else d.dddE±n; infinities as
// Jackson writes them, quoted.
func appendJavaDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // d.ddde±XX
	mark := strings.IndexByte(string(e), 'e')
	mant := e[:mark]
	exp, _ := strconv.Atoi(string(e[mark+1:]))
	var digs [24]byte
	ds := append(digs[:0], mant[0])
	if len(mant) > 2 {
		ds = append(ds, mant[2:]...)
	} else if two := strconv.AppendFloat(digs[len(ds):len(ds)], f, 'e', 1, 64); two[2] != '0' {
		// Java writes at least two digits and picks the closer second
		// digit when one digit identifies f (4.9E-324, not 5.0E-324).
		if g, err := strconv.ParseFloat(string(two), 64); err == nil && g == f {
			ds = append(ds[:0], two[0], two[2])
			exp, _ = strconv.Atoi(string(two[4:]))
		}
	}
	if f >= 1e-3 && f < 1e7 {
		if exp < 0 {
			dst = append(dst, "0."...)
			for k := -1; k > exp; k-- {
				dst = append(dst, '0')
			}
			return append(dst, ds...)
		}
		for k := 0; k <= exp; k++ {
			if k < len(ds) {
				dst = append(dst, ds[k])
			} else {
				dst = append(dst, '0')
			}
		}
		dst = append(dst, '.')
		if exp+1 >= len(ds) {
			return append(dst, '0')
		}
		return append(dst, ds[exp+1:]...)
	}
	dst = append(dst, ds[0], '.')
	if len(ds) > 1 {
		dst = append(dst, ds[1:]...)
	} else {
		dst = append(dst, '0')
	}
	dst = append(dst, 'E')
	return strconv.AppendInt(dst, int64(exp), 10)
}

// parseGetJSONPath parses a get_json_object path as Spark does: '$', then
// any of .name (up to the next '.' or '['), ['name'] (no quote or '?' in
// it) and [index], whitespace allowed before each token. Names match
// exactly. ok false is a path Spark does not parse, which makes the result
// NULL; err is a wildcard (.*, ['*'], [*]), which Spark supports and this
// does not.
func parseGetJSONPath(p string) (steps []PathStep, ok bool, err error) {
	i := 0
	skipWS := func() {
		for i < len(p) && isPathSpace(p[i]) {
			i++
		}
	}
	skipWS()
	if i >= len(p) || p[i] != '$' {
		return nil, false, nil
	}
	i++
	for {
		skipWS()
		if i >= len(p) {
			return steps, true, nil
		}
		switch {
		case strings.HasPrefix(p[i:], ".*"), strings.HasPrefix(p[i:], "['*']"):
			return nil, false, errWildcardPath(p)
		case p[i] == '.':
			i++
			skipWS()
			j := i
			for j < len(p) && p[j] != '.' && p[j] != '[' {
				j++
			}
			if j == i {
				return nil, false, nil
			}
			steps = append(steps, PathStep{Name: p[i:j], Bracketed: true})
			i = j
		case strings.HasPrefix(p[i:], "['"):
			i += 2
			skipWS()
			j := i
			for j < len(p) && p[j] != '\'' && p[j] != '?' {
				j++
			}
			name := p[i:j]
			i = j
			skipWS()
			if name == "" || !strings.HasPrefix(p[i:], "']") {
				return nil, false, nil
			}
			i += 2
			steps = append(steps, PathStep{Name: name, Bracketed: true})
		case p[i] == '[':
			i++
			skipWS()
			if i < len(p) && p[i] == '*' {
				return nil, false, errWildcardPath(p)
			}
			j := i
			for j < len(p) && p[j] >= '0' && p[j] <= '9' {
				j++
			}
			n, err := strconv.Atoi(p[i:j])
			if err != nil {
				return nil, false, nil
			}
			i = j
			skipWS()
			if i >= len(p) || p[i] != ']' {
				return nil, false, nil
			}
			i++
			steps = append(steps, PathStep{IsIndex: true, Index: n})
		default:
			return nil, false, nil
		}
	}
}

// isPathSpace is whitespace as Scala's parser combinators skip it (\s).
func isPathSpace(c byte) bool { return isJSONSpace(c) || c == '\f' || c == '\v' }

// errWildcardPath is the error of a get_json_object path with a wildcard.
func errWildcardPath(p string) error {
	return fmt.Errorf("the path %q has a wildcard (*), which is not supported; name the field or the index", p)
}
