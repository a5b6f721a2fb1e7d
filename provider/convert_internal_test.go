package provider

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
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
			KafkaOptions: objectValue(ctx, &diags, ty.kafkaOptions, withNullMaps(kafka)),
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
	return testTransformer(t, transformerModel{
		Format: types.StringValue(spec.FormatJSON),
		JSONOptions: objectValue(ctx, &diags, ty.jsonOptions, jsonOptionsModel{
			Schema: schema, SchemaFilePath: file, SchemaFileSHA256: types.StringUnknown(),
			InitialSchemas: types.MapNull(types.StringType),
		}),
	})
}

// testTransformer builds a transformer object value from m, whose options
// not set are null.
func testTransformer(t *testing.T, m transformerModel) types.Object {
	t.Helper()
	ty := pipelineTypes()
	for _, o := range []struct {
		v  *types.Object
		ot types.ObjectType
	}{{&m.JSONOptions, ty.jsonOptions}, {&m.AvroOptions, ty.avroOptions}, {&m.ProtobufOptions, ty.protobufOptions},
		{&m.DebeziumOptions, ty.debeziumOptions}, {&m.CanalOptions, ty.canalOptions}} {
		if len(o.v.AttributeTypes(context.Background())) == 0 { // not set
			*o.v = types.ObjectNull(o.ot.AttrTypes)
		}
	}
	var diags diag.Diagnostics
	obj := objectValue(context.Background(), &diags, ty.transformer, m)
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
// the result validates. readFiles makes the conversion read the schema
// files, as a plan does.
func roundTrip(t *testing.T, stored *spec.Pipeline, prior *pipelineResourceModel, readFiles bool) (pipelineResourceModel, *spec.Pipeline) {
	t.Helper()
	ctx := context.Background()
	var m pipelineResourceModel
	var diags diag.Diagnostics
	m.setFromSpec(ctx, stored, prior, &diags)
	if diags.HasError() {
		t.Fatalf("setFromSpec: %v", diags)
	}
	c := newSpecConverter(ctx, readFiles)
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
		_, back := roundTrip(t, stored, nil, false)
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
			m, back := roundTrip(t, stored, prior, false)
			if !m.StorageLocation.Equal(tc.want) {
				t.Errorf("storage_location = %v, want %v", m.StorageLocation, tc.want)
			}
			if back.StorageLocation != tc.stored {
				t.Errorf("converted back: storage_location = %q, want %q", back.StorageLocation, tc.stored)
			}
		})
	}
}

// pageViewDesc returns the descriptor set of the Protobuf example, which
// holds example.web.v1.PageView.
var pageViewDesc = sync.OnceValue(func() []byte {
	b, err := os.ReadFile(filepath.Join("..", "examples", "resources", "tributary_pipeline", "page_view.desc"))
	if err != nil {
		panic(err)
	}
	return b
})

// avroProtobufPipeline is a pipeline as the agent stores it with an Avro key
// and value and a Protobuf value: a file schema read from dir, registries,
// and the defaults (parse_mode, recursive_fields_max_depth) unset.
func avroProtobufPipeline(dir string) *spec.Pipeline {
	depth := int64(3)
	p := storedPipeline()
	p.Tables = append(p.Tables, p.Tables[0])
	p.Tables[1].DestinationTable = "views"
	ko := &p.Tables[0].ConnectorOptions.KafkaOptions
	ko.KeyTransformer = &spec.Transformer{Format: spec.FormatAvro, AvroOptions: &spec.AvroOptions{
		SchemaRegistry: &spec.SchemaRegistryOptions{ConfluentOptions: spec.ConfluentOptions{Subject: "events-key"}, ConnectionName: "registry"},
	}}
	ko.ValueTransformer = &spec.Transformer{Format: spec.FormatAvro, AvroOptions: &spec.AvroOptions{
		SchemaFilePath: filepath.Join(dir, "event.avsc"), SchemaFileContent: `"long"`, ParseMode: spec.ParseModeFailFast,
	}}
	p.Tables[1].ConnectorOptions.KafkaOptions.KeyTransformer = &spec.Transformer{Format: spec.FormatProtobuf, ProtobufOptions: &spec.ProtobufOptions{
		SchemaRegistry:          &spec.SchemaRegistryOptions{ConfluentOptions: spec.ConfluentOptions{Subject: "views-key"}, ProtobufMessageName: "Key"},
		RecursiveFieldsMaxDepth: &depth,
	}}
	p.Tables[1].ConnectorOptions.KafkaOptions.ValueTransformer = &spec.Transformer{Format: spec.FormatProtobuf, ProtobufOptions: &spec.ProtobufOptions{
		DescFilePath: filepath.Join(dir, "view.desc"), DescFileContent: pageViewDesc(), MessageName: "example.web.v1.PageView",
	}}
	return p
}

// TestAvroProtobufRoundTrip converts Avro and Protobuf transformers from
// the agent's spec into the model and back (reading the files, as a plan
// does): paths, registries and set options are kept, unset defaults read
// as the defaults the schema plans, and the hashes are those of the file
// contents the agent returns.
func TestAvroProtobufRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stored := avroProtobufPipeline(dir)
	for name, content := range map[string][]byte{"event.avsc": []byte(`"long"`), "view.desc": pageViewDesc()} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m, back := roundTrip(t, avroProtobufPipeline(dir), nil, true)

	// What the plan sends: the stored pipeline with the defaults filled in.
	want := stored
	want.Normalize()
	want.Tables[0].ConnectorOptions.KafkaOptions.KeyTransformer.AvroOptions.ParseMode = spec.DefaultParseMode
	pk := want.Tables[1].ConnectorOptions.KafkaOptions.KeyTransformer.ProtobufOptions
	pk.ParseMode = spec.DefaultParseMode
	pv := want.Tables[1].ConnectorOptions.KafkaOptions.ValueTransformer.ProtobufOptions
	pv.ParseMode = spec.DefaultParseMode
	defaultDepth := int64(spec.DefaultRecursiveDepth)
	pv.RecursiveFieldsMaxDepth = &defaultDepth
	for i := range want.Tables {
		got, want := back.Tables[i].ConnectorOptions.KafkaOptions, want.Tables[i].ConnectorOptions.KafkaOptions
		for _, side := range []struct {
			name      string
			got, want *spec.Transformer
		}{{"key", got.KeyTransformer, want.KeyTransformer}, {"value", got.ValueTransformer, want.ValueTransformer}} {
			if !reflect.DeepEqual(side.got, side.want) {
				t.Errorf("table[%d] %s transformer:\n got %s\nwant %s", i, side.name, jsonString(t, side.got), jsonString(t, side.want))
			}
		}
	}

	// The state holds the hashes of the contents, not the contents.
	var hashes []string
	eachSchemaFile(back, func(f *schemaFile) {
		v := fileSHA256(f.name, f.content)
		hashes = append(hashes, f.options[len("table[0].connector_options.kafka_options."):]+"."+f.shaAttr+"="+v.String())
	})
	wantHashes := []string{
		`key_transformer.avro_options.schema_file_sha256=<null>`,
		`value_transformer.avro_options.schema_file_sha256="` + schemaSHA256([]byte(`"long"`)) + `"`,
		`key_transformer.protobuf_options.desc_file_sha256=<null>`,
		`value_transformer.protobuf_options.desc_file_sha256="` + schemaSHA256(pageViewDesc()) + `"`,
	}
	if !slices.Equal(hashes, wantHashes) {
		t.Errorf("hashes:\n got %q\nwant %q", hashes, wantHashes)
	}
	if strings.Contains(m.Table.String(), `"long"`) {
		t.Errorf("the state must not hold the schema file's content: %s", m.Table)
	}
}

// TestAvroProtobufUnreadableFiles checks that a missing .avsc or .desc file
// is one problem on its attribute, naming the resolved path, and not again
// an empty schema, and that it does not hide the problems of the other
// attributes that do not need the file: an out-of-range
// recursive_fields_max_depth is still reported, on its own attribute.
func TestAvroProtobufUnreadableFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	stored := avroProtobufPipeline(dir)
	depth := int64(11)
	stored.Tables[1].ConnectorOptions.KafkaOptions.ValueTransformer.ProtobufOptions.RecursiveFieldsMaxDepth = &depth
	var m pipelineResourceModel
	var diags diag.Diagnostics
	m.setFromSpec(ctx, stored, nil, &diags)
	if diags.HasError() {
		t.Fatalf("setFromSpec: %v", diags)
	}
	c := newSpecConverter(ctx, true)
	p := c.pipeline(&m)
	var got []string
	for _, d := range c.diags {
		got = append(got, d.Summary()+": "+d.Detail())
	}
	want := []string{
		"Invalid pipeline attribute table[0].connector_options.kafka_options.value_transformer.avro_options.schema_file_path: " +
			"cannot read the schema file " + filepath.Join(dir, "event.avsc") + ": no such file or directory",
		"Invalid pipeline attribute table[1].connector_options.kafka_options.value_transformer.protobuf_options.desc_file_path: " +
			"cannot read the descriptor set file " + filepath.Join(dir, "view.desc") + ": no such file or directory",
	}
	if len(got) != len(want) {
		t.Fatalf("diagnostics:\n got %q\nwant prefixes %q", got, want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("diagnostic %d:\n got %q\nwant prefix %q", i, got[i], want[i])
		}
	}
	var rest diag.Diagnostics
	addFieldErrors(&rest, "pipeline", p.Validate(), c.skip)
	const depthProblem = "Invalid pipeline attribute table[1].connector_options.kafka_options.value_transformer.protobuf_options.recursive_fields_max_depth"
	if len(rest) != 1 || rest[0].Summary() != depthProblem {
		t.Errorf("problems beyond the unreadable files: %v, want one: %s", rest, depthProblem)
	}
}

// TestAvroProtobufUnknowns converts options whose values are unknown at
// plan time: an unknown registry is an empty one, not an absent one, so
// that the rule "one schema source" does not fire, and unknown leaves are
// recorded.
func TestAvroProtobufUnknowns(t *testing.T) {
	t.Parallel()
	ty := pipelineTypes()
	ctx := context.Background()
	var diags diag.Diagnostics
	avro := testTransformer(t, transformerModel{
		Format: types.StringValue(spec.FormatAvro),
		AvroOptions: objectValue(ctx, &diags, ty.avroOptions, avroOptionsModel{
			Schema: types.StringNull(), SchemaFilePath: types.StringNull(), SchemaFileSHA256: types.StringUnknown(),
			SchemaRegistry: types.ObjectUnknown(ty.avroRegistry.AttrTypes),
			ParseMode:      types.StringUnknown(),
		}),
	})
	protobuf := testTransformer(t, transformerModel{
		Format: types.StringValue(spec.FormatProtobuf),
		ProtobufOptions: objectValue(ctx, &diags, ty.protobufOptions, protobufOptionsModel{
			DescFilePath: types.StringUnknown(), DescFileSHA256: types.StringUnknown(), MessageName: types.StringValue("X"),
			SchemaRegistry:          types.ObjectNull(ty.protobufRegistry.AttrTypes),
			RecursiveFieldsMaxDepth: types.Int64Unknown(),
			ParseMode:               types.StringValue(spec.ParseModePermissive),
		}),
	})
	if diags.HasError() {
		t.Fatal(diags)
	}
	m := testPipelineModel(t, testTable(t, types.StringValue("events"), kafkaOptionsModel{
		Topics:           types.ListNull(types.StringType),
		TopicPattern:     types.StringValue("events.*"),
		StartingOffset:   types.StringValue("latest"),
		IsolationLevel:   types.StringValue(spec.DefaultIsolationLevel),
		KeyTransformer:   avro,
		ValueTransformer: protobuf,
	}, types.ObjectNull(ty.tableConfiguration.AttrTypes)))
	m.DestinationSchema = types.StringValue("demo")

	c := newSpecConverter(ctx, true)
	p := c.pipeline(&m)
	if c.diags.HasError() {
		t.Fatalf("convert: %v", c.diags)
	}
	ko := p.Tables[0].ConnectorOptions.KafkaOptions
	if ko.KeyTransformer.AvroOptions.SchemaRegistry == nil {
		t.Error("an unknown schema_registry must convert to an empty one, not nil")
	}
	if got := ko.ValueTransformer.ProtobufOptions.RecursiveFieldsMaxDepth; got != nil {
		t.Errorf("unknown recursive_fields_max_depth = %d, want nil", *got)
	}
	for _, p := range []string{
		kafkaPathInternal + ".key_transformer.avro_options.schema_registry",
		kafkaPathInternal + ".key_transformer.avro_options.parse_mode",
		kafkaPathInternal + ".value_transformer.protobuf_options.desc_file_path",
		kafkaPathInternal + ".value_transformer.protobuf_options.recursive_fields_max_depth",
	} {
		if !c.unknown[p] {
			t.Errorf("%s is not recorded as unknown", p)
		}
	}
	var rest diag.Diagnostics
	addFieldErrors(&rest, "pipeline", p.Validate(), c.skip)
	if rest.HasError() {
		t.Errorf("problems on unknown values must be dropped: %v", rest)
	}
}

const kafkaPathInternal = "table[0].connector_options.kafka_options"

// jsonString renders v as JSON for a failure message.
func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestConnectionSchemaRegistrySecret sets a connection's model from the
// agent's answer, which never holds api_secret: the planned or prior
// secret is kept, an import has none, and a registry removed on the agent
// is null.
func TestConnectionSchemaRegistrySecret(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	registry := func(url, key, secret types.String) types.Object {
		var diags diag.Diagnostics
		o := objectValue(ctx, &diags, connectionAttrType("schema_registry"), schemaRegistryModel{URL: url, APIKey: key, APISecret: secret})
		if diags.HasError() {
			t.Fatal(diags)
		}
		return o
	}
	null := types.ObjectNull(connectionAttrType("schema_registry").AttrTypes)
	stored := &spec.Connection{Name: "c1", BootstrapServers: []string{"b:9092"},
		SchemaRegistry: &spec.SchemaRegistry{URL: "https://registry", APIKey: "k", APISecret: "s"}}
	for _, tc := range []struct {
		name   string
		prior  types.Object // the model before: the plan, the prior state, or null on import
		stored *spec.Connection
		want   types.Object
	}{
		{"kept", registry(types.StringValue("https://old"), types.StringValue("k"), types.StringValue("s")), stored.Redacted(),
			registry(types.StringValue("https://registry"), types.StringValue("k"), types.StringValue("s"))},
		{"import", null, stored.Redacted(),
			registry(types.StringValue("https://registry"), types.StringValue("k"), types.StringNull())},
		{"returned by the agent", null, stored,
			registry(types.StringValue("https://registry"), types.StringValue("k"), types.StringValue("s"))},
		{"no credentials", null, &spec.Connection{Name: "c1", SchemaRegistry: &spec.SchemaRegistry{URL: "https://registry"}},
			registry(types.StringValue("https://registry"), types.StringNull(), types.StringNull())},
		{"removed on the agent", registry(types.StringValue("https://registry"), types.StringValue("k"), types.StringValue("s")),
			&spec.Connection{Name: "c1"}, null},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := connectionResourceModel{SchemaRegistry: tc.prior}
			var diags diag.Diagnostics
			m.setFromSpec(ctx, tc.stored, true, &diags)
			if diags.HasError() {
				t.Fatal(diags)
			}
			if !m.SchemaRegistry.Equal(tc.want) {
				t.Errorf("schema_registry = %s, want %s", m.SchemaRegistry, tc.want)
			}
			c := newSpecConverter(ctx, false)
			back := m.toSpec(c)
			if tc.stored.SchemaRegistry != nil && back.SchemaRegistry.URL != tc.stored.SchemaRegistry.URL {
				t.Errorf("converted back: url = %q", back.SchemaRegistry.URL)
			}
		})
	}
}

// TestJSONParserOptionsRoundTrip converts the Spark parser options of
// json_options from the agent's spec into the model and back: set values are
// kept, unset booleans read as Spark's defaults (true) and unset formats
// stay unset.
func TestJSONParserOptionsRoundTrip(t *testing.T) {
	t.Parallel()
	no := false
	yes := true
	p := storedPipeline()
	p.Tables = append(p.Tables, p.Tables[0])
	p.Tables[1].DestinationTable = "defaults"
	p.Tables[0].ConnectorOptions.KafkaOptions.ValueTransformer = &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{
		Schema: "ts TIMESTAMP, d DATE", AllowSingleQuotes: &no, AllowNonNumericNumbers: &no,
		TimestampFormat: "dd/MM/yyyy HH:mm:ss", DateFormat: "yyyyMMdd",
	}}
	p.Tables[1].ConnectorOptions.KafkaOptions.ValueTransformer = &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{
		Schema: "ts TIMESTAMP",
	}}
	_, back := roundTrip(t, p, nil, false)
	want := []spec.JSONOptions{
		{Schema: "ts TIMESTAMP, d DATE", AllowSingleQuotes: &no, AllowNonNumericNumbers: &no,
			TimestampFormat: "dd/MM/yyyy HH:mm:ss", DateFormat: "yyyyMMdd"},
		{Schema: "ts TIMESTAMP", AllowSingleQuotes: &yes, AllowNonNumericNumbers: &yes},
	}
	for i, w := range want {
		got := back.Tables[i].ConnectorOptions.KafkaOptions.ValueTransformer.JSONOptions
		if !reflect.DeepEqual(*got, w) {
			t.Errorf("table[%d] json_options:\n got %s\nwant %s", i, jsonString(t, got), jsonString(t, w))
		}
	}
}
