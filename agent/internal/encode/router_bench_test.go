package encode_test

import (
	"fmt"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/encode"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// BenchmarkRouterTopic measures routing a batch of 1000 rows of 20
// columns, none of them a topic column, that share one Fields slice.
func BenchmarkRouterTopic(b *testing.B) {
	str := &schema.Type{Kind: schema.String}
	fields := make([]schema.Field, 20)
	values := make([]any, len(fields))
	for i := range fields {
		fields[i] = schema.Field{Name: fmt.Sprintf("column_%d", i), Type: str}
		values[i] = "v"
	}
	rows := make([]encode.Row, 1000)
	for i := range rows {
		rows[i] = encode.Row{DB: "inventory", Table: "customers", Topic: "src", Fields: fields, Values: values}
	}
	r, err := encode.NewRouter(&spec.KafkaSink{Topic: "out"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for i := range rows {
			if r.Topic(&rows[i]) != "out" {
				b.Fatal("wrong topic")
			}
		}
	}
}
