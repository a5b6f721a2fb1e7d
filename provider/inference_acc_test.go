package provider_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// inferringHCL is a pipeline whose value columns are inferred, with the
// json_options attributes options (HCL, comma-separated) and the table
// block's extra attributes.
func inferringHCL(options, extra string) string {
	return pipelineHCL(nil, tableHCL("events", `topics = ["events"]
        value_transformer = { format = "JSON", json_options = { `+options+` } }`, extra))
}

func TestAccPipelineInferenceValidation(t *testing.T) {
	fixed := `schema = "id BIGINT", `
	ddl := filepath.Join(t.TempDir(), "schema.ddl")
	if err := os.WriteFile(ddl, []byte("id BIGINT"), 0o600); err != nil {
		t.Fatal(err)
	}
	runValidationCases(t, []validationCase{
		{"unknown mode", inferringHCL(`schema_evolution_mode = "MERGE"`, ""),
			valueJSON + ".schema_evolution_mode", `"MERGE" is not one of ADD_NEW_COLUMNS, ADD_NEW_COLUMNS_WITH_TYPE_WIDENING, RESCUE, FAIL_ON_NEW_COLUMNS, NONE, nor one of Auto Loader's names addNewColumns, failOnNewColumns, none, rescue`},
		{"mode in the wrong case", inferringHCL(`schema_evolution_mode = "Add_New_Columns"`, ""),
			valueJSON + ".schema_evolution_mode", `did you mean "ADD_NEW_COLUMNS"?`},
		{"mode and schema", inferringHCL(fixed+`schema_evolution_mode = "RESCUE"`, ""),
			valueJSON + ".schema", "schema and schema_evolution_mode are mutually exclusive"},
		{"mode and schema_file_path", inferringHCL(`schema_file_path = `+hclString(ddl)+`, schema_evolution_mode = "RESCUE"`, ""),
			valueJSON + ".schema_file_path", "schema_file_path and schema_evolution_mode are mutually exclusive"},
		{"schema_hints without mode", inferringHCL(fixed+`schema_hints = "id INT"`, ""),
			valueJSON + ".schema_hints", "schema_hints applies only to a schema inferred from the records: it requires schema_evolution_mode"},
		{"schema_hints do not parse", inferringHCL(`schema_evolution_mode = "RESCUE", schema_hints = "id BIGINT,\n user.dob DAT"`, ""),
			valueJSON + ".schema_hints", "the schema hints do not parse: line 2, column"},
		{"infer_records_per_partition without mode", inferringHCL(fixed+`infer_records_per_partition = 10`, ""),
			valueJSON + ".infer_records_per_partition", "requires schema_evolution_mode"},
		{"infer_records_per_partition negative", inferringHCL(`schema_evolution_mode = "RESCUE", infer_records_per_partition = -1`, ""),
			valueJSON + ".infer_records_per_partition", "-1 is less than the minimum of 0"},
		{"infer_records_per_partition too many", inferringHCL(`schema_evolution_mode = "RESCUE", infer_records_per_partition = 10001`, ""),
			valueJSON + ".infer_records_per_partition", "10001 is more than the maximum of 10000"},
		{"string_type_inference without mode", inferringHCL(fixed+`string_type_inference = false`, ""),
			valueJSON + ".string_type_inference", "requires schema_evolution_mode"},
		{"primitive_as_string without mode", inferringHCL(fixed+`primitive_as_string = true`, ""),
			valueJSON + ".primitive_as_string", "requires schema_evolution_mode"},
		{"rescued_data_column without mode", inferringHCL(fixed+`rescued_data_column = "_r"`, ""),
			valueJSON + ".rescued_data_column", "requires schema_evolution_mode"},
		{"rescued_data_column reserved", inferringHCL(`schema_evolution_mode = "none", rescued_data_column = "_corrupt_record"`, ""),
			valueJSON + ".rescued_data_column", `"_corrupt_record" is reserved for records that fail to decode`},
		{"rescued_data_column collides with the key", inferringHCL(`schema_evolution_mode = "RESCUE", rescued_data_column = "KEY"`, ""),
			valueJSON + ".rescued_data_column", `column "KEY" (the rescued data column from the value schema) collides with the column of the same name (key)`},
		{"default rescue column collides with the metadata column", inferringHCL(`schema_evolution_mode = "addNewColumns"`,
			`table_configuration = { source_metadata_column = "_rescued_data" }`),
			"table[0].table_configuration.source_metadata_column",
			`column "_rescued_data" (the source metadata column) collides with the column of the same name (the rescued data column from the value schema)`},
	})
}

// TestAccPipelineInferencePlan checks what the plan shows for the options
// of inference: their defaults when schema_evolution_mode is set, null when
// it is not, unknown while the mode is, and an alias as written.
func TestAccPipelineInferencePlan(t *testing.T) {
	const res = "tributary_pipeline.p"
	// A new path each time: paths built from one share their backing array.
	option := func(attr string) tfjsonpath.Path {
		return tfjsonpath.New("table").AtSliceIndex(0).AtMapKey("connector_options").AtMapKey("kafka_options").
			AtMapKey("value_transformer").AtMapKey("json_options").AtMapKey(attr)
	}
	expect := func(attr string, v knownvalue.Check) plancheck.PlanCheck {
		return plancheck.ExpectKnownValue(res, option(attr), v)
	}
	unknown := func(attr string) plancheck.PlanCheck {
		return plancheck.ExpectUnknownValue(res, option(attr))
	}
	step := func(config string, checks ...plancheck.PlanCheck) resource.TestStep {
		return resource.TestStep{
			Config: config, PlanOnly: true, ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: checks},
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			step(inferringHCL(`schema_evolution_mode = "addNewColumns", schema_hints = "id BIGINT"`, ""),
				expect("schema_evolution_mode", knownvalue.StringExact("addNewColumns")),
				expect("infer_records_per_partition", knownvalue.Int64Exact(50)),
				expect("string_type_inference", knownvalue.Bool(true)),
				expect("primitive_as_string", knownvalue.Bool(false)),
				expect("rescued_data_column", knownvalue.Null()),
			),
			step(inferringHCL(`schema_evolution_mode = "NONE", infer_records_per_partition = 7, string_type_inference = false, primitive_as_string = true, rescued_data_column = "_r"`, ""),
				expect("infer_records_per_partition", knownvalue.Int64Exact(7)),
				expect("string_type_inference", knownvalue.Bool(false)),
				expect("primitive_as_string", knownvalue.Bool(true)),
				expect("rescued_data_column", knownvalue.StringExact("_r")),
			),
			step(inferringHCL(`schema = "id BIGINT"`, ""),
				expect("schema_evolution_mode", knownvalue.Null()),
				expect("infer_records_per_partition", knownvalue.Null()),
				expect("string_type_inference", knownvalue.Null()),
				expect("primitive_as_string", knownvalue.Null()),
			),
			step(`resource "terraform_data" "later" {
  input = "RESCUE"
}
`+inferringHCL(`schema_evolution_mode = terraform_data.later.output, rescued_data_column = "_kafka"`,
				`table_configuration = { source_metadata_column = "_kafka" }`),
				unknown("infer_records_per_partition"),
				unknown("string_type_inference"),
				unknown("primitive_as_string"),
			),
		},
	})
}
