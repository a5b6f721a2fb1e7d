package schema_test

import (
	"errors"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// FuzzParseDDL checks that ParseDDL never panics, that its errors are
// *ParseError pointing inside the input, and that what it accepts survives
// both FormatDDL and SparkJSON round trips unchanged, comments included.
func FuzzParseDDL(f *testing.F) {
	for _, tc := range goodDDL {
		f.Add(tc.ddl)
	}
	for _, tc := range badDDL {
		f.Add(tc.ddl)
	}
	f.Add(everyType)
	f.Fuzz(func(t *testing.T, ddl string) {
		fields, err := schema.ParseDDL(ddl)
		if err != nil {
			var pe *schema.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("ParseDDL(%q) error %T %v, want *schema.ParseError", ddl, err, err)
			}
			if pe.Offset < 0 || pe.Offset > len(ddl) || pe.Line < 1 || pe.Column < 1 {
				t.Fatalf("ParseDDL(%q) error position offset %d, line %d, column %d is outside the input", ddl, pe.Offset, pe.Line, pe.Column)
			}
			return
		}
		canonical := schema.FormatDDL(fields)
		again, err := schema.ParseDDL(canonical)
		if err != nil {
			t.Fatalf("ParseDDL(FormatDDL(ParseDDL(%q))) = ParseDDL(%q): %v", ddl, canonical, err)
		}
		if !schema.Equal(again, fields) || schema.FormatDDL(again) != canonical {
			t.Fatalf("DDL round trip of %q changed\n %s\nto\n %s", ddl, canonical, schema.FormatDDL(again))
		}
		js, err := schema.SparkJSON(fields)
		if err != nil {
			t.Fatalf("SparkJSON(ParseDDL(%q)): %v", ddl, err)
		}
		back, err := schema.ParseSparkJSON(js)
		if err != nil {
			t.Fatalf("ParseSparkJSON(%s): %v", js, err)
		}
		if !schema.Equal(back, fields) || schema.FormatDDL(back) != canonical {
			t.Fatalf("Spark JSON round trip of %q changed\n %s\nto\n %s", ddl, canonical, schema.FormatDDL(back))
		}
	})
}

// FuzzParseSparkJSON checks that ParseSparkJSON never panics on a damaged
// log schema and that what it accepts is valid and survives a SparkJSON round
// trip unchanged.
func FuzzParseSparkJSON(f *testing.F) {
	f.Add(everyTypeJSON)
	for _, tc := range goodSparkJSON {
		f.Add(tc.json)
	}
	for _, tc := range badSparkJSON {
		f.Add(tc.json)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fields, err := schema.ParseSparkJSON(s)
		if err != nil {
			return
		}
		if err := schema.Validate(fields); err != nil {
			t.Fatalf("ParseSparkJSON(%s) gave an invalid schema: %v", s, err)
		}
		js, err := schema.SparkJSON(fields)
		if err != nil {
			t.Fatalf("SparkJSON(ParseSparkJSON(%s)): %v", s, err)
		}
		back, err := schema.ParseSparkJSON(js)
		if err != nil {
			t.Fatalf("ParseSparkJSON(%s): %v", js, err)
		}
		if !schema.Equal(back, fields) || schema.FormatDDL(back) != schema.FormatDDL(fields) {
			t.Fatalf("Spark JSON round trip of %s changed\n %s\nto\n %s", s, schema.FormatDDL(fields), schema.FormatDDL(back))
		}
	})
}
