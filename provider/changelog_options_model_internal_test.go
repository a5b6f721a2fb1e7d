package provider

import (
	"reflect"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestChangelogRoundTrip converts the issue 13 attributes from the agent's
// spec into the model and back: a changelog value configured without
// json_options reads back without them (the agent fills them in), the
// options of the changelog formats, the JSON options and metadata_columns
// come back as sent.
func TestChangelogRoundTrip(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	stored := storedPipeline()
	stored.Tables = append(stored.Tables, stored.Tables[0])
	stored.Tables[1].DestinationTable = "products"
	implied := &stored.Tables[0].ConnectorOptions.KafkaOptions
	implied.ValueTransformer = &spec.Transformer{Format: spec.FormatDebeziumJSON,
		DebeziumOptions: &spec.DebeziumOptions{SchemaInclude: &yes}}
	canal := &stored.Tables[1].ConnectorOptions.KafkaOptions
	canal.ValueTransformer = &spec.Transformer{Format: spec.FormatCanalJSON,
		CanalOptions: &spec.CanalOptions{DatabaseInclude: "inv.*", InferSchemaStrategy: spec.InferSchemaMySQLType, Tinyint1AsBoolean: &no},
		JSONOptions: &spec.JSONOptions{SchemaEvolutionMode: spec.SchemaEvolutionNone, TimestampFormat: spec.TimestampFormatSQL,
			FlattenNestedColumns: &yes, EmptyValueAsDelete: &yes, InitialSchemas: map[string]string{"products": "id INT"},
			AllowSingleQuotes: &yes, AllowNonNumericNumbers: &yes}}
	stored.Tables[1].TableConfiguration.MetadataColumns = []string{spec.MetaRawValue, spec.MetaLeaderEpoch}
	want := *stored.Tables[1].ConnectorOptions.KafkaOptions.ValueTransformer.JSONOptions
	stored.Normalize()

	m, back := roundTrip(t, stored, nil, false)
	if tr := back.Tables[0].ConnectorOptions.KafkaOptions.ValueTransformer; tr.JSONOptions != nil || !tr.DebeziumOptions.SchemaIncluded() {
		t.Errorf("implied json_options: got %s, want none and schema_include", jsonString(t, tr))
	}
	tr := back.Tables[1].ConnectorOptions.KafkaOptions.ValueTransformer
	records, tinyint := int64(spec.DefaultInferRecordsPerPartition), false
	want.InferRecordsPerPartition, want.StringTypeInference, want.PrimitiveAsString = &records, &yes, &no
	if !reflect.DeepEqual(tr.JSONOptions, &want) {
		t.Errorf("json_options:\n got %s\nwant %s", jsonString(t, tr.JSONOptions), jsonString(t, &want))
	}
	if co := tr.CanalOptions; co.DatabaseInclude != "inv.*" || co.Strategy() != spec.InferSchemaMySQLType || co.TinyintAsBoolean() != tinyint ||
		!co.TimestampAsNTZ() || tr.Distributed() {
		t.Errorf("canal_options: got %s", jsonString(t, co))
	}
	if got := back.Tables[1].TableConfiguration.MetadataColumns; !reflect.DeepEqual(got, []string{spec.MetaRawValue, spec.MetaLeaderEpoch}) {
		t.Errorf("metadata_columns: got %v", got)
	}

	// Read again with the state as prior: the model is a fixed point.
	again, _ := roundTrip(t, stored, &m, false)
	if !reflect.DeepEqual(again.Table, m.Table) {
		t.Errorf("second read differs:\n got %v\nwant %v", again.Table, m.Table)
	}
}
