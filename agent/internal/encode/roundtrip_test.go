package encode_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode/changelog"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/encode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Round trips: rows a decoder built are encoded by the sink's encoders and
// decoded again by this agent's own decoders (DEBEZIUM_JSON, CANAL_JSON,
// JSON), which must give the same rows: same operations, source tables,
// times and values, and with include_schema the same column types.

// layoutOf returns the layout of a table of topic "src" whose value
// transformer is value and key transformer key (nil for BINARY).
func layoutOf(t testing.TB, key, value *spec.Transformer, tc spec.TableConfiguration) *spec.Layout {
	t.Helper()
	tbl := &spec.Table{DestinationTable: "t", TableConfiguration: tc, ConnectorOptions: spec.ConnectorOptions{
		KafkaOptions: spec.KafkaOptions{Topics: []string{"src"}, KeyTransformer: key, ValueTransformer: value}}}
	l, errs := tbl.Layout()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return l
}

// decodeRows decodes recs with a decoder of l, adding the columns an
// inferred part asks for as the agent does, and returns their rows.
func decodeRows(t *testing.T, l *spec.Layout, recs []record.Record) []encode.Row {
	t.Helper()
	for range 10 {
		d, err := changelog.New(l, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := d.Decode(context.Background(), recs)
		var nc *decode.NewColumnsError
		switch {
		case errors.As(err, &nc) && nc.Side == "value":
			l.Value.Fields = nc.Fields
			continue
		case errors.As(err, &nc):
			l.Key.Fields = nc.Fields
			continue
		case err != nil:
			t.Fatal(err)
		}
		if b.Corrupt > 0 || len(b.Bad) > 0 {
			t.Fatalf("%d corrupt records, bad %v", b.Corrupt, b.Bad)
		}
		rows, err := encode.Rows(l, l.Columns(), &b, recs)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	t.Fatal("the columns kept changing")
	return nil
}

// encodeRows returns the records enc makes of rows, on topic "out".
func encodeRows(t *testing.T, enc encode.Encoder, rows []encode.Row) []record.Record {
	t.Helper()
	recs := make([]record.Record, len(rows))
	for i := range rows {
		v, err := enc.Value(nil, &rows[i])
		if err != nil {
			t.Fatal(err)
		}
		recs[i] = record.Record{Topic: "out", Offset: int64(i), Key: enc.Key(&rows[i]), Value: v, Headers: rows[i].Headers}
	}
	return recs
}

// sameRows fails t unless got and want have the same operations (r as
// opAs), source tables, times (any when want has none: an event then
// carries the time it was written), column names and values, and, with
// types, the same column types.
func sameRows(t *testing.T, got, want []encode.Row, types bool, opAs byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := &got[i], &want[i]
		op := w.Op
		if op == 'r' && opAs != 0 {
			op = opAs
		}
		if g.Op != op || g.DB != w.DB || g.Table != w.Table || !w.TS.IsZero() && !g.TS.Equal(w.TS) || string(g.Key) != string(w.Key) {
			t.Errorf("row %d: %c %s.%s at %v key %s, want %c %s.%s at %v key %s", i, g.Op, g.DB, g.Table, g.TS, g.Key,
				op, w.DB, w.Table, w.TS, w.Key)
		}
		gf, wf := schema.FormatDDL(nullable(g.Fields)), schema.FormatDDL(nullable(w.Fields))
		if types && gf != wf {
			t.Fatalf("row %d: columns %s, want %s", i, gf, wf)
		}
		if !reflect.DeepEqual(g.Values, w.Values) {
			t.Errorf("row %d: values %#v, want %#v", i, g.Values, w.Values)
		}
	}
}

// nullable returns fields all nullable, as decoded columns are.
func nullable(fields []schema.Field) []schema.Field {
	out := make([]schema.Field, len(fields))
	for i, f := range fields {
		out[i] = schema.Nullable(f)
	}
	return out
}

// customers are Debezium change events of a MySQL inventory.customers
// table, in the shape of Debezium's tutorial: a snapshot read, an insert,
// an update, a delete and its tombstone.
var customers = []record.Record{
	{Topic: "src", Offset: 0, Key: []byte(`{"id":1001}`), Value: []byte(`{"before":null,` +
		`"after":{"id":1001,"first_name":"Sally","last_name":"Thomas","email":"sally.thomas@acme.com"},` +
		`"source":{"version":"2.5.0.Final","connector":"mysql","name":"dbserver1","ts_ms":1700000000000,"snapshot":"true",` +
		`"db":"inventory","table":"customers"},"op":"r","ts_ms":1700000000100}`)},
	{Topic: "src", Offset: 1, Key: []byte(`{"id":1005}`), Value: []byte(`{"before":null,` +
		`"after":{"id":1005,"first_name":"Sarah","last_name":"Kemp","email":"sk@\"quoted\".com\n"},` +
		`"source":{"ts_ms":1700000001000,"db":"inventory","table":"customers"},"op":"c","ts_ms":1700000001100}`),
		Headers: []record.Header{{Key: "trace", Value: []byte("t1")}}},
	{Topic: "src", Offset: 2, Key: []byte(`{"id":1005}`), Value: []byte(`{` +
		`"before":{"id":1005,"first_name":"Sarah","last_name":"Kemp","email":"sk@\"quoted\".com\n"},` +
		`"after":{"id":1005,"first_name":"Sarah","last_name":"Kemp","email":"sarah@kemp.com"},` +
		`"source":{"ts_ms":1700000002000,"db":"inventory","table":"customers"},"op":"u","ts_ms":1700000002100}`)},
	{Topic: "src", Offset: 3, Key: []byte(`{"id":1002}`), Value: []byte(`{` +
		`"before":{"id":1002,"first_name":"George","last_name":"Bailey","email":null},"after":null,` +
		`"source":{"ts_ms":1700000003000,"db":"inventory","table":"customers"},"op":"d","ts_ms":1700000003100}`)},
	{Topic: "src", Offset: 4, Key: []byte(`{"id":1002}`), Value: nil},
}

const customersDDL = "id INT, first_name STRING, last_name STRING, email STRING"

func TestRoundTripDebezium(t *testing.T) {
	for _, format := range []string{spec.FormatDebeziumJSON, spec.FormatCanalJSON} {
		t.Run(format, func(t *testing.T) {
			src := layoutOf(t, nil, &spec.Transformer{Format: spec.FormatDebeziumJSON, JSONOptions: &spec.JSONOptions{Schema: customersDDL}},
				spec.TableConfiguration{})
			rows := decodeRows(t, src, customers)
			if len(rows) != 4 || rows[0].Op != 'r' || rows[3].Op != 'd' || rows[0].DB != "inventory" || rows[0].Table != "customers" ||
				rows[1].TS.UnixMilli() != 1700000001000 || string(rows[3].Key) != `{"id":1002}` || rows[1].Headers[0].Key != "trace" {
				t.Fatalf("source rows: %+v", rows)
			}
			if rows[3].Values[0] != int32(1002) || rows[3].Values[3] != nil {
				t.Fatalf("the delete's row image: %#v", rows[3].Values)
			}
			out := encodeRows(t, encode.New(&spec.KafkaSink{ValueFormat: format}), rows)
			back := layoutOf(t, nil, &spec.Transformer{Format: format, JSONOptions: &spec.JSONOptions{Schema: customersDDL}},
				spec.TableConfiguration{})
			var opAs byte
			if format == spec.FormatCanalJSON {
				opAs = 'c' // Canal has no snapshot reads
			}
			sameRows(t, decodeRows(t, back, out), rows, true, opAs)
		})
	}
}

// typedDDL has a column of most types.
const typedDDL = "id INT, small SMALLINT, n BIGINT, price DECIMAL(10,2), big DECIMAL(30,4), score DOUBLE, ratio FLOAT, ok BOOLEAN, " +
	"born DATE, seen TIMESTAMP, local TIMESTAMP_NTZ, raw BINARY, tags ARRAY<STRING>, addr STRUCT<city: STRING, zip: INT>"

// typed are JSON records of typedDDL.
var typed = []record.Record{
	{Topic: "src", Offset: 7, Key: []byte("k1"), Value: []byte(`{"id":1,"small":-3,"n":9007199254740993,"price":-12.5,` +
		`"big":"-12345678901234567890.1234","score":1.5e10,"ratio":0.25,"ok":true,"born":"1969-12-31",` +
		`"seen":"2024-02-03T04:05:06.123456Z","local":"2024-02-03T04:05:06.5","raw":"AAEC/w==","tags":["a",null,"c"],` +
		`"addr":{"city":"Zürich \"\\ \u0001","zip":8000}}`)},
	{Topic: "src", Offset: 8, Key: nil, Value: []byte(`{"id":2,"tags":[],"addr":null}`)},
}

// TestRoundTripTyped: JSON rows of many types written as Debezium events
// with their Connect schema are read back with schema_include into the
// same types and values; written as JSON, into the same values.
func TestRoundTripTyped(t *testing.T) {
	src := layoutOf(t, nil, &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: typedDDL}},
		spec.TableConfiguration{SourceMetadataColumn: "meta"})
	rows := decodeRows(t, src, typed)
	if len(rows) != 2 || rows[0].Op != 'c' || rows[0].Table != "" || rows[0].Topic != "src" || len(rows[0].Fields) != 14 {
		t.Fatalf("source rows: %+v", rows)
	}
	if got := rows[0].Values[3]; got != "-12.50" {
		t.Fatalf("a DECIMAL(10,2) value is %#v, want \"-12.50\"", got)
	}
	yes := true
	t.Run("debezium schema", func(t *testing.T) {
		out := encodeRows(t, encode.New(&spec.KafkaSink{IncludeSchema: &yes}), rows)
		back := layoutOf(t, nil, &spec.Transformer{Format: spec.FormatDebeziumJSON,
			DebeziumOptions: &spec.DebeziumOptions{SchemaInclude: &yes},
			JSONOptions:     &spec.JSONOptions{SchemaEvolutionMode: spec.SchemaEvolutionAddNewColumns}}, spec.TableConfiguration{})
		got := decodeRows(t, back, out)
		// The events name the source topic as their table.
		for i := range got {
			if got[i].Table != "src" || got[i].DB != "" {
				t.Fatalf("row %d: table %q.%q, want the source topic", i, got[i].DB, got[i].Table)
			}
			got[i].Table, got[i].Topic = "", "src"
		}
		sameRows(t, got, rows, true, 0)
	})
	t.Run("json", func(t *testing.T) {
		out := encodeRows(t, encode.New(&spec.KafkaSink{ValueFormat: spec.SinkFormatJSON}), rows)
		back := layoutOf(t, nil, &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: typedDDL}},
			spec.TableConfiguration{})
		sameRows(t, decodeRows(t, back, out), rows, true, 0)
	})
}

// FuzzEncode decodes the fuzzer's bytes as a JSON value of typedDDL and
// as a Debezium event, and checks that every encoder writes the rows as
// valid JSON, without panicking.
func FuzzEncode(f *testing.F) {
	for _, r := range typed {
		f.Add(r.Value)
	}
	for _, r := range customers {
		f.Add(r.Value)
	}
	yes := true
	encoders := []encode.Encoder{
		encode.New(&spec.KafkaSink{}), encode.New(&spec.KafkaSink{IncludeSchema: &yes, KeepChangedFieldsOnly: &yes}),
		encode.New(&spec.KafkaSink{ValueFormat: spec.SinkFormatCanalJSON}), encode.New(&spec.KafkaSink{ValueFormat: spec.SinkFormatJSON}),
	}
	f.Fuzz(func(t *testing.T, value []byte) {
		for _, tr := range []*spec.Transformer{
			{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: typedDDL}},
			{Format: spec.FormatDebeziumJSON, JSONOptions: &spec.JSONOptions{Schema: customersDDL}},
		} {
			l := layoutOf(t, nil, tr, spec.TableConfiguration{})
			d, err := changelog.New(l, nil)
			if err != nil {
				t.Fatal(err)
			}
			recs := []record.Record{{Topic: "src", Value: value}}
			b, err := d.Decode(t.Context(), recs)
			if err != nil {
				continue // a malformed change event stops the batch
			}
			rows, err := encode.Rows(l, l.Columns(), &b, recs)
			if err != nil {
				t.Fatal(err)
			}
			for i := range rows {
				for _, enc := range encoders {
					out, err := enc.Value(nil, &rows[i])
					if err != nil {
						t.Fatal(err)
					}
					if out != nil && !json.Valid(out) {
						t.Fatalf("invalid JSON %q from %q", out, value)
					}
				}
			}
		}
	})
}

// typedBatch returns the layout of the typed test table and 50 copies of
// the typed records decoded into it.
func typedBatch(b *testing.B) (*spec.Layout, decode.Batch, []record.Record) {
	b.Helper()
	l := layoutOf(b, nil, &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: typedDDL}},
		spec.TableConfiguration{})
	var recs []record.Record
	for range 50 {
		recs = append(recs, typed...)
	}
	batch := decodeAll(b, l, recs)
	return l, batch, recs
}

// BenchmarkEncode measures assembling the rows of decoded typed records
// and writing them, per value format, into a reused buffer.
func BenchmarkEncode(b *testing.B) {
	l, batch, recs := typedBatch(b)
	yes := true
	for name, s := range map[string]*spec.KafkaSink{
		"debezium": {}, "debezium schema": {IncludeSchema: &yes},
		"canal": {ValueFormat: spec.SinkFormatCanalJSON}, "json": {ValueFormat: spec.SinkFormatJSON},
	} {
		b.Run(name, func(b *testing.B) {
			enc := encode.New(s)
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				rows, err := encode.Rows(l, l.Columns(), &batch, recs)
				if err != nil {
					b.Fatal(err)
				}
				for i := range rows {
					if buf, err = enc.Value(buf[:0], &rows[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
