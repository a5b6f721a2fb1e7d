package spec

import "testing"

// TestJSONParserOptionsValidate checks that timestamp_format and
// date_format must be Spark datetime patterns the agent implements, for a
// fixed schema and for an inferred one.
func TestJSONParserOptionsValidate(t *testing.T) {
	const jp = "table[0].connector_options.kafka_options.value_transformer.json_options."
	opts := func(p *Pipeline) *JSONOptions {
		return p.Tables[0].ConnectorOptions.KafkaOptions.ValueTransformer.JSONOptions
	}
	runPipelineCases(t, []pipelineCase{
		{"timestamp_format", func(p *Pipeline) { opts(p).TimestampFormat = "dd/MM/yyyy HH:mm:ss" }, "", ""},
		{"date_format", func(p *Pipeline) { opts(p).DateFormat = "yyyyMMdd" }, "", ""},
		{"timestamp_format letter", func(p *Pipeline) { opts(p).TimestampFormat = "yyyy-MM-dd EEE" },
			jp + "timestamp_format", "not a supported Spark datetime pattern"},
		{"date_format optional section", func(p *Pipeline) { opts(p).DateFormat = "yyyy-MM[-dd]" },
			jp + "date_format", "not a supported Spark datetime pattern"},
		{"inferred timestamp_format", func(p *Pipeline) { inferring(p, SchemaEvolutionRescue).TimestampFormat = "yyyy-MM-dd EEE" },
			jp + "timestamp_format", "not a supported Spark datetime pattern"},
	}, nil)
}
