package decode

import (
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestTimestampFormatNames checks json_options.timestamp_format "SQL"
// (yyyy-MM-dd HH:mm:ss with an optional fraction, as Flink writes it) and
// "ISO-8601" (the lenient default) on a TIMESTAMP field.
func TestTimestampFormatNames(t *testing.T) {
	tests := []struct {
		format, value, want string
	}{
		{"SQL", `2024-01-02 03:04:05`, "2024-01-02T03:04:05Z"},
		{"SQL", `2024-01-02 03:04:05.123456789`, "2024-01-02T03:04:05.123456Z"},
		{"SQL", `2024-01-02 03:04:05.1Z`, "2024-01-02T03:04:05.1Z"},
		{"SQL", `2024-01-02T03:04:05`, "null"},
		{"SQL", `2024-01-02 03:04`, "null"},
		{"SQL", `2024-01-02 03:04:05.`, "null"},
		{"SQL", `2024-01-02 03:04:05.1234567890`, "null"},
		{"SQL", `2024-01-02 03:04:05+01:00`, "null"},
		{"ISO-8601", `2024-01-02T03:04:05.5Z`, "2024-01-02T03:04:05.5Z"},
		{"ISO-8601", `2024-01-02T03:04:05+01:00`, "2024-01-02T02:04:05Z"},
		{"ISO-8601", `2024-01-02 03:04:05`, "2024-01-02T03:04:05Z"},
		// Unset, the default of every format (Flink's changelog formats
		// default to SQL): what SQL reads, read the same, and ISO 8601.
		{"", `2024-01-02 03:04:05.678`, "2024-01-02T03:04:05.678Z"},
		{"", `2024-01-02T03:04:05Z`, "2024-01-02T03:04:05Z"},
	}
	for _, tc := range tests {
		t.Run(tc.format+" "+tc.value, func(t *testing.T) {
			l := jsonValue(null("ts", &schema.Type{Kind: schema.Timestamp}))
			l.Value.Transformer = &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{TimestampFormat: tc.format}}
			cols, st := decodeRow(t, l, record.Record{Value: []byte(`{"ts":"` + tc.value + `"}`)})
			if cols["ts"] != tc.want {
				t.Errorf("ts = %s, want %s", cols["ts"], tc.want)
			}
			if (st.Corrupt == 1) != (tc.want == "null") {
				t.Errorf("corrupt %d", st.Corrupt)
			}
		})
	}
}

// TestInferredParserOptions checks that an inferred part parses with its
// json_options as an explicit schema does: single quotes (on by default,
// as inference reads them) and timestamp_format for a column the schema
// hints declare TIMESTAMP.
func TestInferredParserOptions(t *testing.T) {
	l := inferredValue(spec.SchemaEvolutionRescue, null("a", tLong), null("ts", &schema.Type{Kind: schema.Timestamp}))
	l.Value.Transformer.JSONOptions.TimestampFormat = spec.TimestampFormatSQL
	cols, st := decodeRow(t, l, record.Record{Value: []byte(`{'a':1,"ts":"2024-01-02 03:04:05"}`)})
	if cols["a"] != "1" || cols["ts"] != "2024-01-02T03:04:05Z" || st.Corrupt != 0 {
		t.Errorf("columns %v, %d corrupt", cols, st.Corrupt)
	}
	cols, _ = decodeRow(t, l, record.Record{Value: []byte(`{"ts":"2024-01-02T03:04:05"}`)})
	if cols["ts"] != "null" || cols[spec.RescuedDataColumn] != `"{\"ts\":\"2024-01-02T03:04:05\"}"` {
		t.Errorf("an ISO 8601 time with timestamp_format SQL: columns %v", cols)
	}
}
