package provider

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// testTable builds a table object value from its parts, failing t on error.
func testTable(t *testing.T, destination types.String, kafka kafkaOptionsModel, tableConfig types.Object) types.Object {
	t.Helper()
	ctx := context.Background()
	ty := pipelineTypes()
	var diags diag.Diagnostics
	obj := objectValue(ctx, &diags, ty.table, tableModel{
		DestinationTable: destination,
		ConnectorOptions: objectValue(ctx, &diags, ty.connectorOptions, connectorOptionsModel{
			KafkaOptions: objectValue(ctx, &diags, ty.kafkaOptions, kafka),
		}),
		TableConfiguration: tableConfig,
	})
	if diags.HasError() {
		t.Fatalf("building table: %v", diags)
	}
	return obj
}

func testJSONTransformer(t *testing.T, schema, file types.String) types.Object {
	t.Helper()
	ctx := context.Background()
	ty := pipelineTypes()
	var diags diag.Diagnostics
	obj := objectValue(ctx, &diags, ty.transformer, transformerModel{
		Format: types.StringValue(spec.FormatJSON),
		JSONOptions: objectValue(ctx, &diags, ty.jsonOptions, jsonOptionsModel{
			Schema: schema, SchemaFilePath: file, SchemaFileSHA256: types.StringUnknown(),
		}),
	})
	if diags.HasError() {
		t.Fatalf("building transformer: %v", diags)
	}
	return obj
}

func testPipelineModel(t *testing.T, tables ...attr.Value) pipelineResourceModel {
	t.Helper()
	list, diags := types.ListValue(pipelineTypes().table, tables)
	if diags.HasError() {
		t.Fatalf("building table list: %v", diags)
	}
	return pipelineResourceModel{
		Name:               types.StringValue("p1"),
		Connection:         types.StringUnknown(),
		DestinationCatalog: types.StringValue("main"),
		DestinationSchema:  types.StringValue("bad-schema"),
		StorageLocation:    types.StringUnknown(),
		Continuous:         types.BoolUnknown(),
		FlushInterval:      types.StringValue("5s"),
		TargetFileSizeMB:   types.Int64Unknown(),
		MaxRowsPerFile:     types.Int64Value(10),
		Table:              list,
	}
}

func TestSpecConverterUnknowns(t *testing.T) {
	t.Parallel()
	ty := pipelineTypes()
	topics, _ := types.ListValue(types.StringType, []attr.Value{types.StringValue("ok"), types.StringUnknown()})
	m := testPipelineModel(t,
		testTable(t, types.StringValue("events"), kafkaOptionsModel{
			Topics:           topics,
			TopicPattern:     types.StringNull(),
			StartingOffset:   types.StringValue("latest"),
			IsolationLevel:   types.StringValue(spec.IsolationReadUncommitted),
			KeyTransformer:   types.ObjectUnknown(ty.transformer.AttrTypes),
			ValueTransformer: testJSONTransformer(t, types.StringUnknown(), types.StringNull()),
		}, types.ObjectNull(ty.tableConfiguration.AttrTypes)),
		testTable(t, types.StringUnknown(), kafkaOptionsModel{
			Topics:           types.ListUnknown(types.StringType),
			TopicPattern:     types.StringValue("("),
			StartingOffset:   types.StringValue("latest"),
			IsolationLevel:   types.StringUnknown(),
			KeyTransformer:   types.ObjectNull(ty.transformer.AttrTypes),
			ValueTransformer: types.ObjectNull(ty.transformer.AttrTypes),
		}, types.ObjectUnknown(ty.tableConfiguration.AttrTypes)),
	)

	c := newSpecConverter(context.Background(), true)
	p := c.pipeline(&m)
	if c.diags.HasError() {
		t.Fatalf("convert: %v", c.diags)
	}
	wantUnknown := []string{
		"connection_name", "storage_location", "continuous", "target_file_size_mb",
		"table[0].connector_options.kafka_options.topics[1]",
		"table[0].connector_options.kafka_options.key_transformer",
		"table[0].connector_options.kafka_options.value_transformer.json_options.schema",
		"table[1].destination_table",
		"table[1].connector_options.kafka_options.topics",
		"table[1].connector_options.kafka_options.isolation_level",
		"table[1].table_configuration",
	}
	var gotUnknown []string
	for p := range c.unknown {
		gotUnknown = append(gotUnknown, p)
	}
	slices.Sort(gotUnknown)
	slices.Sort(wantUnknown)
	if !slices.Equal(gotUnknown, wantUnknown) {
		t.Errorf("unknown paths:\n got %q\nwant %q", gotUnknown, wantUnknown)
	}
	// An unknown transformer is an empty one, not an absent one.
	if p.Tables[0].ConnectorOptions.KafkaOptions.KeyTransformer == nil {
		t.Error("an unknown key_transformer must convert to an empty transformer, not nil")
	}
	if got := p.Tables[0].ConnectorOptions.KafkaOptions.Topics; !slices.Equal(got, []string{"ok", ""}) {
		t.Errorf("topics = %q, want [ok \"\"]", got)
	}
	if got := p.Tables[0].ConnectorOptions.KafkaOptions.IsolationLevel; got != spec.IsolationReadUncommitted {
		t.Errorf("isolation_level = %q, want %q", got, spec.IsolationReadUncommitted)
	}
	if got := p.Tables[1].ConnectorOptions.KafkaOptions.IsolationLevel; got != "" {
		t.Errorf("unknown isolation_level = %q, want \"\"", got)
	}

	// Only the problems on known values remain.
	var diags diag.Diagnostics
	addFieldErrors(&diags, "pipeline", p.Validate(), c.skip)
	var got []string
	for _, d := range diags {
		got = append(got, d.Summary())
	}
	want := []string{
		"Invalid pipeline attribute destination_schema",
		"Invalid pipeline attribute table[1].connector_options.kafka_options.topic_pattern",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diagnostics:\n got %q\nwant %q", got, want)
	}
}

func TestSpecConverterSchemaFile(t *testing.T) {
	t.Parallel()
	ty := pipelineTypes()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.ddl")
	if err := os.WriteFile(good, []byte("id BIGINT, user STRING"), 0o600); err != nil {
		t.Fatal(err)
	}
	table := func(file string) types.Object {
		return testTable(t, types.StringValue("t_"+filepath.Base(file)[:4]), kafkaOptionsModel{
			Topics:           types.ListNull(types.StringType),
			TopicPattern:     types.StringValue("events.*"),
			StartingOffset:   types.StringValue("latest"),
			IsolationLevel:   types.StringValue(spec.DefaultIsolationLevel),
			KeyTransformer:   types.ObjectNull(ty.transformer.AttrTypes),
			ValueTransformer: testJSONTransformer(t, types.StringNull(), types.StringValue(file)),
		}, types.ObjectNull(ty.tableConfiguration.AttrTypes))
	}
	m := testPipelineModel(t, table(good), table(filepath.Join(dir, "missing.ddl")))
	m.DestinationSchema = types.StringValue("demo")
	m.Connection = types.StringValue("c")

	c := newSpecConverter(context.Background(), true)
	p := c.pipeline(&m)
	if got := p.Tables[0].ConnectorOptions.KafkaOptions.ValueTransformer.JSONOptions.SchemaFileContent; got != "id BIGINT, user STRING" {
		t.Errorf("SchemaFileContent = %q", got)
	}
	if len(c.diags) != 1 || c.diags[0].Summary() !=
		"Invalid pipeline attribute table[1].connector_options.kafka_options.value_transformer.json_options.schema_file_path" {
		t.Fatalf("want one diagnostic on the missing file, got %v", c.diags)
	}
	// The unreadable file is reported once, not again as an empty schema.
	var diags diag.Diagnostics
	addFieldErrors(&diags, "pipeline", p.Validate(), c.skip)
	if diags.HasError() {
		t.Errorf("unexpected problems: %v", diags)
	}
}

// storedPipeline is a valid pipeline as the agent stores it, with one table.
func storedPipeline() *spec.Pipeline {
	return &spec.Pipeline{
		Name: "p1", Connection: "c1", DestinationCatalog: "main", DestinationSchema: "demo",
		Tables: []spec.Table{{
			DestinationTable: "events",
			ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{Topics: []string{"events"}}},
		}},
	}
}

// roundTrip sets a model from the stored pipeline, as Read does with the
// prior state (nil on import), and converts the model back, checking that
// the result validates.
func roundTrip(t *testing.T, stored *spec.Pipeline, prior *pipelineResourceModel) (pipelineResourceModel, *spec.Pipeline) {
	t.Helper()
	ctx := context.Background()
	var m pipelineResourceModel
	var diags diag.Diagnostics
	m.setFromSpec(ctx, stored, prior, &diags)
	if diags.HasError() {
		t.Fatalf("setFromSpec: %v", diags)
	}
	c := newSpecConverter(ctx, false)
	back := c.pipeline(&m)
	if c.diags.HasError() {
		t.Fatalf("convert: %v", c.diags)
	}
	if errs := back.Validate(); len(errs) > 0 {
		t.Errorf("the converted pipeline does not validate: %v", errs)
	}
	return m, back
}

// TestIsolationLevelRoundTrip converts isolation_level from the agent's
// spec into the model and back: an unset level reads as the default, a set
// one is kept.
func TestIsolationLevelRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ stored, want string }{
		{"", spec.DefaultIsolationLevel},
		{spec.IsolationReadCommitted, spec.IsolationReadCommitted},
		{spec.IsolationReadUncommitted, spec.IsolationReadUncommitted},
	} {
		stored := storedPipeline()
		stored.Tables[0].ConnectorOptions.KafkaOptions.IsolationLevel = tc.stored
		_, back := roundTrip(t, stored, nil)
		if got := back.Tables[0].ConnectorOptions.KafkaOptions.IsolationLevel; got != tc.want {
			t.Errorf("stored %q: isolation_level = %q, want %q", tc.stored, got, tc.want)
		}
	}
}

// TestStorageLocationRoundTrip converts storage_location from the agent's
// spec into the model and back: unset is null (no diff against a
// configuration without it), a prior "" stays "", and a location is kept.
func TestStorageLocationRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		stored   string
		imported bool // no prior state
		prior    types.String
		want     types.String
	}{
		{"unset", "", false, types.StringNull(), types.StringNull()},
		{"unset on import", "", true, types.StringNull(), types.StringNull()},
		{"empty in the configuration", "", false, types.StringValue(""), types.StringValue("")},
		{"set", "s3://lake/raw", false, types.StringNull(), types.StringValue("s3://lake/raw")},
		{"set on import", "s3://lake/raw", true, types.StringNull(), types.StringValue("s3://lake/raw")},
		{"changed behind Terraform's back", "/srv/lake", false, types.StringValue("s3://lake/raw"), types.StringValue("/srv/lake")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stored := storedPipeline()
			stored.StorageLocation = tc.stored
			var prior *pipelineResourceModel
			if !tc.imported {
				prior = &pipelineResourceModel{StorageLocation: tc.prior, Table: types.ListNull(pipelineTypes().table)}
			}
			m, back := roundTrip(t, stored, prior)
			if !m.StorageLocation.Equal(tc.want) {
				t.Errorf("storage_location = %v, want %v", m.StorageLocation, tc.want)
			}
			if back.StorageLocation != tc.stored {
				t.Errorf("converted back: storage_location = %q, want %q", back.StorageLocation, tc.stored)
			}
		})
	}
}
