package rows_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows/rowstest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// Encoded variants from the Parquet variant encoding: an empty metadata
// dictionary, the value null, and the INT8 42.
var (
	emptyMetadata = []byte{0x01, 0x00, 0x00}
	variantNull   = []byte{0x00}
	variantInt42  = []byte{0x0c, 0x2a}
)

// TestVariant checks the Parquet form of VARIANT columns (top level and as
// array elements), the versioned logical type in the footer, and the values
// written, null ones included.
func TestVariant(t *testing.T) {
	tVariant := &schema.Type{Kind: schema.Variant}
	b, err := rows.NewBuilder([]schema.Field{
		field("v", tVariant, true),
		field("l", &schema.Type{Kind: schema.Array, Elem: tVariant}, true),
		field("r", tVariant, false),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `message spark_schema {
	optional group v (VARIANT) {
		required binary metadata;
		required binary value;
	}
	optional group l (LIST) {
		repeated group list {
			optional group element (VARIANT) {
				required binary metadata;
				required binary value;
			}
		}
	}
	required group r (VARIANT) {
		required binary metadata;
		required binary value;
	}
}`
	if got := b.Schema().String(); got != want {
		t.Errorf("schema =\n%s\nwant\n%s", got, want)
	}

	b.Reset()
	add := rowAdder(t, b)
	add(func() {
		b.Field(0)
		b.Variant(emptyMetadata, variantInt42)
		b.Field(1)
		b.BeginList()
		b.Variant(emptyMetadata, variantNull)
		b.Null()
		b.EndList()
		b.Field(2)
		b.Variant(emptyMetadata, variantInt42)
	})
	add(func() {
		b.Field(2)
		b.Variant(emptyMetadata, variantNull)
	})

	var buf bytes.Buffer
	w := parquet.NewGenericWriter[any](&buf, b.Schema())
	if _, err := w.WriteRows(rowstest.Rows(b.Columns())); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	variants := 0
	for _, e := range f.Metadata().Schema {
		if vt, ok := e.LogicalType.Value.(*format.VariantType); ok {
			variants++
			if vt.SpecificationVersion != rows.VariantSpecVersion {
				t.Errorf("%s: specification_version = %d, want %d", e.Name, vt.SpecificationVersion, rows.VariantSpecVersion)
			}
		}
	}
	if variants != 3 {
		t.Errorf("%d VARIANT annotations in the footer, want 3", variants)
	}
	got := make([]parquet.Row, 2)
	n, _ := f.RowGroups()[0].Rows().ReadRows(got)
	if n != 2 {
		t.Fatalf("read %d rows, want 2", n)
	}
	var sb strings.Builder
	for _, r := range got[:n] {
		for _, v := range r {
			if v.IsNull() {
				sb.WriteString("null ")
			} else {
				fmt.Fprintf(&sb, "%d:%x ", v.Column(), v.ByteArray())
			}
		}
		sb.WriteString("| ")
	}
	if got, want := sb.String(), "0:010000 1:0c2a 2:010000 null 3:00 null 4:010000 5:0c2a | null null null null 4:010000 5:00 | "; got != want {
		t.Errorf("values = %q, want %q", got, want)
	}
}

// TestVariantMisuse checks that a VARIANT takes only Variant and Null, and
// that Variant goes only to a VARIANT.
func TestVariantMisuse(t *testing.T) {
	fields := []schema.Field{field("v", &schema.Type{Kind: schema.Variant}, true), field("i", tInt, true)}
	for _, tc := range []struct {
		name  string
		build func(b *rows.Builder)
		want  string
	}{
		{"bytes into a variant", func(b *rows.Builder) { b.Field(0); b.Bytes([]byte("x")) }, "v of type VARIANT cannot hold a 1 bytes value"},
		{"variant into an int", func(b *rows.Builder) { b.Field(1); b.Variant(emptyMetadata, variantNull) }, "i of type INT cannot hold a VARIANT value"},
	} {
		b, err := rows.NewBuilder(fields)
		if err != nil {
			t.Fatal(err)
		}
		b.Reset()
		b.BeginRow()
		tc.build(b)
		if err := b.EndRow(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: EndRow() = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}
