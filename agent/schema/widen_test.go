package schema_test

import (
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

func TestUnify(t *testing.T) {
	t.Parallel()
	tests := []struct{ a, b, want string }{
		{"", "", ""},
		{"", "BIGINT", "BIGINT"},
		{"BIGINT", "", "BIGINT"},
		{"BIGINT", "BIGINT", "BIGINT"},
		{"BIGINT", "DOUBLE", "DOUBLE"},
		{"INT", "BIGINT", "BIGINT"},
		{"TINYINT", "SMALLINT", "SMALLINT"},
		{"BIGINT", "FLOAT", "FLOAT"},
		{"FLOAT", "DOUBLE", "DOUBLE"},
		{"BIGINT", "DECIMAL(20,0)", "DECIMAL(20,0)"},
		{"BIGINT", "DECIMAL(10,2)", "DECIMAL(22,2)"},
		{"INT", "DECIMAL(12,2)", "DECIMAL(12,2)"},
		{"DECIMAL(5,2)", "DECIMAL(10,0)", "DECIMAL(12,2)"},
		{"DECIMAL(38,0)", "DECIMAL(38,38)", "DOUBLE"},
		{"DECIMAL(20,0)", "DOUBLE", "DOUBLE"},
		{"DECIMAL(20,0)", "FLOAT", "DOUBLE"},
		{"BOOLEAN", "BIGINT", "STRING"},
		{"STRING", "BIGINT", "STRING"},
		{"BIGINT", "STRING", "STRING"},
		{"VARCHAR(3)", "STRING", "STRING"},
		{"VARCHAR(3)", "CHAR(3)", "STRING"},
		{"DATE", "TIMESTAMP", "TIMESTAMP"},
		{"TIMESTAMP", "DATE", "TIMESTAMP"},
		{"TIMESTAMP_NTZ", "TIMESTAMP", "TIMESTAMP"},
		{"DATE", "TIMESTAMP_NTZ", "TIMESTAMP_NTZ"},
		{"DATE", "STRING", "STRING"},
		{"DATE", "BIGINT", "STRING"},
		{"BINARY", "STRING", "STRING"},
		{"STRUCT<b: BIGINT, c: STRING>", "STRUCT<a: BOOLEAN, b: DOUBLE>", "STRUCT<b: DOUBLE, c: STRING, a: BOOLEAN>"},
		{"STRUCT<Id: BIGINT>", "STRUCT<id: STRING, x: INT>", "STRUCT<Id: BIGINT, id: STRING, x: INT>"},
		{"STRUCT<a: BIGINT>", "BIGINT", "STRING"},
		{"ARRAY<BIGINT>", "ARRAY<DOUBLE>", "ARRAY<DOUBLE>"},
		{"ARRAY<STRUCT<a: INT>>", "ARRAY<STRUCT<b: INT>>", "ARRAY<STRUCT<a: INT, b: INT>>"},
		{"ARRAY<BIGINT>", "STRUCT<a: INT>", "STRING"},
		{"MAP<STRING, INT>", "MAP<STRING, BIGINT>", "MAP<STRING, BIGINT>"},
		{"MAP<STRING, INT>", "MAP<INT, INT>", "STRING"},
	}
	for _, tt := range tests {
		a, b := typeOf(t, tt.a), typeOf(t, tt.b)
		aDDL, bDDL := ddlOf(a), ddlOf(b)
		got := schema.Unify(a, b)
		if ddlOf(got) != tt.want {
			t.Errorf("Unify(%s, %s) = %s, want %s", tt.a, tt.b, ddlOf(got), tt.want)
		}
		if ddlOf(a) != aDDL || ddlOf(b) != bDDL {
			t.Errorf("Unify(%s, %s) modified its arguments to %s, %s", tt.a, tt.b, ddlOf(a), ddlOf(b))
		}
		if a != nil && got.Equal(a) && got != a {
			t.Errorf("Unify(%s, %s) returned a copy of a, want a itself", tt.a, tt.b)
		}
	}
}

// TestUnifyEmpty covers the inferred shapes that DDL cannot write: {} and
// an array of only nulls.
func TestUnifyEmpty(t *testing.T) {
	t.Parallel()
	empty := &schema.Type{Kind: schema.Struct}
	s := typeOf(t, "STRUCT<a: INT>")
	if got := schema.Unify(empty, s); ddlOf(got) != "STRUCT<a: INT>" {
		t.Errorf("Unify({}, %s) = %s", s, ddlOf(got))
	}
	if got := schema.Unify(s, empty); got != s {
		t.Errorf("Unify(%s, {}) = %s, want the first argument", s, ddlOf(got))
	}
	nulls := &schema.Type{Kind: schema.Array}
	if got := schema.Unify(nulls, typeOf(t, "ARRAY<INT>")); ddlOf(got) != "ARRAY<INT>" {
		t.Errorf("Unify([null], ARRAY<INT>) = %s", ddlOf(got))
	}
}

// value infers the type of a JSON value for the tests.
func value(t testing.TB, v string) *schema.Type {
	t.Helper()
	got, err := schema.InferValue([]byte(v), inferOn)
	if err != nil {
		t.Fatalf("InferValue(%s): %v", v, err)
	}
	return got
}

func TestFits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cur, value string
		want       bool
	}{
		{"BIGINT", `null`, true},
		{"BIGINT", `1`, true},
		{"INT", `1`, true}, // the decoder checks the range
		{"TINYINT", `1000`, true},
		{"BIGINT", `99999999999999999999`, true},
		{"BIGINT", `1.5`, false},
		{"BIGINT", `"1"`, false},
		{"BIGINT", `""`, false},
		{"BIGINT", `true`, false},
		{"BIGINT", `[1]`, false},
		{"BIGINT", `{}`, false},
		{"BOOLEAN", `true`, true},
		{"BOOLEAN", `"true"`, false},
		{"BOOLEAN", `1`, false},
		{"DOUBLE", `1`, true},
		{"DOUBLE", `1.5`, true},
		{"DOUBLE", `99999999999999999999`, true},
		{"DOUBLE", `"NaN"`, true},
		{"DOUBLE", `"2024-01-02"`, false},
		{"FLOAT", `1.5`, true},
		{"DECIMAL(10,2)", `1.5`, true},
		{"DECIMAL(10,2)", `1`, true},
		{"DECIMAL(10,2)", `"1.5"`, true},
		{"DECIMAL(10,2)", `false`, false},
		{"STRING", `1`, true},
		{"STRING", `{"a":[1,{"b":null}]}`, true},
		{"VARCHAR(2)", `"abc"`, true},
		{"BINARY", `"AAEC"`, true},
		{"BINARY", `1`, false},
		{"DATE", `"2024-01-02"`, true},
		{"DATE", `"2024-01-02T00:00:00Z"`, true},
		{"DATE", `"tomorrow"`, true},
		{"DATE", `20240102`, false},
		{"TIMESTAMP", `"2024-01-02T00:00:00Z"`, true},
		{"TIMESTAMP", `"2024-01-02"`, true},
		{"TIMESTAMP", `1700000000`, true},
		{"TIMESTAMP", `1700000000.5`, false},
		{"TIMESTAMP_NTZ", `"2024-01-02T00:00:00"`, true},
		{"TIMESTAMP_NTZ", `1700000000`, false},
		{"ARRAY<BIGINT>", `[1,2]`, true},
		{"ARRAY<BIGINT>", `[]`, true},
		{"ARRAY<BIGINT>", `[null]`, true},
		{"ARRAY<BIGINT>", `[1.5]`, false},
		{"ARRAY<BIGINT>", `1`, false},
		{"ARRAY<STRUCT<a: INT>>", `[{"a":1},{}]`, true},
		{"STRUCT<a: INT, b: STRING>", `{"a":1}`, true},
		{"STRUCT<a: INT, b: STRING>", `{}`, true},
		{"STRUCT<a: INT, b: STRING>", `{"a":1,"c":null,"d":{}}`, true},
		{"STRUCT<a: INT, b: STRING>", `{"a":1,"c":2}`, false},
		{"STRUCT<a: INT, b: STRING>", `{"A":1}`, false},
		{"STRUCT<a: INT, b: STRING>", `{"a":"x"}`, false},
		{"STRUCT<a: INT>", `[1]`, false},
		{"MAP<STRING, BIGINT>", `{"x":1,"y":2,"z":null}`, true},
		{"MAP<STRING, BIGINT>", `{"x":1,"y":"2"}`, false},
		{"MAP<STRING, BIGINT>", `{}`, true},
	}
	for _, tt := range tests {
		if got := schema.Fits(typeOf(t, tt.cur), value(t, tt.value)); got != tt.want {
			t.Errorf("Fits(%s, %s) = %v, want %v", tt.cur, tt.value, got, tt.want)
		}
	}
}

func TestExtendAndWiden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cur, value string
		extend     string // "" when Extend is false
		widen      string // "" when Widen is false
	}{
		{"BIGINT", `1`, "BIGINT", "BIGINT"},
		{"BIGINT", `null`, "BIGINT", "BIGINT"},
		{"STRING", `{"a":1}`, "STRING", "STRING"},
		{"BIGINT", `"x"`, "", ""},
		{"BOOLEAN", `1`, "", ""},
		// Type widening, by kind.
		{"INT", `1`, "INT", "BIGINT"},
		{"TINYINT", `1`, "TINYINT", "BIGINT"},
		{"INT", `1.5`, "", "DOUBLE"},
		{"SMALLINT", `1.5`, "", "DOUBLE"},
		{"BIGINT", `1.5`, "", ""}, // Delta does not widen BIGINT to DOUBLE
		{"INT", `99999999999999999999`, "INT", "DECIMAL(20,0)"},
		{"BIGINT", `99999999999999999999`, "BIGINT", "DECIMAL(20,0)"},
		{"BIGINT", `123456789012345678901234`, "BIGINT", "DECIMAL(24,0)"},
		{"FLOAT", `1.5`, "FLOAT", "DOUBLE"},
		{"FLOAT", `1`, "FLOAT", "DOUBLE"},
		{"DOUBLE", `1`, "DOUBLE", "DOUBLE"},
		{"DECIMAL(10,2)", `1`, "DECIMAL(10,2)", "DECIMAL(22,2)"},
		{"DECIMAL(30,2)", `1`, "DECIMAL(30,2)", "DECIMAL(30,2)"},
		{"DECIMAL(10,2)", `99999999999999999999`, "DECIMAL(10,2)", "DECIMAL(22,2)"},
		{"DECIMAL(38,10)", `99999999999999999999999999999999999`, "DECIMAL(38,10)", "DECIMAL(38,10)"}, // no room: kept, the decoder rejects the value
		{"DECIMAL(10,2)", `1.5`, "DECIMAL(10,2)", "DECIMAL(10,2)"},
		{"DATE", `"2024-01-02T10:00:00"`, "DATE", "TIMESTAMP_NTZ"},
		{"DATE", `1`, "", ""},
		{"TIMESTAMP", `"2024-01-02"`, "TIMESTAMP", "TIMESTAMP"},
		// New struct members.
		{"STRUCT<a: BIGINT>", `{"a":1,"b":"x"}`, "STRUCT<a: BIGINT, b: STRING>", "STRUCT<a: BIGINT, b: STRING>"},
		{"STRUCT<a: BIGINT>", `{"b":{"c":[1]},"d":[]}`, "STRUCT<a: BIGINT, b: STRUCT<c: ARRAY<BIGINT>>, d: ARRAY<STRING>>", "STRUCT<a: BIGINT, b: STRUCT<c: ARRAY<BIGINT>>, d: ARRAY<STRING>>"},
		{"STRUCT<a: BIGINT>", `{"b":null,"c":{},"d":{"e":null}}`, "STRUCT<a: BIGINT>", "STRUCT<a: BIGINT>"},
		{"STRUCT<a: BIGINT>", `{"e":[{}]}`, "STRUCT<a: BIGINT>", "STRUCT<a: BIGINT>"},
		{"STRUCT<a: INT>", `{"a":1,"b":true}`, "STRUCT<a: INT, b: BOOLEAN>", "STRUCT<a: BIGINT, b: BOOLEAN>"},
		{"STRUCT<a: BIGINT>", `{"A":1}`, "", ""},
		{"STRUCT<a: BIGINT>", `{"A":null,"a":1}`, "STRUCT<a: BIGINT>", "STRUCT<a: BIGINT>"},
		{"STRUCT<a: BIGINT>", `{"a":{"x":null}}`, "", ""},
		{"STRUCT<a: BIGINT>", `{"a":{}}`, "", ""},
		{"STRUCT<a: BIGINT>", `{"":1}`, "", ""},
		{"STRUCT<a: BIGINT>", `{"a":"x","b":1}`, "", ""},
		{"ARRAY<STRUCT<a: INT>>", `[{"a":1},{"b":2}]`, "ARRAY<STRUCT<a: INT, b: BIGINT>>", "ARRAY<STRUCT<a: BIGINT, b: BIGINT>>"},
		{"ARRAY<INT>", `[1.5]`, "", "ARRAY<DOUBLE>"},
		{"MAP<STRING, STRUCT<a: INT>>", `{"k":{"b":true}}`, "MAP<STRING, STRUCT<a: INT, b: BOOLEAN>>", "MAP<STRING, STRUCT<a: INT, b: BOOLEAN>>"},
		{"MAP<STRING, INT>", `{"k":1.5,"l":2}`, "", "MAP<STRING, DOUBLE>"},
	}
	for _, tt := range tests {
		cur, got := typeOf(t, tt.cur), value(t, tt.value)
		for _, f := range []struct {
			name string
			fn   func(cur, got *schema.Type) (*schema.Type, bool)
			want string
		}{{"Extend", schema.Extend, tt.extend}, {"Widen", schema.Widen, tt.widen}} {
			res, ok := f.fn(cur, got)
			if ok != (f.want != "") || ok && ddlOf(res) != f.want {
				t.Errorf("%s(%s, %s) = %s, %v, want %s, %v", f.name, tt.cur, tt.value, ddlOf(res), ok, f.want, f.want != "")
			}
			if ok && res.Equal(cur) && res != cur {
				t.Errorf("%s(%s, %s) returned a copy of cur, want cur itself", f.name, tt.cur, tt.value)
			}
			if ok && ddlOf(res) != "" {
				if err := schema.Validate([]schema.Field{{Name: "c", Type: res, Nullable: true}}); err != nil {
					t.Errorf("%s(%s, %s) = %s is not valid: %v", f.name, tt.cur, tt.value, ddlOf(res), err)
				}
			}
		}
		if fits := schema.Fits(cur, got); fits != (tt.extend == tt.cur) {
			t.Errorf("Fits(%s, %s) = %v, want %v (Extend keeps the type)", tt.cur, tt.value, fits, !fits)
		}
	}
}

func TestDecimalOf(t *testing.T) {
	for _, c := range []struct {
		text string
		want string // "" for false
	}{
		{"36.5", "DECIMAL(3,1)"},
		{"-0.25", "DECIMAL(2,2)"},
		{"007.10", "DECIMAL(3,2)"},
		{"12", "DECIMAL(2,0)"},
		{"1e3", ""},
		{"abc", ""},
		{"", ""},
		{"1.23456789012345678901234567890123456789", ""},
	} {
		got, ok := schema.DecimalOf([]byte(c.text))
		switch {
		case c.want == "" && ok:
			t.Errorf("DecimalOf(%q) = %v, want false", c.text, got)
		case c.want != "" && (!ok || got.String() != c.want):
			t.Errorf("DecimalOf(%q) = %v, %v; want %s", c.text, got, ok, c.want)
		}
	}
	w, ok := schema.Widen(&schema.Type{Kind: schema.Long}, &schema.Type{Kind: schema.Decimal, Precision: 3, Scale: 1})
	if !ok || w.String() != "DECIMAL(21,1)" {
		t.Errorf("Widen(BIGINT, DECIMAL(3,1)) = %v, %v; want DECIMAL(21,1)", w, ok)
	}
}
