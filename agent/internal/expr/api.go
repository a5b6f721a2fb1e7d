package expr

import (
	"fmt"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
)

// Type is the SQL type of an expression or value.
type Type uint8

// The types an expression may have. TypeNull is the type of the NULL
// literal, which any other type accepts.
const (
	TypeNull Type = iota
	TypeString
	TypeBinary
	TypeBoolean
	TypeInt
	TypeBigInt
	TypeDouble
	TypeDate
	TypeTimestamp
	// TypeStringArray is ARRAY<STRING>, what split returns.
	TypeStringArray
	// TypeHeaders is the headers column: ARRAY<STRUCT<key: STRING, value: BINARY>>.
	TypeHeaders
	// TypeHeader is one element of headers: STRUCT<key: STRING, value: BINARY>.
	TypeHeader
)

// Value is one evaluated value. Which field holds it depends on Type:
// Str for STRING, Bytes for BINARY, Bool for BOOLEAN, Int for INT, BIGINT,
// DATE (days since the epoch) and TIMESTAMP (microseconds since the epoch,
// UTC), Float for DOUBLE, Strs for ARRAY<STRING>, Headers for headers and
// Header for one of them.
type Value struct {
	Type    Type
	Null    bool
	Str     string
	Bytes   []byte
	Bool    bool
	Int     int64
	Float   float64
	Strs    []string
	Headers []record.Header
	Header  record.Header
}

// Program is a compiled expression. It evaluates on one goroutine at a
// time (call sites keep scratch space for their arguments).
type Program struct {
	src  string
	typ  Type
	eval func(*record.Record) (Value, error)
	// valuePath is the path of a program that is a JSON path on the
	// value's text (see ValuePath); nil for others.
	valuePath []PathStep
}

// Compile parses src, resolves its column references and functions against
// the raw record's columns, checks its types and compiles it. Its errors
// are [*Error]s that show src with a caret under the position.
func Compile(src string) (*Program, error) {
	n, err := parse(src)
	if err != nil {
		return nil, err
	}
	c := compiler{src: src}
	x, err := c.compile(n)
	if err != nil {
		return nil, err
	}
	return &Program{src: src, typ: x.typ, eval: x.eval, valuePath: valuePathOf(n)}, nil
}

// String returns the program's source.
func (p *Program) String() string { return p.src }

// Type is the type of the program's result.
func (p *Program) Type() Type { return p.typ }

// Eval evaluates the program on r. Its errors are runtime errors of the
// expression (an ANSI cast that fails, a bad regular expression argument),
// which name the expression. A BINARY result may share memory with r.
func (p *Program) Eval(r *record.Record) (Value, error) { return p.eval(r) }

// EvalString evaluates the program on r and returns its result as a
// STRING: null true when it is NULL, and a result of another type cast to
// STRING as cast(x AS STRING) does (an error for headers). The router
// calls it with the program of fanout_by, whose type is STRING.
func (p *Program) EvalString(r *record.Record) (s string, null bool, err error) {
	v, err := p.eval(r)
	if err != nil {
		return "", false, err
	}
	if v.Type != TypeString && !v.Null {
		if v, err = castValue(v, TypeString); err != nil {
			return "", false, fmt.Errorf("%s: %w", p.src, err)
		}
	}
	return v.Str, v.Null, nil
}

// Error is a parse, resolution or type error at byte position Pos of Src.
type Error struct {
	Src string
	Pos int
	// Msg says what is wrong and, for a syntax error, what was expected.
	Msg string
}

// Error returns the message, then the source with a caret under Pos.
// When Src has several lines, only the line with Pos shows, and the
// message says which line that is. Tabs before Pos stay tabs, so that the
// caret lines up.
func (e *Error) Error() string {
	pos := min(max(e.Pos, 0), len(e.Src))
	start := strings.LastIndexByte(e.Src[:pos], '\n') + 1
	end := len(e.Src)
	if i := strings.IndexByte(e.Src[pos:], '\n'); i >= 0 {
		end = pos + i
	}
	msg := e.Msg
	if strings.Contains(e.Src, "\n") {
		msg += fmt.Sprintf(" (line %d)", strings.Count(e.Src[:start], "\n")+1)
	}
	var pad strings.Builder
	for _, r := range e.Src[start:pos] {
		if r == '\t' {
			pad.WriteByte('\t')
		} else {
			pad.WriteByte(' ')
		}
	}
	return msg + "\n  " + strings.TrimRight(e.Src[start:end], "\r") + "\n  " + pad.String() + "^"
}

// function is a built-in function that evaluates all its arguments first.
// CASE, if, coalesce and nvl evaluate lazily and are compiled by the core.
type function struct {
	// minArgs and maxArgs bound the argument count; maxArgs -1 is any.
	minArgs, maxArgs int
	// check returns the result type for the argument types, or an error
	// saying which argument does not fit (the caller adds the position).
	check func(args []Type) (Type, error)
	// eval computes the result from the evaluated arguments, which it
	// must not keep. A NULL argument makes most functions NULL.
	eval func(args []Value) (Value, error)
}

// functions holds the built-in functions by lower-case name.
var functions = map[string]*function{}

// PathStep is one step of a JSON path (the : operator, get_json_object):
// a field name, or an array index when IsIndex.
type PathStep struct {
	Name string
	// Bracketed is a name written ['name'] or ["name"]: matched case
	// sensitively on STRING, unlike a bare name.
	Bracketed bool
	IsIndex   bool
	Index     int
}
