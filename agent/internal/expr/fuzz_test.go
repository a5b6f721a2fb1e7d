package expr

import (
	"errors"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
)

// FuzzCompileEval compiles arbitrary source and evaluates what compiles on
// the sample and the NULL record: nothing panics, errors are *Error with a
// position inside the source, and a value has the program's type.
func FuzzCompileEval(f *testing.F) {
	for _, seed := range []string{
		`cast(value as string):event_type::string`,
		`topic = 'x' AND partition > 1`,
		`CASE partition WHEN 1 THEN 'a' ELSE topic || '_' || offset END`,
		`coalesce(try_cast(key AS INT), -1) IN (1, NULL, '3')`,
		`topic LIKE 'a\\%b%' ESCAPE '\\'`,
		`value::string:['k k'][0].a`,
		`headers[0].key || cast(timestamp AS DATE)`,
		`if(NOT partition BETWEEN 1 AND 2, 1 / 0, 2147483647 + 1)`,
		"`topic` <=> NULL /* c */ -- d",
		`cast('2024-01-02 03:04:05+01:00' AS TIMESTAMP) > '2024'`,
		`'\u00e9\101' || r'\n' || 1e3 || 7L || .5D`,
		`test_upper(test_fail())`,
		// functions.go's, unknown until it is merged
		"lower(topic) || concat_ws('_', split(topic, 'r'))",
		`regexp_extract(topic, '(o)', 1) || substring(topic, -2, 5)`,
		`element_at(headers, 1).key || date_format(timestamp, 'yyyy-MM')`,
		`get_json_object(cast(value AS STRING), '$.a[0]')`,
	} {
		f.Add(seed, []byte("42"), []byte(`{"event_type":"click","a":[{"b":1}],"k k":"v"}`), int64(7), int64(1_700_000_000_000))
	}
	f.Add(`element_at(split(topic, 'e'), cast(cast(key AS STRING) AS BIGINT))`, []byte("-9223372036854775808"), []byte(nil),
		int64(0), int64(0))
	// The source and a record's key, value, offset and timestamp (ms) vary.
	f.Fuzz(func(t *testing.T, src string, key, value []byte, offset, ts int64) {
		p, err := Compile(src)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%q: %T %v, want *Error", src, err, err)
			}
			if e.Pos < 0 || e.Pos > len(src) {
				t.Fatalf("%q: position %d outside the source", src, e.Pos)
			}
			_ = err.Error()
			return
		}
		fuzzed := sample()
		fuzzed.Key, fuzzed.Value, fuzzed.Offset, fuzzed.Timestamp = key, value, offset, time.UnixMilli(ts).UTC()
		for _, r := range []*record.Record{sample(), nullRecord(), fuzzed} {
			v, err := p.Eval(r)
			if err == nil && !v.Null && v.Type != p.Type() {
				t.Fatalf("%q: a %s value from a %s program", src, v.Type, p.Type())
			}
			_, _, _ = p.EvalString(r)
		}
	})
}
