package provider_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// TestAccChangelogValidation checks, without an agent, that every rule of
// the issue 13 attributes fails the plan on its attribute: changelog
// formats on values only, their options with their format, include
// patterns, Flink's spellings, the field prefixes, duplicate fields,
// metadata_columns, the error budget and the new JSON options.
func TestAccChangelogValidation(t *testing.T) {
	topics := `topics = ["events"]` + "\n"
	one := func(kafka string) string { return pipelineHCL(nil, tableHCL("events", kafka, "")) }
	withConfig := func(kafka, config string) string {
		return pipelineHCL(nil, tableHCL("events", kafka, "table_configuration = { "+config+" }"))
	}
	value := func(tr string) string { return topics + "value_transformer = " + tr }
	keyAndValue := func(key, val string) string { return value(val) + "\nkey_transformer = " + key }
	at := func(attr string) string { return kafkaPath + "." + attr }
	vt := func(attr string) string { return kafkaPath + ".value_transformer." + attr }
	const (
		keyID   = `{ format = "JSON", json_options = { schema = "id BIGINT" } }`
		valueID = `{ format = "JSON", json_options = { schema = "id BIGINT, name STRING" } }`
	)
	runValidationCases(t, []validationCase{
		// Changelog formats.
		{"Flink's format name", one(value(`{ format = "debezium-json" }`)),
			vt("format"), `Flink's "debezium-json" is "DEBEZIUM_JSON" here`},
		{"changelog key", one(keyAndValue(`{ format = "CANAL_JSON" }`, valueID)),
			kafkaPath + ".key_transformer.format", "format CANAL_JSON applies only to value_transformer"},
		{"debezium_options on CANAL_JSON", one(value(`{ format = "CANAL_JSON", debezium_options = {} }`)),
			vt("debezium_options"), "debezium_options applies only to format DEBEZIUM_JSON; this transformer's format is CANAL_JSON"},
		{"canal_options on JSON", one(value(`{ format = "JSON", canal_options = {} }`)),
			vt("canal_options"), "canal_options applies only to format CANAL_JSON"},
		{"table_include does not compile", one(value(`{ format = "CANAL_JSON", canal_options = { table_include = "prod(" } }`)),
			vt("canal_options.table_include"), `"prod(" does not compile`},
		{"Java look-around", one(value(`{ format = "CANAL_JSON", canal_options = { database_include = "(?!test).*" } }`)),
			vt("canal_options.database_include"), "Java's look-around ((?=, (?!, (?<=, (?<!) is not supported"},
		{"infer_schema_strategy", one(value(`{ format = "CANAL_JSON", canal_options = { infer_schema_strategy = "mysql-type" } }`)),
			vt("canal_options.infer_schema_strategy"), `Flink's "mysql-type" is "MYSQL_TYPE" here`},
		{"schema_include with a fixed schema", one(value(`{ format = "DEBEZIUM_JSON", debezium_options = { schema_include = true }
          json_options = { schema = "id BIGINT" } }`)),
			vt("debezium_options.schema_include"), "json_options declares a fixed schema"},
		{"changelog field named _op", one(value(`{ format = "DEBEZIUM_JSON", json_options = { schema = "_op STRING" } }`)),
			vt("json_options.schema"), `column "_op" is reserved for the operation of changelog rows`},

		// Prefixes and duplicate fields.
		{"key and value field collide", one(keyAndValue(keyID, valueID)),
			vt("json_options.schema"), `column "id" from the value schema collides`},
		{"prefix of the other", one(topics + `key_fields_prefix = "k_"
          value_fields_prefix = "k_v_"`),
			at("value_fields_prefix"), "neither may be a prefix of the other"},
		{"duplicate_field_strategy", one(topics + `duplicate_field_strategy = "prefer-value"`),
			at("duplicate_field_strategy"), `Flink's "prefer-value" is "PREFER_VALUE" here`},

		// Metadata columns.
		{"metadata column unknown", withConfig(topics, `metadata_columns = ["topic", "value.raw"]`),
			"table[0].table_configuration.metadata_columns[1]", `"value.raw" is not one of topic, partition, offset`},
		{"metadata column in Flink's spelling", withConfig(topics, `metadata_columns = ["timestamp-type"]`),
			"table[0].table_configuration.metadata_columns[0]", `Flink's "timestamp-type" is "timestamp_type" here`},
		{"metadata column twice", withConfig(topics, `metadata_columns = ["offset", "offset"]`),
			"table[0].table_configuration.metadata_columns[1]", `"offset" is already listed as metadata_columns[0]`},
		{"metadata column collides", withConfig(value(`{ format = "JSON", json_options = { schema = "offset BIGINT" } }`),
			`metadata_columns = ["offset"]`),
			"table[0].table_configuration.metadata_columns[0]", `column "offset" (the metadata column offset) collides`},

		// Error budget.
		{"max count without ignore_errors", one(topics + `error_tolerance_max_count = 10`),
			at("error_tolerance_max_count"), "error_tolerance_max_count applies only with ignore_errors = true"},
		{"max count below -1", one(topics + `ignore_errors = true
          error_tolerance_max_count = -2`),
			at("error_tolerance_max_count"), "-2 is less than the minimum of -1"},
		{"dirty records table", pipelineHCL(nil, tableHCL("_dirty_records", topics, "")),
			"table[0].destination_table", "is reserved for the records a pipeline's tables could not decode"},

		// JSON options.
		{"flatten_nested_columns with a fixed schema", one(value(`{ format = "JSON", json_options = { schema = "a INT", flatten_nested_columns = true } }`)),
			vt("json_options.flatten_nested_columns"), "applies only to a schema inferred from the records"},
		{"empty_value_as_delete on a key", one(keyAndValue(`{ format = "JSON", json_options = { schema = "k INT", empty_value_as_delete = true } }`, valueID)),
			kafkaPath + ".key_transformer.json_options.empty_value_as_delete", "applies only to value_transformer"},
		{"initial schema of another table", one(value(`{ format = "DEBEZIUM_JSON", json_options = { initial_schemas = { orders = "id BIGINT" } } }`)),
			vt("json_options.initial_schemas"), `initial schema for table "orders": this table block writes "events"`},
		{"initial schema DDL", one(value(`{ format = "JSON", json_options = { schema_evolution_mode = "RESCUE", initial_schemas = { events = "id BIGINTT" } } }`)),
			vt("json_options.initial_schemas"), `table "events": the initial schema is not valid Spark DDL`},

		// Fanout schemas share kafka_options, table_configuration and json_options.
		{"fanout changelog key", fanoutHCL(fanoutTopics+"\n key_transformer = { format = \"DEBEZIUM_JSON\" }", fanoutByType, ""),
			"connector_options.kafka_options.key_transformer.format", "format DEBEZIUM_JSON applies only to value_transformer"},
		{"fanout metadata column", fanoutHCL(fanoutTopics, fanoutByType, `table_configuration = { metadata_columns = ["epoch"] }`),
			"table_configuration.metadata_columns[0]", `"epoch" is not one of`},
		{"fanout distributed_tables without merge_sharded_tables",
			fanoutHCL(fanoutTopics+"\n value_transformer = { format = \"CANAL_JSON\", canal_options = { distributed_tables = true } }", `on_invalid_route = "FAIL"`, ""),
			"connector_options.kafka_options.value_transformer.canal_options.distributed_tables", "set merge_sharded_tables = true"},
	})
}

// TestAccChangelogPlan checks the planned defaults of the issue 13
// attributes: a changelog value infers with ADD_NEW_COLUMNS_WITH_TYPE_WIDENING (its
// json_options planned so, or left null when not set), canal_options and
// debezium_options defaults, error_tolerance_max_count only with
// ignore_errors, and a fanout schema of a changelog format plans without
// fanout_by.
func TestAccChangelogPlan(t *testing.T) {
	// ko and vt build a new path each time: the steps of a tfjsonpath.Path
	// share their array with the path it extends.
	ko := func(attr string) tfjsonpath.Path {
		return tfjsonpath.New("table").AtSliceIndex(0).AtMapKey("connector_options").AtMapKey("kafka_options").AtMapKey(attr)
	}
	vt := func(attr string) tfjsonpath.Path { return ko("value_transformer").AtMapKey(attr) }
	expect := func(p tfjsonpath.Path, v knownvalue.Check) plancheck.PlanCheck {
		return plancheck.ExpectKnownValue("tributary_pipeline.p", p, v)
	}
	step := func(config string, checks ...plancheck.PlanCheck) resource.TestStep {
		s := planDiffStep(nil, config)
		s.ConfigPlanChecks.PostApplyPreRefresh = checks
		return s
	}
	canal := pipelineHCL(nil, tableHCL("products", `topics = ["canal"]
        ignore_errors = true
        key_fields_prefix = "k_"
        value_transformer = {
          format = "CANAL_JSON"
          canal_options = { table_include = "products" }
          json_options = { timestamp_format = "SQL" }
        }`, `table_configuration = { metadata_columns = ["topic", "offset", "headers"] }`))
	debezium := pipelineHCL(nil, tableHCL("customers", `topics = ["dbserver1.inventory.customers"]
        key_transformer = { format = "JSON", json_options = { schema = "id INT" } }
        duplicate_field_strategy = "PREFER_VALUE"
        value_transformer = { format = "DEBEZIUM_JSON", debezium_options = {} }`, ""))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			step(canal,
				expect(vt("json_options").AtMapKey("schema_evolution_mode"), knownvalue.StringExact("ADD_NEW_COLUMNS_WITH_TYPE_WIDENING")),
				expect(vt("json_options").AtMapKey("infer_records_per_partition"), knownvalue.Int64Exact(50)),
				expect(vt("json_options").AtMapKey("flatten_nested_columns"), knownvalue.Bool(false)),
				expect(vt("canal_options").AtMapKey("infer_schema_strategy"), knownvalue.StringExact("AUTO")),
				expect(vt("canal_options").AtMapKey("tinyint1_as_boolean"), knownvalue.Bool(true)),
				expect(vt("canal_options").AtMapKey("mysql_timestamp_as_ntz"), knownvalue.Bool(true)),
				expect(ko("error_tolerance_max_count"), knownvalue.Int64Exact(-1)),
				expect(ko("duplicate_field_strategy"), knownvalue.StringExact("EXCEPTION")),
			),
			step(debezium,
				expect(vt("json_options"), knownvalue.Null()),
				expect(vt("debezium_options").AtMapKey("schema_include"), knownvalue.Bool(false)),
				expect(ko("ignore_errors"), knownvalue.Bool(false)),
				expect(ko("error_tolerance_max_count"), knownvalue.Null()),
				expect(ko("key_transformer").AtMapKey("json_options").AtMapKey("schema_evolution_mode"), knownvalue.Null()),
			),
			planDiffStep(nil, pipelineHCL(nil)+fanoutHCL(fanoutTopics+`
      value_transformer = { format = "DEBEZIUM_JSON", debezium_options = { distributed_tables = true, merge_sharded_tables = true } }`,
				`on_invalid_route = "DEAD_LETTER"`, "")),
		},
	})
}

// TestAccChangelogPipeline creates a pipeline with the issue 13 attributes
// on the agent: a Debezium value without json_options (the agent infers
// its row image), the key's columns prefixed, ignore_errors with its
// default budget, metadata_columns; and a JSON table with the new JSON
// options; and a fanout schema of Canal events routed by their default
// route. After apply the plan is empty (the harness checks it), an import
// reads the same values, and the tributary_table data source reports
// error_records.
func TestAccChangelogPipeline(t *testing.T) {
	a := sharedAgent(t)
	conn, pipe, topic := uniqueName("conn"), uniqueName("pipe"), uniqueName("cdc")
	createTopic(t, topic, 1)
	getPipeline := func(ctx context.Context, n string) error { _, err := a.Client.GetPipeline(ctx, n); return err }
	config := a.providerHCL() + connectionHCL(conn, kafkaBootstrap()) + pipelineHCL(map[string]string{
		"name":            hclString(pipe),
		"connection_name": "tributary_connection.c.name",
	}, tableHCL("customers", fmt.Sprintf(`
        topics            = [%s]
        starting_offset   = "earliest"
        key_fields_prefix = "k_"
        ignore_errors     = true
        key_transformer   = { format = "JSON", json_options = { schema = "id INT" } }
        value_transformer = { format = "DEBEZIUM_JSON", debezium_options = { distributed_tables = true } }`, hclString(topic)),
		`table_configuration = { metadata_columns = ["topic", "partition", "offset"] }`),
		tableHCL("events", fmt.Sprintf(`
        topics = [%s]
        duplicate_field_strategy = "PREFER_KEY"
        value_transformer = {
          format       = "JSON"
          json_options = {
            schema_evolution_mode  = "ADD_NEW_COLUMNS"
            flatten_nested_columns = true
            empty_value_as_delete  = true
            timestamp_format       = "ISO-8601"
            initial_schemas        = { events = "id BIGINT" }
          }
        }`, hclString(topic)), ""), `
  timeouts {
    create = "2m"
  }
`) + `
data "tributary_table" "t" {
  pipeline_name     = tributary_pipeline.p.name
  destination_table = "customers"
}
`
	fanout := uniqueName("fan")
	config += fmt.Sprintf(`
resource "tributary_fanout_schema" "f" {
  name                = %s
  pipeline_name       = tributary_pipeline.p.name
  destination_catalog = "main"
  destination_schema  = %s
  connector_options = {
    kafka_options = {
      topics            = [%s]
      value_transformer = { format = "CANAL_JSON", canal_options = { infer_schema_strategy = "SQL_TYPE" } }
    }
  }
  fanout_options = {
    on_invalid_route = "DEAD_LETTER"
  }
  table_configuration = { metadata_columns = ["timestamp", "headers"] }
  timeouts {
    create = "2m"
  }
}
`, hclString(fanout), hclString(fanout), hclString(topic))
	const res = "tributary_pipeline.p"
	ko := "table.0.connector_options.kafka_options."
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkGone("pipeline", getPipeline, pipe),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckNoResourceAttr(res, ko+"value_transformer.json_options"),
					resource.TestCheckResourceAttr(res, ko+"error_tolerance_max_count", "-1"),
					resource.TestCheckResourceAttr(res, ko+"value_transformer.debezium_options.schema_include", "false"),
					resource.TestCheckNoResourceAttr(res, "table.1.connector_options.kafka_options.error_tolerance_max_count"),
					resource.TestCheckResourceAttr("data.tributary_table.t", "error_records", "0"),
				),
			},
			importStep(res, pipe, "timeouts"),
			importStep("tributary_fanout_schema.f", fanout, "timeouts"),
		},
	})
}
