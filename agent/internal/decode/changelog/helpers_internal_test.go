package changelog

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows/rowstest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The column types the tests declare.
var (
	tBool   = &schema.Type{Kind: schema.Boolean}
	tInt    = &schema.Type{Kind: schema.Int}
	tLong   = &schema.Type{Kind: schema.Long}
	tDouble = &schema.Type{Kind: schema.Double}
	tString = &schema.Type{Kind: schema.String}
	tBinary = &schema.Type{Kind: schema.Binary}
	tDate   = &schema.Type{Kind: schema.Date}
	tNTZ    = &schema.Type{Kind: schema.TimestampNTZ}
)

func tDec(p, s int) *schema.Type { return &schema.Type{Kind: schema.Decimal, Precision: p, Scale: s} }

func null(name string, t *schema.Type) schema.Field {
	return schema.Field{Name: name, Type: t, Nullable: true}
}

// names returns the names of fs, comma-separated.
func names(fs []schema.Field) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return strings.Join(out, ",")
}

// pick returns the values of cols in m, space-separated.
func pick(m map[string]string, cols ...string) string {
	var out []string
	for _, c := range cols {
		v, ok := m[c]
		if !ok {
			v = "<none>"
		}
		out = append(out, v)
	}
	return strings.Join(out, " ")
}

func quoteBytes(b []byte) string { return fmt.Sprintf("%q", b) }

// layoutOf returns the layout of tbl, which must be valid.
func layoutOf(t *testing.T, tbl *spec.Table) *spec.Layout {
	t.Helper()
	l, errs := tbl.Layout()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return l
}

// inferredValue is the layout of a table whose JSON value is inferred in
// mode, with columns fs so far.
func inferredValue(mode string, fs ...schema.Field) *spec.Layout {
	tr := &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{SchemaEvolutionMode: mode}}
	return &spec.Layout{
		Key:            spec.Part{Column: spec.KeyColumn},
		Value:          spec.Part{Format: spec.FormatJSON, Transformer: tr, Fields: fs, Column: spec.ValueColumn, Rescue: tr.JSONOptions.RescueColumn()},
		MetadataColumn: "_kafka",
		CorruptRecord:  true,
	}
}

// renderBatch renders the rows of b, which d decoded.
func renderBatch(t *testing.T, d *decode.Decoder, b *decode.Batch) []map[string]string {
	t.Helper()
	rs := rowstest.Rows(b.Columns)
	if len(rs) != b.Rows {
		t.Fatalf("the batch's columns hold %d rows, Rows says %d", len(rs), b.Rows)
	}
	out := make([]map[string]string, len(rs))
	for i, row := range rs {
		var err error
		if out[i], err = rowstest.Render(d.Schema(), row); err != nil {
			t.Fatal(err)
		}
	}
	b.Columns = nil
	return out
}

// benchBatch is the number of records per Decode call in the benchmarks.
const benchBatch = 1000

// benchDecode measures decoding recs, benchBatch records, with layout.
func benchDecode(b *testing.B, layout *spec.Layout, recs []decode.Record) {
	var size int64
	for _, r := range recs {
		size += int64(len(r.Key) + len(r.Value))
	}
	d, err := New(layout, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		batch, err := d.Decode(context.Background(), recs)
		if err != nil {
			b.Fatal(err)
		}
		if batch.Corrupt > 0 {
			b.Fatalf("%d of %d records are corrupt", batch.Corrupt, len(recs))
		}
	}
	b.ReportMetric(float64(b.N)*benchBatch/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(testing.AllocsPerRun(1, func() { d.Decode(context.Background(), recs) }))/benchBatch, "allocs/record")
}
