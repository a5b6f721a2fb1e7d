// Package expr is the subset of Databricks SQL that fanout_by is written in:
// it parses an expression once (at plan time, and again in the agent),
// resolves its columns and functions against the raw Kafka record, checks
// its types and compiles it to a tree of typed closures that evaluate one
// record at a time without reflection.
//
// The raw record's columns are key and value (BINARY), topic (STRING),
// partition (INT), offset (BIGINT), timestamp (TIMESTAMP), timestampType
// (INT) and headers (ARRAY<STRUCT<key: STRING, value: BINARY>>), read
// straight from the agent's [record.Record]: a nil key, value or header
// value is NULL, and so is the timestamp of a record without one. Column
// names are case-insensitive and may be `backquoted`.
//
// # Syntax
//
// From the loosest binding to the tightest, as in Spark's grammar:
//
//	OR
//	AND
//	NOT x, !x
//	x IS [NOT] NULL, x [NOT] IN (a, ...), x [NOT] LIKE p [ESCAPE 'c'], x [NOT] BETWEEN a AND b
//	= == != <> < <= > >= <=> (null-safe equal)
//	+ - ||
//	* / %
//	unary - and +
//	x::type, x:json.path, x.field, x[index]
//
// Primary expressions are literals, columns, (x), CASE WHEN c THEN v ...
// [ELSE e] END, CASE x WHEN v THEN r ... [ELSE e] END, cast(x AS type),
// try_cast(x AS type) and function calls (names are case-insensitive).
// Comments are -- to the end of the line and /* ... */.
//
// Literals: 'text' and "text" (a doubled quote is one quote; backslash
// escapes as Spark's; r'raw'; adjacent literals concatenate), integers (an
// INT when they fit, else a BIGINT; 7L is a BIGINT), numbers with a
// fraction or exponent (DOUBLE; 2D is one too), TRUE, FALSE and NULL.
// Spark reads 1.5 as a DECIMAL: the language has no DECIMAL type, so 1.5
// is a DOUBLE here, and an integer beyond BIGINT is an error.
//
// The types a cast may name are STRING, BINARY, INT (INTEGER), BIGINT
// (LONG), DOUBLE, BOOLEAN, DATE and TIMESTAMP; others (FLOAT, DECIMAL,
// SMALLINT, ...) are refused rather than approximated.
//
// x:path reads the JSON text of a STRING as Databricks' : operator does
// (value:a.b, value:a[0], value:['k k'], value:["k"]); its result is a
// STRING, NULL when the path is missing or the text is not JSON. On BINARY
// it is a type error: cast to STRING first, as in
// cast(value AS STRING):event_type::string.
//
// # Semantics
//
// Evaluation follows Databricks SQL's ANSI mode: a cast that fails is an
// error (try_cast gives NULL), as are integer overflow and division by
// zero; / divides as DOUBLE. Numbers widen INT to BIGINT to DOUBLE; a
// STRING compared with or added to a number is cast to that number's type
// (BIGINT for an integer), and a failing cast is an error. NULL
// propagates through operators and functions; AND, OR, NOT, IN and CASE
// use SQL's three-valued logic; if, coalesce, nvl and ifnull evaluate only
// the arguments they need. Types are checked at compile time: an error
// shows the source with a caret under the position ([Error]); a runtime
// error names the part of the expression that failed.
package expr
