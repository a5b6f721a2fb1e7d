package schema

import "testing"

func TestMerge(t *testing.T) {
	parse := func(ddl string) []Field {
		t.Helper()
		f, err := ParseDDL(ddl)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	tests := []struct {
		prev, next, want string
		adds             bool
	}{
		{"a INT, b STRING", "a INT, b STRING", "a INT, b STRING", false},
		{"a INT, b STRING", "b STRING, c DOUBLE", "a INT, b STRING, c DOUBLE", true},
		{"a INT", "A INT", "a INT", false},
		{"s STRUCT<x: INT>", "s STRUCT<x: INT, y: STRING NOT NULL>", "s STRUCT<x: INT, y: STRING>", true},
		{"l ARRAY<STRUCT<x: INT>>, m MAP<STRING, STRUCT<x: INT>>", "l ARRAY<STRUCT<x: INT, y: INT>>, m MAP<STRING, STRUCT<z: INT>>",
			"l ARRAY<STRUCT<x: INT, y: INT>>, m MAP<STRING, STRUCT<x: INT, z: INT>>", true},
		{"a INT", "a BIGINT", "a BIGINT", false},
		{"a INT", "c INT NOT NULL", "a INT, c INT", true},
		{"v VARIANT, s STRUCT<w: VARIANT>", "v VARIANT, s STRUCT<w: VARIANT, x: VARIANT>", "v VARIANT, s STRUCT<w: VARIANT, x: VARIANT>", true},
		{"v VARIANT", "v VARIANT", "v VARIANT", false},
	}
	for _, tt := range tests {
		got := Merge(parse(tt.prev), parse(tt.next))
		if want := parse(tt.want); !Equal(got, want) {
			t.Errorf("Merge(%s, %s) = %s, want %s", tt.prev, tt.next, FormatDDL(got), FormatDDL(want))
		}
		if a := Adds(parse(tt.prev), parse(tt.next)); a != tt.adds {
			t.Errorf("Adds(%s, %s) = %v, want %v", tt.prev, tt.next, a, tt.adds)
		}
	}
}
