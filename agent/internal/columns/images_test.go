package columns_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/columns"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestImageColumns checks that the columns sampled for a changelog part
// are those of its row images, whatever the schema evolution mode, and
// never those of the events' envelopes (before, after, source, op, data,
// ...); a Canal DDL event types them.
func TestImageColumns(t *testing.T) {
	debezium := []string{
		`{"before":null,"after":{"id":1001,"email":"a@b"},"source":{"db":"inventory","table":"customers","ts_ms":1},"op":"r","ts_ms":2}`,
		`{"before":{"id":1001,"email":"a@b"},"after":{"id":1001,"email":"c@d","vip":true},"source":{"db":"inventory","table":"customers","ts_ms":3},"op":"u","ts_ms":4}`,
		`not an event`,
	}
	canal := []string{
		`{"data":null,"database":"inventory","table":"products","isDdl":true,"type":"CREATE","sql":"CREATE TABLE products (id int(11) NOT NULL, weight float)","es":1,"ts":2}`,
		`{"data":[{"id":"101","weight":"3.14"}],"database":"inventory","table":"products","isDdl":false,"type":"INSERT","es":3,"ts":4}`,
	}
	for _, tt := range []struct {
		name, format, mode string
		values             []string
		want               string
	}{
		{"debezium", spec.FormatDebeziumJSON, spec.SchemaEvolutionAddNewColumns, debezium, "id BIGINT, email STRING, vip BOOLEAN"},
		{"debezium static", spec.FormatDebeziumJSON, spec.SchemaEvolutionNone, debezium, "id BIGINT, email STRING, vip BOOLEAN"},
		{"canal", spec.FormatCanalJSON, spec.SchemaEvolutionAddNewColumns, canal, "id INT, weight FLOAT"},
		// A field's type is that of every sampled record that has it.
		{"types of every record", spec.FormatDebeziumJSON, spec.SchemaEvolutionAddNewColumns, []string{
			`{"before":null,"after":{"id":1,"price":1},"source":{"db":"d","table":"t","ts_ms":1},"op":"c","ts_ms":2}`,
			`{"before":null,"after":{"id":2,"price":1.5},"source":{"db":"d","table":"t","ts_ms":1},"op":"c","ts_ms":2}`,
		}, "id BIGINT, price DOUBLE"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var recs []record.Record
			for i, v := range tt.values {
				recs = append(recs, record.Record{Topic: "t", Offset: int64(i), Value: []byte(v)})
			}
			p := &spec.Part{Format: tt.format, Column: spec.ValueColumn, Transformer: &spec.Transformer{Format: tt.format,
				JSONOptions: &spec.JSONOptions{SchemaEvolutionMode: tt.mode}}}
			fields, err := columns.Images(context.Background(), p, recs)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range fields {
				got = append(got, f.Name+" "+f.Type.String())
			}
			if g := strings.Join(got, ", "); g != tt.want {
				t.Errorf("columns %s, want %s", g, tt.want)
			}
		})
	}
}
