package provider

import (
	"reflect"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestInferenceRoundTrip converts the options of inference from the agent's
// spec into the model and back: an alias stays as written (no diff against
// the configuration that sent it), the defaults are filled for an inferred
// schema only, and a fixed schema gets none of them.
func TestInferenceRoundTrip(t *testing.T) {
	t.Parallel()
	stored := storedPipeline()
	ko := &stored.Tables[0].ConnectorOptions.KafkaOptions
	ko.KeyTransformer = &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: "k STRING"}}
	ko.ValueTransformer = &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{
		SchemaEvolutionMode: "addNewColumns", SchemaHints: "id BIGINT, user.dob DATE", RescuedDataColumn: "_leftovers",
	}}
	_, back := roundTrip(t, stored, nil, false)

	records, yes, no := int64(spec.DefaultInferRecordsPerPartition), true, false
	want := &spec.JSONOptions{
		SchemaEvolutionMode: "addNewColumns", SchemaHints: "id BIGINT, user.dob DATE", RescuedDataColumn: "_leftovers",
		InferRecordsPerPartition: &records, StringTypeInference: &yes, PrimitiveAsString: &no,
	}
	got := back.Tables[0].ConnectorOptions.KafkaOptions
	if jo := got.ValueTransformer.JSONOptions; !reflect.DeepEqual(jo, want) {
		t.Errorf("value json_options:\n got %s\nwant %s", jsonString(t, jo), jsonString(t, want))
	}
	if jo := got.KeyTransformer.JSONOptions; !reflect.DeepEqual(jo, &spec.JSONOptions{Schema: "k STRING"}) {
		t.Errorf("key json_options got inference options: %s", jsonString(t, jo))
	}
}
