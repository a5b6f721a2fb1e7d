package schema

import (
	"fmt"
	"unicode/utf8"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/jsontext"
)

// The JSON side of inference reads a text twice: skip checks that it is
// well-formed, then fold infers types into a node without ever failing.
// So a malformed record changes nothing, and folding a record whose
// fields are known allocates nothing: no tree is built per record.

// maxJSONDepth bounds the nesting of JSON values, so that hostile input
// cannot exhaust the stack; it is the limit of Jackson, Spark's parser.
const maxJSONDepth = 1000

// jsonScanner reads one JSON text.
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

// peek returns the byte at s.pos after whitespace, or 0 at the end.
func (s *jsonScanner) peek() byte {
	s.ws()
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
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

// expected returns the error for a missing what at s.pos.
func (s *jsonScanner) expected(what string) error {
	if s.pos >= len(s.data) {
		return s.errorf("unexpected end of input, expected %s", what)
	}
	return s.errorf("unexpected %s, expected %s", describeByte(s.data[s.pos]), what)
}

// skip checks the value at s.pos, depth levels into the text, and passes
// over it.
func (s *jsonScanner) skip(depth int) error {
	switch c := s.peek(); {
	case c == '{' || c == '[':
		if depth >= maxJSONDepth {
			return s.errorf("values nest more than %d levels deep", maxJSONDepth)
		}
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		s.pos++
		if s.peek() == end {
			s.pos++
			return nil
		}
		for {
			if end == '}' {
				if !s.isQuote(s.peek()) {
					return s.expected("an object key")
				}
				if _, _, err := s.str(); err != nil {
					return err
				}
				if s.peek() != ':' {
					return s.expected("':' after an object key")
				}
				s.pos++
			}
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			switch s.peek() {
			case ',':
				s.pos++
			case end:
				s.pos++
				return nil
			default:
				return s.expected(fmt.Sprintf("',' or %q", rune(end)))
			}
		}
	case s.isQuote(c):
		_, _, err := s.str()
		return err
	case s.isNonNumeric(c):
		s.nonNumeric()
		return nil
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		_, _, err := s.number()
		return err
	}
	return s.expected("a value")
}

// literal consumes lit (true, false, null).
func (s *jsonScanner) literal(lit string) error {
	if !hasPrefixAt(s.data, s.pos, lit) {
		return s.errorf("invalid literal, expected %s", lit)
	}
	s.pos += len(lit)
	return nil
}

// isQuote reports whether c starts a string: a double quote, or a single
// one with AllowSingleQuotes.
func (s *jsonScanner) isQuote(c byte) bool {
	return c == '"' || c == '\'' && s.opts.AllowSingleQuotes
}

// str scans the string at s.pos (its opening quote) and returns its raw
// content and whether it holds escapes. Control characters must be
// escaped and escapes valid; invalid UTF-8 is accepted, as Spark replaces
// it.
func (s *jsonScanner) str() (raw []byte, esc bool, err error) {
	quote := s.data[s.pos]
	start := s.pos + 1
	for i := start; i < len(s.data); {
		switch c := s.data[i]; {
		case c == quote:
			s.pos = i + 1
			return s.data[start:i], esc, nil
		case c == '\\':
			esc = true
			n := jsontext.EscapeLen(s.data[i:], s.opts.AllowSingleQuotes)
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

// text returns the content of a string str has scanned, unescaped into
// s.scratch when it has escapes or invalid UTF-8, the text the decoder
// reads for the same string (so an inferred column is named as the
// decoder's key).
func (s *jsonScanner) text(raw []byte, esc bool) []byte {
	if !esc && utf8.Valid(raw) {
		return raw
	}
	s.scratch = jsontext.AppendUnescaped(s.scratch[:0], raw)
	return s.scratch
}

// number scans the number at s.pos and returns its inferred type (see
// [numberType]) and whether it is an integer.
func (s *jsonScanner) number() (_ *Type, integral bool, err error) {
	start, i := s.pos, s.pos
	if s.data[i] == '-' {
		i++
	}
	intStart := i
	switch {
	case i < len(s.data) && s.data[i] == '0':
		i++
	case i < len(s.data) && s.data[i] >= '1' && s.data[i] <= '9':
		i = skipDigits(s.data, i)
	default:
		s.pos = i
		return nil, false, s.errorf("invalid number")
	}
	digits := i - intStart
	integral = true
	if i < len(s.data) && s.data[i] == '.' {
		integral = false
		j := skipDigits(s.data, i+1)
		if j == i+1 {
			s.pos = j
			return nil, false, s.errorf("invalid number: no digits after '.'")
		}
		i = j
	}
	if i < len(s.data) && (s.data[i] == 'e' || s.data[i] == 'E') {
		integral = false
		i++
		if i < len(s.data) && (s.data[i] == '+' || s.data[i] == '-') {
			i++
		}
		j := skipDigits(s.data, i)
		if j == i {
			s.pos = j
			return nil, false, s.errorf("invalid number: no digits in the exponent")
		}
		i = j
	}
	s.pos = i
	return numberType(s.data[start:i], integral, digits), integral, nil
}

// nonNumericNumbers are the unquoted numbers AllowNonNumericNumbers
// accepts, those of Jackson's ALLOW_NON_NUMERIC_NUMBERS.
var nonNumericNumbers = []string{"NaN", "Infinity", "+Infinity", "-Infinity", "+INF", "-INF"}

// isNonNumeric reports whether AllowNonNumericNumbers is set and one of
// nonNumericNumbers starts at s.pos, whose byte is c.
func (s *jsonScanner) isNonNumeric(c byte) bool {
	if !s.opts.AllowNonNumericNumbers || c != 'N' && c != 'I' && c != '+' && c != '-' {
		return false
	}
	for _, lit := range nonNumericNumbers {
		if hasPrefixAt(s.data, s.pos, lit) {
			return true
		}
	}
	return false
}

// nonNumeric passes over the non-numeric number at s.pos.
func (s *jsonScanner) nonNumeric() {
	for _, lit := range nonNumericNumbers {
		if hasPrefixAt(s.data, s.pos, lit) {
			s.pos += len(lit)
			return
		}
	}
}

// hasPrefixAt reports whether b[i:] starts with lit.
func hasPrefixAt(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

// skipDigits returns the index of the first byte of b from i on that is
// not an ASCII digit.
func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// decimalTypes holds DECIMAL(p,0) for p up to 38, the types of integers
// beyond BIGINT, so that inferring them allocates nothing.
var decimalTypes = func() (d [maxPrecision + 1]*Type) {
	for p := 1; p <= maxPrecision; p++ {
		d[p] = &Type{Kind: Decimal, Precision: p}
	}
	return d
}()

// numberType returns the type Spark infers for the JSON number text:
// BIGINT for an integer that fits, DECIMAL(digits,0) for a larger one of up
// to 38 digits, and DOUBLE for others and for numbers with a fraction or
// an exponent.
func numberType(text []byte, integral bool, digits int) *Type {
	switch {
	case !integral:
		return typeDouble
	case fitsInt64(text):
		return typeLong
	case digits <= maxPrecision:
		return decimalTypes[digits]
	}
	return typeDouble
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

// fold infers the type of the value at s.pos, depth levels into the
// record, into n. The text must have passed skip.
func (s *jsonScanner) fold(n *node, depth int) {
	switch c := s.peek(); {
	case c == '{' || c == '[':
		kind := nodeStruct
		if c == '[' {
			kind = nodeArray
		}
		if n.kind == nodeNull {
			n.kind = kind
		}
		if n.kind != kind || depth >= MaxDepth {
			// Too deep for its members to be columns, or a conflict
			// ([Unify]): the value is STRING.
			_ = s.skip(depth)
			n.scalar(typeString)
			return
		}
		if kind == nodeStruct {
			s.foldObject(n, depth)
		} else {
			s.foldArray(n, depth)
		}
	case c != 0:
		if t := s.scalarType(); t != nil {
			n.scalar(t)
		}
	}
}

// foldObject folds the members of the object at s.pos into struct node n.
func (s *jsonScanner) foldObject(n *node, depth int) {
	s.pos++ // '{'
	next := 0
	for s.isQuote(s.peek()) {
		raw, esc, _ := s.str()
		i := n.member(s.text(raw, esc), next)
		s.peek()
		s.pos++ // ':'
		s.fold(&n.members[i].node, depth+1)
		next = i + 1
		if s.peek() == ',' {
			s.pos++
		}
	}
	s.pos++ // '}'
}

// foldArray folds the elements of the array at s.pos into array node n.
func (s *jsonScanner) foldArray(n *node, depth int) {
	s.pos++ // '['
	if n.elem == nil {
		n.elem = &node{}
	}
	for c := s.peek(); c != ']' && c != 0; c = s.peek() {
		s.fold(n.elem, depth+1)
		if s.peek() == ',' {
			s.pos++
		}
	}
	s.pos++ // ']'
}

// scalarType consumes the string, number or literal at s.pos and returns
// its type, nil for null and, with emptyIsNull, for "".
func (s *jsonScanner) scalarType() *Type {
	switch c := s.data[s.pos]; {
	case s.isNonNumeric(c):
		s.nonNumeric()
		return s.primitive(typeDouble)
	case s.isQuote(c):
		raw, esc, _ := s.str()
		switch {
		case len(raw) == 0 && s.emptyIsNull:
			return nil
		case !s.opts.StringTypeInference:
			return typeString
		}
		switch text := s.text(raw, esc); {
		case isDate(text):
			return typeDate
		case isTimestamp(text):
			return typeTimestamp
		}
		return typeString
	case c == 't' || c == 'f':
		if c == 't' {
			_ = s.literal("true")
		} else {
			_ = s.literal("false")
		}
		return s.primitive(typeBoolean)
	case c == 'n':
		_ = s.literal("null")
		return nil
	}
	t, _, _ := s.number()
	return s.primitive(t)
}

// primitive returns t for a number or boolean, or STRING when
// PrimitiveAsString is set.
func (s *jsonScanner) primitive(t *Type) *Type {
	if s.opts.PrimitiveAsString {
		return typeString
	}
	return t
}
