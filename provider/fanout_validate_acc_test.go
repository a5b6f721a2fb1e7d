package provider_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"testing"
)

// fanoutHCL renders a tributary_fanout_schema "f" of pipeline p1; kafka is
// the body of kafka_options, options that of fanout_options and extra any
// more attributes.
func fanoutHCL(kafka, options, extra string) string {
	return fmt.Sprintf(`
resource "tributary_fanout_schema" "f" {
  name                = "f1"
  pipeline_name       = "p1"
  destination_catalog = "main"
  destination_schema  = "routed"
  connector_options = {
    kafka_options = {
      %s
    }
  }
  fanout_options = {
    %s
  }
  %s
}
`, kafka, options, extra)
}

const (
	fanoutTopics = `topics = ["events"]`
	fanoutByType = `fanout_by = "cast(value AS STRING):event_type::string"`
	fanoutPath   = "fanout_options"
	transform0   = fanoutPath + ".transforms[0]"
)

// TestAccFanoutValidation checks every plan-time rule of fanout schemas,
// each failing the plan on its attribute. The rules on fanout_by need the
// expression parser (agent/internal/expr).
func TestAccFanoutValidation(t *testing.T) {
	withTransform := func(tr string) string { return fanoutByType + "\n transforms = [" + tr + "]" }
	missing := filepath.Join(t.TempDir(), "missing.ddl")
	runValidationCases(t, []validationCase{
		{"fanout_by and table_id_fields", fanoutHCL(fanoutTopics, fanoutByType+"\n table_id_fields = [\"type\"]", ""),
			fanoutPath + ".fanout_by", "fanout_by and table_id_fields are mutually exclusive; set only one of them"},
		{"unknown column", fanoutHCL(fanoutTopics, `fanout_by = "cast(payload AS STRING)"`, ""),
			fanoutPath + ".fanout_by", "unknown column payload"},
		{"unknown function", fanoutHCL(fanoutTopics, `fanout_by = "lowr(topic)"`, ""),
			fanoutPath + ".fanout_by", "unknown function lowr"},
		{"result not a STRING", fanoutHCL(fanoutTopics, `fanout_by = "partition"`, ""),
			fanoutPath + ".fanout_by", "fanout_by returns INT; the table name is a STRING: cast it, e.g. cast(x AS STRING)"},
		{"table_id_fields listed twice", fanoutHCL(fanoutTopics, `table_id_fields = ["db", "db"]`, ""),
			fanoutPath + ".table_id_fields[1]", `field "db" is already listed as table_id_fields[0]`},
		{"two transforms", fanoutHCL(fanoutTopics, withTransform(`{ input_column = "value" }, { input_column = "key" }`), ""),
			fanoutPath + ".transforms", "2 transforms are set; fanout_options takes at most one"},
		{"format AVRO", fanoutHCL(fanoutTopics, withTransform(`{ format = "AVRO", input_column = "value" }`), ""),
			transform0 + ".format", "format AVRO is not supported for fanout transforms: only JSON is"},
		{"input_column missing", fanoutHCL(fanoutTopics, withTransform(`{ format = "JSON" }`), ""),
			transform0 + ".input_column", "input_column is required: key or value"},
		{"input_column other", fanoutHCL(fanoutTopics, withTransform(`{ input_column = "headers" }`), ""),
			transform0 + ".input_column", `"headers" is not key or value`},
		{"transform on value and value_transformer", fanoutHCL(fanoutTopics+"\n value_transformer = { format = \"STRING\" }",
			withTransform(`{ input_column = "value" }`), ""),
			transform0 + ".input_column", "the transform is the value column's transformer, and " +
				"connector_options.kafka_options.value_transformer is set too; remove one of them"},
		{"on_invalid_route", fanoutHCL(fanoutTopics, fanoutByType+"\n on_invalid_route = \"DROP\"", ""),
			fanoutPath + ".on_invalid_route", `"DROP" is not one of FAIL, DEAD_LETTER`},
		{"transform json_options", fanoutHCL(fanoutTopics, withTransform(`{ input_column = "value", json_options = { schema = "id BIGINT, user STRNG" } }`), ""),
			transform0 + ".json_options.schema", "the schema is not valid Spark DDL"},
		{"transform schema_file_path unreadable", fanoutHCL(fanoutTopics,
			withTransform(`{ input_column = "value", json_options = { schema_file_path = `+hclString(missing)+` } }`), ""),
			transform0 + ".json_options.schema_file_path", "cannot read the schema file " + missing},
		{"kafka_options without topics", fanoutHCL(`starting_offset = "earliest"`, fanoutByType, ""),
			"connector_options.kafka_options.topics", "one of topics, topic_pattern or assign is required"},
		{"source_metadata_column", fanoutHCL(fanoutTopics, fanoutByType, `table_configuration = { source_metadata_column = "value" }`),
			"table_configuration.source_metadata_column", `the source metadata column must not be named "value"`},
	})
}

// TestAccFanoutParseErrorCaret checks that a fanout_by that does not parse
// fails the plan with the expression and a caret under the position, as
// Terraform prints it: the source indented by two spaces and the caret
// under the end of the input (after "│ " on a terminal).
func TestAccFanoutParseErrorCaret(t *testing.T) {
	caret := regexp.MustCompile(`attribute\s+fanout_options\.fanout_by(?s:.*)` +
		regexp.QuoteMeta("expected an expression after '||', found end of input") +
		`\n(?:│ )?  topic \|\|\n(?:│ )? {10}\^`)
	testPlanFails(t, fanoutHCL(fanoutTopics, `fanout_by = "topic ||"`, ""), caret)
}

// TestAccFanoutOutputColumnPlans checks that a set output_column, which
// the agent ignores, plans (with a warning, which TestFanoutWarnings
// checks), and that a pipeline may have no table block when fanout schemas
// carry it.
func TestAccFanoutOutputColumnPlans(t *testing.T) {
	testPlans(t, pipelineHCL(nil)+fanoutHCL(fanoutTopics,
		`table_id_fields = ["db", "table"]
				transforms = [{ input_column = "value", output_column = "parsed" }]`, ""))
}

// TestAccFanoutValidationSkipsUnknown plans values that are only known
// after apply: the rules that read them must not fire at plan time.
func TestAccFanoutValidationSkipsUnknown(t *testing.T) {
	testPlans(t, `
resource "terraform_data" "later" {
  input = "x"
}
`+fanoutHCL(`topics = [terraform_data.later.output]
      value_transformer = { format = terraform_data.later.output }`,
		`fanout_by = terraform_data.later.output
    on_invalid_route = terraform_data.later.output
    transforms = [{ input_column = "key", json_options = { schema = terraform_data.later.output } }]`,
		`table_configuration = { source_metadata_column = terraform_data.later.output }`))
}
