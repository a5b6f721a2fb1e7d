package schema_test

import (
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

func TestFormatDDLCanonical(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ ddl, want string }{
		{"", ""},
		{"a byte, b short, c integer, d long, e real, f dec, g numeric(5), h timestamp_ltz",
			"a TINYINT, b SMALLINT, c INT, d BIGINT, e FLOAT, f DECIMAL(10,0), g DECIMAL(5,0), h TIMESTAMP"},
		{"a character(2), b varchar(3), c timestamp_ntz", "a CHAR(2), b VARCHAR(3), c TIMESTAMP_NTZ"},
		{"m map<string,array<struct<x int not null comment \"c\">>>",
			"m MAP<STRING, ARRAY<STRUCT<x: INT NOT NULL COMMENT 'c'>>>"},
		{"`my col` INT, `a``b` INT, `1` INT, 1a INT, `é` INT", "`my col` INT, `a``b` INT, `1` INT, `1a` INT, `é` INT"},
		{`a INT COMMENT "it's \\ \n\u0001\u2028é"`, `a INT COMMENT 'it\'s \\ \n\u0001\u2028é'`},
	} {
		fields, err := schema.ParseDDL(tc.ddl)
		if err != nil {
			t.Fatalf("ParseDDL(%q): %v", tc.ddl, err)
		}
		if got := schema.FormatDDL(fields); got != tc.want {
			t.Errorf("FormatDDL(ParseDDL(%q))\n got  %s\n want %s", tc.ddl, got, tc.want)
		}
	}
}

func TestFormatDDLRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range goodDDL {
		ddl := schema.FormatDDL(tc.want)
		got, err := schema.ParseDDL(ddl)
		if err != nil {
			t.Errorf("%s: ParseDDL(FormatDDL) of %q: %v", tc.name, ddl, err)
			continue
		}
		assertSame(t, got, tc.want)
	}
}

func TestTypeString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		t    *schema.Type
		want string
	}{
		{nil, "<nil>"},
		{prim(schema.TimestampNTZ), "TIMESTAMP_NTZ"},
		{prim(schema.Variant), "VARIANT"},
		{dec(7, 3), "DECIMAL(7,3)"},
		{char(4), "CHAR(4)"},
		{varchar(4), "VARCHAR(4)"},
		{mapOf(prim(schema.String), array(prim(schema.Long))), "MAP<STRING, ARRAY<BIGINT>>"},
		{structOf(col("a b", prim(schema.Int)), notNull(col("c", prim(schema.Date)))), "STRUCT<`a b`: INT, c: DATE NOT NULL>"},
		{&schema.Type{Kind: 99}, "Kind(99)"},
	} {
		if got := tc.t.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func TestQuoteName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"abc": "abc", "a_1": "a_1", "_": "_", "1a": "`1a`", "12": "`12`", "": "``", "a b": "`a b`", "a`b": "`a``b`", "ü": "`ü`",
	} {
		if got := schema.QuoteName(name); got != want {
			t.Errorf("QuoteName(%q) = %q, want %q", name, got, want)
		}
	}
}
