package schema_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// goodHints are valid schema hints and what they parse to, each hint
// written back by Hint.String. FuzzParseHints seeds its corpus with them.
var goodHints = []struct {
	name, hints string
	want        []string
}{
	{"empty", "", nil},
	{"only comments", " -- none\n/* here */", nil},
	{"one column", "id BIGINT", []string{"id BIGINT"}},
	{"the issue's example",
		"id BIGINT, ts TIMESTAMP, user.dob DATE, tags ARRAY<STRING>, tags.element STRING, attrs MAP<STRING,STRING>, attrs.value INT",
		[]string{"id BIGINT", "ts TIMESTAMP", "user.dob DATE", "tags ARRAY<STRING>", "tags.element STRING", "attrs MAP<STRING, STRING>", "attrs.value INT"}},
	{"backquoted parts", "`a.b`.c INT, `first name` STRING, `x``y`.`1` DOUBLE",
		[]string{"`a.b`.c INT", "`first name` STRING", "`x``y`.`1` DOUBLE"}},
	{"spaces around dots", "a . b . c DECIMAL(10, 2)", []string{"a.b.c DECIMAL(10,2)"}},
	{"keywords as names", "map.key INT, struct.array STRING", []string{"map.key INT", "struct.array STRING"}},
	{"nested types", "s STRUCT<a: INT, b: ARRAY<MAP<STRING, DATE>>>", []string{"s STRUCT<a: INT, b: ARRAY<MAP<STRING, DATE>>>"}},
	{"map key", "m MAP<STRING, INT>, m.key STRING", []string{"m MAP<STRING, INT>", "m.key STRING"}},
	{"deepest", strings.Repeat("a.", schema.MaxDepth-2) + "a ARRAY<INT>", []string{strings.Repeat("a.", schema.MaxDepth-2) + "a ARRAY<INT>"}},
	{"a part of a hinted struct", "s STRUCT<a: INT>, s.a BIGINT, s.b DATE", []string{"s STRUCT<a: INT>", "s.a BIGINT", "s.b DATE"}},
}

// badHints are invalid schema hints and a part of their error message.
var badHints = []struct{ name, hints, msg string }{
	{"no type", "a", "expected a type after a"},
	{"unknown type", "a NUMBER", "expected a type after a"},
	{"trailing dot", "a. INT", "expected a type after a.INT"},
	{"dot before a comma", "a., b INT", "expected a column name"},
	{"leading dot", ".a INT", "expected a column name"},
	{"empty part", "a.``.b INT", "column name is empty"},
	{"digits part", "a.1 INT", "backquote a name made only of digits"},
	{"trailing comma", "a INT,", "trailing comma"},
	{"missing comma", "a INT b INT", "expected \",\" or end of input after the schema hint for a"},
	{"not null", "a INT NOT NULL", "cannot be NOT NULL"},
	{"nested not null", "a STRUCT<b: INT NOT NULL>", "has a NOT NULL field"},
	{"comment", "a INT COMMENT 'x'", "cannot have a COMMENT"},
	{"twice", "a.b INT, A.B STRING", "given twice"},
	{"through a scalar", "a INT, a.b STRING", "INT has no part b"},
	{"through an array", "a ARRAY<INT>, a.b STRING", "its elements are \"element\""},
	{"through a map", "a MAP<STRING, INT>, a.elem STRING", "its parts are \"key\" and \"value\""},
	{"through an element", "a ARRAY<INT>, a.element.x STRING", "INT has no part x"},
	{"dot in a type", "a DECIMAL(10.2)", "expected \")\""},
	{"invalid UTF-8", "a\xff INT", "not valid UTF-8"},
	{"too deep", strings.Repeat("a.", schema.MaxDepth) + "a INT", "nest more than"},
	{"too deep with its type", strings.Repeat("a.", schema.MaxDepth-2) + "a ARRAY<ARRAY<INT>>", "nest more than"},
}

func TestParseHints(t *testing.T) {
	t.Parallel()
	for _, tt := range goodHints {
		t.Run(tt.name, func(t *testing.T) {
			hints, err := schema.ParseHints(tt.hints)
			if err != nil {
				t.Fatalf("ParseHints(%q): %v", tt.hints, err)
			}
			var got []string
			for _, h := range hints {
				got = append(got, h.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ParseHints(%q) = %q, want %q", tt.hints, got, tt.want)
			}
		})
	}
	for _, tt := range badHints {
		t.Run(tt.name, func(t *testing.T) {
			hints, err := schema.ParseHints(tt.hints)
			var pe *schema.ParseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("ParseHints(%q) = %v, %v; want a *ParseError containing %q", tt.hints, hints, err, tt.msg)
			}
		})
	}
}

func TestParseHintsPath(t *testing.T) {
	t.Parallel()
	hints, err := schema.ParseHints("`a.b`.c INT, tags.element STRING")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a.b", "c"}; !slices.Equal(hints[0].Path, want) {
		t.Errorf("path %q, want %q", hints[0].Path, want)
	}
	if want := []string{"tags", "element"}; !slices.Equal(hints[1].Path, want) {
		t.Errorf("path %q, want %q", hints[1].Path, want)
	}
}

func TestApplyHints(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, fields, hints, want string
	}{
		{"none", "a BIGINT", "", "a BIGINT"},
		{"replace a column", "a BIGINT, b STRING", "a INT", "a INT, b STRING"},
		{"add a column at the end", "a BIGINT", "z DATE", "a BIGINT, z DATE"},
		{"a struct member", "u STRUCT<name: STRING, dob: STRING>", "u.dob DATE", "u STRUCT<name: STRING, dob: DATE>"},
		{"a new struct member", "u STRUCT<name: STRING>", "u.dob DATE", "u STRUCT<name: STRING, dob: DATE>"},
		{"a new column with a path", "a INT", "u.dob DATE", "a INT, u STRUCT<dob: DATE>"},
		{"array element", "tags ARRAY<BIGINT>", "tags.element STRING", "tags ARRAY<STRING>"},
		{"element of an array of structs", "l ARRAY<STRUCT<x: BIGINT>>", "l.element.x INT", "l ARRAY<STRUCT<x: INT>>"},
		{"map value after the map", "attrs STRUCT<a: BIGINT>", "attrs MAP<STRING,STRING>, attrs.value INT", "attrs MAP<STRING, INT>"},
		{"map key", "", "m MAP<STRING, INT>, m.key DATE", "m MAP<DATE, INT>"},
		{"case-insensitive names", "User STRUCT<DOB: STRING>", "user.dob DATE", "User STRUCT<DOB: DATE>"},
		{"exact spelling first", "Id STRING, id STRING", "id BIGINT", "Id STRING, id BIGINT"},
		{"parts named in any case", "t ARRAY<INT>", "t.ELEMENT STRING", "t ARRAY<STRING>"},
		{"the issue's example", "id STRING, extra BOOLEAN",
			"id BIGINT, ts TIMESTAMP, user.dob DATE, tags ARRAY<STRING>, tags.element STRING, attrs MAP<STRING,STRING>, attrs.value INT",
			"id BIGINT, extra BOOLEAN, ts TIMESTAMP, user STRUCT<dob: DATE>, tags ARRAY<STRING>, attrs MAP<STRING, INT>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fields := mustDDL(t, tt.fields)
			before := schema.FormatDDL(fields)
			hints, err := schema.ParseHints(tt.hints)
			if err != nil {
				t.Fatal(err)
			}
			got, err := schema.ApplyHints(fields, hints)
			if err != nil {
				t.Fatalf("ApplyHints(%s, %s): %v", tt.fields, tt.hints, err)
			}
			if s := schema.FormatDDL(got); s != tt.want {
				t.Errorf("ApplyHints(%s, %s) = %s, want %s", tt.fields, tt.hints, s, tt.want)
			}
			if schema.FormatDDL(fields) != before {
				t.Errorf("ApplyHints modified its input: %s, was %s", schema.FormatDDL(fields), before)
			}
		})
	}
}

func TestApplyHintsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ fields, hints, msg string }{
		{"user STRING", "user.dob DATE", "schema hint for user.dob: user: STRING has no part dob"},
		{"s STRUCT<a: ARRAY<INT>>", "s.a.x INT", "schema hint for s.a.x: s: a: ARRAY<INT> has no part x"},
		{"m MAP<STRING, INT>", "m.element INT", "has no part element"},
	}
	for _, tt := range tests {
		hints, err := schema.ParseHints(tt.hints)
		if err != nil {
			t.Fatal(err)
		}
		got, err := schema.ApplyHints(mustDDL(t, tt.fields), hints)
		if err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("ApplyHints(%s, %s) = %s, %v; want an error containing %q", tt.fields, tt.hints, schema.FormatDDL(got), err, tt.msg)
		}
	}
	if _, err := schema.ApplyHints(nil, []schema.Hint{{Path: nil, Type: typeOf(t, "INT")}}); err == nil {
		t.Error("ApplyHints with an empty path: no error")
	}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	fields := mustDDL(t, "`Id` INT, b INT, `ID` INT, id INT")
	tests := []struct {
		name  string
		index int
		exact bool
	}{
		{"id", 3, true},
		{"ID", 2, true},
		{"iD", 0, false},
		{"B", 1, false},
		{"c", -1, false},
	}
	for _, tt := range tests {
		if i, exact := schema.Lookup(fields, tt.name); i != tt.index || exact != tt.exact {
			t.Errorf("Lookup(%q) = %d, %v, want %d, %v", tt.name, i, exact, tt.index, tt.exact)
		}
	}
}

// mustDDL parses a column list whose names may repeat ignoring case (which
// ParseDDL refuses), by parsing each column on its own.
func mustDDL(t testing.TB, ddl string) []schema.Field {
	t.Helper()
	if ddl == "" {
		return nil
	}
	fields, err := schema.ParseDDL(ddl)
	if err == nil {
		return fields
	}
	for _, col := range strings.Split(ddl, ", ") {
		f, err := schema.ParseDDL(col)
		if err != nil {
			t.Fatalf("ParseDDL(%s): %v", col, err)
		}
		fields = append(fields, f...)
	}
	return fields
}
