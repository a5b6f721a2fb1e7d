package schema

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxDepth is how deeply ARRAY, MAP and STRUCT types may nest. ParseDDL and
// ParseSparkJSON refuse deeper types, so that adversarial input cannot
// exhaust the stack of the recursive parsers or of the code walking a schema.
const MaxDepth = 64

// ParseError reports where a DDL string stops being valid. Line and Column
// are 1-based (Column counts characters, not bytes); Offset is the byte offset
// into the input, len(input) when the input ends too early.
type ParseError struct {
	Offset, Line, Column int
	Msg                  string
}

// Error returns "line L, column C: msg".
func (e *ParseError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// ParseDDL parses a Spark DDL column list ("id BIGINT NOT NULL, name STRING"),
// the form Spark's StructType.fromDDL reads. It returns (nil, nil) for an
// input that holds only whitespace and comments, and a *ParseError for any
// invalid input.
//
// The grammar, with keywords case-insensitive:
//
//	columns := column ("," column)*
//	column  := name type ["NOT" "NULL"] ["COMMENT" string]
//	type    := BOOLEAN | TINYINT | BYTE | SMALLINT | SHORT | INT | INTEGER
//	         | BIGINT | LONG | FLOAT | REAL | DOUBLE | STRING | BINARY | DATE
//	         | TIMESTAMP | TIMESTAMP_LTZ | TIMESTAMP_NTZ | VARIANT
//	         | (DECIMAL | DEC | NUMERIC) ["(" p ["," s] ")"]
//	         | (CHAR | CHARACTER | VARCHAR) "(" n ")"
//	         | ARRAY "<" type ">" | MAP "<" type "," type ">"
//	         | STRUCT "<" name [":"] type ["NOT" "NULL"] ["COMMENT" string] ("," ...)* ">"
//
// A name is a word of ASCII letters, digits and underscores that is not only
// digits, or any text in backquotes, such as `my col`, where a backquote that
// is part of the name is written twice. Strings are single- or double-quoted
// with Spark's backslash escapes. Names must be unique, ignoring case, among
// the columns of the list and among the fields of each struct. "--" line
// comments and "/* */" block comments count as whitespace. Types may nest at
// most [MaxDepth] deep.
func ParseDDL(ddl string) ([]Field, error) {
	p, err := newParser(ddl, false)
	if err != nil {
		return nil, err
	}
	if p.tok.kind == tokEOF {
		return nil, nil
	}
	return p.fieldList(false)
}

// parseTypeString parses a single type such as "decimal(10,2)" or
// "array<varchar(5)>", the form Spark uses for catalog strings.
func parseTypeString(s string) (*Type, error) {
	p, err := newParser(s, false)
	if err != nil {
		return nil, err
	}
	t, err := p.typ("a type")
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tokEOF {
		return nil, p.errorf(p.tok.off, "expected end of input after type %s, found %s", t, p.found())
	}
	return t, nil
}

// knownTypes lists the types ParseDDL accepts, for error messages.
const knownTypes = "BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL(p,s), STRING, " +
	"CHAR(n), VARCHAR(n), BINARY, DATE, TIMESTAMP, TIMESTAMP_NTZ, VARIANT, ARRAY<T>, MAP<K,V>, STRUCT<name: T, ...>"

// simpleTypes maps the upper-case names of the types without parameters to
// their kinds.
var simpleTypes = map[string]Kind{
	"BOOLEAN":       Boolean,
	"TINYINT":       Byte,
	"BYTE":          Byte,
	"SMALLINT":      Short,
	"SHORT":         Short,
	"INT":           Int,
	"INTEGER":       Int,
	"BIGINT":        Long,
	"LONG":          Long,
	"FLOAT":         Float,
	"REAL":          Float,
	"DOUBLE":        Double,
	"STRING":        String,
	"BINARY":        Binary,
	"DATE":          Date,
	"TIMESTAMP":     Timestamp,
	"TIMESTAMP_LTZ": Timestamp,
	"TIMESTAMP_NTZ": TimestampNTZ,
	"VARIANT":       Variant,
}

// Decimal and string length limits, as in Spark.
const (
	maxPrecision     = 38
	defaultPrecision = 10
	maxLength        = 1<<31 - 1
)

// parser is a recursive-descent parser over a lazily lexed token stream with
// one token of lookahead.
type parser struct {
	src   string
	pos   int   // next byte to lex
	tok   token // current token
	depth int   // nesting of types being parsed
	// paths makes "." a punctuation token, for the dotted names of schema
	// hints; in a column list it is an unexpected character.
	paths bool
}

// newParser checks that src is UTF-8 and reads its first token; paths
// makes "." a token, as schema hints need.
func newParser(src string, paths bool) (*parser, error) {
	p := &parser{src: src, paths: paths}
	if !utf8.ValidString(src) {
		off := 0
		for off < len(src) {
			r, n := utf8.DecodeRuneInString(src[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return nil, p.errorf(off, "the input is not valid UTF-8 (byte 0x%02x)", src[off])
	}
	if err := p.next(); err != nil {
		return nil, err
	}
	return p, nil
}

// fieldList parses the columns of a column list (inStruct false, up to the
// end of input) or the fields of a struct (inStruct true, up to and
// including its closing ">").
func (p *parser) fieldList(inStruct bool) ([]Field, error) {
	var fields []Field
	seen := map[string]int{} // lower-case name → offset of its declaration
	for {
		nameOff := p.tok.off
		f, err := p.field(inStruct)
		if err != nil {
			return nil, err
		}
		key := strings.ToLower(f.Name)
		if first, dup := seen[key]; dup {
			line, col := p.lineCol(first)
			return nil, p.errorf(nameOff, "%s %q is declared twice (names are case-insensitive; first declared at line %d, column %d)",
				p.what(inStruct), f.Name, line, col)
		}
		seen[key] = nameOff
		fields = append(fields, f)
		switch {
		case p.isPunct(","):
			if err := p.next(); err != nil {
				return nil, err
			}
			if !inStruct && p.tok.kind == tokEOF {
				return nil, p.errorf(p.tok.off, "expected a column name after \",\", found end of input (a trailing comma is not allowed)")
			}
		case inStruct && p.isPunct(">"):
			return fields, p.next()
		case !inStruct && p.tok.kind == tokEOF:
			return fields, nil
		case inStruct:
			return nil, p.errorf(p.tok.off, "expected \",\" or \">\" after field %q of STRUCT, found %s", f.Name, p.found())
		default:
			return nil, p.errorf(p.tok.off, "expected \",\" or end of input after column %q, found %s", f.Name, p.found())
		}
	}
}

// what names the things a field list holds, for messages.
func (p *parser) what(inStruct bool) string {
	if inStruct {
		return "field"
	}
	return "column"
}

// field parses one column or struct field.
func (p *parser) field(inStruct bool) (Field, error) {
	what := p.what(inStruct)
	var f Field
	if inStruct && p.isPunct(">") {
		return f, p.errorf(p.tok.off, "expected a field name, found \">\" (a STRUCT needs at least one field and no trailing comma)")
	}
	name, err := p.name(what)
	if err != nil {
		return f, err
	}
	f.Name = name
	if inStruct && p.isPunct(":") {
		if err := p.next(); err != nil {
			return f, err
		}
	}
	t, err := p.typ(fmt.Sprintf("a type after %s %q", what, f.Name))
	if err != nil {
		return f, err
	}
	f.Type, f.Nullable = t, true
	if p.isWord("NOT") {
		if err := p.next(); err != nil {
			return f, err
		}
		if !p.isWord("NULL") {
			return f, p.errorf(p.tok.off, "expected NULL after NOT in %s %q, found %s", what, f.Name, p.found())
		}
		f.Nullable = false
		if err := p.next(); err != nil {
			return f, err
		}
	}
	if p.isWord("COMMENT") {
		if err := p.next(); err != nil {
			return f, err
		}
		if p.tok.kind != tokString {
			return f, p.errorf(p.tok.off, "expected a quoted string after COMMENT in %s %q, found %s", what, f.Name, p.found())
		}
		f.Comment = p.tok.text
		if err := p.next(); err != nil {
			return f, err
		}
	}
	return f, nil
}

// name parses the name of a column, a struct field or a part of a hint's
// path (what says which, for messages): a word not made only of digits or
// a non-empty backquoted name.
func (p *parser) name(what string) (string, error) {
	switch {
	case p.tok.kind == tokQuoted && p.tok.text == "":
		return "", p.errorf(p.tok.off, "%s name is empty", what)
	case p.tok.kind == tokWord && isDigits(p.tok.text):
		return "", p.errorf(p.tok.off, "expected a %s name, found %s (backquote a name made only of digits: `%s`)", what, p.found(), p.tok.text)
	case p.tok.kind != tokQuoted && p.tok.kind != tokWord:
		return "", p.errorf(p.tok.off, "expected a %s name, found %s", what, p.found())
	}
	name := p.tok.text
	return name, p.next()
}

// typ parses one type; expected describes it for the message when the
// current token is not a type.
func (p *parser) typ(expected string) (*Type, error) {
	if p.depth >= MaxDepth {
		return nil, p.errorf(p.tok.off, "types nest more than %d levels deep", MaxDepth)
	}
	p.depth++
	defer func() { p.depth-- }()
	if p.tok.kind != tokWord {
		return nil, p.errorf(p.tok.off, "expected %s, found %s (known types: %s)", expected, p.found(), knownTypes)
	}
	name := strings.ToUpper(p.tok.text)
	if k, ok := simpleTypes[name]; ok {
		return &Type{Kind: k}, p.next()
	}
	switch name {
	case "DECIMAL", "DEC", "NUMERIC":
		return p.decimal(name)
	case "CHAR", "CHARACTER", "VARCHAR":
		return p.charType(name)
	case "ARRAY":
		if err := p.nextExpect("<", "after ARRAY"); err != nil {
			return nil, err
		}
		elem, err := p.typ("the element type after ARRAY<")
		if err != nil {
			return nil, err
		}
		if err := p.expect(">", "after ARRAY<"+elem.String()); err != nil {
			return nil, err
		}
		return &Type{Kind: Array, Elem: elem}, nil
	case "MAP":
		if err := p.nextExpect("<", "after MAP"); err != nil {
			return nil, err
		}
		key, err := p.typ("the key type after MAP<")
		if err != nil {
			return nil, err
		}
		if err := p.expect(",", "after MAP<"+key.String()); err != nil {
			return nil, err
		}
		value, err := p.typ("the value type after MAP<" + key.String() + ",")
		if err != nil {
			return nil, err
		}
		if err := p.expect(">", "after MAP<"+key.String()+", "+value.String()); err != nil {
			return nil, err
		}
		return &Type{Kind: Map, Key: key, Value: value}, nil
	case "STRUCT":
		if err := p.nextExpect("<", "after STRUCT"); err != nil {
			return nil, err
		}
		fields, err := p.fieldList(true)
		if err != nil {
			return nil, err
		}
		return &Type{Kind: Struct, Fields: fields}, nil
	}
	return nil, p.errorf(p.tok.off, "expected %s, found %s (known types: %s)", expected, p.found(), knownTypes)
}

// decimal parses the optional "(p)" or "(p,s)" after DECIMAL.
func (p *parser) decimal(name string) (*Type, error) {
	t := &Type{Kind: Decimal, Precision: defaultPrecision}
	if err := p.next(); err != nil {
		return nil, err
	}
	if !p.isPunct("(") {
		return t, nil
	}
	if err := p.next(); err != nil {
		return nil, err
	}
	precOff := p.tok.off
	prec, err := p.integer("the precision of " + name)
	if err != nil {
		return nil, err
	}
	if prec < 1 || prec > maxPrecision {
		return nil, p.errorf(precOff, "%s precision %d is out of range: it must be between 1 and %d", name, prec, maxPrecision)
	}
	t.Precision = prec
	where := fmt.Sprintf("after %s(%d", name, prec)
	if p.isPunct(",") {
		if err := p.next(); err != nil {
			return nil, err
		}
		scaleOff := p.tok.off
		scale, err := p.integer("the scale of " + name)
		if err != nil {
			return nil, err
		}
		if scale > prec {
			return nil, p.errorf(scaleOff, "%s scale %d is greater than its precision %d", name, scale, prec)
		}
		t.Scale = scale
		where += fmt.Sprintf(",%d", scale)
	}
	return t, p.expect(")", where)
}

// charType parses the "(n)" after CHAR or VARCHAR.
func (p *parser) charType(name string) (*Type, error) {
	if err := p.next(); err != nil {
		return nil, err
	}
	if !p.isPunct("(") {
		return nil, p.errorf(p.tok.off, "expected \"(\" after %s, found %s (%s needs a length, e.g. %s(255))", name, p.found(), name, name)
	}
	if err := p.next(); err != nil {
		return nil, err
	}
	lenOff := p.tok.off
	n, err := p.integer("the length of " + name)
	if err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, p.errorf(lenOff, "%s length must be at least 1 (use STRING for text of any length)", name)
	}
	if err := p.expect(")", fmt.Sprintf("after %s(%d", name, n)); err != nil {
		return nil, err
	}
	return &Type{Kind: String, Length: n, Fixed: name != "VARCHAR"}, nil
}

// integer parses a non-negative integer literal of at most maxLength.
func (p *parser) integer(what string) (int, error) {
	if p.tok.kind != tokWord || !isDigits(p.tok.text) {
		return 0, p.errorf(p.tok.off, "expected %s (a whole number), found %s", what, p.found())
	}
	n, err := strconv.Atoi(p.tok.text)
	if err != nil || n > maxLength {
		return 0, p.errorf(p.tok.off, "%s %s is too large", what, p.tok.text)
	}
	return n, p.next()
}

// nextExpect skips the current token and then expects punct.
func (p *parser) nextExpect(punct, where string) error {
	if err := p.next(); err != nil {
		return err
	}
	return p.expect(punct, where)
}

// expect consumes punct or fails naming where it was expected.
func (p *parser) expect(punct, where string) error {
	if !p.isPunct(punct) {
		return p.errorf(p.tok.off, "expected %q %s, found %s", punct, where, p.found())
	}
	return p.next()
}

// isPunct reports whether the current token is the punctuation s.
func (p *parser) isPunct(s string) bool { return p.tok.kind == tokPunct && p.tok.text == s }

// isWord reports whether the current token is the keyword kw, ignoring case.
func (p *parser) isWord(kw string) bool {
	return p.tok.kind == tokWord && strings.EqualFold(p.tok.text, kw)
}

// found describes the current token for messages.
func (p *parser) found() string {
	if p.tok.kind == tokEOF {
		return "end of input"
	}
	raw := p.src[p.tok.off:p.tok.end]
	const maxRunes = 40
	if utf8.RuneCountInString(raw) > maxRunes {
		raw = string([]rune(raw)[:maxRunes]) + "..."
	}
	return strconv.Quote(raw)
}

// errorf builds a *ParseError at byte offset off.
func (p *parser) errorf(off int, format string, args ...any) *ParseError {
	line, col := p.lineCol(off)
	return &ParseError{Offset: off, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// lineCol turns a byte offset into a 1-based line and character column.
func (p *parser) lineCol(off int) (line, col int) {
	before := p.src[:off]
	line = 1 + strings.Count(before, "\n")
	if i := strings.LastIndexByte(before, '\n'); i >= 0 {
		before = before[i+1:]
	}
	return line, 1 + utf8.RuneCountInString(before)
}

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
