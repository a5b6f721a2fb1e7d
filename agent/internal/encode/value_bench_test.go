package encode_test

import (
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/encode"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// BenchmarkEncodeValue measures writing, per value format, the values of
// rows assembled once (BenchmarkEncode also assembles them).
func BenchmarkEncodeValue(b *testing.B) {
	l, batch, recs := typedBatch(b)
	rows, err := encode.Rows(l, l.Columns(), &batch, recs)
	if err != nil {
		b.Fatal(err)
	}
	yes := true
	for _, tc := range []struct {
		name string
		sink spec.KafkaSink
	}{
		{"debezium", spec.KafkaSink{}}, {"debezium schema", spec.KafkaSink{IncludeSchema: &yes}},
		{"json", spec.KafkaSink{ValueFormat: spec.SinkFormatJSON}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			enc := encode.New(&tc.sink)
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				for i := range rows {
					if buf, err = enc.Value(buf[:0], &rows[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
