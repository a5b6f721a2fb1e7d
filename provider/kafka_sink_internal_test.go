package provider

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestKafkaSinkRoundTrip: a sink as the agent stores it reads into a model
// that converts back to the same sink, and that is a fixed point.
func TestKafkaSinkRoundTrip(t *testing.T) {
	t.Parallel()
	on := true
	want := &spec.KafkaSink{
		Name: "s", Connection: "c", TableTopicMapping: `inventory\..*,shop\.orders:all`, PartitionStrategy: spec.PartitionHashByKey,
		ValueFormat: spec.SinkFormatDebeziumJSON, IncludeSchema: &on, FullTableID: &on, DeliveryGuarantee: spec.DeliveryExactlyOnce,
		TransactionalID: "tx", FlushInterval: "2s",
		Source: &spec.KafkaOptions{
			TopicPattern: "cdc\\..*", StartingOffset: spec.StartingOffsetEarliest,
			KeyTransformer:   &spec.Transformer{Format: spec.FormatString},
			ValueTransformer: &spec.Transformer{Format: spec.FormatDebeziumJSON},
		},
	}
	want.Normalize()
	var diags diag.Diagnostics
	var m kafkaSinkResourceModel
	m.setFromSpec(context.Background(), want, &diags)
	if diags.HasError() {
		t.Fatal(diags)
	}
	c := newSinkConverter(context.Background(), true)
	got := c.kafkaSink(&m)
	if c.diags.HasError() || len(c.unknown) > 0 {
		t.Fatalf("convert: %v, unknown %v", c.diags, c.unknown)
	}
	got.Normalize()
	var back kafkaSinkResourceModel
	back.setFromSpec(context.Background(), got, &diags)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if !reflect.DeepEqual(back, m) {
		t.Errorf("the model is no fixed point:\n got %+v\nwant %+v", back, m)
	}
	if got.Source == nil || got.Source.TopicPattern != want.Source.TopicPattern || got.Source.ValueTransformer.Format != spec.FormatDebeziumJSON ||
		got.TableTopicMapping != want.TableTopicMapping || got.TransactionalID != "tx" || !*got.IncludeSchema || *got.KeepChangedFieldsOnly ||
		!got.Headers() || got.PartitionStrategy != spec.PartitionHashByKey || got.Topic != "" || got.SourceTable != "" {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
	if errs := got.Validate(); len(errs) > 0 {
		t.Errorf("the sink read back does not validate: %v", errs)
	}
}

// TestKafkaSinkSourceTableWarns: the agent's refusal of a source_table no
// pipeline writes is a warning on the attribute at plan time (the same
// apply may create the pipeline first); with another problem beside it,
// both are errors.
func TestKafkaSinkSourceTableWarns(t *testing.T) {
	t.Parallel()
	k := dryRunKind{what: sinkWhat, title: sinkWhat, createdFirst: "connection_name", writtenFirst: "source_table"}
	noTable := spec.FieldError{Path: "source_table", Detail: `no pipeline of this agent writes table "main.raw.t"`}
	var diags diag.Diagnostics
	reportDryRun(&diags, k, "s", &client.APIError{Status: 422, Problems: []spec.FieldError{noTable}})
	if len(diags.Errors()) != 0 || len(diags.Warnings()) != 1 || !strings.Contains(diags.Warnings()[0].Detail(), "Unless this apply creates") {
		t.Fatalf("diagnostics %v, want one warning", diags)
	}
	if w, ok := diags.Warnings()[0].(diag.DiagnosticWithPath); !ok || !w.Path().Equal(path.Root("source_table")) {
		t.Fatalf("warning %v is not on source_table", diags.Warnings()[0])
	}
	diags = nil
	reportDryRun(&diags, k, "s", &client.APIError{Status: 422, Problems: []spec.FieldError{noTable, {Path: "topic", Detail: "bad"}}})
	if len(diags.Errors()) != 2 {
		t.Fatalf("diagnostics %v, want two errors", diags)
	}
}
