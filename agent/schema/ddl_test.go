package schema_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// Type and field builders for the expected values.
func prim(k schema.Kind) *schema.Type { return &schema.Type{Kind: k} }
func dec(p, s int) *schema.Type       { return &schema.Type{Kind: schema.Decimal, Precision: p, Scale: s} }
func varchar(n int) *schema.Type      { return &schema.Type{Kind: schema.String, Length: n} }
func char(n int) *schema.Type         { return &schema.Type{Kind: schema.String, Length: n, Fixed: true} }
func array(e *schema.Type) *schema.Type {
	return &schema.Type{Kind: schema.Array, Elem: e}
}
func mapOf(k, v *schema.Type) *schema.Type {
	return &schema.Type{Kind: schema.Map, Key: k, Value: v}
}
func structOf(fields ...schema.Field) *schema.Type {
	return &schema.Type{Kind: schema.Struct, Fields: fields}
}
func col(name string, t *schema.Type) schema.Field {
	return schema.Field{Name: name, Type: t, Nullable: true}
}
func notNull(f schema.Field) schema.Field { f.Nullable = false; return f }
func comment(f schema.Field, c string) schema.Field {
	f.Comment = c
	return f
}

// goodDDL are valid column lists and what they parse to. FuzzParseDDL seeds
// its corpus with them.
var goodDDL = []struct {
	name string
	ddl  string
	want []schema.Field
}{
	{"empty", "", nil},
	{"only whitespace and comments", " \n\t-- nothing here\n/* nor /* here */ */ ", nil},
	{"boolean", "a BOOLEAN", []schema.Field{col("a", prim(schema.Boolean))}},
	{"tinyint", "a TINYINT", []schema.Field{col("a", prim(schema.Byte))}},
	{"byte", "a BYTE", []schema.Field{col("a", prim(schema.Byte))}},
	{"smallint", "a SMALLINT", []schema.Field{col("a", prim(schema.Short))}},
	{"short", "a SHORT", []schema.Field{col("a", prim(schema.Short))}},
	{"int", "a INT", []schema.Field{col("a", prim(schema.Int))}},
	{"integer", "a INTEGER", []schema.Field{col("a", prim(schema.Int))}},
	{"bigint", "a BIGINT", []schema.Field{col("a", prim(schema.Long))}},
	{"long", "a LONG", []schema.Field{col("a", prim(schema.Long))}},
	{"float", "a FLOAT", []schema.Field{col("a", prim(schema.Float))}},
	{"real", "a REAL", []schema.Field{col("a", prim(schema.Float))}},
	{"double", "a DOUBLE", []schema.Field{col("a", prim(schema.Double))}},
	{"decimal default", "a DECIMAL", []schema.Field{col("a", dec(10, 0))}},
	{"decimal precision", "a DECIMAL(5)", []schema.Field{col("a", dec(5, 0))}},
	{"decimal precision scale", "a DECIMAL(12, 4)", []schema.Field{col("a", dec(12, 4))}},
	{"decimal max", "a DECIMAL(38,38)", []schema.Field{col("a", dec(38, 38))}},
	{"dec", "a DEC(3,1)", []schema.Field{col("a", dec(3, 1))}},
	{"numeric", "a NUMERIC ( 1 , 0 )", []schema.Field{col("a", dec(1, 0))}},
	{"string", "a STRING", []schema.Field{col("a", prim(schema.String))}},
	{"char", "a CHAR(3)", []schema.Field{col("a", char(3))}},
	{"character", "a CHARACTER(1)", []schema.Field{col("a", char(1))}},
	{"varchar", "a VARCHAR(255)", []schema.Field{col("a", varchar(255))}},
	{"binary", "a BINARY", []schema.Field{col("a", prim(schema.Binary))}},
	{"date", "a DATE", []schema.Field{col("a", prim(schema.Date))}},
	{"timestamp", "a TIMESTAMP", []schema.Field{col("a", prim(schema.Timestamp))}},
	{"timestamp_ltz", "a TIMESTAMP_LTZ", []schema.Field{col("a", prim(schema.Timestamp))}},
	{"timestamp_ntz", "a TIMESTAMP_NTZ", []schema.Field{col("a", prim(schema.TimestampNTZ))}},
	{"variant", "a variant, s STRUCT<v: VARIANT>", []schema.Field{col("a", prim(schema.Variant)),
		col("s", &schema.Type{Kind: schema.Struct, Fields: []schema.Field{col("v", prim(schema.Variant))}})}},
	{"array", "a ARRAY<INT>", []schema.Field{col("a", array(prim(schema.Int)))}},
	{"nested array", "a ARRAY<ARRAY<STRING>>", []schema.Field{col("a", array(array(prim(schema.String))))}},
	{"map", "a MAP<STRING, BIGINT>", []schema.Field{col("a", mapOf(prim(schema.String), prim(schema.Long)))}},
	{"struct with colons", "a STRUCT<x: INT, y: STRING>", []schema.Field{
		col("a", structOf(col("x", prim(schema.Int)), col("y", prim(schema.String)))),
	}},
	{"struct without colons", "a STRUCT<x INT,y STRING>", []schema.Field{
		col("a", structOf(col("x", prim(schema.Int)), col("y", prim(schema.String)))),
	}},
	{"struct field modifiers", "a STRUCT<x: INT NOT NULL COMMENT 'the x', y STRING COMMENT \"why\">", []schema.Field{
		col("a", structOf(comment(notNull(col("x", prim(schema.Int))), "the x"), comment(col("y", prim(schema.String)), "why"))),
	}},
	{"deep nesting", "a MAP<STRING, ARRAY<STRUCT<b: MAP<INT, DECIMAL(4,2)>>>>", []schema.Field{
		col("a", mapOf(prim(schema.String), array(structOf(col("b", mapOf(prim(schema.Int), dec(4, 2))))))),
	}},
	{"not null", "id BIGINT NOT NULL", []schema.Field{notNull(col("id", prim(schema.Long)))}},
	{"comment", "id BIGINT COMMENT 'the id'", []schema.Field{comment(col("id", prim(schema.Long)), "the id")}},
	{"not null and comment", "id BIGINT NOT NULL COMMENT 'the id'", []schema.Field{
		comment(notNull(col("id", prim(schema.Long))), "the id"),
	}},
	{"comment escapes", `a INT COMMENT 'it\'s a \"q\" \\ \n\t\u00e9\101 \% \_ \x \uD83D\uDE00'`, []schema.Field{
		comment(col("a", prim(schema.Int)), "it's a \"q\" \\ \n\té"+"A \\% \\_ x 😀"),
	}},
	{"double-quoted comment with single quote", `a INT COMMENT "it's"`, []schema.Field{comment(col("a", prim(schema.Int)), "it's")}},
	{"empty comment", "a INT COMMENT ''", []schema.Field{col("a", prim(schema.Int))}},
	{"backquoted names", "`my col` INT, `a``b` STRING, `123` INT, `é` INT", []schema.Field{
		col("my col", prim(schema.Int)), col("a`b", prim(schema.String)), col("123", prim(schema.Int)), col("é", prim(schema.Int)),
	}},
	{"keywords as names", "date DATE, timestamp TIMESTAMP, comment STRING, not INT, struct STRUCT<map: INT>", []schema.Field{
		col("date", prim(schema.Date)), col("timestamp", prim(schema.Timestamp)), col("comment", prim(schema.String)),
		col("not", prim(schema.Int)), col("struct", structOf(col("map", prim(schema.Int)))),
	}},
	{"case-insensitive keywords", "Id bigint not null comment 'x', m map<string,array<decimal(3,1)>>", []schema.Field{
		comment(notNull(col("Id", prim(schema.Long))), "x"), col("m", mapOf(prim(schema.String), array(dec(3, 1)))),
	}},
	{"names starting with digits", "1a INT, _b INT", []schema.Field{col("1a", prim(schema.Int)), col("_b", prim(schema.Int))}},
	{"whitespace and comments everywhere", "\n  id\n\tBIGINT -- the key\n NOT /* really */ NULL\r\n ,\n name STRUCT < a : ARRAY < INT > > \n", []schema.Field{
		notNull(col("id", prim(schema.Long))), col("name", structOf(col("a", array(prim(schema.Int))))),
	}},
	{"same name at different levels", "a STRUCT<a: STRUCT<a: INT>>", []schema.Field{
		col("a", structOf(col("a", structOf(col("a", prim(schema.Int)))))),
	}},
}

// badDDL are invalid column lists, where the error must point and what it
// must say. FuzzParseDDL seeds its corpus with them.
var badDDL = []struct {
	name      string
	ddl       string
	line, col int
	msg       string
}{
	{"unknown type", "id BIGINTT", 1, 4, `expected a type after column "id", found "BIGINTT" (known types: BOOLEAN, TINYINT`},
	{"missing type", "id", 1, 3, `expected a type after column "id", found end of input`},
	{"missing type before comma", "id, b INT", 1, 3, `expected a type after column "id", found ","`},
	{"trailing comma", "a INT,", 1, 7, `a trailing comma is not allowed`},
	{"leading comma", ", a INT", 1, 1, `expected a column name, found ","`},
	{"missing comma", "a INT b INT", 1, 7, `expected "," or end of input after column "a", found "b"`},
	{"NOT without NULL", "a INT NOT", 1, 10, `expected NULL after NOT in column "a", found end of input`},
	{"NULL alone", "a INT NULL", 1, 7, `expected "," or end of input after column "a", found "NULL"`},
	{"comment before not null", "a INT COMMENT 'x' NOT NULL", 1, 19, `expected "," or end of input after column "a", found "NOT"`},
	{"comment without string", "a INT COMMENT x", 1, 15, `expected a quoted string after COMMENT in column "a", found "x"`},
	{"unterminated comment string", "a INT COMMENT 'x", 1, 15, `unterminated string literal`},
	{"bad unicode escape", `a INT COMMENT '\u12'`, 1, 16, `\u must be followed by 4 hex digits`},
	{"lone surrogate", `a INT COMMENT '\uD800'`, 1, 16, `lone UTF-16 surrogate`},
	{"duplicate column", "a INT, b INT,\n  A STRING", 2, 3, `column "A" is declared twice (names are case-insensitive; first declared at line 1, column 1)`},
	{"duplicate struct field", "s STRUCT<x INT, X INT>", 1, 17, `field "X" is declared twice`},
	{"decimal precision zero", "a DECIMAL(0)", 1, 11, `DECIMAL precision 0 is out of range: it must be between 1 and 38`},
	{"decimal precision 39", "a NUMERIC(39, 2)", 1, 11, `NUMERIC precision 39 is out of range`},
	{"decimal scale above precision", "a DECIMAL(3,4)", 1, 13, `DECIMAL scale 4 is greater than its precision 3`},
	{"decimal negative scale", "a DECIMAL(3,-1)", 1, 13, `unexpected character '-'`},
	{"decimal huge precision", "a DECIMAL(99999999999999999999)", 1, 11, `the precision of DECIMAL 99999999999999999999 is too large`},
	{"decimal unclosed", "a DECIMAL(3,1", 1, 14, `expected ")" after DECIMAL(3,1, found end of input`},
	{"decimal empty", "a DECIMAL()", 1, 11, `expected the precision of DECIMAL (a whole number), found ")"`},
	{"varchar without length", "a VARCHAR", 1, 10, `expected "(" after VARCHAR, found end of input (VARCHAR needs a length, e.g. VARCHAR(255))`},
	{"char zero length", "a CHAR(0)", 1, 8, `CHAR length must be at least 1`},
	{"array unclosed", "a ARRAY<INT", 1, 12, `expected ">" after ARRAY<INT, found end of input`},
	{"array without element", "a ARRAY<>", 1, 9, `expected the element type after ARRAY<, found ">"`},
	{"array with parens", "a ARRAY(INT)", 1, 8, `expected "<" after ARRAY, found "("`},
	{"map with one type", "a MAP<STRING>", 1, 13, `expected "," after MAP<STRING, found ">"`},
	{"map bad value", "a MAP<STRING, FOO>", 1, 15, `expected the value type after MAP<STRING,, found "FOO"`},
	{"empty struct", "s STRUCT<>", 1, 10, `a STRUCT needs at least one field`},
	{"struct trailing comma", "s STRUCT<a INT,>", 1, 16, `expected a field name, found ">"`},
	{"struct missing close", "s STRUCT<a INT", 1, 15, `expected "," or ">" after field "a" of STRUCT, found end of input`},
	{"struct field without type", "s STRUCT<a: >", 1, 13, `expected a type after field "a", found ">"`},
	{"extra closing bracket", "a ARRAY<INT>>", 1, 13, `expected "," or end of input after column "a", found ">"`},
	{"unterminated backquote", "`abc INT", 1, 1, `unterminated backquoted name`},
	{"empty backquoted name", "`` INT", 1, 1, `column name is empty`},
	{"digit-only name", "123 INT", 1, 1, `backquote a name made only of digits`},
	{"non-ASCII unquoted name", "a INT, é INT", 1, 8, `unexpected character 'é' (backquote names`},
	{"semicolon", "a INT;", 1, 6, `unexpected character ';'`},
	{"unterminated block comment", "a INT /* x", 1, 7, `unterminated /* comment`},
	{"invalid UTF-8", "a INT COMMENT '\xff'", 1, 16, `not valid UTF-8`},
	{"whole struct", "STRUCT<a: INT>", 1, 7, `expected a type after column "STRUCT", found "<"`},
	{"multi-line position", "id BIGINT NOT NULL,\n  name STRING,\n  tags ARRAY<STRNG>\n", 3, 14, `expected the element type after ARRAY<, found "STRNG"`},
	{"column counts characters", "`é` INT,\n`ü` ARRAY<é>", 2, 11, `unexpected character 'é'`},
	{"long token is shortened", "a " + strings.Repeat("x", 100), 1, 3, `found "` + strings.Repeat("x", 40) + `..."`},
	{"nesting too deep", "a " + strings.Repeat("ARRAY<", 70) + "INT" + strings.Repeat(">", 70), 1, 2 + 6*64 + 1, `types nest more than 64 levels deep`},
	{"struct nesting too deep", "a " + strings.Repeat("STRUCT<a ", 65) + "INT" + strings.Repeat(">", 65), 1, 2 + 9*64 + 1, `types nest more than 64 levels deep`},
}

func TestParseDDL(t *testing.T) {
	t.Parallel()
	for _, tc := range goodDDL {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := schema.ParseDDL(tc.ddl)
			if err != nil {
				t.Fatalf("ParseDDL(%q): %v", tc.ddl, err)
			}
			assertSame(t, got, tc.want)
		})
	}
}

func TestParseDDLErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range badDDL {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := schema.ParseDDL(tc.ddl)
			if err == nil {
				t.Fatalf("ParseDDL(%q) = %s, want an error", tc.ddl, schema.FormatDDL(got))
			}
			var pe *schema.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("ParseDDL(%q) error %T %v, want *schema.ParseError", tc.ddl, err, err)
			}
			if pe.Line != tc.line || pe.Column != tc.col {
				t.Errorf("ParseDDL(%q) error at line %d, column %d, want line %d, column %d: %v", tc.ddl, pe.Line, pe.Column, tc.line, tc.col, err)
			}
			if !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("ParseDDL(%q) error %q, want it to contain %q", tc.ddl, pe.Msg, tc.msg)
			}
			if want := "line "; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Error() = %q, want it to start with %q", err.Error(), want)
			}
		})
	}
}

// TestParseErrorOffset checks that Offset is the byte offset of the
// offending token, also after multi-byte characters and at end of input.
func TestParseErrorOffset(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ddl    string
		offset int
	}{
		{"`é` FOO", 5},
		{"a INT,", 6},
		{"a INT,\nb", 8},
	} {
		_, err := schema.ParseDDL(tc.ddl)
		var pe *schema.ParseError
		if !errors.As(err, &pe) || pe.Offset != tc.offset {
			t.Errorf("ParseDDL(%q) error %#v, want Offset %d", tc.ddl, err, tc.offset)
		}
	}
}

// assertSame fails unless got and want are Equal and have the same
// comments, which Equal ignores.
func assertSame(t *testing.T, got, want []schema.Field) {
	t.Helper()
	if !schema.Equal(got, want) || schema.FormatDDL(got) != schema.FormatDDL(want) {
		t.Errorf("got  %s\nwant %s", schema.FormatDDL(got), schema.FormatDDL(want))
	}
}
