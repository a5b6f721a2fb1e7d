package expr

import (
	"errors"
	"testing"
)

// TestCompileErrors checks the exact text of parse, resolution and type
// errors: the message, the source line and the caret.
func TestCompileErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{`topic ||`, `expected an expression after '||', found end of input
  topic ||
          ^`},
		{`'abc`, `unterminated string literal
  'abc
  ^`},
		{"`abc", "unterminated `quoted identifier`\n  `abc\n  ^"},
		{`1 + * 2`, `expected an expression after '+', found '*'
  1 + * 2
      ^`},
		{`(1 + 2`, `expected ')' after the expression in parentheses, found end of input
  (1 + 2
        ^`},
		{`topic = 'x' topic`, `expected an operator or the end of the expression, found 'topic'
  topic = 'x' topic
              ^`},
		{`topics = 'x'`, `unknown column topics (did you mean topic?); the raw record's columns are key, value, topic, partition, offset, timestamp, timestampType, headers
  topics = 'x'
  ^`},
		{`test_uper(topic)`, `unknown function test_uper (did you mean test_upper?)
  test_uper(topic)
  ^`},
		{`cast(topic AS FLOAT)`, `type FLOAT is not supported; use one of STRING, BINARY, INT, BIGINT, DOUBLE, BOOLEAN, DATE, TIMESTAMP
  cast(topic AS FLOAT)
                ^`},
		{`cast(topic STRING)`, `expected 'AS' after the expression to cast, found 'STRING'
  cast(topic STRING)
             ^`},
		{`topic::`, `expected a type after '::', found end of input
  topic::
         ^`},
		{`value:a`, `the : operator reads JSON text and value is BINARY: cast it to STRING first, e.g. cast(value AS STRING):a
  value:a
       ^`},
		{`cast(value AS STRING):`, `expected a field name or [ after ':' (a JSON path such as value:a.b[0]), found end of input
  cast(value AS STRING):
                        ^`},
		{`cast(value AS STRING):a.`, `expected a field name after '.' in the JSON path, found end of input
  cast(value AS STRING):a.
                          ^`},
		{`cast(value AS STRING):a[x]`, `expected an array index or a quoted field name after '[' in the JSON path, found 'x'
  cast(value AS STRING):a[x]
                          ^`},
		{`partition:a`, `the : operator reads JSON text from a STRING, found INT
  partition:a
           ^`},
		{`CASE WHEN true THEN 1`, `expected WHEN, ELSE or END in CASE, found end of input
  CASE WHEN true THEN 1
                       ^`},
		{`CASE WHEN 1 THEN 1 END`, `a WHEN condition must be a BOOLEAN, found INT
  CASE WHEN 1 THEN 1 END
            ^`},
		{`CASE WHEN true THEN 'a' ELSE 1 END`, `the results of CASE have different types, STRING and INT: cast one to the other's type, e.g. cast(1 AS STRING)
  CASE WHEN true THEN 'a' ELSE 1 END
                               ^`},
		{`topic IS 1`, `expected 'NULL' after IS, found the number 1
  topic IS 1
           ^`},
		{`topic IN ('a' 'b' 1)`, `expected ',' or ')' in the list of IN, found the number 1
  topic IN ('a' 'b' 1)
                    ^`},
		{`partition IN (true)`, `cannot compare INT with BOOLEAN
  partition IN (true)
                ^`},
		{`partition LIKE 'a'`, `LIKE compares STRINGs, found INT: cast it, e.g. cast(partition AS STRING)
  partition LIKE 'a'
  ^`},
		{`topic LIKE 'a\\'`, `the LIKE pattern 'a\' ends with the escape character '\\'
  topic LIKE 'a\\'
             ^`},
		{`topic LIKE 'a' ESCAPE 'ab'`, `ESCAPE takes a string of one character, such as '!'
  topic LIKE 'a' ESCAPE 'ab'
                        ^`},
		{`-topic`, `unary - needs a number, found STRING
  -topic
  ^`},
		{`NOT topic`, `the operand of NOT must be a BOOLEAN, found STRING
  NOT topic
      ^`},
		{`topic AND true`, `the left operand of AND must be a BOOLEAN, found STRING
  topic AND true
  ^`},
		{`key < 1`, `cannot compare BINARY with INT
  key < 1
      ^`},
		{`headers.key`, `only a header, such as element_at(headers, 1), has fields; headers is ARRAY<STRUCT<key: STRING, value: BINARY>>
  headers.key
          ^`},
		{`topic[0]`, `only an array can be indexed with [ ]; topic is STRING
  topic[0]
       ^`},
		{`test_header(headers, 1).name`, `a header has the fields key and value, not name
  test_header(headers, 1).name
                          ^`},
		{`if(1, 2, 3)`, `the condition of if must be a BOOLEAN, found INT
  if(1, 2, 3)
     ^`},
		{`coalesce()`, `coalesce takes at least 1 argument, found 0
  coalesce()
  ^`},
		{`nvl(1)`, `nvl takes 2 arguments, found 1
  nvl(1)
  ^`},
		{`test_upper(partition)`, `test_upper: the argument must be a STRING, found INT
  test_upper(partition)
  ^`},
		{`test_upper(topic, topic)`, `test_upper takes 1 argument, found 2
  test_upper(topic, topic)
  ^`},
		{`cast(partition AS DATE)`, `cannot cast INT to DATE
  cast(partition AS DATE)
  ^`},
		{`1.5x`, `unexpected 'x' after the number 1.5
  1.5x
     ^`},
		{`10S`, `the literal suffix S names a type the language does not support (SMALLINT, TINYINT, FLOAT, DECIMAL); write an INT, BIGINT (L) or DOUBLE (D) literal
  10S
    ^`},
		{`99999999999999999999`, `the integer 99999999999999999999 is out of the BIGINT range (DECIMAL is not supported; write a DOUBLE such as 99999999999999999999e0)
  99999999999999999999
  ^`},
		{`topic #`, `unexpected character '#'
  topic #
        ^`},
		{`AND`, `expected an expression, found the keyword AND
  AND
  ^`},
		{`partition BETWEEN 1`, `expected 'AND' after BETWEEN's lower bound, found end of input
  partition BETWEEN 1
                     ^`},
		{`x = 1 AND
  y = 2`, `unknown column x; the raw record's columns are key, value, topic, partition, offset, timestamp, timestampType, headers (line 1)
  x = 1 AND
  ^`},
		{"topic = 'a' AND\n\tpartition = 2 AND nope", "unknown column nope; the raw record's columns are key, value, topic, partition, offset, timestamp, timestampType, headers (line 2)\n  \tpartition = 2 AND nope\n  \t                  ^"},
		{`/* a */ 1 /* open`, `unterminated /* comment
  /* a */ 1 /* open
            ^`},
		{`coalesce(topic, cast('x' AS INT))`, `the arguments of coalesce have different types, STRING and INT: cast one to the other's type, e.g. cast(cast('x' AS INT) AS STRING)
  coalesce(topic, cast('x' AS INT))
                  ^`},
		{`topic LIKE 'a\\x'`, `in the LIKE pattern 'a\x' the escape character '\\' may only precede %, _ or itself, found 'x'
  topic LIKE 'a\\x'
             ^`},
	}
	for _, tt := range tests {
		p, err := Compile(tt.src)
		if err == nil {
			t.Errorf("%s: compiled to %s, want an error", tt.src, p.Type())
			continue
		}
		var ee *Error
		if !errors.As(err, &ee) {
			t.Errorf("%s: %T, want *Error", tt.src, err)
		}
		if err.Error() != tt.want {
			t.Errorf("%q:\ngot\n%s\nwant\n%s", tt.src, err, tt.want)
		}
	}
}

func TestErrorOutOfRangePos(t *testing.T) {
	for _, pos := range []int{-5, 100} {
		e := &Error{Src: "ab", Pos: pos, Msg: "m"}
		if got := e.Error(); got == "" {
			t.Errorf("pos %d: empty", pos)
		}
	}
	e := &Error{Src: "ab", Pos: 100, Msg: "m"}
	if got, want := e.Error(), "m\n  ab\n    ^"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
