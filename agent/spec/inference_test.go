package spec

import (
	"strings"
	"testing"
)

// inferring turns the value transformer of validPipeline's table into one
// whose schema is inferred in mode, and returns its options.
func inferring(p *Pipeline, mode string) *JSONOptions {
	jo := &JSONOptions{SchemaEvolutionMode: mode}
	p.Tables[0].ConnectorOptions.KafkaOptions.ValueTransformer = &Transformer{Format: FormatJSON, JSONOptions: jo}
	return jo
}

func TestInferenceValidate(t *testing.T) {
	const jp = "table[0].connector_options.kafka_options.value_transformer.json_options."
	fixed := func(p *Pipeline) *JSONOptions {
		return p.Tables[0].ConnectorOptions.KafkaOptions.ValueTransformer.JSONOptions
	}
	n := func(v int64) *int64 { return &v }
	yes := func() *bool { b := true; return &b }
	tests := []pipelineCase{
		{"every mode", func(p *Pipeline) {
			for _, m := range SchemaEvolutionModes {
				inferring(p, m)
				if errs := p.Validate(); len(errs) > 0 {
					t.Errorf("mode %s: %v", m, errs)
				}
			}
		}, "", ""},
		{"every alias", func(p *Pipeline) {
			for a := range SchemaEvolutionAliases {
				inferring(p, a)
				if errs := p.Validate(); len(errs) > 0 {
					t.Errorf("alias %s: %v", a, errs)
				}
			}
		}, "", ""},
		{"every option", func(p *Pipeline) {
			jo := inferring(p, SchemaEvolutionAddNewColumns)
			jo.SchemaHints, jo.InferRecordsPerPartition, jo.StringTypeInference, jo.PrimitiveAsString, jo.RescuedDataColumn =
				"id BIGINT", n(MaxInferRecordsPerPartition), yes(), yes(), "_leftovers"
		}, "", ""},
		{"unknown mode", func(p *Pipeline) { inferring(p, "MERGE") }, jp + "schema_evolution_mode",
			`"MERGE" is not one of ADD_NEW_COLUMNS, ADD_NEW_COLUMNS_WITH_TYPE_WIDENING, RESCUE, FAIL_ON_NEW_COLUMNS, NONE, nor one of Auto Loader's names addNewColumns, failOnNewColumns, none, rescue`},
		{"mode in lower case", func(p *Pipeline) { inferring(p, "add_new_columns") }, jp + "schema_evolution_mode", `did you mean "ADD_NEW_COLUMNS"?`},
		{"alias in wrong case", func(p *Pipeline) { inferring(p, "AddNewColumns") }, jp + "schema_evolution_mode", `did you mean "ADD_NEW_COLUMNS"?`},
		{"widening has no alias", func(p *Pipeline) { inferring(p, "addNewColumnsWithTypeWidening") }, jp + "schema_evolution_mode",
			`did you mean "ADD_NEW_COLUMNS_WITH_TYPE_WIDENING"?`},
		{"mode and schema", func(p *Pipeline) { fixed(p).SchemaEvolutionMode = SchemaEvolutionRescue }, jp + "schema",
			"schema and schema_evolution_mode are mutually exclusive"},
		{"mode and schema file", func(p *Pipeline) {
			jo := inferring(p, SchemaEvolutionRescue)
			jo.SchemaFilePath, jo.SchemaFileContent = "s.ddl", "id INT"
		}, jp + "schema_file_path", "schema_file_path and schema_evolution_mode are mutually exclusive"},
		{"no schema nor mode", func(p *Pipeline) { inferring(p, "") }, jp + "schema",
			"one of schema, schema_file_path or schema_evolution_mode is required"},
		{"hints without mode", func(p *Pipeline) { fixed(p).SchemaHints = "id INT" }, jp + "schema_hints", "requires schema_evolution_mode"},
		{"hints do not parse", func(p *Pipeline) { inferring(p, SchemaEvolutionAddNewColumns).SchemaHints = "id BIGINT, user.dob DAT" }, jp + "schema_hints",
			"the schema hints do not parse: line 1, column"},
		{"hint given twice", func(p *Pipeline) { inferring(p, SchemaEvolutionAddNewColumns).SchemaHints = "id BIGINT, ID INT" }, jp + "schema_hints",
			"given twice"},
		{"hint on the rescue column", func(p *Pipeline) {
			inferring(p, SchemaEvolutionAddNewColumns).SchemaHints = "id BIGINT, _Rescued_Data STRING"
		}, jp + "schema_hints", `names "_Rescued_Data", the rescued data column`},
		{"hint on _corrupt_record", func(p *Pipeline) {
			inferring(p, SchemaEvolutionRescue).SchemaHints = "_corrupt_record.x INT"
		}, jp + "schema_hints", `names "_corrupt_record", which is reserved`},
		{"hint on _rescued_data in NONE", func(p *Pipeline) {
			inferring(p, SchemaEvolutionNone).SchemaHints = "_rescued_data STRING"
		}, "", ""},
		{"records without mode", func(p *Pipeline) { fixed(p).InferRecordsPerPartition = n(5) }, jp + "infer_records_per_partition",
			"requires schema_evolution_mode"},
		// 0 samples nothing, as Flink's scan.max.pre.fetch.records = 0.
		{"records zero", func(p *Pipeline) { inferring(p, SchemaEvolutionRescue).InferRecordsPerPartition = n(0) }, "", ""},
		{"records negative", func(p *Pipeline) { inferring(p, SchemaEvolutionRescue).InferRecordsPerPartition = n(-1) }, jp + "infer_records_per_partition",
			"-1 is less than the minimum of 0"},
		{"records too many", func(p *Pipeline) { inferring(p, SchemaEvolutionRescue).InferRecordsPerPartition = n(10_001) },
			jp + "infer_records_per_partition", "10001 is more than the maximum of 10000"},
		{"string type inference without mode", func(p *Pipeline) { fixed(p).StringTypeInference = yes() }, jp + "string_type_inference",
			"requires schema_evolution_mode"},
		{"primitive as string without mode", func(p *Pipeline) { fixed(p).PrimitiveAsString = yes() }, jp + "primitive_as_string",
			"requires schema_evolution_mode"},
		{"rescue column without mode", func(p *Pipeline) { fixed(p).RescuedDataColumn = "_r" }, jp + "rescued_data_column",
			"requires schema_evolution_mode"},
		{"rescue column is _corrupt_record", func(p *Pipeline) {
			inferring(p, SchemaEvolutionNone).RescuedDataColumn = "_Corrupt_Record"
		}, jp + "rescued_data_column", "reserved for records that fail to decode"},
		{"rescue column not an identifier", func(p *Pipeline) {
			inferring(p, SchemaEvolutionRescue).RescuedDataColumn = "rescued data"
		}, jp + "rescued_data_column", "not a valid column name"},
		{"rescue column collides with the metadata column", func(p *Pipeline) {
			inferring(p, SchemaEvolutionRescue).RescuedDataColumn = "_KAFKA"
		}, "table[0].table_configuration.source_metadata_column",
			`column "_kafka" (the source metadata column) collides with the column of the same name (the rescued data column from the value schema)`},
		{"rescue column collides with the key column", func(p *Pipeline) {
			inferring(p, SchemaEvolutionRescue).RescuedDataColumn = "key"
		}, jp + "rescued_data_column", `column "key" (the rescued data column from the value schema) collides with the column of the same name (key)`},
		{"rescue column collides with a key field", func(p *Pipeline) {
			inferring(p, SchemaEvolutionAddNewColumns)
			p.Tables[0].ConnectorOptions.KafkaOptions.KeyTransformer = &Transformer{Format: FormatJSON,
				JSONOptions: &JSONOptions{Schema: "_rescued_data STRING"}}
		}, jp + "rescued_data_column", `column "_rescued_data" (the rescued data column from the value schema) collides with the column of the same name from the key schema`},
		{"NONE rescues nothing by default", func(p *Pipeline) {
			inferring(p, SchemaEvolutionNone)
			p.Tables[0].ConnectorOptions.KafkaOptions.KeyTransformer = &Transformer{Format: FormatJSON,
				JSONOptions: &JSONOptions{Schema: "_rescued_data STRING"}}
		}, "", ""},
	}
	runPipelineCases(t, tests, nil)
}

func TestRescueColumn(t *testing.T) {
	for _, tt := range []struct {
		jo   JSONOptions
		want string
	}{
		{JSONOptions{Schema: "id INT"}, ""},
		{JSONOptions{Schema: "id INT", RescuedDataColumn: "_r"}, ""},
		{JSONOptions{SchemaEvolutionMode: SchemaEvolutionAddNewColumns}, RescuedDataColumn},
		{JSONOptions{SchemaEvolutionMode: "rescue", RescuedDataColumn: "_r"}, "_r"},
		{JSONOptions{SchemaEvolutionMode: SchemaEvolutionNone}, ""},
		{JSONOptions{SchemaEvolutionMode: "none"}, ""},
		{JSONOptions{SchemaEvolutionMode: "none", RescuedDataColumn: "_r"}, "_r"},
	} {
		if got := tt.jo.RescueColumn(); got != tt.want {
			t.Errorf("%+v: RescueColumn() = %q, want %q", tt.jo, got, tt.want)
		}
	}
}

// TestNormalizeInference checks that the defaults of inference are filled
// only when the schema is inferred, and that an alias is kept as written
// (Terraform must read back what it sent).
func TestNormalizeInference(t *testing.T) {
	p := validPipeline()
	if jo := p.Tables[0].ConnectorOptions.KafkaOptions.ValueTransformer.JSONOptions; jo.InferRecordsPerPartition != nil ||
		jo.StringTypeInference != nil || jo.PrimitiveAsString != nil {
		t.Fatalf("a fixed schema got inference defaults: %+v", jo)
	}
	jo := inferring(p, "addNewColumns")
	p.Normalize()
	if jo.SchemaEvolutionMode != "addNewColumns" || jo.EvolutionMode() != SchemaEvolutionAddNewColumns {
		t.Errorf("mode %q (canonical %q), want the alias kept and ADD_NEW_COLUMNS", jo.SchemaEvolutionMode, jo.EvolutionMode())
	}
	if jo.InferRecordsPerPartition == nil || *jo.InferRecordsPerPartition != DefaultInferRecordsPerPartition ||
		jo.StringTypeInference == nil || !*jo.StringTypeInference || jo.PrimitiveAsString == nil || *jo.PrimitiveAsString {
		t.Errorf("defaults not filled: %+v", jo)
	}
	if errs := p.Validate(); len(errs) > 0 {
		t.Errorf("normalized pipeline: %v", errs)
	}
}

func TestLayoutInferring(t *testing.T) {
	p := validPipeline()
	inferring(p, SchemaEvolutionAddNewColumns)
	l, errs := p.Tables[0].Layout()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if !l.Value.Inferred() || l.Value.Width() != 0 {
		t.Fatalf("value part: inferred %v, width %d; want an inferred part without columns", l.Value.Inferred(), l.Value.Width())
	}
	var names []string
	for _, c := range l.Columns() {
		names = append(names, c.Name)
	}
	if got, want := strings.Join(names, ","), "key,_kafka,_rescued_data,_corrupt_record"; got != want {
		t.Fatalf("columns %s, want %s", got, want)
	}
}

// TestLayoutOneInferredSide checks that an inferred side cannot go with
// another inferred side, nor with a side whose schema comes from a
// registry: the agent could not tell their columns apart.
func TestLayoutOneInferredSide(t *testing.T) {
	const kp = "connector_options.kafka_options."
	registry := &Transformer{Format: FormatAvro, AvroOptions: &AvroOptions{SchemaRegistry: &SchemaRegistryOptions{
		ConfluentOptions: ConfluentOptions{Subject: "s"}}}}
	for name, c := range map[string]struct {
		key  *Transformer
		path string
	}{
		"both inferred": {&Transformer{Format: FormatJSON, JSONOptions: &JSONOptions{SchemaEvolutionMode: SchemaEvolutionRescue}},
			kp + "key_transformer.json_options.schema_evolution_mode"},
		"registry key": {registry, kp + "value_transformer.json_options.schema_evolution_mode"},
	} {
		t.Run(name, func(t *testing.T) {
			p := validPipeline()
			inferring(p, SchemaEvolutionAddNewColumns)
			p.Tables[0].ConnectorOptions.KafkaOptions.KeyTransformer = c.key
			_, errs := p.Tables[0].Layout()
			if len(errs) != 1 || errs[0].Path != c.path || !strings.Contains(errs[0].Detail, "same table") {
				t.Fatalf("problems %v, want one on %s", errs, c.path)
			}
		})
	}
}
