package expr

import "time"

// Record is the raw Kafka record an expression reads. Key and Value nil are
// NULL.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	// Timestamp is the record's time; the zero Time means NULL.
	Timestamp     time.Time
	TimestampType int8
	Key, Value    []byte
	Headers       []Header
}

// Header is one record header; a nil Value is NULL.
type Header struct {
	Key   string
	Value []byte
}

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
	Headers []Header
	Header  Header
}

// Program is a compiled expression. It evaluates on one goroutine at a
// time (call sites keep scratch space for their arguments).
type Program struct {
	src  string
	typ  Type
	eval func(*Record) (Value, error)
}

// Compile parses src, resolves its column references and functions against
// the raw record's columns, checks its types and compiles it. Its errors
// are [*Error]s that show src with a caret under the position.
func Compile(src string) (*Program, error) {
	return nil, &Error{Src: src, Msg: "not implemented yet"} // replaced by the parser
}

// Type is the type of the program's result.
func (p *Program) Type() Type { return p.typ }

// Eval evaluates the program on r. Its errors are runtime errors of the
// expression (an ANSI cast that fails, a bad regular expression argument),
// which name the expression.
func (p *Program) Eval(r *Record) (Value, error) { return p.eval(r) }

// Error is a parse, resolution or type error at byte position Pos of Src.
type Error struct {
	Src string
	Pos int
	// Msg says what is wrong and, for a syntax error, what was expected.
	Msg string
}

// Error returns the message, then the source with a caret under Pos.
func (e *Error) Error() string { return e.Msg } // replaced by the parser

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
