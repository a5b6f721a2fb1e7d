package schema_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// FuzzParseHints checks that ParseHints never panics, that its errors are
// *ParseError inside the input, and that what it accepts prints back
// (Hint.String) to the same hints and applies to no columns as a valid
// schema.
func FuzzParseHints(f *testing.F) {
	for _, tt := range goodHints {
		f.Add(tt.hints)
	}
	for _, tt := range badHints {
		f.Add(tt.hints)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hints, err := schema.ParseHints(s)
		if err != nil {
			var pe *schema.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("ParseHints(%q) error %T %v, want *schema.ParseError", s, err, err)
			}
			if pe.Offset < 0 || pe.Offset > len(s) || pe.Line < 1 || pe.Column < 1 {
				t.Fatalf("ParseHints(%q) error position offset %d, line %d, column %d is outside the input", s, pe.Offset, pe.Line, pe.Column)
			}
			return
		}
		printed := make([]string, len(hints))
		for i, h := range hints {
			printed[i] = h.String()
		}
		canonical := strings.Join(printed, ", ")
		again, err := schema.ParseHints(canonical)
		if err != nil {
			t.Fatalf("ParseHints(%q) printed as %q, which does not parse: %v", s, canonical, err)
		}
		if len(again) != len(hints) {
			t.Fatalf("ParseHints(%q) printed as %q parses to %d hints, want %d", s, canonical, len(again), len(hints))
		}
		for i := range hints {
			if again[i].String() != printed[i] || !again[i].Type.Equal(hints[i].Type) || strings.Join(again[i].Path, "\x00") != strings.Join(hints[i].Path, "\x00") {
				t.Fatalf("hint %d of %q printed as %q parses to %q", i, s, printed[i], again[i].String())
			}
		}
		fields, err := schema.ApplyHints(nil, hints)
		if err != nil {
			t.Fatalf("ApplyHints(nil, ParseHints(%q)): %v", s, err)
		}
		if err := schema.Validate(fields); err != nil {
			t.Fatalf("ApplyHints(nil, ParseHints(%q)) = %s is not valid: %v", s, schema.FormatDDL(fields), err)
		}
	})
}

// FuzzInferrerAdd checks that Inferrer.Add never panics, that a record it
// refuses changes nothing, that the schema is always valid and nullable,
// that adding a record again changes nothing, and that InferValue agrees
// with Add on whether a record is a well-formed object.
func FuzzInferrerAdd(f *testing.F) {
	for _, r := range inferCorpus {
		f.Add([]byte(r), true, false, true)
	}
	f.Add([]byte(`{"a":`+strings.Repeat("[", 70)+strings.Repeat("]", 70)+`}`), true, true, false)
	f.Add([]byte(`{"a":1} x`), false, false, false)
	f.Add([]byte(`[1]`), true, false, false)
	f.Add([]byte(`{'a':'it\'s',"b":[NaN,-Infinity,+INF]}`), true, false, true)
	f.Fuzz(func(t *testing.T, record []byte, stringTypes, primitiveAsString, lenient bool) {
		opts := schema.InferOptions{StringTypeInference: stringTypes, PrimitiveAsString: primitiveAsString,
			AllowSingleQuotes: lenient, AllowNonNumericNumbers: lenient}
		in := schema.NewInferrer(opts)
		if err := in.Add([]byte(seedRecord)); err != nil {
			t.Fatal(err)
		}
		before := schema.FormatDDL(in.Fields())
		err := in.Add(record)
		after := schema.FormatDDL(in.Fields())
		if err != nil {
			if after != before {
				t.Fatalf("Add(%q) failed (%v) but changed the schema from %s to %s", record, err, before, after)
			}
		} else if err := in.Add(record); err != nil || schema.FormatDDL(in.Fields()) != after {
			t.Fatalf("Add(%q) again: %v, schema %s, was %s", record, err, schema.FormatDDL(in.Fields()), after)
		}
		fields := in.Fields()
		if err := schema.Validate(fields); err != nil {
			t.Fatalf("after Add(%q), Fields() = %s is not valid: %v", record, schema.FormatDDL(fields), err)
		}
		for _, f := range fields {
			if !f.Nullable {
				t.Fatalf("after Add(%q), column %s is not nullable", record, f.Name)
			}
		}
		v, verr := schema.InferValue(record, opts)
		if verr != nil || v == nil || v.Kind != schema.Struct {
			return
		}
		if err != nil {
			t.Fatalf("InferValue(%q) = %s, but Add refused it: %v", record, v, err)
		}
		// Folding records in place and unifying their types agree (but
		// for empty strings, which InferValue types as STRING, and for
		// values too deep to be columns, which InferValue, whose value is
		// one level deeper than a record's fields, cuts a level earlier).
		if bytes.Contains(record, []byte(`""`)) || bytes.Contains(record, []byte(`''`)) || depth(v) >= schema.MaxDepth {
			return
		}
		seed, err := schema.InferValue([]byte(seedRecord), opts)
		if err != nil {
			t.Fatal(err)
		}
		unified, _ := schema.Canonical(schema.Unify(seed, v))
		if got := schema.FormatDDL(fields); got != schema.FormatDDL(unified.Fields) {
			t.Fatalf("Add(%q) gives %s, Unify of the values' types %s", record, got, schema.FormatDDL(unified.Fields))
		}
	})
}

// depth returns how deeply t nests.
func depth(t *schema.Type) int {
	d := 0
	switch {
	case t == nil:
	case t.Kind == schema.Array:
		d = depth(t.Elem)
	case t.Kind == schema.Struct:
		for _, f := range t.Fields {
			d = max(d, depth(f.Type))
		}
	}
	return d + 1
}

// seedRecord is the record FuzzInferrerAdd adds first.
const seedRecord = `{"seed":{"x":1}}`

// inferCorpus are records of every shape inference meets; the fuzz target
// and the benchmark start from them.
var inferCorpus = []string{
	`{}`,
	`{"id":1,"name":"a","price":2.5,"ok":true,"none":null}`,
	`{"ts":"2024-01-02T03:04:05.123Z","day":"2024-01-02","big":123456789012345678901234}`,
	`{"user":{"name":"x","dob":"1990-01-01","tags":["a","b"],"addr":{"city":"c","zip":null}}}`,
	`{"a":[],"b":[null],"c":[{}],"d":[[1],[2.5]],"e":{"":1}}`,
	`{"Id":1,"id":"x","ID":{"a":1}}`,
	`{"esc\u00e9\n":"\ud83d\ude00","bad\ud800":""}`,
	"{\"a\xff\":\"\xfe\"}",
}

// TestInferredSchemaHoldsItsRecords checks that every record an inferred
// schema comes from fits it, when the records hold no empty strings (which
// inference ignores) and no keys that differ only in case (whose values
// are rescued).
func TestInferredSchemaHoldsItsRecords(t *testing.T) {
	t.Parallel()
	records := []string{
		`{"id":1,"name":"a","price":2,"tags":[],"user":{"dob":"1990-01-01"}}`,
		`{"id":2,"price":2.5,"tags":["x"],"user":{"dob":"1990-01-01T00:00:00Z","zip":12345},"new":null}`,
		`{"id":99999999999999999999,"name":true,"tags":[1,{"a":1}],"user":{"dob":"soon"},"deep":[[[{"x":[1.5]}]]]}`,
		`{"new":{"a":[null]},"obj":{}}`,
	}
	for _, opts := range []schema.InferOptions{inferOn, inferOff, {PrimitiveAsString: true}} {
		in := schema.NewInferrer(opts)
		for _, r := range records {
			if err := in.Add([]byte(r)); err != nil {
				t.Fatal(err)
			}
		}
		table := &schema.Type{Kind: schema.Struct, Fields: in.Fields()}
		for _, r := range records {
			v, err := schema.InferValue([]byte(r), opts)
			if err != nil {
				t.Fatal(err)
			}
			if !schema.Fits(table, v) {
				t.Errorf("%+v: the inferred schema %s does not hold %s", opts, table, r)
			}
		}
	}
}

// TestInferrerAddAllocs checks that adding records whose fields and types
// are known allocates nothing.
func TestInferrerAddAllocs(t *testing.T) {
	in := schema.NewInferrer(inferOn)
	for _, r := range benchRecords {
		if err := in.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(100, func() {
		for _, r := range benchRecords {
			_ = in.Add(r)
		}
	})
	if allocs != 0 {
		t.Errorf("Add allocates %v times per known record pair, want 0", allocs)
	}
}

// benchRecords are typical records of one schema.
var benchRecords = [][]byte{
	[]byte(`{"id":12345,"name":"alice","price":19.99,"ok":true,"ts":"2024-01-02T03:04:05.123Z","tags":["a","b"],"user":{"city":"Paris","zip":"75001"}}`),
	[]byte(`{"id":12346,"name":"bob","price":5,"ok":false,"ts":"2024-01-02T03:04:06Z","tags":[],"user":{"city":"Lyon","zip":null},"esc\u00e9":"\n"}`),
}

// BenchmarkInferrerAdd measures folding typical records, whose schema is
// already known, into an Inferrer.
func BenchmarkInferrerAdd(b *testing.B) {
	records := benchRecords
	in := schema.NewInferrer(inferOn)
	size := 0
	for _, r := range records {
		size += len(r)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range records {
			if err := in.Add(r); err != nil {
				b.Fatal(err)
			}
		}
	}
}
