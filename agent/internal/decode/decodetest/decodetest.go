// Package decodetest holds what the tests of package decode and of its
// sub-packages share: rendering the rows of a decoded batch, picking
// values and column names out of them, and measuring a decoder. It belongs
// to the decode step of the data flow (Kafka -> ingest/decode -> writers)
// and is imported by tests only.
package decodetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows/rowstest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Render renders each of the rows a batch holds in columns (as
// [rowstest.Rows] reads them), of Parquet schema s: a map of column to
// value text per row. It fails t when the columns do not hold rows rows
// or a row does not match s.
func Render(t testing.TB, s *parquet.Schema, columns [][]parquet.Value, rows int) []map[string]string {
	t.Helper()
	rs := rowstest.Rows(columns)
	if len(rs) != rows {
		t.Fatalf("the batch's columns hold %d rows, Rows says %d", len(rs), rows)
	}
	out := make([]map[string]string, len(rs))
	for i, row := range rs {
		var err error
		if out[i], err = rowstest.Render(s, row); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// Pick returns the values of cols in m, space-separated, "<none>" for a
// column m lacks.
func Pick(m map[string]string, cols ...string) string {
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

// Names returns the names of fs, comma-separated.
func Names(fs []schema.Field) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return strings.Join(out, ",")
}

// Bench measures decode, which decodes a batch of records records of size
// bytes in all and returns how many were corrupt: besides time and bytes,
// it reports records/s and allocs/record, and fails b when a record is
// corrupt or decode fails.
func Bench(b *testing.B, records int, size int64, decode func() (corrupt int, err error)) {
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		corrupt, err := decode()
		if err != nil {
			b.Fatal(err)
		}
		if corrupt > 0 {
			b.Fatalf("%d of %d records are corrupt", corrupt, records)
		}
	}
	b.ReportMetric(float64(b.N)*float64(records)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(testing.AllocsPerRun(1, func() { _, _ = decode() })/float64(records), "allocs/record")
}

// Layout returns the layout of tbl, failing t when tbl is not valid.
func Layout(t testing.TB, tbl *spec.Table) *spec.Layout {
	t.Helper()
	l, errs := tbl.Layout()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return l
}

// QuoteBytes spells b as a Go string literal, as rendered BINARY values
// are.
func QuoteBytes(b []byte) string { return fmt.Sprintf("%q", b) }
