package changelog

import (
	"context"
	"errors"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode/decodetest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows/rowstest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// changelogFuzzLayouts are the changelog tables the fuzz targets decode
// into: inferred with event types (the columns some fixtures bring), and
// a declared schema with a tombstone delete row.
func changelogFuzzLayouts(format string) []*spec.Layout {
	on := true
	tr := &spec.Transformer{Format: format, DebeziumOptions: &spec.DebeziumOptions{SchemaInclude: &on},
		CanalOptions: &spec.CanalOptions{InferSchemaStrategy: spec.InferSchemaMySQLType, TableInclude: "p.*"}}
	inferred := changelogLayout(tr)
	inferred.Value.Fields = []schema.Field{null("id", tInt), null("weight", tDec(10, 3)), null("on_sale", tBool), null("born", tDate)}
	fixed := changelogLayout(&spec.Transformer{Format: format, JSONOptions: &spec.JSONOptions{Schema: "id INT, email STRING, at TIMESTAMP_NTZ",
		EmptyValueAsDelete: &on}})
	fixed.Value.Fields = []schema.Field{null("id", tInt), null("email", tString), null("at", tNTZ)}
	fixed.Value.Rescue = ""
	return []*spec.Layout{inferred, fixed}
}

// fuzzChangelog seeds f with the fixtures' values and fuzzes the envelope
// scanner of format: whatever the value, Decode does not panic, fails only
// with a decode.RecordError (a malformed event) or a decode.NewColumnsError
// (at the first record, before any row), gives rows that match the schema,
// and with SkipBad never fails on the record.
func fuzzChangelog(f *testing.F, format string, files ...string) {
	for _, name := range files {
		for _, r := range fixture(f, name) {
			f.Add(r.Value)
		}
	}
	for _, v := range []string{``, `{}`, `null`, `{"payload":{"payload":{}}}`, `{"op":"c","after":{"id":"x"}}`,
		`{"type":"INSERT","data":[{"id":"1"},null,{"id":"1e3"}],"table":"p\u0031"}`, `{"isDdl":true,"sql":"ALTER TABLE t ADD (`,
		`{"op":"d","before":null,"source":{"ts_ms":-9223372036854775808,"db":"\ud800"}}`} {
		f.Add([]byte(v))
	}
	var decoders []*decode.Decoder
	for _, l := range changelogFuzzLayouts(format) {
		d, err := New(l, nil)
		if err != nil {
			f.Fatal(err)
		}
		decoders = append(decoders, d)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		recs := []record.Record{{Value: data}, {Value: data}}
		for _, d := range decoders {
			d.SetOptions(decode.Options{})
			b, err := d.Decode(context.Background(), recs)
			var re *decode.RecordError
			var nc *decode.NewColumnsError
			switch {
			case err == nil:
				if len(rowstest.Rows(b.Columns)) != b.Rows || b.Rows%2 != 0 {
					t.Fatalf("%d rows for two equal records", b.Rows)
				}
				for i, row := range rowstest.Rows(b.Columns) {
					if _, err := rowstest.Render(d.Schema(), row); err != nil {
						t.Fatalf("row %d does not match the schema: %v", i, err)
					}
				}
			case errors.As(err, &nc):
				// The first of two equal records asks what the second
				// would: the batch stops before it, with no rows.
				if nc.Record != 0 || b.Rows != 0 {
					t.Fatalf("new columns asked at record %d with %d rows before, want 0 and 0", nc.Record, b.Rows)
				}
			case errors.As(err, &re):
			default:
				t.Fatalf("Decode: %v", err)
			}
			d.SetOptions(decode.Options{SkipBad: true})
			if _, err := d.Decode(context.Background(), recs); err != nil && !errors.As(err, &nc) {
				t.Fatalf("Decode with SkipBad: %v", err)
			}
		}
	})
}

// FuzzDebeziumEnvelope fuzzes the DEBEZIUM_JSON envelope scanner.
func FuzzDebeziumEnvelope(f *testing.F) {
	fuzzChangelog(f, spec.FormatDebeziumJSON, "debezium-mysql-customers.jsonl", "debezium-mysql-customers-schema.jsonl",
		"debezium-postgres-customers.jsonl")
}

// FuzzCanalEnvelope fuzzes the CANAL_JSON envelope scanner and its DDL
// reader.
func FuzzCanalEnvelope(f *testing.F) {
	fuzzChangelog(f, spec.FormatCanalJSON, "canal-products.jsonl")
}

// FuzzDDL fuzzes the MySQL DDL reader: it never panics.
func FuzzDDL(f *testing.F) {
	for _, s := range []string{"CREATE TABLE t (a int, b decimal(1,2), PRIMARY KEY (a))", "ALTER TABLE t ADD (x INT, y", "`", "'", "/*", "ALTER TABLE t ADD"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		for _, c := range ddlColumns(sql, true, false) {
			if c.name == "" || c.typ == nil {
				t.Fatalf("column %+v", c)
			}
		}
	})
}

// changelogBench returns the fixture's records repeated to benchBatch.
func changelogBench(b *testing.B, name string) []record.Record {
	src := fixture(b, name)
	recs := make([]record.Record, 0, benchBatch)
	for len(recs) < benchBatch {
		recs = append(recs, src[len(recs)%len(src)])
	}
	return recs
}

// settled returns layout once its value has every column recs ask.
func settled(b *testing.B, l *spec.Layout, recs []record.Record) *spec.Layout {
	for range 5 {
		d, err := New(l, nil)
		if err != nil {
			b.Fatal(err)
		}
		_, err = d.Decode(context.Background(), recs)
		var nc *decode.NewColumnsError
		if !errors.As(err, &nc) {
			return l
		}
		l.Value.Fields, _ = nc.Apply(l.Value.Fields)
	}
	b.Fatal("the columns never settled")
	return nil
}

// BenchmarkDecodeChangelog measures decoding change events; allocs/record
// is per event.
func BenchmarkDecodeChangelog(b *testing.B) {
	for _, tc := range []struct {
		name, file string
		tr         *spec.Transformer
	}{
		{"debezium", "debezium-mysql-customers.jsonl", debezium(false)},
		{"debezium-schema", "debezium-mysql-customers-schema.jsonl", debezium(true)},
		{"canal", "canal-products.jsonl", canal(&spec.CanalOptions{InferSchemaStrategy: spec.InferSchemaMySQLType})},
	} {
		b.Run(tc.name, func(b *testing.B) {
			recs := changelogBench(b, tc.file)
			var size int64
			for _, r := range recs {
				size += int64(len(r.Key) + len(r.Value))
			}
			d, err := New(settled(b, changelogLayout(tc.tr), recs), nil)
			if err != nil {
				b.Fatal(err)
			}
			decodetest.Bench(b, len(recs), size, func() (int, error) {
				batch, err := d.Decode(context.Background(), recs)
				return batch.Corrupt, err
			})
		})
	}
}

// TestChangelogAllocs fails when steady-state decoding of change events
// allocates. DDL events, rare, are left out: reading their statement
// allocates.
func TestChangelogAllocs(t *testing.T) {
	canalRows := fixture(t, "canal-products.jsonl")[1:4]
	for _, tc := range []struct {
		name string
		recs []record.Record
		tr   *spec.Transformer
	}{
		{"debezium", fixture(t, "debezium-mysql-customers.jsonl"), debezium(false)},
		{"debezium-schema", fixture(t, "debezium-mysql-customers-schema.jsonl"), debezium(true)},
		// Without table_include: regexp keeps its matchers in a
		// sync.Pool, which the race detector empties at random.
		{"canal", canalRows, canal(&spec.CanalOptions{InferSchemaStrategy: spec.InferSchemaMySQLType})},
	} {
		l := changelogLayout(tc.tr)
		evolve(t, l, decode.Options{}, tc.recs)
		d, err := New(l, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = d.Decode(context.Background(), tc.recs) // warm up the buffers
		if allocs := testing.AllocsPerRun(10, func() { _, _ = d.Decode(context.Background(), tc.recs) }); allocs > 0 {
			t.Errorf("%s: %v allocations per batch of %d events, want 0", tc.name, allocs, len(tc.recs))
		}
	}
}
